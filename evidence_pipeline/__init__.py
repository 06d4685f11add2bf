"""evidence_pipeline: documents -> evidence units that keep tables whole -> a hybrid Qdrant index."""

from __future__ import annotations

__version__ = "0.1.0"


def search(query: str, k: int | None = None, **kwargs):
    """See :func:`evidence_pipeline.retrieval.search`."""
    from evidence_pipeline.retrieval import search as _search

    return _search(query, k, **kwargs)


__all__ = ["search", "__version__"]
