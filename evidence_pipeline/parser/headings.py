"""Which headings are sections: rules read from the document's own structure.

Docling's heading levels on a PDF come from type styles, which real filings use loosely:
a statement title set larger than its "Item 1." heading outranks it, a unit line
"(In millions)" set in bold looks like a heading, the same running line at the top of
every page opens a new section on each. These rules settle that from the document:

- a heading that repeats on several pages is page furniture, not a section;
- a line in parentheses only ("(In millions)", "(Unaudited)") is a note to the table under
  it, never a heading;
- structural headings that name their kind and number ("PART I", "Item 2.", "Chapter 3")
  outrank every style-levelled heading, in the order their kinds first appear;
- an unnumbered heading set in capitals, or followed by a table note, directly above a table
  that has no caption (nothing but table notes and loose column-head words between them)
  is that table's title: it becomes its caption.
"""

from __future__ import annotations

import re

from evidence_pipeline.parser.docling_items import Entry
from evidence_pipeline.parser.scripts import letter_weight

_DIGITS = re.compile(r"\d+")
# a line that is nothing but parenthesised groups: "(In millions) (Unaudited)"
PARENTHESISED_RE = re.compile(r"^\s*(\([^()]*\)\s*)+$")
# "PART I", "Part II —", "Item 1.", "ITEM 1A.", "Chapter 3", "Article IV", "Note 2 –"
STRUCTURAL_RE = re.compile(r"^\s*(part|item|chapter|article|note)\s+([IVXLC]+|\d{1,3}[A-Z]?)\b\.?", re.IGNORECASE)
_NUMBERED_RE = re.compile(r"^\s*(\d{1,2}(\.\d{1,2})*\.?|[A-Z]\.|[IVX]{1,5}\.|(section|appendix|annex|schedule)\s+\S+)\s", re.IGNORECASE)
_TITLE_GAP = 60.0  # pt: farthest a table's title may sit above it
_BETWEEN = ("paragraph", "section_header", "other")
_CHECKBOX = re.compile(r"^\s*[☐☑☒□■✓✔]")


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
    return is_table_note(text) or letter_weight(text) < 3 or bool(_CHECKBOX.match(text))


def demote_non_headings(entries: list[Entry]) -> None:
    for e in entries:
        if e.label == "section_header" and not_a_heading(e.text):
            e.label, e.level = "paragraph", None


def repeated_headings(entries: list[Entry], n_pages: int) -> None:
    """A heading whose text (numbers aside) opens sections on three or more pages is a running head."""
    if n_pages < 3:
        return
    pages: dict[str, set[int]] = {}
    for e in entries:
        if e.label == "section_header" and e.page is not None:
            pages.setdefault(_key(e.text), set()).add(e.page)
    for e in entries:
        if e.label == "section_header" and len(pages.get(_key(e.text), ())) >= 3:
            e.label, e.level = "page_header", None


def structural_levels(entries: list[Entry]) -> int:
    """Part/Item-style headings take the top levels, in the order their kinds first appear;
    every other heading keeps its relative level below them. Returns how many levels they took."""
    heads = [e for e in entries if e.label == "section_header"]
    kinds: list[str] = []
    for e in heads:
        m = STRUCTURAL_RE.match(e.text)
        if m and m.group(1).lower() not in kinds:
            kinds.append(m.group(1).lower())
    if not kinds:
        return 0
    for e in heads:
        m = STRUCTURAL_RE.match(e.text)
        if m:
            e.level = kinds.index(m.group(1).lower()) + 1
        else:
            e.level = len(kinds) + (e.level or 1)
    return len(kinds)


def table_titles(body: list[Entry], document_title: str | None = None) -> None:
    """Uncaptioned tables take the unnumbered heading right above them as their caption;
    parenthesised lines between the two are the table's notes. ``body``: reading order,
    furniture excluded. The document's own title line is never taken."""
    for i, e in enumerate(body):
        if e.label != "table" or any(c.table_of is e and c.label == "caption" for c in body):
            continue
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
        if j < 0:
            continue
        below = body[j + 1] if j + 1 < i else e
        heads = _title_lines(body, j, below, (document_title or "").strip(), noted=bool(notes))
        if not heads:
            continue
        for h in heads:  # several caption lines read as one caption, in order
            h.table_of, h.label, h.level = e, "caption", None
        for n in notes:
            n.table_of, n.label = e, "footnote"
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
