"""Word coverage: how much of a PDF's own text reaches its evidence units.

The reference is pdfium's text of the same pages, a decoder independent of the parser's. Both
sides are normalised (NFKC, dashes, case) and cut into words; the figure is the share of the
document's distinct words found in the text of any of its evidence units. Lost words show in
``lost``, each located in pdfium's text (``locate_words``: page and box, PDF points from the
page's top-left corner).

A word found only in recorded page furniture (``page_header`` / ``page_footer`` blocks) or in
a table of contents (``units.is_contents_entry``) is accounted for and counted apart
(``furniture``); a word in a unit and in furniture counts as found.

Where pdfium cannot read the page the probe says so (``read_page``). A word holding a character
pdfium could not map to Unicode ("0rqlwrulqj" for "Monitoring", U+FFFD, a private-use point), or
standing on a glyph pdfium left out of its text (an "ff" drawn glyph by glyph, taken for fake
bold), is *unreadable*: neither found nor lost, counted apart (``unreadable``). Where the content
stream draws a word gap as a zero-width text object that pdfium leaves out ("and2016"), the
reference word is cut there (``word_gap_breaks``). Other pages keep exactly ``words_of``'s words.
"""

from __future__ import annotations

import bisect
import ctypes
import functools
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from evidence_pipeline.errors import ParseError
from evidence_pipeline.evaluation.parser_quality.metrics import normalise
from evidence_pipeline.evaluation.parser_quality.models import CoverageFile, CoverageSection, WordPlace
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.units import build_units, is_contents_entry

_WORD = re.compile(r"\w+")
LOST_SHOWN = 30  # lost words listed per file
UNREADABLE_SHOWN = 10  # words pdfium could not read listed per file
PLACES_SHOWN = 3  # occurrences located per listed lost word


def words_of(text: str) -> set[str]:
    # pdfium writes a line-end hyphenation point as U+FFFE ("Ef\ufffefects"): the word is whole.
    return set(_WORD.findall(normalise(text.replace("\ufffe", ""))))


def pdf_page_texts(path: Path, pages: tuple[int, int] | None = None) -> list[str]:
    """pdfium's text of each page of the PDF, as its text layer holds it (``pages``: a 1-based
    inclusive range): the reference that neither this project's parser nor a layout step shaped."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        first, last = pages if pages is not None else (1, len(pdf))
        out: list[str] = []
        for n in range(first - 1, min(last, len(pdf))):
            page = pdf[n]
            textpage = page.get_textpage()
            out.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return out
    finally:
        pdf.close()


# --------------------------------------------------------------------------- what pdfium cannot read


@dataclass(frozen=True)
class PageReading:
    """pdfium's text of one page (``get_text_range()``) and where the probe knows better than
    that text: ``breaks``, the indices of ``text`` before which a word ends though the text runs
    on (``word_gap_breaks``); ``unreadable``, the indices of the characters that are no reading
    of the page (``read_page``)."""

    text: str
    breaks: frozenset[int] = frozenset()
    unreadable: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Reference:
    """pdfium's distinct words of a PDF: ``words``, those it read, the coverage's reference;
    ``unreadable``, those holding a character it could not read, none of them in ``words``;
    ``breaks``, for each 1-based page with any, the ``PageReading.breaks`` of its text (for
    ``locate_words``)."""

    words: set[str]
    unreadable: set[str]
    breaks: dict[int, frozenset[int]] = field(default_factory=dict)


# The characters of pdfium's text that are no reading of a glyph: U+0000 (none), U+FFFD (the
# replacement character), U+FFFF (a noncharacter), and private-use code points (a font's own
# glyph numbering, no text: U+E000-U+F8FF, planes 15 and 16). U+FFFE in pdfium's text is its
# mark of a line-end hyphen (``words_of``), not one of them.
_NO_READING = re.compile("[\x00\ufffd\uffff\ue000-\uf8ff\U000f0000-\U0010ffff]")


def unreadable_char(ch: str, map_error: bool = False) -> bool:
    """Whether a character of pdfium's text is no reading of its glyph: pdfium found no Unicode
    for it in the font (``FPDFText_HasUnicodeMapError``: ``map_error``; pdfium then gives the
    glyph's code as if it were text), or gave U+0000, U+FFFD, U+FFFF or a private-use code point."""
    return map_error or _NO_READING.fullmatch(ch) is not None


# A text object narrower (or flatter) than this, in PDF points, draws no ink: pdfium leaves it out of its text.
NO_WIDTH = 0.01
# A glyph pdfium left out of its text, drawn at least this many ems (the font size on the page)
# away from the character it overlaps, is a glyph of its own, not a copy drawn over it (fake bold).
OWN_GLYPH_OFFSET = 0.15
# A word gap's text object stands where the pen was after the glyph before it: on its baseline to
# within BASELINE_TOLERANCE ems, at the end of its advance to within PEN_TOLERANCE ems (a kerning
# adjustment). On the shared corpora the 291 cuts this makes each part a word the parse lacks into
# words it holds; those gaps stand on the baseline exactly and within 0.055 em of the pen, while the
# zero-width objects inside words the parse holds whole stand 0.075 em or more off the baseline.
BASELINE_TOLERANCE = 0.02
PEN_TOLERANCE = 0.06

_Box = tuple[float, float, float, float]  # (left, bottom, right, top), pdfium's page space


@dataclass
class _TextObjects:
    """A page's text objects as ``read_page`` needs them: where those of no width stand (their
    bounds' bottom-left point, page space) and, for each one with ink (width and height), its
    handle (an address), its bounds (page space) and the matrix of the forms it stands in (None:
    on the page). Those with width but no height (runs of spaces) are in neither."""

    widthless: list[tuple[float, float]]
    inked: list[tuple[int, _Box, tuple[float, ...] | None]]


def _apply(m: tuple[float, ...], x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def _then(inner: Any, outer: tuple[float, ...]) -> tuple[float, ...]:
    """The matrix ``inner`` (an ``FS_MATRIX``) followed by ``outer`` (a, b, c, d, e, f)."""
    a, b, c, d, e, f = outer
    m = inner
    return (m.a * a + m.b * c, m.a * b + m.b * d, m.c * a + m.d * c, m.c * b + m.d * d, m.e * a + m.f * c + e, m.e * b + m.f * d + f)


@functools.cache
def _by_address() -> SimpleNamespace:
    """The pdfium calls made once per object or character of a page, taking and giving handles
    as plain addresses (``c_void_p``) rather than pypdfium2's typed pointers: comparing and
    keeping a million typed pointers (``ctypes.cast``) costs more than reading the text. The
    same functions of the loaded library (``pypdfium2.raw``), called through another prototype."""
    import pypdfium2.raw as pdfium_c

    void, i32, f32 = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)

    def fn(f: Any, restype: Any, *argtypes: Any) -> Any:
        address = ctypes.cast(f, ctypes.c_void_p).value
        if not address:
            raise RuntimeError(f"pdfium has no {f.__name__}")
        return ctypes.CFUNCTYPE(restype, *argtypes)(address)

    return SimpleNamespace(
        page_count=fn(pdfium_c.FPDFPage_CountObjects, i32, void),
        page_object=fn(pdfium_c.FPDFPage_GetObject, void, void, i32),
        form_count=fn(pdfium_c.FPDFFormObj_CountObjects, i32, void),
        form_object=fn(pdfium_c.FPDFFormObj_GetObject, void, void, ctypes.c_ulong),
        kind=fn(pdfium_c.FPDFPageObj_GetType, i32, void),
        bounds=fn(pdfium_c.FPDFPageObj_GetBounds, i32, void, f32, f32, f32, f32),
        matrix=fn(pdfium_c.FPDFPageObj_GetMatrix, i32, void, ctypes.POINTER(pdfium_c.FS_MATRIX)),
        char_object=fn(pdfium_c.FPDFText_GetTextObject, void, void, i32),
        map_error=fn(pdfium_c.FPDFText_HasUnicodeMapError, i32, void, i32),
    )


def _address(handle: Any) -> int:
    return ctypes.cast(handle, ctypes.c_void_p).value or 0


def _text_objects(page: Any) -> _TextObjects:
    """The page's text objects, those in the forms it draws too (their bounds taken to page
    space through the forms' matrices)."""
    import pypdfium2.raw as pdfium_c

    calls = _by_address()
    out = _TextObjects(widthless=[], inked=[])
    l, b, r, t = (ctypes.c_float() for _ in range(4))
    lp, bp, rp, tp = (ctypes.byref(v) for v in (l, b, r, t))
    TEXT, FORM = pdfium_c.FPDF_PAGEOBJ_TEXT, pdfium_c.FPDF_PAGEOBJ_FORM

    def walk(objects: Iterable[int], matrix: tuple[float, ...] | None) -> None:
        for obj in objects:
            kind = calls.kind(obj)
            if kind == FORM:
                m = pdfium_c.FS_MATRIX()
                if calls.matrix(obj, ctypes.byref(m)):
                    inner = _then(m, matrix or (1.0, 0.0, 0.0, 1.0, 0.0, 0.0))
                    walk((calls.form_object(obj, k) for k in range(calls.form_count(obj))), inner)
                continue
            if kind != TEXT or not calls.bounds(obj, lp, bp, rp, tp):
                continue
            if r.value - l.value < NO_WIDTH:
                out.widthless.append(_apply(matrix, l.value, b.value) if matrix else (l.value, b.value))
                continue
            if t.value - b.value < NO_WIDTH:  # no height either: spaces, no ink
                continue
            box = (l.value, b.value, r.value, t.value)
            if matrix:
                corners = [_apply(matrix, x, y) for x in (box[0], box[2]) for y in (box[1], box[3])]
                box = (min(p[0] for p in corners), min(p[1] for p in corners), max(p[0] for p in corners), max(p[1] for p in corners))
            out.inked.append((obj, box, matrix))

    handle = _address(page.raw)
    walk((calls.page_object(handle, k) for k in range(calls.page_count(handle))), None)
    return out


def _text_index(text: str) -> Callable[[int], int | None]:
    """pdfium's text index (a UTF-16 offset in ``text``) to an index of ``text``."""
    if len(text.encode("utf-16-le")) == 2 * len(text):
        return lambda offset: offset if 0 <= offset < len(text) else None
    at = {offset: i for i, offset in enumerate(_utf16_offsets(text))}
    return at.get


def _loose_box(textpage: Any, index: int) -> _Box:
    import pypdfium2.raw as pdfium_c

    rect = pdfium_c.FS_RECTF()
    pdfium_c.FPDFText_GetLooseCharBox(textpage.raw, index, rect)
    return rect.left, rect.bottom, rect.right, rect.top


_RAW_WORD = re.compile(r"\w{2,}")


def _em(textpage: Any, index: int) -> float:
    """The font size of pdfium's character on the page, in points: its font size
    (``FPDFText_GetFontSize``) scaled by its matrix (``FPDFText_GetMatrix``)."""
    import pypdfium2.raw as pdfium_c

    m = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFText_GetMatrix(textpage.raw, index, m):
        return 0.0
    return pdfium_c.FPDFText_GetFontSize(textpage.raw, index) * math.sqrt(abs(m.a * m.d - m.b * m.c))


def _origin(textpage: Any, index: int) -> tuple[float, float] | None:
    import pypdfium2.raw as pdfium_c

    x, y = ctypes.c_double(), ctypes.c_double()
    return (x.value, y.value) if pdfium_c.FPDFText_GetCharOrigin(textpage.raw, index, x, y) else None


def _advance(textpage: Any, index: int) -> tuple[float, float, float] | None:
    """Where pdfium's character stands on an upright left-to-right line, page space: the x of
    its origin, the x where its advance ends (the font's width of its code,
    ``FPDFFont_GetGlyphWidth``, at its font size, through its matrix), and its baseline's y.
    None where pdfium cannot say, or the character is turned or mirrored."""
    import pypdfium2.raw as pdfium_c

    raw = textpage.raw
    origin = _origin(textpage, index)
    obj = pdfium_c.FPDFText_GetTextObject(raw, index)
    m, width = pdfium_c.FS_MATRIX(), ctypes.c_float()
    if origin is None or not obj or not pdfium_c.FPDFText_GetMatrix(raw, index, m) or m.a <= 0 or abs(m.b) > 1e-6 * m.a:
        return None
    font = pdfium_c.FPDFTextObj_GetFont(obj)
    size = pdfium_c.FPDFText_GetFontSize(raw, index)
    if not font or not pdfium_c.FPDFFont_GetGlyphWidth(font, pdfium_c.FPDFText_GetUnicode(raw, index), size, width):
        return None
    return origin[0], origin[0] + width.value * m.a, origin[1]


def word_gap_breaks(textpage: Any, text: str, points: Iterable[tuple[float, float]]) -> frozenset[int]:
    """The indices of ``text`` (the page's ``get_text_range()``) before which a word ends that
    pdfium's text runs on. ``points``: where the page has a text object of no width, the
    bottom-left point of its bounds: such an object draws no ink (a lone space glyph, as some
    producers draw each word gap), pdfium's text page leaves it out, and where the next glyph
    stands close after the space (or over it: squeezed lines), pdfium's text runs the two words
    together ("and2016"). Such a space is drawn where the pen stands after the glyph before it:
    a point cuts a run of word characters of ``text`` after the one character of the run it is
    the pen position of (``_advance``: on its baseline, within ``BASELINE_TOLERANCE`` of its
    font size on the page, and at the end of its advance, within ``PEN_TOLERANCE``; upright
    left-to-right lines only), unless that character ends the run (a gap pdfium's text has) or
    another character of the run ends there too (overlapping glyphs: the gap's place unknown).
    A zero-width object anywhere else (off the baseline, inside a glyph's advance) cuts nothing."""
    import pypdfium2.raw as pdfium_c

    marks = sorted((y, x) for x, y in points)
    if not marks:
        return frozenset()
    ys = [y for y, _ in marks]
    raw = textpage.raw
    char_at = pdfium_c.FPDFText_GetCharIndexFromTextIndex
    offsets = _utf16_offsets(text) if len(text.encode("utf-16-le")) != 2 * len(text) else None
    out = set()
    for run in _RAW_WORD.finditer(text):
        ends = (
            char_at(raw, offsets[run.start()] if offsets else run.start()),
            char_at(raw, offsets[run.end() - 1] if offsets else run.end() - 1),
        )
        if min(ends) < 0:
            continue
        first, last = _loose_box(textpage, ends[0]), _loose_box(textpage, ends[1])
        low, high = min(first[1], last[1]), max(first[3], last[3])
        # a cut stands before the pen passes the last character's start by much (a quarter of
        # its line height: squeezed glyphs overlap by a tenth of an em); most word gaps after
        # the run's last character stand further on, and need no closer look
        before = last[0] + 0.25 * (last[3] - last[1])
        inside = [(y, x) for y, x in marks[bisect.bisect_left(ys, low) : bisect.bisect_right(ys, high)] if first[0] < x < before]
        if not inside:
            continue
        chars = [char_at(raw, offsets[i] if offsets else i) for i in range(run.start(), run.end())]
        if min(chars) < 0:
            continue
        places = [_advance(textpage, c) for c in chars]
        ems = [_em(textpage, c) for c in chars]
        for y, x in inside:
            near = [
                k
                for k, (place, em) in enumerate(zip(places, ems, strict=True))
                if place is not None and abs(place[1] - x) <= PEN_TOLERANCE * em and abs(place[2] - y) <= BASELINE_TOLERANCE * em
            ]
            if len(near) == 1 and near[0] < len(chars) - 1:
                out.add(run.start() + near[0] + 1)
    return frozenset(out)


def _char_box(textpage: Any, index: int) -> _Box:
    import pypdfium2.raw as pdfium_c

    l, r, b, t = (ctypes.c_double() for _ in range(4))
    if not pdfium_c.FPDFText_GetCharBox(textpage.raw, index, l, r, b, t):
        return 0.0, 0.0, 0.0, 0.0
    return l.value, b.value, r.value, t.value


def _beside_left_out_glyphs(textpage: Any, objects: _TextObjects, index_of: Callable[[int], int | None]) -> set[int]:
    """Indices of the page's text whose character overlaps a glyph pdfium left out of its text
    (an inked text object no character of pdfium's text comes from) that is a glyph of its own:
    its origin at least ``OWN_GLYPH_OFFSET`` ems (``_em``) from the origin of the overlapped
    character nearest to it. pdfium leaves out a glyph it takes for a copy of the one before
    drawn over it (fake bold), and those copies stand where the glyph they copy does; but it
    takes an italic "ff" drawn one glyph at a time for one too, and "differ" reads "dif er".
    Overlap: the characters' boxes (``FPDFText_GetCharBox``) and the object's bounds share some
    width and half the lower one's height."""
    import pypdfium2.raw as pdfium_c

    raw = textpage.raw
    n = pdfium_c.FPDFText_CountChars(raw)
    calls = _by_address()
    handle = _address(raw)
    used = {calls.char_object(handle, i) for i in range(n)}
    out: set[int] = set()
    x, y = ctypes.c_double(), ctypes.c_double()
    for obj, (l, b, r, t), matrix in objects.inked:
        if obj in used:
            continue
        m = pdfium_c.FS_MATRIX()
        if not calls.matrix(obj, ctypes.byref(m)):
            continue
        ox, oy = _apply(matrix, m.e, m.f) if matrix else (m.e, m.f)  # the text object's origin
        hit = pdfium_c.FPDFText_GetCharIndexAtPos(raw, (l + r) / 2, (b + t) / 2, (r - l) / 2, (t - b) / 2)
        if hit < 0:
            continue
        over: list[tuple[float, int]] = []
        for c in range(max(0, hit - 3), min(n, hit + 4)):
            cl, cb, cr, ct = _char_box(textpage, c)
            if min(r, cr) - max(l, cl) <= 0 or min(t, ct) - max(b, cb) < 0.5 * min(t - b, ct - cb) or ct <= cb:
                continue
            if not pdfium_c.FPDFText_GetCharOrigin(raw, c, x, y):
                continue
            over.append((max(abs(x.value - ox), abs(y.value - oy)), c))
        if not over:
            continue
        offset, nearest = min(over)
        if offset < OWN_GLYPH_OFFSET * _em(textpage, nearest):
            continue  # a copy drawn over a character pdfium kept: fake bold, read right
        for _, c in over:
            i = index_of(pdfium_c.FPDFText_GetTextIndexFromCharIndex(raw, c))
            if i is not None:
                out.add(i)
    return out


def read_page(page: Any, textpage: Any) -> PageReading:
    """pdfium's text of ``page`` (its ``textpage``) and where it is no reading of the page.

    Unreadable: each character pdfium found no Unicode for in its font
    (``FPDFText_HasUnicodeMapError``) or gives as U+0000, U+FFFD, U+FFFF or a private-use code
    point (``unreadable_char``), and each character overlapping a glyph pdfium left out of its
    text (``_beside_left_out_glyphs``). Breaks: the word gaps pdfium left out
    (``word_gap_breaks``)."""
    import pypdfium2.raw as pdfium_c

    text = textpage.get_text_range()
    raw = textpage.raw
    index_of = _text_index(text)
    map_error, handle, text_index = _by_address().map_error, _address(raw), pdfium_c.FPDFText_GetTextIndexFromCharIndex
    failed = [c for c in range(pdfium_c.FPDFText_CountChars(raw)) if map_error(handle, c) == 1]
    unreadable = {i for i in (index_of(text_index(raw, c)) for c in failed) if i is not None}
    unreadable |= {m.start() for m in _NO_READING.finditer(text)}  # unreadable_char, all at once
    objects = _text_objects(page)
    unreadable |= _beside_left_out_glyphs(textpage, objects, index_of)
    breaks = word_gap_breaks(textpage, text, objects.widthless)
    return PageReading(text=text, breaks=breaks, unreadable=frozenset(unreadable))


def reading_words(reading: PageReading) -> tuple[set[str], set[str]]:
    """The distinct words of a page's reading: those pdfium read, and those it could not.

    A word is a run of word characters (``\\w``, after ``normalise``), as ``words_of`` finds
    them, also cut at each of the reading's ``breaks``. A word is unreadable when it holds a
    character of the reading's ``unreadable``, or when such characters (not shown as white
    space) stand between it and another word character with nothing else between: an unreadable
    glyph that pdfium gives as no word character (a private-use code point for a ligature,
    "e\\ue001ect") spoils the word it stands in, but one at a word's edge (a symbol font's
    "Flovent\\uf6da", pdfium's private-use code for "®") does not. A word both read somewhere
    and unreadable elsewhere is read. Without breaks or unreadable characters:
    ``words_of(text)``, nothing unreadable."""
    if not reading.breaks and not reading.unreadable:
        return words_of(reading.text), set()
    read: set[str] = set()
    unread: set[str] = set()
    for word, _, _, unreadable in _reading_tokens(reading):
        (unread if unreadable else read).add(word)
    return read, unread - read


def _reading_tokens(reading: PageReading) -> Iterator[tuple[str, int, int, bool]]:
    """(word, start, end, unreadable) of each word of the reading (as ``reading_words`` cuts
    them), ``start:end`` its slice of the reading's text, in text order."""
    norm, spans = normalised_spans(reading.text, reading.breaks)

    def bad(k: int) -> bool:
        return 0 <= k < len(norm) and spans[k][0] in reading.unreadable and not norm[k].isspace()

    def glued(k: int, step: int) -> bool:
        """Whether unreadable characters from ``k`` on (going ``step``) lead to a word character."""
        if not bad(k):
            return False
        while bad(k):
            k += step
        return 0 <= k < len(norm) and _WORD.match(norm, k) is not None

    for m in _WORD.finditer(norm):
        start, end = m.start(), m.end()
        unreadable = any(bad(k) for k in range(start, end)) or glued(start - 1, -1) or glued(end, 1)
        yield m.group(), spans[start][0], spans[end - 1][1], unreadable


def pdf_reference(path: Path, pages: tuple[int, int] | None = None) -> Reference:
    """pdfium's distinct words of the PDF (``pages``: a 1-based inclusive range), each page as
    ``read_page`` reads it: those read, and those pdfium could not read (``Reference``)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        first, last = pages if pages is not None else (1, len(pdf))
        words: set[str] = set()
        unreadable: set[str] = set()
        breaks: dict[int, frozenset[int]] = {}
        for n in range(first - 1, min(last, len(pdf))):
            page = pdf[n]
            textpage = page.get_textpage()
            try:
                reading = read_page(page, textpage)
            finally:
                textpage.close()
                page.close()
            read, unread = reading_words(reading)
            words |= read
            unreadable |= unread
            if reading.breaks:
                breaks[n + 1] = reading.breaks
        return Reference(words=words, unreadable=unreadable - words, breaks=breaks)
    finally:
        pdf.close()


def pdf_words(path: Path, pages: tuple[int, int] | None = None) -> set[str]:
    """Distinct words of pdfium's text of the PDF that pdfium read (``pages``: a 1-based
    inclusive range): the coverage's reference (``pdf_reference``)."""
    return pdf_reference(path, pages).words


FURNITURE = ("page_header", "page_footer")


def unit_words(doc: ParsedDoc) -> set[str]:
    out: set[str] = set()
    for unit in build_units(doc):
        out |= words_of(unit.text)
    return out


def furniture_words(doc: ParsedDoc) -> set[str]:
    """Words of the lines the parser recorded as page furniture, and of contents lines."""
    out: set[str] = set()
    for block in doc.blocks:
        if block.label in FURNITURE or is_contents_entry(block):
            out |= words_of(block.text)
    return out


def file_coverage(path: Path, doc: ParsedDoc | Callable[[], ParsedDoc], pages: tuple[int, int] | None = None) -> CoverageFile:
    """The coverage of one PDF by its parse ``doc``; the first ``LOST_SHOWN`` lost words are
    listed, each with up to ``PLACES_SHOWN`` places (``lost_at``). The words pdfium could not
    read are neither found nor lost: ``unreadable`` counts them (``pdf_reference``), outside
    ``words``, and the first ``UNREADABLE_SHOWN`` are listed.

    ``doc`` may be a function that parses: it is called only when pdfium reads words to score,
    so a file with no text layer (a scan, which the parse would read by OCR) is not parsed."""
    pdfium = pdf_reference(path, pages)
    reference = pdfium.words
    if not reference:
        error = "no text layer: needs OCR" if not pdfium.unreadable else "no word pdfium can read"
        return CoverageFile(file=path.name, words=0, covered=0, unreadable=len(pdfium.unreadable), error=error)
    if callable(doc):
        doc = doc()
    found = unit_words(doc)
    furniture = (reference - found) & furniture_words(doc)
    lost = sorted(reference - found - furniture)
    shown = lost[:LOST_SHOWN]
    return CoverageFile(
        file=path.name,
        words=len(reference),
        covered=len(reference) - len(lost),
        furniture=len(furniture),
        lost=shown,
        lost_at=locate_words(path, set(shown), pages, pdfium.breaks) if shown else [],
        n_lost=len(lost),
        unreadable=len(pdfium.unreadable),
        unreadable_shown=sorted(pdfium.unreadable)[:UNREADABLE_SHOWN],
    )


# --------------------------------------------------------------------------- where a word stands


def _clusters(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each character of ``text`` with the combining marks that follow it."""
    i = 0
    while i < len(text):
        j = i + 1
        while j < len(text) and unicodedata.combining(text[j]):
            j += 1
        yield i, j
        i = j


def normalised_spans(text: str, breaks: frozenset[int] = frozenset()) -> tuple[str, list[tuple[int, int]]]:
    """``text`` normalised as ``words_of`` normalises it, each white-space character a space,
    and for each character of the result the ``(start, end)`` slice of ``text`` it came from:
    the words ``words_of(text)`` finds are the ``\\w+`` runs of the result. ``breaks``: indices
    of ``text`` before which a space is put (its slice the empty one there)."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    for start, end in _clusters(text):
        if start in breaks:
            out.append(" ")
            spans.append((start, start))
        piece = text[start:end]
        if piece == "\ufffe":  # pdfium's line-end hyphenation point: the word goes on
            continue
        norm = " " if piece.isspace() else normalise(piece)
        out.append(norm)
        spans += [(start, end)] * len(norm)
    return "".join(out), spans


def word_spans(text: str | PageReading, words: set[str]) -> Iterator[tuple[str, int, int]]:
    """(word, start, end) of each occurrence in ``text`` of a word of ``words`` (normalised
    words, as ``words_of`` gives them), as a slice of ``text``, in text order. For a page's
    ``PageReading``, its words as ``reading_words`` cuts them, the slice one of its text."""
    reading = text if isinstance(text, PageReading) else PageReading(text=text)
    if reading.breaks or reading.unreadable:
        for word, start, end, _ in _reading_tokens(reading):
            if word in words:
                yield word, start, end
        return
    norm, spans = normalised_spans(reading.text)
    for m in _WORD.finditer(norm):
        if m.group() in words:
            yield m.group(), spans[m.start()][0], spans[m.end() - 1][1]


def _utf16_offsets(text: str) -> list[int]:
    """For each index of ``text``, its offset in UTF-16 code units (pdfium's text indices)."""
    out, n = [], 0
    for ch in text:
        out.append(n)
        n += 2 if ord(ch) > 0xFFFF else 1
    return out


def char_box(textpage: Any, text: str, start: int, end: int) -> tuple[float, float, float, float] | None:
    """The union of pdfium's boxes of the characters of ``text[start:end]`` (``text``: the page's
    ``get_text_range()``), as pdfium gives them: ``(left, bottom, right, top)``, origin bottom-left.
    None when no character there has a box (characters pdfium inserted, such as line breaks)."""
    import pypdfium2.raw as pdfium_c
    from pypdfium2 import PdfiumError

    offsets = _utf16_offsets(text)
    boxes = []
    for i in range(start, end):
        index = pdfium_c.FPDFText_GetCharIndexFromTextIndex(textpage, offsets[i])
        if index < 0:
            continue
        try:
            l, b, r, t = textpage.get_charbox(index)
        except PdfiumError:  # pdfium has no box for this character
            continue
        if r > l or t > b:
            boxes.append((l, b, r, t))
    if not boxes:
        return None
    return min(x[0] for x in boxes), min(x[1] for x in boxes), max(x[2] for x in boxes), max(x[3] for x in boxes)


def _top_left(box: tuple[float, float, float, float], height: float) -> tuple[float, float, float, float]:
    l, b, r, t = box
    return round(l, 1), round(height - t, 1), round(r, 1), round(height - b, 1)


def _page_places(page: Any, number: int, words: set[str], taken: dict[str, int], breaks: frozenset[int] | None = None) -> list[WordPlace]:
    """The places on one page of the words still short of ``PLACES_SHOWN`` places (``taken``
    counts them and is updated); its words cut at ``breaks`` (``PageReading.breaks``; None:
    found here, ``word_gap_breaks``)."""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        if breaks is None:
            breaks = word_gap_breaks(textpage, text, _text_objects(page).widthless)
        reading = PageReading(text=text, breaks=breaks)
        height = page.get_height()
        out = []
        for word, start, end in word_spans(reading, words):
            if taken.get(word, 0) >= PLACES_SHOWN:
                continue
            box = char_box(textpage, text, start, end)
            if box is not None:
                taken[word] = taken.get(word, 0) + 1
                out.append(WordPlace(word=word, page=number, box=_top_left(box, height)))
        return out
    finally:
        textpage.close()


def locate_words(
    path: Path, words: set[str], pages: tuple[int, int] | None = None, breaks: dict[int, frozenset[int]] | None = None
) -> list[WordPlace]:
    """Where pdfium's text of the PDF holds each of ``words`` (normalised, as ``words_of`` gives
    them, and cut at the word gaps pdfium left out, as ``pdf_reference`` cuts them): its first
    ``PLACES_SHOWN`` occurrences, each with its 1-based page and the box of its characters
    ``(l, t, r, b)`` in PDF points from the page's top-left corner (pdfium's bottom-left boxes
    turned over with the page height); in page order, then reading order. ``pages``: a 1-based
    inclusive range, as ``pdf_words`` takes it. ``breaks``: ``Reference.breaks`` of the same
    pages, when the reference was read (else each page's are found again)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        first, last = pages if pages is not None else (1, len(pdf))
        taken: dict[str, int] = {}
        out: list[WordPlace] = []
        for n in range(first - 1, min(last, len(pdf))):
            if all(taken.get(w, 0) >= PLACES_SHOWN for w in words):
                break
            page = pdf[n]
            try:
                out += _page_places(page, n + 1, words, taken, None if breaks is None else breaks.get(n + 1, frozenset()))
            finally:
                page.close()
        return out
    finally:
        pdf.close()


def coverage_section(parse: Callable[[Path], ParsedDoc], folders: Iterable[Path]) -> CoverageSection:
    """Every PDF of each folder (and its ``pdfs/`` subfolder, if any), parsed and scored alone;
    a file without words in its text layer is named with that reason and not parsed."""
    files: list[CoverageFile] = []
    for folder in folders:
        folder = Path(folder)
        pdfs = sorted(folder.glob("*.pdf")) or sorted((folder / "pdfs").glob("*.pdf"))
        for path in pdfs:
            files.append(_file_row(path, parse).model_copy(update={"folder": str(folder)}))
    return CoverageSection(files=files)


def _file_row(path: Path, parse: Callable[[Path], ParsedDoc]) -> CoverageFile:
    """``file_coverage`` of ``path``, or the parser's reason for failing it: where pdfium cannot
    open the file the parser is asked, so that the row names what is wrong with it."""
    from pypdfium2 import PdfiumError

    try:
        try:
            return file_coverage(path, functools.partial(parse, path))
        except PdfiumError:
            parse(path)
            raise
    except ParseError as exc:
        return CoverageFile(file=path.name, words=0, covered=0, error=exc.reason)
