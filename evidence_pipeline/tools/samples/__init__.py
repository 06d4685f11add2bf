"""Deterministic SOP-like sample PDFs with ground truth, for parser and retrieval tests.

``corpus.generate_corpus(out_dir)`` (or ``python -m evidence_pipeline.tools.samples OUT_DIR``)
writes six PDFs into ``out_dir``, one ``SampleTruth`` JSON per PDF and ``questions.jsonl`` into
``out_dir.parent / "truth"``; ``corpus.write_questions(path)`` writes the questions alone. Output
is byte-identical across runs (reportlab ``invariant=1``, fixed metadata, no random values).

The documents exercise what makes tables hard to retrieve: a warning paragraph that governs a
table, a two-level header, footnote markers in cells, a table crossing a page break, a
borderless table captioned below, same-shaped tables told apart only by caption, IDs that
differ only by digit order, a figure caption that is no table caption, a two-column page.

``answers`` occur literally on ``page`` of ``doc_id``; ``must_include`` are strings the
retrieved evidence should carry (the governing warning, the telling caption); for ``exact_id``
questions the near-twin holds the same caption, so only ``doc_id`` decides.
Modules: ``spec`` (the document model), ``docs_manufacturing`` and ``docs_quality`` (the six
documents), ``render`` (reportlab, the ``tools`` extra), ``truth`` (readable without reportlab),
``corpus`` (the writer), ``twins`` (near twins for ``evaluation.twin_questions``). This
``__init__`` imports nothing, so ``truth`` loads without reportlab.
"""
