"""Restore the spaces docling-parse drops between words.

Where a PDF places words without a space character between them (each word its own text
object, or the space a zero-width object of its own), docling-parse can close them up:
"DALTEPARIN SODIUM INJECTION" reads "DALTEPARINSODIUM INJECTION", "Respiratory Rate" reads
"RespiratoryRate". pdfium's text of the page has the spaces. A word of a text is spaced as
pdfium prints it when:

- it is at least ``MIN_LETTERS`` letters long and pdfium's text of its page (or the pages
  beside it) never prints it closed up;
- pdfium prints the same letters, in the same case, with single spaces between some of them;
- every piece is at least two letters and a word the document itself prints elsewhere
  (any case): a space pdfium inserts inside a word ("glu cose") leaves pieces the document
  never prints, and the word stays as docling read it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from evidence_pipeline.records import ParsedDoc

MIN_LETTERS = 8
"""Shortest closed-up word looked for (the shortest a glued pair of real words tends to be)."""

_LONG_WORD = re.compile(rf"(?<![^\W_])[^\W\d_]{{{MIN_LETTERS},}}(?![^\W_])")
_WORD = re.compile(r"[^\W_]+")


@lru_cache(maxsize=4096)
def _spaced_pattern(word: str) -> re.Pattern[str]:
    """``word``'s letters with at most one space between any two, as a whole word."""
    return re.compile(r"(?<![^\W_])" + " ?".join(re.escape(ch) for ch in word) + r"(?![^\W_])")


def _doc_words(doc: ParsedDoc) -> frozenset[str]:
    texts: list[str] = [b.text for b in doc.blocks]
    for t in doc.tables:
        texts += [t.caption or "", *t.footnotes, *(c.text for c in t.cells)]
    return frozenset(w.casefold() for text in texts for w in _WORD.findall(text))


@lru_cache(maxsize=64)
def _printed_words(page_text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(page_text))


def spaced(text: str, page_texts: Iterable[str], doc_words: frozenset[str]) -> str:
    """``text`` with each closed-up word spaced as pdfium's ``page_texts`` print it (see the module)."""
    pages = list(page_texts)
    if not pages or len(text) < MIN_LETTERS:
        return text

    def respace(m: re.Match[str]) -> str:
        word = m.group(0)
        if any(word in _printed_words(page) for page in pages):
            return word
        pattern = _spaced_pattern(word)
        for page in pages:
            found = pattern.search(page)
            if found is None or " " not in found.group(0):
                continue
            pieces = found.group(0).split(" ")
            if all(len(p) >= 2 and p.casefold() in doc_words for p in pieces):
                return found.group(0)
        return word

    return _LONG_WORD.sub(respace, text)


def restore_spaces_in(doc: ParsedDoc, texts: dict[int, str]) -> ParsedDoc:
    """``doc`` with the spaces docling-parse dropped between words put back where pdfium's
    ``texts`` (page number -> text) print them: in texts, captions, footnotes and cells."""
    if not texts:
        return doc
    words = _doc_words(doc)

    def around(pages: Iterable[int | None]) -> list[str]:
        out: list[str] = []
        for page in pages:
            for p in (page, (page or 0) + 1, (page or 0) - 1):
                if p in texts and texts[p] not in out:
                    out.append(texts[p])
        return out

    blocks = []
    for b in doc.blocks:
        text = spaced(b.text, around([b.page]), words)
        blocks.append(b.model_copy(update={"text": text}) if text != b.text else b)
    tables = []
    for t in doc.tables:
        pages = around(t.pages or [t.page])
        cells = [c.model_copy(update={"text": new}) if (new := spaced(c.text, pages, words)) != c.text else c for c in t.cells]
        update = {
            "caption": spaced(t.caption, pages, words) if t.caption else t.caption,
            "footnotes": [spaced(f, pages, words) for f in t.footnotes],
            "cells": cells,
        }
        tables.append(t.model_copy(update=update))
    return doc.model_copy(update={"blocks": blocks, "tables": tables})
