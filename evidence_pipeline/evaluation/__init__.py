"""Retrieval evaluation: the question format, metrics and baselines of ``shared/eval/FORMAT.md``.

``metrics`` holds pure scoring functions, ``questions`` loads question files,
``baselines`` the fixed-window chunker, ``systems`` builds and queries the four
systems, ``report`` renders the results. ``evidence-pipeline eval`` runs it all.
"""
