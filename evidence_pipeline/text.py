"""The project's text vocabulary: what a caption looks like, and how text is normalised.

Two strengths of "table caption", each for a reason:

- ``TABLE_CAPTION_RE`` (strict) decides, while a page is being laid out, whether a line
  *is* a caption: "Table 3-1: ...", "Table 1. ...", "Table 2 Results", "Tbl. 4", "표 1",
  but not "Table 1 shows ..." (a sentence that cites the table).
- ``TABLE_LABEL_RE`` (loose) decides, once a document is parsed, whether a text block
  *names* a table ("Table 1 ..." in any form). Units use it to find a caption the parser
  left unlinked and to keep table captions out of section chunks; the parser has already
  sorted captions from sentences by then, and DOCX/HTML/Markdown captions arrive as plain
  paragraphs.

Figure captions never name a table; ``OTHER_CAPTION_RE`` covers the captions of blocks
that may look like tables (code listings, exhibits) without being "Table N".
"""

from __future__ import annotations

import re
import unicodedata

# The glyphs a bulleted list opens its items with (``parser.text_lines.BULLET_RE`` at a line's
# start, ``units.bulleted_list_items`` alone in a grid's first column).
BULLET_GLYPHS = "•·▪◦‣●○■□►▶➢✓-–—"

# The number part of a strict caption, and what may follow it: a separator, an upper-case
# word or the end of the line; a lower-case word means the line is a sentence.
_CAPTION_TAIL = r"\s*[A-Z]?\d+([.\-–]\d+)*[A-Za-z]?(?=\s*[:.\-–—|](\s|$)|\s+[^a-z\s]|\s*$)"
TABLE_CAPTION_RE = re.compile(r"^\s*(?i:table|tab\.|tbl\.)" + _CAPTION_TAIL + r"|^\s*\[?표\s*\d+\]?")
OTHER_CAPTION_RE = re.compile(r"^\s*(?i:figure|fig\.|chart|exhibit|listing|example|scheme|그림)" + _CAPTION_TAIL)


def _leader(dots: int) -> str:
    """A dot leader of at least ``dots`` dots (spaced or not), or of ellipsis characters."""
    return r"(?:(?:\.\s?){%d,}|…{2,})" % dots  # noqa: UP031  (the regex's own braces)


# A dot leader ("2 OBJECTIVES ....... 9"): a table of contents' line, never a heading or a row.
DOT_LEADER_RE = re.compile(_leader(4))
# A contents entry: a dot leader, then the page number it points to ("3.5 Withdrawal ..... 12", "Preface ..... iv").
# A figure is no page number: "Revenue ........ 1,234" and "Yield .... 12.5 %" are rows.
CONTENTS_ENTRY_RE = re.compile(_leader(5) + r"\s*(?:\d{1,4}|[ivxlc]{1,6})(?=\s|$)(?!\s*%)", re.IGNORECASE)
FIGURE_CAPTION_RE = re.compile(r"^\s*(?i:figure|fig\.|chart|scheme|그림)" + _CAPTION_TAIL)

TABLE_LABEL_RE = re.compile(r"^\s*(table|tab\.)\s*[A-Z]?\d+", re.IGNORECASE)
FIGURE_LABEL_RE = re.compile(r"^\s*(figure|fig\.)\s*\d+", re.IGNORECASE)

# Dashes and the soft hyphen as one plain '-' (the minus sign too: PDFs mix them freely).
_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00ad": ""})


def is_caption_line(text: str) -> bool:
    """A laid-out line that opens a caption of any kind (table, figure, listing...)."""
    return bool(TABLE_CAPTION_RE.match(text) or OTHER_CAPTION_RE.match(text))


def names_table(text: str) -> bool:
    """A parsed text block that names a table ("Table 3 ...", never "Figure 3 ...")."""
    return bool(TABLE_LABEL_RE.match(text)) and not FIGURE_LABEL_RE.match(text)


def fold(text: str) -> str:
    """Unicode compatibility form (NFKC) and case folding: the form every comparison starts from."""
    return unicodedata.normalize("NFKC", text).casefold()


def normalise(text: str | None, *, dashes: bool = False) -> str:
    """``fold`` with white space collapsed to single spaces; ``dashes``: every dash becomes '-'
    and soft hyphens disappear (for comparing text extracted by different tools)."""
    t = unicodedata.normalize("NFKC", text or "")
    if dashes:
        t = t.translate(_DASHES)
    return " ".join(t.casefold().split())
