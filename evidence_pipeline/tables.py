"""Pure functions over a table grid: column header paths, row sentences, HTML, Markdown.

A grid is a list of rows of cell strings; spanning cells repeat their text in
every slot they cover (``Table.grid``). Header rows come first.
"""

from __future__ import annotations

import functools
import html
import html.entities
import re

# superscript digits and letters as footnote markers print them (``parser.raised_markers`` writes them)
SUPER_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
SUPER_LETTERS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"
_MARKS = rf"[*†‡§¶]+|[{SUPER_DIGITS}{SUPER_LETTERS}]+"
_FOOTNOTE_MARK = re.compile(rf"^(?P<value>.*?\S)\s*(?P<mark>{_MARKS})$")
# A footnote line opens with its marker: "* text", "† text", "a) text", "1. text", "¹ text".
# A lone lower-case letter opens a note too ("a Temperature, pulse ..."): footnotes keyed to
# superscript letters in the table print the letter on the baseline of a smaller line.
_FOOTNOTE_LINE = re.compile(
    rf"^\s*(?P<mark>{_MARKS}|\(?[a-z]\)|\(?\d{{1,2}}\)|\d{{1,2}}\.?(?=\s)|[a-z](?=\s+[A-Z(<>~≤≥\d]))\s*(?P<text>\S.*)$"
)
_SUPERSCRIPT = str.maketrans(SUPER_DIGITS + SUPER_LETTERS, "0123456789abcdefghijklmnoprstuvwxyz")


def norm_mark(mark: str) -> str:
    return mark.translate(_SUPERSCRIPT).strip("().")


def footnote_map(footnotes: list[str]) -> dict[str, str]:
    """Marker -> footnote text, for footnotes that open with a marker."""
    notes: dict[str, str] = {}
    for line in footnotes:
        m = _FOOTNOTE_LINE.match(line)
        if m:
            notes.setdefault(norm_mark(m.group("mark")), m.group("text").strip())
    return notes


def resolve_marker(value: str, notes: dict[str, str]) -> str:
    """'2.4*' with a footnote '*' -> '2.4 (note: <footnote text>)'; unknown markers stay as printed."""
    if not notes:
        return value
    bare, mark = split_marker(value)
    if mark is None or norm_mark(mark) not in notes:
        return value
    return f"{bare} (note: {notes[norm_mark(mark)]})"


_NUMBER = re.compile(r"^[\s$€£¥%()\-–—+.,:/0-9]+$")
HEAD_WORDS = 12
"""A column head holds at most this many words ("Three Months Ended September 30, 2022"); see
``text_row``."""


def text_row(cells: list[str]) -> bool:
    """A row that reads as text, not as column heads: one or two filled cells, one of them
    longer than ``HEAD_WORDS`` words (the end of a cell carried over from the page before
    under an empty label, "11. Subjects unwilling or unable to ..."; a list item "(a) | the
    Plan is established ..."). A row of several heads may hold one long merged head ("By
    remaining maturity as of December 31, 2022 Over 3 months but within 6 months")."""
    filled = [c for c in cells if c.strip()]
    return len(filled) <= 2 and any(len(c.split()) > HEAD_WORDS for c in filled)


def _words(text: str) -> int:
    return len(text.split())


def is_key_value(rows: list[list[str]]) -> bool:
    """A two-column table of fields and their values ("Sponsor | Elpida Therapeutics"), read
    from its shape alone: short labels on the left, no row that heads the values. Its first
    row is a field like the others unless it stands apart from them: a short label over
    long values, or words over numbers.
    """
    if not rows or any(len(r) != 2 for r in rows):
        return False
    pairs = [(a.strip(), b.strip()) for a, b in rows]
    labels = [a for a, _ in pairs if a]
    values = [b for _, b in pairs if b]
    if len(labels) < 2 or len(values) < 2:
        return False
    if any(_words(a) > 8 or len(a) > 60 or _NUMBER.match(a) for a in labels):
        return False
    if sum(_words(a) for a in labels) > sum(_words(b) for b in values):
        return False  # the left column carries the text: not labels
    first_label, first_value = pairs[0]
    if not first_label or not first_value or first_label.endswith(":"):
        return bool(first_label and first_value)
    body = [b for _, b in pairs[1:] if b]
    numbers = sum(bool(_NUMBER.match(b)) for b in body)
    if numbers * 2 > len(body) and not _NUMBER.match(first_value):
        return False  # words over numbers: a header row
    body_words = sorted(_words(b) for b in body)
    median = body_words[len(body_words) // 2]
    return not (_words(first_value) <= 4 and 3 * _words(first_value) < median)


def column_hierarchy(paths: list[str]) -> str:
    """'Stream | Flow rate (mL/min): Min, Max | Pressure (bar): Min, Max'."""
    groups: list[tuple[str, list[str]]] = []
    for path in paths:
        top, _, rest = path.partition(" / ")
        if groups and rest and groups[-1][0] == top and groups[-1][1]:
            groups[-1][1].append(rest)
        else:
            groups.append((top, [rest] if rest else []))
    return " | ".join(f"{top}: {', '.join(subs)}" if subs else top for top, subs in groups if top)


def column_paths(header: list[list[str]], n_cols: int) -> list[str]:
    """One label per column: header rows joined top-down with ' / '.

    A vertically spanning header repeats in each row; it is named once.
    """
    paths = []
    for c in range(n_cols):
        parts: list[str] = []
        for row in header:
            text = row[c].strip() if c < len(row) else ""
            if text and (not parts or parts[-1] != text):
                parts.append(text)
        paths.append(" / ".join(parts))
    return paths


def carry_down(rows: list[list[str]], row_header_cols: int) -> list[list[str]]:
    """Fill empty row-header cells from the row above (visually merged row headers)."""
    out: list[list[str]] = []
    for row in rows:
        row = list(row)
        has_values = any(cell.strip() for cell in row[row_header_cols:])
        if out and has_values:
            for c in range(row_header_cols):
                if not row[c].strip():
                    row[c] = out[-1][c]
        out.append(row)
    return out


def split_marker(value: str) -> tuple[str, str | None]:
    """'2.4*' -> ('2.4', '*'); a value without a trailing footnote marker -> (value, None)."""
    m = _FOOTNOTE_MARK.match(value.strip())
    if not m:
        return value.strip(), None
    return m.group("value"), m.group("mark")


def row_sentence(row: list[str], paths: list[str], row_header_cols: int, notes: dict[str, str] | None = None) -> str:
    """``Aqueous Phase 1 | Flow rate (mL/min) / Min: 0.6; Flow rate (mL/min) / Max: 1.8``."""
    head_parts: list[str] = []
    for c in range(min(row_header_cols, len(row))):
        text = resolve_marker(row[c].strip(), notes or {})
        if text and text not in head_parts:
            head_parts.append(text)
    cells = []
    for c in range(row_header_cols, len(row)):
        value = row[c].strip()
        if not value:
            continue
        value = resolve_marker(value, notes or {})
        label = paths[c] if c < len(paths) else ""
        cells.append(f"{label}: {value}" if label else value)
    head = " / ".join(head_parts)
    if head and len(cells) == 1 and not any(paths):  # a field and its value, no column names
        return f"{head.rstrip(':').rstrip()}: {cells[0]}"
    if head and cells:
        return f"{head} | " + "; ".join(cells)
    return head or "; ".join(cells)


def _spans(row: list[str]) -> list[tuple[str, int]]:
    """Merge runs of equal adjacent header texts into (text, colspan)."""
    out: list[tuple[str, int]] = []
    for text in row:
        if out and text and out[-1][0] == text:
            out[-1] = (text, out[-1][1] + 1)
        else:
            out.append((text, 1))
    return out


_BODY_ROW_LABEL = re.compile(r"<tr><td>(.*?)</td>")


@functools.lru_cache(maxsize=1024)
def row_labels(text: str) -> tuple[str, ...]:
    """The first cell of every body row of the tables ``table_html`` rendered into ``text``
    (a parent's text), unescaped: the row labels a reader looks a figure up by. Read once per
    text (an LRU): every search reads them off its candidates' parents."""
    return tuple(html.unescape(label) for label in _BODY_ROW_LABEL.findall(text) if label.strip())


_FIRST_BODY_ROW = re.compile(r"<tbody><tr>(.*?)</tr>")
_CELL = re.compile(r"<td>(.*?)</td>")
_HUNDRED_PERCENT = re.compile(r"100(?:\.0+)?\s*%")


@functools.lru_cache(maxsize=1024)
def common_size(text: str) -> bool:
    """The first table ``table_html`` rendered into ``text`` is a common-size table: each figure
    a percentage of its column's first row, whose figures all read 100% ("Revenue 100.0 %",
    then "Cost of revenue 35.4"). A table that prints amounts beside the percentages is not."""
    first = _FIRST_BODY_ROW.search(text)
    if first is None:
        return False
    values = [html.unescape(cell).strip() for cell in _CELL.findall(first.group(1))[1:]]
    values = [v for v in values if v]
    return bool(values) and all(_HUNDRED_PERCENT.fullmatch(v) for v in values)


# Entity names a browser reads without their ";" ("&copy", "&amp"): an "&" before one of them
# would read as a character reference.
_LEGACY_ENTITIES = sorted((name for name in html.entities.html5 if not name.endswith(";")), key=len, reverse=True)
_REFERENCE_AMP = re.compile(r"&(?=#|[A-Za-z][A-Za-z0-9]*;|(?:" + "|".join(_LEGACY_ENTITIES) + "))")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")


def html_text(text: str) -> str:
    """``text`` as HTML text content, escaped only where HTML would misread it: an "&" that
    would begin a character reference, a "<" that would open a tag. The rest stays as printed
    ("R&D", "> 470 msec", "< 6 months", "shareholders' equity"), so a reader, or a search for
    the printed words, finds them in the table as in the page; ``html.unescape`` gives
    ``text`` back."""
    return _TAG_OPEN.sub("&lt;", _REFERENCE_AMP.sub("&amp;", text))


def table_html(header: list[list[str]], rows: list[list[str]], caption: str | None = None) -> str:
    esc = html_text
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption>{esc(caption)}</caption>")
    if header:
        parts.append("<thead>")
        for row in header:
            cells = "".join(f'<th colspan="{span}">{esc(text)}</th>' if span > 1 else f"<th>{esc(text)}</th>" for text, span in _spans(row))
            parts.append(f"<tr>{cells}</tr>")
        parts.append("</thead>")
    parts.append("<tbody>")
    for row in rows:
        parts.append("<tr>" + "".join(f"<td>{esc(text)}</td>" for text in row) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


_TABLE = re.compile(r"<table>(.*?)</table>", re.S)
_CAPTION = re.compile(r"<caption>(.*?)</caption>", re.S)
_HEAD = re.compile(r"<thead>(.*?)</thead>", re.S)
TABLE_BODY = re.compile(r"<tbody>(.*?)</tbody>", re.S)
"""The body of each table ``table_html`` renders (group 1: its rows)."""
_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_ANY_CELL = re.compile(r'<t([dh])(?: colspan="(\d+)")?>(.*?)</t\1>', re.S)


def _markdown_cells(row_html: str) -> list[str]:
    cells: list[str] = []
    for _, span, text in _ANY_CELL.findall(row_html):
        if "&" in text:
            text = html.unescape(text)
        cells.append(" ".join(text.split()))
        if span:
            cells.extend([""] * (int(span) - 1))
    return cells


def _markdown_table(table: re.Match, before: str) -> str:
    inner = table.group(1)
    lines = []
    caption = _CAPTION.search(inner)
    if caption and f"Caption: {html.unescape(caption.group(1))}" not in before:
        lines.append(html.unescape(caption.group(1)))
    head = [_markdown_cells(r) for h in _HEAD.findall(inner) for r in _ROW.findall(h)]
    body = [_markdown_cells(r) for b in TABLE_BODY.findall(inner) for r in _ROW.findall(b)]
    lines += ["| " + " | ".join(cells) + " |" for cells in head]
    if head and body:
        lines.append("|" + "---|" * max(len(cells) for cells in head))
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def markdown_tables(text: str) -> str:
    """``text`` with every table ``table_html`` rendered into it written as a Markdown table: its
    header rows (a spanning head once, the columns it spans left empty), a rule, then its body
    rows, one line each, cells unescaped and their line breaks closed up. A caption the text
    already names ("Caption: ...") is not repeated. The same words at a third fewer word pieces
    than the HTML: what a language model reads (``SearchHit.context_text``)."""
    if "<table>" not in text:
        return text
    out, last = [], 0
    for table in _TABLE.finditer(text):
        out.append(text[last : table.start()])
        out.append(_markdown_table(table, text[: table.start()]))
        last = table.end()
    out.append(text[last:])
    return "".join(out)
