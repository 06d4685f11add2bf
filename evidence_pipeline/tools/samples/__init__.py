"""Deterministic SOP-like sample PDFs with ground truth, for parser and retrieval tests.

``corpus.generate_corpus(out_dir)`` writes six PDFs (text layer, standard fonts, no images)
into ``out_dir`` and one ``SampleTruth`` JSON per PDF into ``out_dir.parent / "truth"``,
plus ``truth/questions.jsonl``; ``python -m evidence_pipeline.tools.samples OUT_DIR`` runs it.
``corpus.write_questions(path)`` writes the retrieval questions of the whole corpus as JSONL.

The documents exercise what makes tables hard to retrieve: a warning paragraph that
governs a table, a two-level header, footnote markers in cells, a table crossing a page
break with its header repeated, a borderless table captioned below, two same-shaped
tables told apart only by caption, two documents whose IDs differ only by digit order,
a figure caption that is not a table caption, and a two-column page.

Output is byte-identical across runs (reportlab ``invariant=1``, fixed metadata, values
computed by formulas rather than a random generator), so a content hash is stable.

Question semantics: ``answers`` are strings that occur literally on ``page`` of
``doc_id``; ``must_include`` are strings the retrieved evidence should carry (the
governing warning, or the caption that tells the table apart). For ``exact_id``
questions the near-twin document holds the same caption, so only ``doc_id`` decides.

Modules: ``spec`` (the document model), ``docs_manufacturing`` and ``docs_quality`` (the
six documents), ``render`` (reportlab; the only module that needs the ``tools`` extra),
``truth`` (ground-truth records, readable without reportlab), ``corpus`` (the writer),
``twins`` (near twins of the six documents for ``evaluation.twin_questions``).
This ``__init__`` imports nothing, so ``truth`` loads without reportlab.
"""
