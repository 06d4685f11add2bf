"""Docling's HybridChunker as an evaluation baseline (the only place the project uses it).

``ConvertingParser.convert(path)`` returns the ParsedDoc together with the
DoclingDocument of the same conversion, so the baseline chunks exactly the
document the pipeline parsed. ``hybrid_chunk_texts`` runs the chunker with its
defaults on a local tokenizer: Docling would otherwise fetch the tokenizer and
its ``max_seq_length`` from the Hugging Face Hub.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evidence_pipeline.embedding import max_seq_length
from evidence_pipeline.parser.docling_parser import DoclingParser
from evidence_pipeline.records import ParsedDoc


class _CapturingConverter:
    """Forwards to Docling's converter and keeps the last converted document."""

    def __init__(self, inner: Any, owner: ConvertingParser):
        self._inner = inner
        self._owner = owner

    def convert(self, *args: Any, **kwargs: Any) -> Any:
        result = self._inner.convert(*args, **kwargs)
        self._owner.last_document = getattr(result, "document", None)
        return result


class ConvertingParser(DoclingParser):
    """A DoclingParser that also hands out the DoclingDocument it converted."""

    last_document: Any = None

    @property
    def converter(self):
        return _CapturingConverter(super().converter, self)

    def convert(self, path: Path, doc_id: str | None = None) -> tuple[ParsedDoc, Any]:
        self.last_document = None
        parsed = self.parse(Path(path), doc_id)
        return parsed, self.last_document


def default_max_tokens(model_dir: str) -> int:
    """What HybridChunker would pick by itself: the model's ``max_seq_length`` (256 for MiniLM)."""
    return max_seq_length(model_dir)


def hybrid_chunk_texts(dl_doc: Any, model_dir: str, max_tokens: int | None = None) -> list[tuple[str, list[int]]]:
    """(contextualised text, pages) of each HybridChunker chunk, in document order."""
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.huggingface import HuggingFaceTokenizer

    tokenizer = HuggingFaceTokenizer.from_pretrained(model_dir, max_tokens=max_tokens or default_max_tokens(model_dir))
    # Only silences transformers' "longer than 512" warning when counting whole sections;
    # the chunker's limit is ``max_tokens``.
    tokenizer.tokenizer.model_max_length = 1 << 30
    chunker = HybridChunker(tokenizer=tokenizer)
    out: list[tuple[str, list[int]]] = []
    for chunk in chunker.chunk(dl_doc=dl_doc):
        pages = sorted({p.page_no for item in chunk.meta.doc_items for p in (item.prov or [])})  # type: ignore[attr-defined]  # DocMeta
        out.append((chunker.contextualize(chunk=chunk), pages))
    return out


def docling_to_json(dl_doc: Any) -> str:
    """Docling's document as JSON (for the evaluation cache)."""
    return dl_doc.model_dump_json()


def docling_from_json(text: str) -> Any:
    from docling_core.types.doc import DoclingDocument

    return DoclingDocument.model_validate_json(text)
