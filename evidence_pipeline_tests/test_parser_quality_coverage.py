"""Word coverage (``parse-quality --coverage``): pdfium's words of a PDF against its evidence units."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evidence_pipeline.evaluation.parser_quality.coverage import (
    PLACES_SHOWN,
    PageReading,
    coverage_section,
    file_coverage,
    locate_words,
    pdf_page_texts,
    pdf_reference,
    pdf_words,
    reading_words,
    unreadable_char,
    word_spans,
    words_of,
)
from evidence_pipeline.evaluation.parser_quality.models import CoverageSection, ParserQualityReport, WordPlace
from evidence_pipeline.evaluation.parser_quality.rendering import render_text
from evidence_pipeline.evaluation.parser_quality.runner import run_report
from evidence_pipeline_tests.conftest import CORPORA

SMALL = CORPORA / "docling-tests" / "pdfs" / "2305.03393v1-pg9.pdf"
SCAN = CORPORA / "clinical-protocols" / "pdfs" / "NCT06155240_Prot_SAP_000.pdf"

needs_shared = pytest.mark.skipif(not SMALL.is_file(), reason="shared corpora not present")


def test_words_are_normalised_like_the_metrics():
    assert words_of("Cell-F1 — TABLE\u00a0Rows") == {"cell", "f1", "table", "rows"}
    assert words_of("Ef\ufffefects of popu\ufffelation") == {"effects", "of", "population"}


@needs_shared
def test_coverage_of_a_one_page_pdf(parse_cached):
    doc = parse_cached(SMALL)
    cov = file_coverage(SMALL, doc)
    reference = pdf_words(SMALL)
    assert cov.words == len(reference) > 100
    assert 0.9 < cov.share <= 1.0
    assert cov.n_lost == cov.words - cov.covered and set(cov.lost) <= reference
    # A unit that drops words shows them as lost.
    fewer = doc.model_copy(update={"blocks": [], "tables": doc.tables})
    assert file_coverage(SMALL, fewer).covered < cov.covered


@needs_shared
def test_words_of_recorded_page_furniture_are_counted_apart(parse_cached):
    """The paper page's running head ("Optimized Table Tokenization for Table Structure
    Recognition 9") is recorded as a page header: its words are accounted for, not lost,
    and counted in ``furniture``; without that record they are lost."""
    doc = parse_cached(SMALL)
    head = [b for b in doc.blocks if b.label == "page_header"]
    assert any("Optimized Table Tokenization" in b.text for b in head)
    cov = file_coverage(SMALL, doc)
    assert cov.furniture >= 2 and "tokenization" not in cov.lost and "optimized" not in cov.lost
    bare = doc.model_copy(update={"blocks": [b for b in doc.blocks if b.label != "page_header"]})
    lost = file_coverage(SMALL, bare)
    assert lost.furniture == 0 and {"tokenization", "optimized"} <= set(lost.lost)
    assert lost.covered == cov.covered - cov.furniture


@needs_shared
def test_a_scan_has_no_figure_but_a_reason_and_is_not_parsed(tmp_path):
    # A scan's coverage cannot be scored (pdfium reads no word), so it is not parsed (OCR would read
    # it); a file pdfium cannot open is parsed, so that its row gives the parser's reason.
    from evidence_pipeline.parser import DoclingParser

    (tmp_path / SCAN.name).symlink_to(SCAN)
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not a document")
    parsed: list[str] = []

    def parse(path: Path):
        parsed.append(path.name)
        return DoclingParser().parse(path)

    section = coverage_section(parse, [tmp_path])
    rows = {r.file: r for r in section.files}
    broken, row = rows["broken.pdf"], rows[SCAN.name]
    assert parsed == ["broken.pdf"]
    assert broken.share is None and broken.error.startswith("corrupt PDF")
    assert row.share is None and row.error == "no text layer: needs OCR"
    assert section.mean is None
    text = render_text(ParserQualityReport(parser="x", cpus=1, load_avg_start=[], coverage=section))
    assert "no text layer: needs OCR" in text


@needs_shared
def test_the_command_prints_each_file_and_the_mean(tmp_path):
    (tmp_path / SMALL.name).symlink_to(SMALL)
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "evidence_pipeline.cli", "parse-quality", "--coverage", str(tmp_path), "--quiet", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    assert SMALL.name in proc.stdout and "mean" in proc.stdout
    data = json.loads(out.read_text())
    (row,) = data["coverage"]["files"]
    assert row["file"] == SMALL.name and row["folder"] == str(tmp_path) and data["coverage"]["mean"] == row["share"]


# --------------------------------------------------------------------------- lost words located

# A two-page PDF: the rare word four times at the top of page 2, left-aligned at x = 72 pt.
RARE = "Quillwort"
LEFT, BASELINE_FROM_TOP, SIZE = 72.0, 100.0, 12.0
PAGE_TWO_TOP_LINE = f"{RARE} and {RARE.lower()} beside {RARE.upper()} and {RARE} grew near the creek."


@pytest.fixture(scope="module")
def two_pages(tmp_path_factory) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path_factory.mktemp("coverage") / "two_pages.pdf"
    c = Canvas(str(path), pagesize=A4, invariant=1)
    c.setFont("Helvetica", SIZE)
    height = A4[1]
    c.drawString(LEFT, height - BASELINE_FROM_TOP, "The first page tells of pumps, valves and their maintenance.")
    c.drawString(LEFT, height - BASELINE_FROM_TOP - 20, "Each valve is checked every week by the shift engineer.")
    c.showPage()
    c.setFont("Helvetica", SIZE)
    c.drawString(LEFT, height - BASELINE_FROM_TOP, PAGE_TWO_TOP_LINE)
    c.drawString(LEFT, height - BASELINE_FROM_TOP - 60, "A closing paragraph on the second page, about pumps again.")
    c.showPage()
    c.save()
    return path


def _drawn_spans(line: str, word: str) -> list[tuple[float, float]]:
    """Where reportlab's pen puts each occurrence of ``word`` (any case) in ``line`` drawn at ``LEFT``."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    spans, at = [], line.lower().find(word.lower())
    while at >= 0:
        start = LEFT + stringWidth(line[:at], "Helvetica", SIZE)
        spans.append((start, start + stringWidth(line[at : at + len(word)], "Helvetica", SIZE)))
        at = line.lower().find(word.lower(), at + 1)
    return spans


def _without(doc, fragment: str):
    """The parse with every block holding ``fragment`` dropped: its words reach no unit."""
    kept = [b for b in doc.blocks if fragment not in b.text]
    assert len(kept) < len(doc.blocks), [b.text for b in doc.blocks]
    return doc.model_copy(update={"blocks": kept})


def _read_back(path: Path, place: WordPlace) -> str:
    """pdfium's text inside ``place``'s box (turned back to pdfium's bottom-left origin)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        page = pdf[place.page - 1]
        height = page.get_height()
        l, t, r, b = place.box
        return page.get_textpage().get_text_bounded(l - 0.2, height - b - 0.2, r + 0.2, height - t + 0.2)
    finally:
        pdf.close()


def test_a_word_left_out_of_the_units_is_lost_with_its_page_and_box(two_pages, parse_cached):
    doc = parse_cached(two_pages)
    whole = file_coverage(two_pages, doc)
    assert whole.n_lost == 0 and whole.lost_at == []
    cov = file_coverage(two_pages, _without(doc, RARE))
    assert "quillwort" in cov.lost and {"grew", "creek", "beside"} <= set(cov.lost)
    rare = [p for p in cov.lost_at if p.word == "quillwort"]
    # four occurrences on the page, the first PLACES_SHOWN kept, in reading order
    assert len(rare) == PLACES_SHOWN == 3 and [p.page for p in rare] == [2, 2, 2]
    assert len(_drawn_spans(PAGE_TWO_TOP_LINE, RARE)) == 4
    for place, (start, end) in zip(rare, _drawn_spans(PAGE_TWO_TOP_LINE, RARE), strict=False):
        l, t, r, b = place.box
        # the pen's span of the word, less the glyphs' side bearings
        assert start <= l < start + 1.5 and end - 1.5 < r <= end, (place, start, end)
        # one line 12 pt high: the cap height above the baseline, the descender of "q" below it
        assert BASELINE_FROM_TOP - SIZE < t < BASELINE_FROM_TOP - 6 and BASELINE_FROM_TOP < b < BASELINE_FROM_TOP + 4
        assert words_of(_read_back(two_pages, place)) == {"quillwort"}
    # the words of page 1 were all kept: nothing lost is placed there
    assert {p.page for p in cov.lost_at} == {2}


def test_locate_words_keeps_a_page_range_and_the_order_of_the_text(two_pages):
    assert locate_words(two_pages, {"pumps"}, pages=(2, 2))[0].page == 2
    places = locate_words(two_pages, {"pumps", "valve"})
    assert [(p.word, p.page) for p in places] == [("pumps", 1), ("valve", 1), ("pumps", 2)]
    assert locate_words(two_pages, {"absentword"}) == []


def test_the_text_report_prints_each_lost_word_with_page_and_box(two_pages, parse_cached):
    cov = file_coverage(two_pages, _without(parse_cached(two_pages), RARE))
    text = render_text(ParserQualityReport(parser="x", cpus=1, load_avg_start=[], coverage=CoverageSection(files=[cov])))
    first = next(p for p in cov.lost_at if p.word == "quillwort")
    l, t, r, b = first.box
    assert f"    page 2 ({l:.1f}, {t:.1f}, {r:.1f}, {b:.1f}): quillwort" in text.splitlines()
    assert len([line for line in text.splitlines() if line.startswith("    page ")]) == len(cov.lost_at)


class _CountingParser:
    """A parser whose parses are counted (``calls``); the parse is the session's real one."""

    name = "counting-parser"

    def __init__(self, parse):
        self._parse, self.calls = parse, []

    def parse(self, path, doc_id=None):
        self.calls.append((Path(path).name, doc_id))
        return self._parse(path)


def test_coverage_through_the_eval_cache_parses_once_then_reads_back(two_pages, parse_cached, tmp_path):
    from evidence_pipeline.pipeline import PIPELINE_VERSION
    from evidence_pipeline.records import sha256_file

    folder = tmp_path / "pdfs"
    folder.mkdir()
    (folder / two_pages.name).symlink_to(two_pages)
    parser = _CountingParser(parse_cached)
    first = run_report(coverage=[folder], cache=tmp_path / "cache", parser=parser)
    stored = tmp_path / "cache" / "parsed" / f"counting-parser-v{PIPELINE_VERSION}" / f"{sha256_file(str(two_pages))}.json"
    assert parser.calls == [("two_pages.pdf", "two_pages")] and stored.is_file()
    second = run_report(coverage=[folder], cache=tmp_path / "cache", parser=parser)
    assert len(parser.calls) == 1  # read back, not parsed
    assert second.coverage.files == first.coverage.files and first.coverage.files[0].n_lost == 0
    run_report(coverage=[folder], parser=parser)  # without a cache every file parses
    assert len(parser.calls) == 2


def test_the_cache_key_is_evals(two_pages, parse_cached, tmp_path, monkeypatch):
    """A parse stored by ``eval --cache`` is the one coverage reads, and one stored by coverage
    is the one eval reads: here a parse with the rare line dropped, so that neither can have
    parsed the file again unseen."""
    from evidence_pipeline.evaluation.cache import ParseCache
    from evidence_pipeline.evaluation.runner import parse_documents
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.parser.baseline_chunks import ConvertingParser
    from evidence_pipeline.pipeline import PIPELINE_VERSION
    from evidence_pipeline.settings import ParserSettings

    folder = tmp_path / "pdfs"
    folder.mkdir()
    (folder / two_pages.name).symlink_to(two_pages)
    fewer = _without(parse_cached(two_pages), RARE).model_copy(update={"doc_id": "two_pages"})
    name = ConvertingParser(ParserSettings.from_env()).name  # as eval names it
    ParseCache(tmp_path / "cache", f"{name}-v{PIPELINE_VERSION}").put(fewer, None)

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed instead of reading the cache")

    monkeypatch.setattr(ConvertingParser, "convert", no_parse)
    monkeypatch.setattr(DoclingParser, "parse", no_parse)
    (evaled,) = parse_documents([folder / two_pages.name], with_docling=False, cache=tmp_path / "cache", log=print)
    assert [b.text for b in evaled.parsed.blocks] == [b.text for b in fewer.blocks]
    report = run_report(coverage=[folder], cache=tmp_path / "cache")
    (row,) = report.coverage.files
    assert "quillwort" in row.lost and row.lost_at[0].page == 2


def test_make_report_renders_the_coverage_per_corpus_and_the_worst_files(tmp_path):
    from evidence_pipeline.evaluation.measurements import find_reports, render
    from evidence_pipeline.evaluation.parser_quality.models import CoverageFile

    def row(folder, name, words, covered, lost=(), at=()):
        return CoverageFile(
            file=name, folder=folder, words=words, covered=covered, n_lost=words - covered, lost=list(lost), lost_at=list(at)
        )

    files = [
        row("../shared/corpora/sec-10q-dev", "a.pdf", 1000, 1000),
        row("../shared/corpora/sec-10q-dev", "b.pdf", 1000, 980, ["zeta", "alpha"], [WordPlace(word="zeta", page=4, box=(1, 2, 3, 4))]),
        row("../shared/corpora/clinical-protocols/pdfs", "c.pdf", 500, 499, ["omega"]).model_copy(update={"unreadable": 7}),
        CoverageFile(
            file="scan.pdf", folder="../shared/corpora/clinical-protocols/pdfs", words=0, covered=0, error="no text layer: needs OCR"
        ),
    ]
    report = ParserQualityReport(parser="docling-x", cpus=2, load_avg_start=[], coverage=CoverageSection(files=files))
    report.recorded = {"commit": "0123456789abcdef", "dirty": False, "utc": "2026-12-02T19:00:00Z", "pipeline_version": "22"}
    (tmp_path / "coverage.json").write_text(json.dumps(report.model_dump(mode="json")), encoding="utf-8")
    page = render(find_reports(tmp_path), tmp_path)
    assert "## Word coverage — `make coverage`" in page and "from 1 report in" in page
    assert "all files: mean 0.9927, min 0.9800" in page and "commit `0123456789`" in page
    assert "| sec-10q-dev | 2 | 0 | 0.9900 | 0.9800 | 1 | 0 |" in page
    assert "| clinical-protocols | 2 | 1 | 0.9980 | 0.9980 | 0 | 7 |" in page
    assert "unreadable words" in page
    worst = [line for line in page.splitlines() if line.startswith("| sec-10q-dev | `") or line.startswith("| clinical-protocols | `")]
    assert worst == [
        "| sec-10q-dev | `b.pdf` | 0.9800 | 20 | `zeta (p. 4)`, `alpha` |",
        "| clinical-protocols | `c.pdf` | 0.9980 | 1 | `omega` |",
        "| sec-10q-dev | `a.pdf` | 1.0000 | 0 |  |",
    ]


# --------------------------------------------------------------------------- what pdfium cannot read


def _minimal_pdf(objects: list[bytes]) -> bytes:
    """A PDF of the given objects (numbered from 1, the first the catalogue), with its xref."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


@pytest.fixture(scope="module")
def unmapped_font(tmp_path_factory) -> Path:
    """One page: "Readable words" in Helvetica, then "Monitoring abcde" in a Type 3 font whose
    glyphs have made-up names and no ToUnicode map: pdfium gives the codes ("abcde") as text
    and flags each character (``FPDFText_HasUnicodeMapError``)."""
    glyph = b"600 0 0 0 500 700 d1 0 0 500 700 re f"
    content = b"BT /F1 12 Tf 40 150 Td (Readable words) Tj ET BT /F2 12 Tf 40 100 Td (abcde) Tj ET"
    names = b" ".join(b"/g%d" % k for k in range(5))
    procs = b" ".join(b"/g%d 7 0 R" % k for k in range(5))
    path = tmp_path_factory.mktemp("unmapped") / "unmapped_font.pdf"
    path.write_bytes(
        _minimal_pdf([
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 400 200] /Contents 4 0 R"
            b" /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
            _stream(content),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 600 700] /FontMatrix [0.001 0 0 0.001 0 0]"
            b" /FirstChar 97 /LastChar 101 /Widths [600 600 600 600 600]"
            b" /Encoding << /Type /Encoding /Differences [97 " + names + b"] >> /CharProcs << " + procs + b" >> /Resources << >> >>",
            _stream(glyph),
        ])
    )  # fmt: skip
    return path


def test_a_word_in_a_font_without_unicode_is_unreadable_not_lost(unmapped_font, parse_cached):
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    # pdfium's own text holds the glyph codes as if they were letters, and says it could not map them
    (text,) = pdf_page_texts(unmapped_font)
    assert "abcde" in text and words_of(text) == {"readable", "words", "abcde"}
    pdf = pdfium.PdfDocument(str(unmapped_font))
    textpage = pdf[0].get_textpage()
    at = text.index("abcde")
    assert [pdfium_c.FPDFText_HasUnicodeMapError(textpage.raw, i) for i in (0, at, at + 4)] == [0, 1, 1]
    textpage.close()
    pdf.close()
    # the probe scores the words pdfium read and counts the other apart
    reference = pdf_reference(unmapped_font)
    assert reference.words == {"readable", "words"} and reference.unreadable == {"abcde"}
    cov = file_coverage(unmapped_font, parse_cached(unmapped_font))
    assert (cov.words, cov.unreadable, cov.unreadable_shown) == (2, 1, ["abcde"])
    assert "abcde" not in cov.lost and cov.covered + cov.n_lost == cov.words
    row = json.loads(cov.model_dump_json())
    assert row["unreadable"] == 1 and row["words"] == 2
    text = render_text(ParserQualityReport(parser="x", cpus=1, load_avg_start=[], coverage=CoverageSection(files=[cov])))
    assert "    unreadable by pdfium, not scored: abcde" in text.splitlines()
    assert "1 words unreadable by pdfium, not scored" in text


def test_unreadable_codes_and_words_that_hold_them():
    assert not unreadable_char("a") and not unreadable_char("\ufffe")  # U+FFFE: pdfium's line-end hyphen
    assert unreadable_char("a", map_error=True)
    assert all(unreadable_char(c) for c in "\x00\ufffd\uffff\ue000\uf8ff\U000f0041")
    assert not any(unreadable_char(c) for c in "é€\u00ad\U0001d400 ")
    # a word holding an unreadable character, or glued by unreadable ones to another, is unreadable
    text = "Side e\ue001ect here; \ue002 alone; gl\u0001yph 0rqlwrulqj Flovent\uf6da (\uf03e4000)"
    unreadable = frozenset(i for i, ch in enumerate(text) if ch in "\ue001\ue002\u0001\uf6da\uf03e") | {text.index("q")}
    read, unread = reading_words(PageReading(text=text, unreadable=unreadable))
    assert unread == {"e", "ect", "gl", "yph", "0rqlwrulqj"}
    # a symbol pdfium could not read at a word's edge leaves the word read
    assert read == {"side", "here", "alone", "flovent", "4000"}
    # one alone is no word; white space pdfium shows stays a separator
    spaced = "one two"
    assert reading_words(PageReading(text=spaced, unreadable=frozenset({3}))) == ({"one", "two"}, set())
    # a word read somewhere is no unreadable word
    assert reading_words(PageReading(text="cell cell", unreadable=frozenset({1}))) == ({"cell"}, set())
    # without breaks or unreadable characters, the words are words_of's
    plain = "Ef\ufffefects of Cell-F1 \u2014 TABLE\u00a0Rows"
    assert reading_words(PageReading(text=plain)) == (words_of(plain), set())


def test_breaks_cut_a_word_and_word_spans_follow_them():
    reading = PageReading(text="Net income in2016 and2015", breaks=frozenset({16, 24}))
    # before "6" of "in2016" and "5" of "and2015": text indices, not words
    assert reading_words(reading) == ({"net", "income", "in201", "6", "and201", "5"}, set())
    reading = PageReading(text="Net income in2016 and2015", breaks=frozenset({13, 21}))
    assert reading_words(reading)[0] == {"net", "income", "in", "2016", "and", "2015"}
    assert list(word_spans(reading, {"2016", "and"})) == [("2016", 13, 17), ("and", 18, 21)]


def _glyph_line(canvas, x: float, y: float, pieces: list[str], font: str = "Helvetica", size: float = 12.0) -> None:
    """Each piece a text object of its own; a lone space adds nothing to the pen: the next word
    starts where the one before ended, the space a text object of no width between them."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    for piece in pieces:
        text = canvas.beginText(x, y)
        text.setFont(font, size)
        text.textOut(piece)
        canvas.drawText(text)
        if piece != " ":
            x += stringWidth(piece, font, size)


@pytest.fixture(scope="module")
def word_gaps(tmp_path_factory) -> Path:
    """A line whose word gaps are lone space objects drawn with no room, and the same inside a
    form drawn moved and scaled: pdfium's text runs each line's words together."""
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path_factory.mktemp("gaps") / "word_gaps.pdf"
    c = Canvas(str(path), pagesize=(400, 300), invariant=1)
    _glyph_line(c, 40, 250, ["Income", " ", "tax", " ", "in", " ", "2017", " ", "and", " ", "2016"])
    c.beginForm("held")
    _glyph_line(c, 0, 0, ["Shares", " ", "held"])
    c.endForm()
    c.saveState()
    c.translate(100, 120)
    c.scale(1.5, 1.5)
    c.doForm("held")
    c.restoreState()
    c.showPage()
    c.save()
    return path


def test_a_word_gap_pdfium_left_out_cuts_its_word(word_gaps, parse_cached):
    (text,) = pdf_page_texts(word_gaps)
    assert words_of(text) == {"incometaxin2017and2016", "sharesheld"}  # pdfium's own reading
    reference = pdf_reference(word_gaps)
    assert reference.words == {"income", "tax", "in", "2017", "and", "2016", "shares", "held"}
    assert reference.unreadable == set() and set(reference.breaks) == {1}
    # the parser reads the spaces: nothing lost
    cov = file_coverage(word_gaps, parse_cached(word_gaps))
    assert (cov.words, cov.covered, cov.lost) == (8, 8, [])
    # a lost word is found where the text has it, with the breaks found again or passed on
    (place,) = locate_words(word_gaps, {"2017"})
    assert place.page == 1 and words_of(_read_back(word_gaps, place)) == {"2017"}
    assert locate_words(word_gaps, {"2017"}, breaks=reference.breaks) == [place]
    assert locate_words(word_gaps, {"2017"}, breaks={}) == []  # pdfium's own words: no "2017"


def test_a_word_gap_with_room_and_a_word_without_gaps_stay_as_they_are(tmp_path):
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path / "spaced.pdf"
    c = Canvas(str(path), pagesize=(400, 300), invariant=1)
    c.setFont("Helvetica", 12)
    c.drawString(40, 250, "Income tax in 2017 and 2016")  # one text object, real spaces
    _glyph_line(c, 40, 200, ["Net", " ", "  ", "revenue"])  # a lone space object, then room
    _glyph_line(c, 40, 150, ["un", "breakable"])  # two objects, nothing between them
    c.showPage()
    c.save()
    assert pdf_reference(path).words == words_of(pdf_page_texts(path)[0]) == {
        "income", "tax", "in", "2017", "and", "2016", "net", "revenue", "unbreakable",
    }  # fmt: skip


@pytest.fixture(scope="module")
def left_out_glyph(tmp_path_factory) -> Path:
    """ "adverse effect" in Times bold italic one glyph at a time, the second "f" 0.27 em after
    the first (its advance is 0.333 em): pdfium takes it for a fake-bold copy of the first and
    leaves it out ("ef ect"). Below, "bold heading" in real fake bold, each glyph drawn twice
    0.3 pt apart: pdfium leaves the copies out and reads it right."""
    from reportlab.pdfbase.pdfmetrics import stringWidth
    from reportlab.pdfgen.canvas import Canvas

    path = tmp_path_factory.mktemp("left_out") / "left_out_glyph.pdf"
    c = Canvas(str(path), pagesize=(400, 300), invariant=1)
    font, size, x = "Times-BoldItalic", 12.0, 40.0
    for i, ch in enumerate("adverse effect"):
        _glyph_line(c, x, 250, [ch], font, size)
        x += 0.27 * size if i == 9 else stringWidth(ch, font, size)
    x = 40.0
    for ch in "bold heading":
        _glyph_line(c, x, 200, [ch], "Helvetica-Bold", size)
        _glyph_line(c, x + 0.3, 200, [ch], "Helvetica-Bold", size)
        x += stringWidth(ch, "Helvetica-Bold", size)
    c.showPage()
    c.save()
    return path


def test_words_on_a_glyph_pdfium_left_out_are_unreadable(left_out_glyph):
    (text,) = pdf_page_texts(left_out_glyph)
    assert "adverse ef ect" in text and "bold heading" in text  # one "f" gone; the copies too
    reference = pdf_reference(left_out_glyph)
    assert reference.words == {"adverse", "bold", "heading"}
    assert reference.unreadable == {"ef", "ect"}


@needs_shared
def test_shared_files_pdfium_misreads(parse_cached):
    """A protocol set in a font without a Unicode map, a 10-K whose word gaps are lone space
    objects, and a clean 10-Q, as ``make coverage`` reads them."""
    protocol = CORPORA / "sponsor-protocols" / "pdfs" / "NCT01144338_Prot_000.pdf"
    tenk = CORPORA / "financebench-more" / "pdfs" / "COCACOLA_2017_10K.pdf"
    tenq = CORPORA / "sec-10q-dev" / "pdfs" / "2022 Q3 AAPL.pdf"
    if not (protocol.is_file() and tenk.is_file() and tenq.is_file()):
        pytest.skip("shared files not present")
    garbled = pdf_reference(protocol, pages=(2, 2))  # its table of contents; the page number reads
    assert garbled.words == {"2"} and len(garbled.unreadable) > 20
    assert "0rqlwrulqj" in words_of(pdf_page_texts(protocol, (4, 4))[0]) and "0rqlwrulqj" in pdf_reference(protocol, (4, 4)).unreadable
    assert pdf_reference(protocol, pages=(6, 6)).unreadable == set()  # a page in a mapped font
    joined = pdf_reference(tenk, pages=(60, 60))
    assert "and2016" in words_of(pdf_page_texts(tenk, (60, 60))[0]) and "and2016" not in joined.words
    assert {"and", "2016"} <= joined.words
    clean = pdf_reference(tenq)
    assert clean.unreadable == set() and clean.words == pdf_words(tenq)
    assert clean.words == set().union(*(words_of(t) for t in pdf_page_texts(tenq)))
