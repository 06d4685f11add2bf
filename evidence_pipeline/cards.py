"""Document cards: what a document says about itself on its first pages.

``build_card(doc)`` reads the parsed document alone (its title, text blocks and tables of the
first pages) and returns a ``DocumentCard``: a clean title, the issuing organisation and the
names it goes by, the document type, the period it covers (normalised) and the identifiers it
declares. Only generic layout and wording patterns are used (an SEC cover page, "Exact name
of registrant as specified in its charter", a "Trading Symbol(s)" column, a ``(NYSE: XYZ)``
mention, ``(the "Company")`` definitions, "Title:" labels, title lines by position): no list
of companies, tickers or document names.

The card needs only the first pages (``CARD_PAGES``): a document parsed with
``pages=(1, CARD_PAGES)`` gives the same card as the whole document.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, timedelta

from evidence_pipeline.records import DocumentCard, ParsedDoc, Table, TextBlock
from evidence_pipeline.text import CONTENTS_ENTRY_RE
from evidence_pipeline.vocabulary import MONTH_COUNTS, ORDINAL, ORDINALS, find_dates, parse_date

__all__ = ["CARD_PAGES", "DocumentCard", "build_card", "find_dates", "parse_date", "short_names"]

CARD_PAGES = 5
"""Pages read for a card: the cover, the contents and the first statements of a filing."""


@dataclass(frozen=True)
class Line:
    """One line of the first pages in reading order: a text block or one table cell."""

    text: str
    page: int
    label: str
    block: TextBlock | None = None


# --------------------------------------------------------------------------- patterns

_FORM = re.compile(r"\bFORM\s+(\d{1,2}-[A-Z]{1,2}|[A-Z]-\d{1,2})\b", re.I)
_EXACT_NAME = re.compile(r"exact name of (?:the )?registrant", re.I)
_JURISDICTION = re.compile(r"^\(?\s*state\s+or\s+other\s+jurisdiction", re.I)
_JURISDICTION_REACH = 3
_FILE_NUMBER = re.compile(r"commission\s+file\s+(?:number|no\.?)\s*:?\s*([0-9]+-[0-9]+)", re.I)
_COVER_PERIOD = re.compile(
    r"for\s+the\s+(quarterly\s+period|fiscal\s+year|year|quarter(?:\s+and\s+(?:full\s+)?year)?|"
    r"(?:thirteen|fourteen|fifty-two|fifty-three|13|14|52|53)[- ]weeks?(?:\s+period)?|"
    rf"(?:{MONTH_COUNTS})\s+months)\s*(?:\([^)]*\)\s*)?(?:and\s+[^.]{{0,60}}?)?ended\s+(.{{6,20}}?\d{{4}})",
    re.I,
)
_STATED_QUARTER = re.compile(
    rf"\b({ORDINAL})\s+quarter\s+(?:and\s+full\s+year\s+)?(?:of\s+)?(fiscal\s+(?:year\s+)?)?(\d{{4}})\b"
    rf"|\b(fiscal\s+(?:year\s+)?)(\d{{4}})\s+({ORDINAL})\s+quarter\b",
    re.I,
)
_YTD_MONTHS = re.compile(r"\b(six|nine|twenty-six|thirty-nine|26|39)\s+(?:months|weeks)\s+ended\b", re.I)
_TICKER_MENTION = re.compile(r"\(\s*[A-Za-z][A-Za-z ]{1,20}:\s*([A-Z][A-Z.]{0,5})\s*\)")
_DEFINED_NAME = re.compile(r"[“\"]([A-Z][^”\"]{1,40})[”\"]")
_TITLE_LABEL = re.compile(
    r"^\s*(?:(?:study|official|protocol|project|full|scientific|document|trial)\s+)?(?:title|name)\s*[:：]\s*(.*)$",
    re.I,
)
_FIELD_LABEL = re.compile(r"^[A-Z][A-Za-z ()/&]{1,40}[:：]")
_ORG_LABEL = re.compile(
    r"\b(?:sponsor|issued by|prepared by|study applicant|research institution|affiliation)\s*[:：]\s*"
    r"([^:：|]{3,80}?)(?=\s+[A-Z][\w ]{1,25}[:：]|\s*\||$)",
    re.I,
)
_IDENTIFIER = re.compile(r"\b[A-Z]{2,6}(?:-[A-Z0-9]{1,6})*-\d{2,6}\b|(?<![A-Za-z0-9])NCT\d{8}(?![0-9])")
# A code printed on the cover: letters and digits mixed ("AGLU03606", "H8O-MC-GWBQ", "B3461026", "Fx1B-303").
_CODE = re.compile(r"(?<![\w.-])(?=[\w-]*\d)(?=[\w-]*[A-Z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?![\w-]|\.\d)")
MIN_CODE_CHARS = 5
MIN_CODE_DIGITS = 3
_DATE_SHAPED = re.compile(r"\d{1,2}-[A-Za-z]{3,9}-\d{2,4}|[A-Za-z]{3,9}-\d{4}")
_LABELLED_ID = re.compile(
    r"\b(?:protocol|document|project|study|iras|registration)\s+(?:number|no\.?|id)\s*[:：–-]?\s*"
    r"([A-Z0-9][\w./-]{2,20})",
    re.I,
)
_BOILERPLATE = re.compile(
    r"^(united states|securities and exchange commission|washington|form \S+|\(?mark one\)?|or|"
    r"table of contents|index|page|confidential\w*)\b",
    re.I,
)
_RELEASE = re.compile(r"\b(reports?|announces?|reported|announced)\b.{0,80}\b(results|quarter|earnings)\b", re.I)
_DOC_TYPES = [
    ("SOP", re.compile(r"\bstandard operating procedure\b|^SOP\b", re.I)),
    ("consent form", re.compile(r"\binformed consent\b|\bconsent form\b", re.I)),
    ("statistical analysis plan", re.compile(r"^statistical analysis plan\b", re.I)),
    ("protocol", re.compile(r"\bprotocol\b", re.I)),
    ("annual report", re.compile(r"\bannual report\b", re.I)),
    ("report", re.compile(r"\breport\b", re.I)),
]


# --------------------------------------------------------------------------- building


def card_lines(doc: ParsedDoc, pages: int = CARD_PAGES) -> list[Line]:
    """Blocks and table cells of the first ``pages`` pages, in reading order."""
    lines: list[Line] = []
    for item in doc.items():
        if item.page is not None and item.page > pages:
            continue
        if isinstance(item, Table):
            for row in item.grid():
                for text in dict.fromkeys(row):
                    if text.strip():
                        lines.append(Line(text.strip(), item.page or 1, "table_cell"))
        elif item.text.strip():
            lines.append(Line(item.text.strip(), item.page or 1, item.label, item))
    return lines


def build_card(doc: ParsedDoc) -> DocumentCard:
    """The card of ``doc``, from its first ``CARD_PAGES`` pages."""
    lines = card_lines(doc)
    first = [ln for ln in lines if ln.page == min((x.page for x in lines), default=1)]
    cover_text = "\n".join(ln.text for ln in first)
    text = "\n".join(ln.text for ln in lines)

    form = _FORM.search(cover_text)
    organisation = _registrant(first) if form else None
    release_title = None if form else _release_title(first)
    mentioned: list[str] = []
    if organisation is None:
        organisation, mentioned = _mentioned_org(first)
    names, tickers = _names(lines, organisation)
    tickers = list(dict.fromkeys([*mentioned, *tickers]))
    names = [n for n in names if organisation is None or n.lower() != organisation.lower()]

    period = _cover_period(cover_text) or _cover_period(text)
    period_end, months = period if period else (None, None)
    fiscal_year, fiscal_quarter = _fiscal(text, release_title, period_end, months)

    doc_type = form.group(1).upper() if form else _doc_type(doc, release_title, first)
    title = _sec_title(organisation, doc_type, cover_text) if form else (release_title or _title(doc, first))
    identifiers = _identifiers(doc, lines, title)
    dates = [d for d in dict.fromkeys(find_dates(cover_text)) if d != period_end][:5]
    return DocumentCard(
        doc_id=doc.doc_id,
        title=title,
        doc_type=doc_type,
        organisation=organisation,
        names=names,
        tickers=tickers,
        period_end=period_end,
        period_months=months,
        fiscal_year=fiscal_year,
        fiscal_quarter=fiscal_quarter,
        dates=dates,
        identifiers=identifiers,
    )


def _registrant(first: list[Line]) -> str | None:
    """The registrant's name on an SEC cover: the text before "(Exact name of registrant...)"
    on its line or the line above it, else the first name-like line after the Commission File
    Number. The state the registrant is incorporated in (the value above "(State or other
    jurisdiction of incorporation...)") is never its name."""
    for i, line in enumerate(first):
        label = _EXACT_NAME.search(line.text)
        if label:
            before = line.text[: label.start()].rstrip(" (")
            if _name_like(before):
                return before
            for n in range(i - 1, -1, -1):
                if _name_like(first[n].text) and not _jurisdiction(first, n):
                    return first[n].text
    for i, line in enumerate(first):
        if _FILE_NUMBER.search(line.text):
            for n in range(i + 1, min(i + 6, len(first))):
                if _name_like(first[n].text) and not _jurisdiction(first, n):
                    return first[n].text
    if any(_EXACT_NAME.search(line.text) or _FILE_NUMBER.search(line.text) for line in first):
        return None  # the labelled fields hold no name (printed as a logo, say)
    for line in first:  # a cover without either label: the title-like line after the form
        if line.label in ("title", "section_header") and _name_like(line.text) and not _COVER_PERIOD.search(line.text):
            if re.search(r"[A-Z]{2,}|\b(inc|corp|company|plc|ltd|llc)\b", line.text, re.I):
                return line.text
    return None


def _jurisdiction(lines: list[Line], n: int) -> bool:
    """Whether ``lines[n]`` is a cover's state of incorporation: a "(State or other
    jurisdiction ...)" label follows it within ``_JURISDICTION_REACH`` lines (the cover's
    fields sit in a grid, read row by row: the state, the tax number, then their labels)."""
    return any(_JURISDICTION.search(ln.text) for ln in lines[n + 1 : n + 1 + _JURISDICTION_REACH])


def _name_like(text: str) -> bool:
    letters = re.sub(r"[^A-Za-z]", "", text)
    return (
        len(letters) >= 2
        and len(text.split()) <= 8
        and not _BOILERPLATE.match(text)
        and not text.startswith("(")
        and not _FILE_NUMBER.search(text)
        and not re.search(r"\b(report|pursuant|period|ended|transition)\b", text, re.I)
        and not re.fullmatch(r"[\W\d_]+", text)
    )


def _names(lines: list[Line], organisation: str | None) -> tuple[list[str], list[str]]:
    """Short names (suffix stripped, quoted definitions that share a word) and tickers."""
    names = short_names(organisation) if organisation else []
    org_words = {w.lower() for n in names or [organisation or ""] for w in re.findall(r"\w+", n)}
    text = "\n".join(ln.text for ln in lines)
    for quoted in _DEFINED_NAME.findall(text):
        words = {w.lower() for w in re.findall(r"\w+", quoted)}
        if organisation and words & org_words and len(quoted.split()) <= 4:
            names.append(re.sub(r"\s+", " ", quoted).strip(" ,;."))
    tickers = _trading_symbols(lines) + _TICKER_MENTION.findall(text)
    spellings: dict[str, str] = {}
    for name in names:  # one spelling per name, the first seen
        spellings.setdefault(name.lower(), name)
    return list(spellings.values()), list(dict.fromkeys(tickers))


def _trading_symbols(lines: list[Line]) -> list[str]:
    """Symbols printed in a "Trading Symbol(s)" column: the cells after the header cell."""
    out: list[str] = []
    for i, line in enumerate(lines):
        if re.search(r"trading\s+symbols?(\(s\))?", line.text, re.I) and len(line.text) < 80:
            for nxt in lines[i + 1 : i + 12]:
                # its own cell, or the end of a merged "Common stock, $0.001 par value XYZ" cell
                m = re.fullmatch(r"[A-Z]{1,5}", nxt.text) or re.search(r"[a-z].*\s([A-Z]{2,5})$", nxt.text)
                if m:
                    out.append(m.group(m.lastindex or 0))
                    break
    return out


def _mentioned_org(first: list[Line]) -> tuple[str | None, list[str]]:
    """A release's "Name, Inc. (NYSE: XYZ)", else a labelled sponsor/owner."""
    for line in first:
        m = _TICKER_MENTION.search(line.text)
        if m:
            # the capitalised words just before it, after a dateline dash or a wire's ")"
            before = re.split(r"\s[-–—]{1,2}\s*|--|\)\s*", line.text[: m.start()])[-1].strip(" ,")
            name = re.search(r"((?:[A-Z][\w.&'-]*,?\s+){0,5}[A-Z][\w.&'-]*)$", before)
            if name:
                return name.group(1).strip(" ,"), [m.group(1)]
    for line in first:
        m = _ORG_LABEL.search(line.text)
        if m:
            return m.group(1).strip(" ,;."), []
    return None, []


def _cover_period(text: str) -> tuple[str, int] | None:
    for m in _COVER_PERIOD.finditer(text):
        end = parse_date(m.group(2))
        if end is None:
            continue
        kind = m.group(1).lower()
        if "year" in kind and "quarter" not in kind or re.match(r"(fifty|52|53|twelve)", kind):
            months = 12
        elif kind.startswith(("six", "26")):
            months = 6
        elif kind.startswith(("nine", "39")):
            months = 9
        else:
            months = 3
        return end.isoformat(), months
    return None


def _fiscal(text: str, release_title: str | None, period_end: str | None, months: int | None):
    """Fiscal year and quarter: as the document states them ("fourth quarter of fiscal 2022"),
    else derived from the period: the year-to-date columns of a quarterly report give the
    quarter ("Nine Months Ended" -> Q3) and the fiscal year is named by the year it ends in."""
    stated = [
        (int(m.group(3) or m.group(5)), ORDINALS[(m.group(1) or m.group(6)).lower()], bool(m.group(2) or m.group(4)))
        for m in _STATED_QUARTER.finditer((release_title or "") + "\n" + text)
    ]
    in_title = [s for s in stated if release_title and str(s[0]) in release_title]
    ytd = Counter(m.group(1).lower() for m in _YTD_MONTHS.finditer(text))
    # a stated fiscal quarter wins; a calendar-worded one ("fourth quarter of 2022") only when
    # the title says it or no year-to-date column tells the quarter
    chosen = in_title or [s for s in stated if s[2]] or ([] if ytd or months == 12 else stated)
    if chosen:
        year, quarter, _ = in_title[0] if in_title else max(chosen)
        return year, quarter if months != 12 or in_title else None
    if period_end is None:
        return None, None
    end = date.fromisoformat(period_end) - timedelta(days=10)
    if months == 12:
        return end.year, None
    if ytd:
        quarter = 3 if any(k in ytd for k in ("nine", "thirty-nine", "39")) else 2
    elif re.search(r"\bthree\s+months\s+ended\b", text, re.I):
        quarter = 1
    else:
        return None, None
    year_end_month = end.month + 3 * (4 - quarter)
    return end.year + (year_end_month - 1) // 12, quarter


def _sec_title(organisation: str | None, form: str | None, cover_text: str) -> str:
    period = _COVER_PERIOD.search(cover_text)
    parts = [organisation or "", f"Form {form}" if form else ""]
    if period:
        prefix = period.group(0)[: period.start(2) - period.start(0)]
        parts.append(re.sub(r"\s+", " ", prefix.lower() + period.group(2)))
    return " ".join(p for p in parts if p).strip()


def _release_title(first: list[Line]) -> str | None:
    """An earnings release's headline: a title/header line that reports results."""
    for line in first[:25]:
        if line.label in ("title", "section_header") and _RELEASE.search(line.text) and len(line.text) > 20:
            return line.text
    return None


def _doc_type(doc: ParsedDoc, release_title: str | None, first: list[Line]) -> str | None:
    if release_title:
        return "earnings release"
    head = [doc.title, *(ln.text for ln in first[:12])]
    for name, pattern in _DOC_TYPES:
        if any(pattern.search(t) for t in head):
            return name
    return None


def _title(doc: ParsedDoc, first: list[Line]) -> str:
    """A labelled title ("Title:", "Study title:", a "Title" table row) with its continuation
    lines; else the first title-like block of page 1 with the lines that continue it."""
    for i, line in enumerate(first):
        m = _TITLE_LABEL.match(line.text)
        if m and not re.match(r"\s*short", line.text, re.I):
            value = m.group(1).strip()
            start = i + 1
            if not value and i + 1 < len(first):
                value, start = first[i + 1].text, i + 2
            if value:
                return _continue(value, first, start, first[start - 1])
        if line.label == "table_cell" and re.fullmatch(r"(study\s+)?(title|topic)", line.text, re.I):
            if i + 1 < len(first):
                return first[i + 1].text
    if doc.title and doc.title != doc.doc_id and _good_title(doc.title):
        starts = [i for i, ln in enumerate(first) if ln.text == doc.title]
        if starts and (block := first[starts[0]].block) is not None and block.label == "title":
            return _continue(doc.title, first, starts[0] + 1, first[starts[0]])
    # a field's value (the line after "Sponsor:") is no title
    candidates = [i for i, line in enumerate(first) if _title_like(line) and not (i and first[i - 1].text.rstrip().endswith(":"))]
    candidates = candidates[:COVER_TITLE_LINES]
    if candidates:
        # The first, unless a line below it is at least twice as long (and no sentence that ends
        # in a period): a cover's type line or address ("CLINICAL STUDY PROTOCOL", a street)
        # sits above the title it carries.
        i = max(candidates, key=lambda j: (not first[j].text.rstrip().endswith("."), len(first[j].text.split()), -j))
        if len(first[i].text.split()) < COVER_TITLE_RATIO * len(first[candidates[0]].text.split()):
            i = candidates[0]
        return _continue(first[i].text, first, i + 1, first[i])
    return doc.title.strip() or doc.doc_id


COVER_TITLE_LINES = 6
"""How many title-like lines from the top of the first page compete to be the title."""
COVER_TITLE_RATIO = 2


def _title_like(line: Line) -> bool:
    """A line that could be a cover's title: no running header, cell or list item, no field
    label, no line that holds a date, no body text (a paragraph that starts in lower case or
    runs past 40 words)."""
    if line.label in ("page_header", "page_footer", "table_cell") or not _good_title(line.text) or find_dates(line.text):
        return False
    text = line.text.strip()
    if line.label == "list_item" or text[0].islower() or (line.label == "paragraph" and len(text.split()) > 40):
        return False  # an item of a list, a sentence carried over from a previous page, or body text
    return True


def _good_title(text: str) -> bool:
    return (
        len(text.split()) >= 3
        and not _FIELD_LABEL.match(text)
        and not _BOILERPLATE.match(text)
        and not (parse_date(text) and len(text) < 30)
        and not re.match(r"(version|date|rev)\b", text, re.I)
        and not CONTENTS_ENTRY_RE.search(text)  # a line of the table of contents
    )


def _continue(value: str, first: list[Line], start: int, anchor: Line) -> str:
    """Append the lines that continue a title: same page, just below, similar line height,
    not a labelled field, not a parenthesised note."""
    parts = [_clean(value)]
    prev = anchor.block
    for line in first[start : start + 4]:
        block = line.block
        if block is None or prev is None or block.bbox is None or prev.bbox is None or block.page != prev.page:
            break
        # the parser gives no font size: a line's box height stands in for it; centred title
        # lines may be double spaced
        height = min(prev.bbox.height, block.bbox.height)
        gap = block.bbox.t - prev.bbox.b
        centred = abs((block.bbox.l + block.bbox.r) - (prev.bbox.l + prev.bbox.r)) < 8
        if gap < -2 or gap > (2.0 if centred else 0.9) * height + 4:
            break
        if _FIELD_LABEL.match(line.text) or line.text.startswith("(") or parts[-1].rstrip().endswith((".", ":")):
            break
        if block.label in ("page_header", "page_footer") or find_dates(line.text):
            break
        if prev.label in ("title", "section_header") and block.label == "paragraph" and len(line.text.split()) > 15:
            break  # body text under a heading
        parts.append(_clean(line.text))
        prev = block
    return " ".join(parts)


def _clean(text: str) -> str:
    """Without leading bullets or control characters and surrounding spaces."""
    return re.sub(r"^[^\w(“\"'<]+|[^\w.)”\"'>]+$", "", text)


def _identifiers(doc: ParsedDoc, lines: list[Line], title: str) -> list[str]:
    """Identifiers the document declares for itself: ids in its title and in headers or footers
    repeated on several pages, labelled numbers ("Protocol Number: AFL19006"), registry and file numbers."""
    found: list[str] = []
    running: dict[str, set[int]] = defaultdict(set)
    for line in lines:
        for m in _IDENTIFIER.finditer(line.text):
            if line.label in ("page_header", "page_footer"):
                running[m.group(0)].add(line.page)
            elif line.label == "title" or m.group(0).startswith("NCT"):
                found.append(m.group(0))
        for m in _FILE_NUMBER.finditer(line.text):
            found.append(m.group(1))
        if line.page == 1:
            for m in _LABELLED_ID.finditer(line.text):
                if re.search(r"\d", m.group(1)) and not find_dates(m.group(1)):
                    found.append(m.group(1).rstrip(".,"))
    found.extend(ident for ident, pages in running.items() if len(pages) > 1)  # a running header
    found.extend(_cover_codes([line for line in lines if line.page == min(ln.page for ln in lines)]))
    # the file name is part of the document as it was handed over (registries name files by id)
    found.extend(m.group(0) for m in _IDENTIFIER.finditer(doc.doc_id))
    found.extend(m.group(0) for m in _IDENTIFIER.finditer(title))
    counts = Counter(found)
    return sorted(counts, key=lambda s: (-counts[s], found.index(s)))[:MAX_IDENTIFIERS]


MAX_IDENTIFIERS = 12


def _cover_codes(first: list[Line]) -> list[str]:
    """Codes the first page prints: study, protocol and product codes a reader names the
    document by. A code mixes capitals and digits, has ``MIN_CODE_CHARS`` characters and
    ``MIN_CODE_DIGITS`` digits (one is enough in a code of three parts or more: "H8O-MC-GWBQ"),
    and is no date."""
    out: list[str] = []
    for line in first:
        for m in _CODE.finditer(line.text):
            code = m.group(0)
            bare = re.sub(r"[^A-Za-z0-9]", "", code)
            digits = sum(c.isdigit() for c in bare)
            enough = digits >= MIN_CODE_DIGITS or (digits and code.count("-") >= 2)
            if len(bare) >= MIN_CODE_CHARS and enough and not _DATE_SHAPED.fullmatch(code) and not find_dates(code):
                out.append(code)
    return list(dict.fromkeys(out))


# --------------------------------------------------------------------------- names

_CORPORATE_SUFFIX = re.compile(
    r",?\s+(inc\.?|incorporated|corporation|corp\.?|company|co\.|plc|ltd\.?|limited|llc|n\.v\.|s\.a\.|ag|se)$",
    re.I,
)


def short_names(legal_name: str | None) -> list[str]:
    """Names a legal name is shortened to: without its corporate suffix, without a web suffix."""
    if not legal_name:
        return []
    out, name = [], legal_name.strip()
    while _CORPORATE_SUFFIX.search(name):
        name = _CORPORATE_SUFFIX.sub("", name).strip(" ,")
        out.append(name)
    if re.search(r"\.(com|net|org)$", name, re.I):
        out.append(re.sub(r"\.(com|net|org)$", "", name, flags=re.I))
    return [n for n in dict.fromkeys(out) if n and n.lower() != legal_name.lower()]
