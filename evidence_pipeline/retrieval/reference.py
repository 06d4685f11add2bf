"""Reference material: parts of a document that hold every term and answer little.

A list of abbreviations, a glossary, a table of contents or a revision history repeats the
words of most questions, so dense vectors and BM25 both rank it high; the figure a question
asks for is elsewhere. Such a parent is recognised by its heading or by its shape (a table
whose row labels are nearly all acronyms; text that is mostly lines ending in a page
number) and ranks below every other parent (``reference_last``), unless the query asks
what a term means or stands for; a document's own history (a revision history, a summary of
changes) also keeps its place when the query asks about amendments, revisions or versions.
Nothing here names a document.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from evidence_pipeline.tables import row_labels

# Headings that say what the material is: their words, not any document's. A document's own
# history (its versions, revisions and amendments) is one kind; terms and contents the other.
_HISTORY_HEADING = re.compile(
    r"\b(?:revision\s+history|document\s+history|version\s+history|"
    r"summary\s+of\s+(?:changes|revisions|amendments?)|amendment\s+(?:rationale|history|summary)|change\s+log)\b",
    re.IGNORECASE,
)
_HEADING = re.compile(
    r"\b(?:abbreviations?|acronyms?|glossary|definitions?\s+of\s+terms|list\s+of\s+definitions|"
    r"table\s+of\s+contents|^\W*contents\W*$)\b|" + _HISTORY_HEADING.pattern,
    re.IGNORECASE,
)
# A label printed as an acronym: "ALT", "HbA1c", "CYP3A4", "i.v.", "Q2W" (two capitals or more, short).
_ACRONYM = re.compile(r"^(?=(?:[^A-Z]*[A-Z]){2})[A-Za-z0-9&/.\-]{2,12}$")
# A section number alone, as a table of contents prints it in its first column: "9.11", "10", "A.2".
_SECTION_NUMBER = re.compile(r"^(?:\d{1,2}|[A-Z])(?:\.\d{1,2}){0,4}\.?$")
# A line of a table of contents: a title, dot leaders or spaces, a page number at its end.
_TOC_LINE = re.compile(r"(?:\.{4,}|…{2,}|\s{2,})\s*\d{1,3}\s*$")
# A query that asks what a term means.
_ASKS_MEANING = re.compile(
    r"\b(?:stands?\s+for|abbreviat\w*|acronyms?|defin(?:e|ed|es|ition|itions)|meaning\s+of|what\s+is\s+meant|"
    r"what\s+does\s+\S+\s+mean|glossary)\b",
    re.IGNORECASE,
)
# A query about the document's history: its amendments, revisions or versions.
_ASKS_HISTORY = re.compile(r"\b(?:amend\w*|revis\w*|versions?)\b", re.IGNORECASE)

MIN_ACRONYM_ROWS = 6
"""A table is a list of abbreviations by its shape when it has at least this many body rows
and ``ACRONYM_SHARE`` of their labels are acronyms."""
ACRONYM_SHARE = 0.6
MIN_TOC_LINES = 5
"""Text is a table of contents by its shape when at least this many of its lines, and half of
them, end in a page number after leaders."""


def _acronym(label: str) -> bool:
    """A label printed as an acronym, not a tag or a code: more letters than digits ("ALT",
    "HbA1c", "CYP3A4"; not "WT-2013", "PT-2184", "10.1")."""
    if not _ACRONYM.match(label):
        return False
    digits = sum(c.isdigit() for c in label)
    return sum(c.isalpha() for c in label) > digits and not re.search(r"[-/]\d", label)


def heading_says_reference(payload: Mapping[str, Any]) -> bool:
    """The caption or a section heading above the unit names reference material."""
    return _names(_HEADING, payload.get("caption") or "", tuple(payload.get("section_path") or ()))


def heading_says_history(payload: Mapping[str, Any]) -> bool:
    """The caption or a section heading above the unit names the document's history (a revision
    history, a summary of changes, an amendment's rationale)."""
    return _names(_HISTORY_HEADING, payload.get("caption") or "", tuple(payload.get("section_path") or ()))


@functools.lru_cache(maxsize=4096)
def _names(heading: re.Pattern[str], caption: str, section_path: tuple[str, ...]) -> bool:
    return any(heading.search(name) for name in (caption, *section_path) if name)


@functools.lru_cache(maxsize=4096)
def shaped_as_reference(text: str) -> bool:
    """``text`` (a parent's) is a list of acronyms or a table of contents by its shape: a table
    whose row labels are nearly all acronyms or section numbers, or lines ending in page numbers."""
    labels = [label.strip() for label in row_labels(text)]
    if len(labels) >= MIN_ACRONYM_ROWS:
        share = ACRONYM_SHARE * len(labels)
        if sum(_acronym(label) for label in labels) >= share:
            return True
        numbers = [label for label in labels if _SECTION_NUMBER.match(label)]
        # numbered rows (1, 2, 3 ... of a list of criteria) are no contents: a third are subsections
        if len(numbers) >= share and 3 * sum("." in n.rstrip(".") for n in numbers) >= len(numbers):
            return True
    lines = [line for line in text.splitlines() if line.strip()]
    toc = sum(bool(_TOC_LINE.search(line)) for line in lines)
    return toc >= MIN_TOC_LINES and toc * 2 >= len(lines)


def is_reference(payload: Mapping[str, Any]) -> bool:
    """A stored point's parent is reference material (by its heading or its shape)."""
    return heading_says_reference(payload) or shaped_as_reference(payload.get("parent_text", ""))


# "What is SEC?", "what are TEAEs (study terms)?": a bare term asked after "what is", no article.
_WHAT_IS_TERM = re.compile(r"\bwhat\s+(?:is|are)\s+(?!the\b|a\b|an\b)([^\s?]+(?:\s+[^\s?]+){0,5})\s*\??\s*$", re.IGNORECASE)


def asks_meaning(query: str) -> bool:
    """The query asks what a term means or stands for: reference material is its evidence. So
    does a question that ends on a bare term after "what is" ("What is SEC?")."""
    return bool(_ASKS_MEANING.search(query) or _WHAT_IS_TERM.search(query))


def asks_history(query: str) -> bool:
    """The query asks about the document's amendments, revisions or versions: its history is the
    evidence."""
    return bool(_ASKS_HISTORY.search(query))


T = TypeVar("T")


def reference_last(hits: Sequence[T], payload: Callable[[T], Mapping[str, Any]], query: str) -> list[T]:
    """``hits`` with the reference material after every other parent, each part in its order;
    unchanged when the query asks what a term means; the document's history stays in place when
    the query asks about amendments, revisions or versions. ``payload``: a hit's payload."""
    if asks_meaning(query):
        return list(hits)
    history = asks_history(query)
    flags = [is_reference(p) and not (history and heading_says_history(p)) for p in map(payload, hits)]
    return [h for h, f in zip(hits, flags) if not f] + [h for h, f in zip(hits, flags) if f]
