"""Retrieval evaluation: the question format, metrics and baselines of ``shared/eval/FORMAT.md``.

``metrics`` holds pure scoring functions, ``questions`` loads question files,
``baselines`` the fixed-window chunker and plain BM25 over its windows, ``systems``
builds and queries the five systems, ``report`` renders the results.
``evidence-pipeline eval`` runs it all.
"""
