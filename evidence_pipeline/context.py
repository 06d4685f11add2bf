"""The text a language model reads for a list of hits: each parent's text, shared headers once."""

from __future__ import annotations

from collections.abc import Sequence

from evidence_pipeline.records import SearchHit, document_head


def _shared_head(hit: SearchHit) -> str:
    """The lines a parent's text opens with that name its document and section (``records.document_head``)."""
    return "".join(line + "\n" for line in document_head(hit.doc_id, hit.doc_title, hit.section_path))


def context_texts(hits: Sequence[SearchHit]) -> list[str]:
    """Each hit's context text (``SearchHit.context_text``: a large table focused on the rows
    asked, else the parent's whole text), in order; where several parents share a document and
    section, the shared header is rendered once (with the first of them) and left out of the others."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    texts = []
    for hit in hits:
        key = (hit.doc_id, tuple(hit.section_path))
        head = _shared_head(hit)
        text = hit.context_text
        if key in seen and text.startswith(head):
            texts.append(text[len(head) :])
        else:
            texts.append(text)
        seen.add(key)
    return texts


def render_context(hits: Sequence[SearchHit]) -> str:
    """``context_texts`` joined by blank lines: what an application hands a language model."""
    return "\n\n".join(context_texts(hits))
