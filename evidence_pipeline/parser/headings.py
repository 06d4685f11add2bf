"""Which headings are sections: rules read from the document's own structure.

Docling levels a PDF's headings by type style, which filings use loosely: a statement title set
larger than its "Item 1." heading, a unit line "(In millions)" in bold, the same running line at
the top of every page. These rules settle that from the document:

- a heading that repeats on several pages is page furniture, not a section;
- a line in parentheses only ("(In millions)", "(Unaudited)") is a note to the table under it;
- structural headings that name their kind and number ("PART I", "Item 2.", "Chapter 3")
  outrank every style-levelled heading, ranked by kind (parts, chapters, articles, items,
  notes) whatever order the document prints them in, unless the kind first appears in an index
  at the back (``BACK_INDEX_SHARE``); notes set larger than the heading that opens them go under
  it; a bare "Item 2." with its title beside it is one heading; numbered kinds repeat with other
  numbers ("Item 1.", "Item 2.") without becoming running heads;
- a line that opens with an amount or ends with a currency sign is a chart label or a table
  row, and a line of dates only is no heading;
- an unnumbered heading set in capitals, or followed by a table note, directly above a table
  that has no caption (nothing but table notes and loose column-head words between) is that
  table's title: it becomes its caption.
"""

from __future__ import annotations

import re

from evidence_pipeline.parser.docling_items import Entry, table_cells
from evidence_pipeline.parser.page_furniture import page_extremes
from evidence_pipeline.parser.scripts import letter_weight
from evidence_pipeline.parser.text_lines import BARE_STRUCTURAL_RE, STRUCTURAL_RE, structural_key, structural_kind
from evidence_pipeline.text import DOT_LEADER_RE
from evidence_pipeline.vocabulary import MONTH_COUNTS, MONTH_NAME

_DIGITS = re.compile(r"\d+")
# a line that is nothing but parenthesised groups: "(In millions) (Unaudited)"
PARENTHESISED_RE = re.compile(r"^\s*(\([^()]*\)\s*)+$")
# the kinds from the widest to the narrowest
_KIND_RANK = ("part", "chapter", "article", "item", "note")
# "(300) ...", "($1.2) ...", "$5.9 ...", "2,722 ...": an amount, not a section number
_AMOUNT_FIRST = re.compile(r"^\s*(\(\s*[$€£¥]?\s*\d[\d,.]*\s*\)|[$€£¥]\s?\d[\d,.]*|\d{1,3}(,\d{3})+(\.\d+)?)(\s|$)")
# "75 Q3 2022 NEX Operating Income": a figure followed by another figure-bearing word (a chart
# label); a section number is followed by a word ("10 Records", "4.2 Acceptance limits")
_FIGURE_PAIR_FIRST = re.compile(r"^\s*\d[\d,.]*\s+\S*\d")
_CURRENCY_LAST = re.compile(r"[$€£¥]\s*$")
_NUMBERED_RE = re.compile(r"^\s*(\d{1,2}(\.\d{1,2})*\.?|[A-Z]\.|[IVX]{1,5}\.|(section|appendix|annex|schedule)\s+\S+)\s", re.IGNORECASE)
_TITLE_GAP = 60.0  # pt: farthest a table's title may sit above it
_BETWEEN = ("paragraph", "section_header", "other")
_CHECKBOX = re.compile(r"^\s*[☐☑☒□■✓✔]")
# "Three Months Ended September 30,", "Years ended December 31", "Year Ended": a table's period
# head left above it, never a section; "Year Ended December 31, 2022 Compared to ..." is one.
_PERIOD_HEAD = re.compile(
    rf"^\s*(?:(?:{MONTH_COUNTS})\s+months|\d{{1,2}}\s+weeks|(?:fiscal\s+)?(?:years?|quarters?|periods?))\s+end(?:ed|ing)\b"
    r"(?!.*\b(?:compared|versus|vs)\b)",
    re.IGNORECASE,
)

# "Apr 1, 2023 Dec 31, 2022", "September 20, 2022", "June 30, 2023": nothing but dates, a
# table's column heads or a row's first cell set apart from its table, or a cover's date line
_MONTH = MONTH_NAME
_DATE = rf"(?:{_MONTH}\s+(?:\d{{1,2}},?\s+)?\d{{4}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}})"
_DATES_ONLY = re.compile(rf"^\s*(?:as\s+of\s+)?{_DATE}(?:\s*(?:,|and|&|to|[-\u2013\u2014])?\s*{_DATE})*\s*,?\s*$", re.IGNORECASE)


# what a table's unit line speaks of: "(In millions)", "(Dollars in thousands, except per share
# amounts)", "(Unaudited)", "(%)". A longer parenthesised line without such a word is a label
# of something else ("(Exact name of registrant as specified in its charter)" under a name).
_UNIT_WORDS = re.compile(
    r"\b(millions?|thousands?|billions?|dollars|percent(age)?|unaudited|except|amounts?|units?)\b|[%$€£¥]", re.IGNORECASE
)


def is_table_note(text: str) -> bool:
    if not PARENTHESISED_RE.match(text):
        return False
    return len(text.split()) <= 3 or bool(_UNIT_WORDS.search(text))


def not_a_heading(text: str) -> bool:
    """Lines that a style can make look like headings but that never open a section."""
    return (
        is_table_note(text)
        or letter_weight(text) < 3
        or bool(_CHECKBOX.match(text) or _AMOUNT_FIRST.match(text) or _FIGURE_PAIR_FIRST.match(text) or _CURRENCY_LAST.search(text))
        or bool(DOT_LEADER_RE.search(text))  # a contents line
        or bool(_PERIOD_HEAD.match(text) or _DATES_ONLY.match(text))
    )


def levelled(e: Entry) -> bool:
    """A heading, or a heading read as its table's caption (``table_titles``): it keeps a
    level, the sections it opens or ends."""
    return e.label == "section_header" or (e.label == "caption" and e.level is not None)


def demote_non_headings(entries: list[Entry]) -> None:
    for e in entries:
        if e.label == "section_header" and not_a_heading(e.text):
            e.label, e.level = "paragraph", None


RUNNING_HEAD_LINES = 3
"""Lines of a running head read in from the page's edge, one after the other: the issuer's name,
then "NOTES TO CONDENSED CONSOLIDATED FINANCIAL STATEMENTS (Continued)" under it."""


def repeated_headings(entries: list[Entry], n_pages: int) -> None:
    """A heading whose text (numbers aside) opens sections on three or more pages is a running head;
    once it is, the heading next to it at the page's edge is looked at the same way.
    A structural heading keeps its number in that comparison: "Item 2." and "Item 3." are two
    sections, only the same "Item 1" on every page is a running head."""
    if n_pages < 3:
        return
    for _ in range(RUNNING_HEAD_LINES):
        ends = {i for lines in page_extremes(entries).values() for line in lines for i in line}  # a running head reads first or last
        pages: dict[str, set[int]] = {}
        for e in entries:
            if e.label == "section_header" and e.page is not None and id(e) in ends:
                pages.setdefault(_repeat_key(e.text), set()).add(e.page)
        running = [e for e in entries if e.label == "section_header" and len(pages.get(_repeat_key(e.text), ())) >= 3]
        if not running:
            return
        for e in running:  # the next line in from the edge may run there too
            e.label, e.level = "page_header", None


def join_bare_structural(entries: list[Entry]) -> None:
    """ "Item 2." printed in its own column with its title beside it on the same line
    ("Management's Discussion and Analysis ...") is one heading: the title takes the label
    in front, and the bare label is dropped from ``entries``."""
    drop: list[Entry] = []
    for e in entries:
        if e.bbox is None or e.label not in ("section_header", "paragraph") or not BARE_STRUCTURAL_RE.match(e.text):
            continue
        title = _take_in_front(e, _beside(e, entries, 0.0))
        if title is not None:
            title.label, title.level = "section_header", title.level or e.level
            drop.append(e)
    for e in drop:
        entries.remove(e)


# "Item 8. Financial Statements and Supplementary Data.": a Part or an Item, its number, its title
_STRUCTURAL_LINE = re.compile(r"^\s*(part|item)\s+([IVXLC]+|\d{1,3}[A-Z]?)\.\s+(\S.*?)\.?\s*$", re.IGNORECASE)
_ANOTHER_ENTRY = re.compile(r"\b(part|item)\s+([IVXLC]+|\d{1,3}[A-Z]?)\b", re.IGNORECASE)
_TITLE_WORDS = 20


def structural_lines(entries: list[Entry]) -> None:
    """A paragraph that is a whole Part or Item heading, its title in capitals ("Item 8.
    Financial Statements and Supplementary Data."), is that heading: some filings set their
    Items in body type, and without it their statements would sit in the previous section. A
    contents line reads the same, so only the last such line of each Part or Item counts, and
    none where a heading of that Part or Item follows it."""
    last: dict[tuple[str, str], Entry] = {}
    for e in entries:
        key = structural_key(e.text) if e.label in ("paragraph", "section_header") else None
        if key is None:
            continue
        if e.label == "section_header":
            last.pop(key, None)
            continue
        m = _STRUCTURAL_LINE.match(e.text)
        title = m.group(3).split() if m else []
        long_words = [w for w in title if sum(c.isalpha() for c in w) >= 4]
        if (
            m
            and len(title) <= _TITLE_WORDS
            and not _ANOTHER_ENTRY.search(m.group(3))
            and long_words
            and sum(w[0].isupper() for w in long_words) >= 0.7 * len(long_words)
        ):
            last[key] = e
    for e in last.values():
        e.label, e.level = "section_header", None


# "Title:", "Protocol No:", "Sponsor Name:": a short label that ends with a colon
_FIELD_LABEL = re.compile(r"^\s*\S+(?:\s+\S+){0,3}:\s*$")
# "APPENDIX 1:", "Schedule A:", "Part II:": a kind and its number
_NUMBERED_LABEL = re.compile(r"^\s*\S+\s+(?:\d+[A-Za-z]?|[A-Z]|[IVXLC]+)(?:\.\d+)*\s*:\s*$")


def join_field_labels(entries: list[Entry]) -> None:
    """A heading that is a field's label ("Title:", "Protocol No:") with its value set in a column
    beside it on the same line is no section: the value takes the label in front, as one
    paragraph, and the label is dropped from ``entries``. A run-in heading ("Objectives: To
    assess ...") has its text right after it or wrapping under it, not a column apart: at
    least a line's height of white space must part label and value. A numbered label
    ("APPENDIX 1:") is the first part of a heading, not a field."""
    drop: list[Entry] = []
    for e in entries:
        if e.bbox is None or e.label != "section_header" or not _FIELD_LABEL.match(e.text):
            continue
        if _NUMBERED_LABEL.match(e.text) or STRUCTURAL_RE.match(e.text):
            continue  # "APPENDIX 1:", "Item 2:" beside its title is a heading in two parts
        value = _take_in_front(e, _beside(e, entries, e.bbox.height))
        if value is not None:
            value.label, value.level = "paragraph", None  # a field's value opens no section either
            drop.append(e)
    for e in drop:
        entries.remove(e)


def _take_in_front(label: Entry, beside: list[Entry]) -> Entry | None:
    """The leftmost of ``beside`` with ``label``'s text in front of its own and read where
    ``label`` was; None when nothing is beside it."""
    if not beside:
        return None
    joined = min(beside, key=lambda o: o.box.l)
    joined.text = f"{label.text.strip()} {joined.text.strip()}"
    joined.key = min(joined.key, label.key)
    return joined


def _beside(e: Entry, entries: list[Entry], gap: float) -> list[Entry]:
    """Headings and paragraphs on ``e``'s line that start right of it, at least ``gap`` apart,
    other than structural headings."""
    assert e.bbox is not None
    mid = (e.bbox.t + e.bbox.b) / 2
    return [
        o
        for o in entries
        if o is not e
        and o.page == e.page
        and o.bbox is not None
        and o.label in ("section_header", "paragraph")
        and o.bbox.l >= e.bbox.r - 1 + gap
        and o.bbox.t - 2 <= mid <= o.bbox.b + 2
        and not STRUCTURAL_RE.match(o.text)
    ]


BACK_INDEX_SHARE = 0.8
"""A kind of structural heading whose first heading comes after this share of the document's
headings is an index printed at the back (a filing that closes with a cross-reference index
of its Parts and Items), not its outline."""


def _outline_kinds(heads: list[Entry]) -> list[str]:
    """The structural kinds that outline the document (``BACK_INDEX_SHARE``), widest first."""
    first: dict[str, int] = {}
    for n, e in enumerate(heads):
        kind = structural_kind(e.text)
        if kind is not None:
            first.setdefault(kind, n)
    return [k for k in _KIND_RANK if k in first and first[k] < BACK_INDEX_SHARE * len(heads)]


def _printed_above_notes(heads: list[Entry], notes: list[Entry]) -> bool:
    """Some heading that is no note is printed more prominently than every note
    ("Management's Discussion and Analysis" over "Note 11 : ...")."""
    top = min(e.level or 1 for e in notes)
    return any((e.level or 1) < top for e in heads if structural_kind(e.text) is None)


def _notes_under_their_heading(heads: list[Entry], notes: list[Entry]) -> bool:
    """Notes printed more prominently than the heading that opens them ("Notes to Consolidated
    Condensed Financial Statements" over "Note 1 : ...") go one level below it, with the
    headings inside them: the notes end at the next heading of that heading's level or above
    ("Management's Discussion and Analysis" after the last note). Returns whether the notes
    moved."""
    first = heads.index(notes[0])
    opening = next((e for e in reversed(heads[:first]) if structural_kind(e.text) is None), None)
    top = min(e.level or 1 for e in notes)
    if opening is None or (opening.level or 1) < top:
        return False
    shift = (opening.level or 1) + 1 - top
    for e in heads[first:]:
        if structural_kind(e.text) is None and (e.level or 1) <= (opening.level or 1):
            break
        if structural_kind(e.text) == "note" or (e.level or 1) > top:
            e.level = (e.level or 1) + shift
    return True


def structural_levels(entries: list[Entry]) -> int:
    """Part/Item-style headings take the top levels, ranked by kind (``_KIND_RANK``);
    every other heading keeps its relative level below them. Returns how many levels they took.
    Kinds that only an index at the back prints (``_outline_kinds``) take none."""
    heads = [e for e in entries if levelled(e)]
    kinds = _outline_kinds(heads)
    if not kinds:
        return 0
    structural = [e for e in heads if structural_kind(e.text) in kinds]
    if kinds == ["note"]:
        # A file whose only structural headings are notes keeps its outline where its own
        # headings say where the notes sit: set below a heading of its own, the notes take one
        # level, their most prominent one; set above the heading that opens them, they go
        # under it.
        if _printed_above_notes(heads, structural):
            top = min(e.level or 1 for e in structural)
            for e in structural:
                e.level = top
            return 0
        if _notes_under_their_heading(heads, structural):
            return 0
    for e in heads:
        kind = structural_kind(e.text)
        if kind in kinds:
            e.level = kinds.index(kind) + 1
        else:
            e.level = len(kinds) + (e.level or 1)
    return len(kinds)


def table_titles(body: list[Entry], document_title: str | None = None) -> None:
    """Uncaptioned tables take the unnumbered heading right above them as their caption;
    parenthesised lines between the two are the table's notes. ``body``: reading order,
    furniture excluded. The document's own title line is never taken."""
    for i, e in enumerate(body):
        if e.label != "table":
            continue
        captioned = any(c.table_of is e and c.label == "caption" for c in body)
        notes: list[Entry] = []
        loose: list[Entry] = []  # column-header words left above the table ("Three Months Ended")
        j = i - 1
        while j >= 0 and body[j].table_of is None and body[j].label in _BETWEEN:
            if is_table_note(body[j].text):
                notes.append(body[j])
            elif _short_fragment(body[j].text) and not _capitals(body[j].text) and len(loose) < 6:
                loose.append(body[j])
            else:
                break
            j -= 1
        if captioned or j < 0:
            _demote(_over_columns(loose, e))
            continue
        below = body[j + 1] if j + 1 < i else e
        noted = bool(notes) or _noted_inside(e)
        heads = _title_lines(body, j, below, (document_title or "").strip(), noted=noted)
        if not heads:
            _demote(_over_columns(loose, e))
            continue
        for h in heads:  # several caption lines read as one caption, in order
            # a heading keeps its level as a caption: the sections it would have closed still close
            h.table_of, h.label = e, "caption"
            h.level = h.level if h is heads[0] else None
        for n in notes:
            n.table_of, n.label = e, "footnote"
        _demote(loose)


def _over_columns(loose: list[Entry], table: Entry) -> list[Entry]:
    """The fragments that sit over the table's value columns, clear of its row labels: a
    section heading starts at the left edge ("Inventories"), a column head does not."""
    if table.bbox is None:
        return []
    edge = table.bbox.l + 0.3 * (table.bbox.r - table.bbox.l)
    return [n for n in loose if n.bbox is not None and n.bbox.l >= edge]


def _demote(loose: list[Entry]) -> None:
    """Column-head words left right above a table ("Three Months Ended") open no section."""
    for n in loose:
        if n.label == "section_header":
            n.label, n.level = "paragraph", None


def _title_lines(body: list[Entry], j: int, below: Entry, document_title: str, noted: bool) -> list[Entry]:
    """The unnumbered heading at ``j`` and, when one sits right above it, the heading it
    continues ("STATEMENTS OF EQUITY" / "FOR THE THREE MONTHS ENDED ..."), top first.
    A heading in mixed case is a title only when a table note ("(In millions)") follows it:
    otherwise it is as likely a section whose first content is a table."""
    out: list[Entry] = []
    while j >= 0 and len(out) < 2:
        head = body[j]
        capitals = _capitals(head.text)
        titled = (head.label == "section_header" and (capitals or noted)) or (
            head.label == "paragraph" and capitals and len(head.text.split()) <= 24
        )
        if not titled or head.table_of is not None or not _close_above(head, below):
            break
        if STRUCTURAL_RE.match(head.text) or _NUMBERED_RE.match(head.text) or head.text.strip() == document_title:
            break
        out.insert(0, head)
        below, j = head, j - 1
    return out


def _noted_inside(table: Entry) -> bool:
    """The table carries its own unit note in a top cell ("(In Millions; Unaudited)" over the
    row labels), as a note line above it would."""
    cells, _ = table_cells(table.item)  # type: ignore[arg-type]
    return any(c.row < 3 and is_table_note(c.text) for c in cells)


def _capitals(text: str) -> bool:
    """Set in capitals (a statement title), parenthesised parts aside."""
    letters = [ch for ch in re.sub(r"\([^()]*\)", "", text) if ch.isalpha()]
    return len(letters) >= 4 and all(ch.isupper() for ch in letters) and text.rstrip()[-1:] not in ".:;"


def _short_fragment(text: str) -> bool:
    return len(text.split()) <= 4 and text.rstrip()[-1:] not in ".:;"


def _close_above(head: Entry, below: Entry) -> bool:
    if head.bbox is None or below.bbox is None:
        return True
    return head.page == below.page and -2 <= below.bbox.t - head.bbox.b <= _TITLE_GAP


def _key(text: str) -> str:
    return " ".join(_DIGITS.sub("#", text.lower()).split())


def _repeat_key(text: str) -> str:
    return " ".join(text.lower().split()) if STRUCTURAL_RE.match(text) else _key(text)
