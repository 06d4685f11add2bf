"""Section 2 of parse-quality on two real generated documents, and its rendering."""

from __future__ import annotations

from evidence_pipeline.evaluation.parser_quality.generated import generated_section
from evidence_pipeline.evaluation.parser_quality.models import ParserQualityReport
from evidence_pipeline.evaluation.parser_quality.rendering import render_text


def test_generated_sops_score_at_least_095_on_every_figure(sample_corpus):
    from evidence_pipeline.parser import DoclingParser

    parser = DoclingParser()
    # SOP-8812: two-level ruled header, footnotes; SOP-ENG-114: a table crossing a page break
    pdfs = [sample_corpus / "SOP-8812.pdf", sample_corpus / "SOP-ENG-114.pdf"]
    section = generated_section(parser.parse, pdfs, sample_corpus.parent / "truth")
    assert section.counts.tables_truth == 5 and section.counts.continues_truth == 1
    assert section.counts.footnotes_truth == 2 and section.counts.sections_truth == 19
    for name, value in section.totals:
        assert value is not None and value >= 0.95, (name, value, [d.misses for d in section.docs])
    assert [d.doc for d in section.docs] == ["SOP-8812", "SOP-ENG-114"]
    assert section.docs[1].continues_ok == 1 and section.docs[0].body_cell_f1 == section.docs[0].body.f1
    report = ParserQualityReport(parser="p", cpus=2, load_avg_start=[0.0], generated=section)
    text = render_text(report)
    assert "body_cell_f1" in text and "MISS" not in text and "2. Generated SOP corpus (2 documents" in text
    # The JSON form carries the per-document rates beside their counts.
    dumped = report.model_dump(mode="json")["generated"]["docs"][0]
    assert dumped["body"]["n_truth"] > 0 and dumped["body_cell_f1"] == section.docs[0].body_cell_f1
