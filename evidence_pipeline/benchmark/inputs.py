"""The documents a benchmark command measures: the paths it was given, or the generated sample corpus."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path


def documents(paths: Sequence[str], workdir: Path) -> list[Path]:
    """The documents under ``paths`` (files or folders) in name order; with no paths, the sample
    corpus generated into ``workdir/corpus``."""
    if paths:
        from evidence_pipeline.corpus import expand_paths

        return sorted(expand_paths(paths))
    from evidence_pipeline.tools.samples.corpus import generate_corpus

    return sorted(generate_corpus(workdir / "corpus"))


def parsed_children(folder: str | Path, doc_prefix: str = "") -> Iterator[tuple[str, list]]:
    """(doc id, the children ingest embeds) for every ParsedDoc JSON in ``folder`` (the eval
    parse cache, ``data/cache/eval/parsed/<parser>``) whose id starts with ``doc_prefix``, built
    as ingest builds them."""
    from evidence_pipeline import pipeline
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.records import ParsedDoc

    counter = token_counter(None)
    for path in sorted(Path(folder).glob("*.json")):
        if path.name.endswith(".docling.json"):  # the cache's DoclingDocuments beside them
            continue
        doc = ParsedDoc.model_validate_json(path.read_text())
        if doc.doc_id.startswith(doc_prefix):
            units = pipeline.document_units(doc, pipeline.PipelineOptions(), counter)
            yield doc.doc_id, pipeline.children_of(units, counter)
