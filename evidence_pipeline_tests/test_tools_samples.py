"""The sample corpus: deterministic PDFs whose ground truth matches their text layer."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pdfplumber
import pytest

from evidence_pipeline.tools.samples.corpus import QUESTIONS_FILE, generate_corpus, write_questions
from evidence_pipeline.tools.samples.truth import SampleTruth, load_truth


def _norm(text: str) -> str:
    return " ".join(text.split())


def _occurs(needle: str, haystack: str) -> bool:
    """Whole-token occurrence: "17" must not match inside "17.5" or "1117"."""
    pattern = r"(?<![\w.])" + re.escape(_norm(needle)) + r"(?!\w|\.\d)"
    return re.search(pattern, haystack) is not None


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[list[Path], dict[str, SampleTruth], dict[str, list[str]]]:
    out = tmp_path_factory.mktemp("samples") / "corpus"
    paths = generate_corpus(out)
    truths = {t.doc_id: t for t in load_truth(out.parent / "truth")}
    texts = {}
    for path in paths:
        with pdfplumber.open(path) as pdf:
            texts[path.stem] = [_norm(page.extract_text() or "") for page in pdf.pages]
    return paths, truths, texts


def test_regenerating_gives_identical_bytes(tmp_path, corpus):
    paths, _, _ = corpus
    again = generate_corpus(tmp_path / "corpus")
    assert [p.name for p in again] == [p.name for p in paths]
    for first, second in zip(paths, again):
        assert first.read_bytes() == second.read_bytes(), first.name
    for name in ["SOP-8812.json", QUESTIONS_FILE]:
        assert (paths[0].parent.parent / "truth" / name).read_bytes() == (tmp_path / "truth" / name).read_bytes()


def test_every_pdf_has_the_expected_pages_and_furniture(corpus):
    paths, truths, texts = corpus
    assert sorted(p.stem for p in paths) == sorted(truths) and len(paths) == 6
    for doc_id, pages in texts.items():
        truth = truths[doc_id]
        assert len(pages) == truth.n_pages > 1
        assert truth.title_line in pages[0]
        for n, text in enumerate(pages, start=1):
            assert f"{doc_id} Rev. {truth.revision}" in text
            assert f"Page {n} of {truth.n_pages}" in text


def test_captions_sections_and_cells_are_in_the_text(corpus):
    _, truths, texts = corpus
    n_tables = 0
    for doc_id, truth in truths.items():
        pages = texts[doc_id]
        for section in truth.sections:
            assert f"{section.number} {section.title}" in pages[section.page - 1]
        for table in truth.tables:
            n_tables += 1
            assert any(table.caption in pages[p - 1] for p in table.pages), table.caption
            for row, page in [
                (table.body_rows[0], table.row_pages[0]),
                (table.body_rows[-1], table.row_pages[-1]),
            ]:
                # Short cells are single lines; a wrapped cell interleaves with its row.
                assert all(_norm(cell) in pages[page - 1] for cell in row if len(cell) < 40), (doc_id, row)
            for marker, note in table.footnotes.items():
                assert any(f"{marker} {note}" in pages[p - 1] for p in table.pages)
    assert n_tables == 12


def test_lnp_table_truth(corpus):
    _, truths, texts = corpus
    table = truths["SOP-8812"].tables[0]
    assert table.caption == "Table 1: Pump flow rate limits" and table.caption_position == "above"
    assert table.header_rows == [
        ["Stream", "Flow rate (mL/min)", "Flow rate (mL/min)", "Pressure (bar)", "Pressure (bar)"],
        ["", "Min", "Max", "Min", "Max"],
    ]
    assert table.body_rows[0] == ["Aqueous Phase 1", "0.6", "1.8", "0.35", "2.4*"]
    assert table.footnotes["*"] == "Only with the high-pressure manifold installed."
    assert table.context_above == (
        "WARNING: If processing lipid nanoparticles, confirm the cooling jacket is active before starting the pumps."
    )
    assert table.ruled and not table.continues
    page = texts["SOP-8812"][table.pages[0] - 1]
    # The warning sits directly above the caption in reading order.
    assert page.index(table.context_above) < page.index(table.caption) < page.index("Aqueous Phase 1")
    figure = truths["SOP-8812"].figures[0]
    assert figure.caption == "Figure 1: Mixer schematic"
    assert figure.caption in texts["SOP-8812"][figure.page - 1]
    assert all(not t.caption.startswith("Figure") for t in truths["SOP-8812"].tables)


def test_long_table_crosses_a_page_with_repeated_header(corpus):
    _, truths, texts = corpus
    table = next(t for t in truths["SOP-ENG-114"].tables if t.continues)
    assert table.caption == "Table 2: Calibration intervals for process instruments"
    assert len(table.body_rows) == 60
    first, second = table.pages
    assert second == first + 1
    assert table.row_pages == sorted(table.row_pages)
    assert first in table.row_pages and second in table.row_pages
    header = _norm(" ".join(table.header_rows[0]))
    for page in (first, second):
        assert header in texts["SOP-ENG-114"][page - 1]
    last_on_first = max(i for i, p in enumerate(table.row_pages) if p == first)
    assert table.body_rows[last_on_first][0] in texts["SOP-ENG-114"][first - 1]
    assert table.body_rows[last_on_first + 1][0] in texts["SOP-ENG-114"][second - 1]
    assert table.body_rows[last_on_first + 1][0] not in texts["SOP-ENG-114"][first - 1]


def test_borderless_table_has_no_ruling_and_caption_below(corpus):
    paths, truths, _ = corpus
    table = next(t for t in truths["SOP-ENG-114"].tables if not t.ruled)
    assert table.caption == "Table 3 \u2013 Buffer compositions" and table.caption_position == "below"
    path = next(p for p in paths if p.stem == "SOP-ENG-114")
    with pdfplumber.open(path) as pdf:
        page = pdf.pages[table.pages[0] - 1]
        word = next(w for w in page.extract_words() if w["text"] == "Phthalate")
        caption = next(w for w in page.extract_words() if w["text"] == "Buffer" and w["top"] > word["top"] + 40)
        for found in page.find_tables():
            x0, top, x1, bottom = found.bbox
            assert not (top <= word["top"] <= bottom), "borderless rows fell inside a ruled table"
    assert caption["top"] > word["top"]


def test_questions_are_answerable_on_their_page(corpus):
    _, truths, texts = corpus
    questions = [q for t in truths.values() for q in t.questions]
    assert len(questions) >= 40
    assert len({q.id for q in questions}) == len(questions)
    kinds = {q.kind for q in questions}
    assert kinds == {"table_cell", "footnote", "long_tail", "exact_id", "similar", "prose"}
    for q in questions:
        page = texts[q.doc_id][q.page - 1]
        for answer in q.answers:
            assert _occurs(answer, page), (q.id, answer, q.page)
        full = " ".join(texts[q.doc_id])
        for must in q.must_include:
            assert _norm(must) in full, (q.id, must)


def test_table_answers_are_unique_in_the_corpus(corpus):
    _, truths, texts = corpus
    full = {doc_id: " ".join(pages) for doc_id, pages in texts.items()}
    for truth in truths.values():
        for q in truth.questions:
            if q.kind == "prose":
                continue
            holders = [d for d, text in full.items() if any(_occurs(a, text) for a in q.answers)]
            assert holders == [q.doc_id], (q.id, q.answers, holders)


def test_long_tail_questions_point_at_the_continuation_page(corpus):
    _, truths, _ = corpus
    table = next(t for t in truths["SOP-ENG-114"].tables if t.continues)
    long_tail = [q for q in truths["SOP-ENG-114"].questions if q.kind == "long_tail"]
    assert len(long_tail) >= 4
    assert all(q.page == table.pages[1] and q.must_include == [table.caption] for q in long_tail)


def test_similar_tables_differ_only_by_caption_and_values(corpus):
    _, truths, _ = corpus
    cold, warm = truths["SOP-MFG-231"].tables
    assert cold.caption == "Table 1: Hold times at 2\u20138 \u00b0C" and warm.caption == "Table 2: Hold times at 25 \u00b0C"
    assert cold.header_rows == warm.header_rows
    assert [r[:2] for r in cold.body_rows] == [r[:2] for r in warm.body_rows]
    assert warm.context_above.startswith("CAUTION:") and not cold.context_above.startswith("CAUTION")
    for q in truths["SOP-MFG-231"].questions:
        if q.kind != "similar":
            continue
        own, other = (cold, warm) if q.must_include == [cold.caption] else (warm, cold)
        assert any(q.answers[0] in row for row in own.body_rows), q.id
        assert not any(q.answers[0] in row for row in other.body_rows), q.id


def test_near_identical_document_ids_are_told_apart(corpus):
    _, truths, texts = corpus
    assert {"SOP-QA-070", "SOP-QA-007"} <= set(truths)
    a, b = truths["SOP-QA-070"], truths["SOP-QA-007"]
    assert [s.title for s in a.sections] == [s.title for s in b.sections]
    assert [t.caption for t in a.tables][1] == [t.caption for t in b.tables][1] == "Table 2: Sampling plan"
    assert "USP <87>" in " ".join(texts["SOP-QA-070"]) and "USP <85>" in " ".join(texts["SOP-QA-007"])
    for doc_id, twin in [("SOP-QA-070", "SOP-QA-007"), ("SOP-QA-007", "SOP-QA-070")]:
        assert all(twin not in page for page in texts[doc_id])
        exact = [q for q in truths[doc_id].questions if q.kind == "exact_id"]
        assert len(exact) >= 3 and all(doc_id in q.question for q in exact)


def test_write_questions_jsonl(tmp_path, corpus):
    _, truths, _ = corpus
    path = write_questions(tmp_path / "q.jsonl", list(truths.values()))
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == sum(len(t.questions) for t in truths.values())
    assert set(rows[0]) == {"id", "question", "doc_id", "answers", "must_include", "page", "kind"}


PACKAGE = Path(__file__).resolve().parents[1] / "evidence_pipeline"
# Tools and measurement harnesses may use the generator; the runtime core may not.
NOT_RUNTIME = {"tools", "evaluation", "benchmark"}


def _imports_of_tools(tree: ast.AST, top_level_only: bool) -> list[int]:
    nodes = tree.body if top_level_only else ast.walk(tree)
    lines = []
    for node in nodes:
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        )
        if any(n == "evidence_pipeline.tools" or n.startswith("evidence_pipeline.tools.") for n in names):
            lines.append(node.lineno)
    return lines


def test_runtime_core_does_not_import_the_tools():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in NOT_RUNTIME:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # The CLI's `generate` imports the generator inside its function, when it is asked for.
        lines = _imports_of_tools(tree, top_level_only=rel.name == "cli.py")
        offenders += [f"{rel}:{n}" for n in lines]
    assert offenders == []


def test_core_imports_without_reportlab():
    code = (
        "import sys\n"
        "sys.modules['reportlab'] = None\n"  # any `import reportlab...` now raises ImportError
        "import evidence_pipeline, evidence_pipeline.cli, evidence_pipeline.pipeline, evidence_pipeline.retrieval\n"
        "import evidence_pipeline.parser, evidence_pipeline.store, evidence_pipeline.evaluation.runner\n"
        "from evidence_pipeline.tools.samples.truth import SampleTruth\n"
        "assert 'evidence_pipeline.tools.samples.render' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_generate_without_reportlab_names_the_extra(tmp_path, monkeypatch, capsys):
    from evidence_pipeline.cli import main

    monkeypatch.setitem(sys.modules, "reportlab", None)  # import reportlab now fails; find_spec says None
    assert main(["generate", str(tmp_path / "corpus")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "reportlab" in err and "evidence_pipeline[tools]" in err
    assert not (tmp_path / "corpus").exists()
