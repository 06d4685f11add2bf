"""How the dev question sets under ``data/questions/`` were curated, with every per-question decision.

Not part of the installed package: run from the repository root, e.g.

    python -m scripts.datasets.curate_sec --corpus ../shared/corpora/sec-10q-dev
    python -m scripts.datasets.curate_financebench --corpus ../shared/corpora/financebench-dev

Each writes the question file (``data/questions/<set>.jsonl``, FORMAT.md) and, beside it, the
decisions (``<set>.curation.json``: kept or dropped, and why). They use the package's question
format and metrics; the package imports nothing from here.
"""
