from evidence_pipeline import pipeline
from evidence_pipeline.benchmark.child_tokens import measure
from evidence_pipeline.embedding import token_counter
from evidence_pipeline_tests.docs import calibration_register, lnp_doc


def test_counts_the_word_pieces_ingest_embeds(tmp_path):
    docs = [lnp_doc(), calibration_register("SOP-ENG-200", 100)]
    for doc in docs:
        (tmp_path / f"{doc.doc_id}.json").write_text(doc.model_dump_json())
    (tmp_path / "x.docling.json").write_text("{}")  # the cache's Docling files are not ParsedDocs
    counter = token_counter(None)
    kids = [c for d in docs for c in pipeline.children_of(pipeline.document_units(d, pipeline.PipelineOptions(), counter), counter)]
    got = measure(tmp_path)
    assert got["documents"] == 2 and got["children"] == len(kids)
    assert got["distinct_texts"] == len({c.embed_text for c in kids})
    assert got["word_pieces"] == sum(counter.counts([c.embed_text for c in kids]))
    assert 0 < got["prefix_pieces"] < got["word_pieces"]
    parts = {c.text for c in kids} | {c.prefix for c in kids}
    assert got["distinct_parts"] == len(parts)
    assert got["mixed_pieces"] == sum(counter.counts(list(parts))) < got["word_pieces"]
    assert set(got["pieces_per_child"]) == {c.kind for c in kids}
    assert measure(tmp_path, doc_prefix="SOP-ENG")["documents"] == 1
