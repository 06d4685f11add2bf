"""Restore the dashes docling-parse flattens.

docling-parse decodes en and em dashes (and the minus sign) of standard-font PDFs
as '-', so "Hold times at 2–8 °C" reads "2-8 °C" and no longer matches what the
reader sees printed. pdfium reads the same glyphs right. For every text that has
a '-', the same text is looked up in pdfium's text of its page with any dash in
those places; where it is found, the dashes are taken as printed.

A dash that ends a line is worse off: read as '-', Docling's line joining takes it
for a hyphen that cuts a word and closes the two lines up ("platforms—" / "reflects"
becomes "platformsreflects"). Where pdfium's text of the page ends a line with an en
or em dash between two words and a text holds those words closed up, the dash goes
back between them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.work import WORK

_DASHES = "-\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
_DASH_CLASS = "([" + re.escape(_DASHES) + "])"


@lru_cache(maxsize=4096)
def _pattern(text: str) -> re.Pattern[str]:
    parts = []
    for token in re.split(r"(\s+|-)", text):
        if not token:
            continue
        if token == "-":
            parts.append(_DASH_CLASS)
        elif token.isspace():
            parts.append(r"\s*")
        else:
            parts.append(r"\s*".join(re.escape(ch) for ch in token) if len(token) < 3 else re.escape(token))
    return re.compile("".join(parts))


def _restore(text: str, page_texts: list[str]) -> str:
    if "-" not in text or not text.strip():
        return text
    pattern = _pattern(text)
    for page_text in page_texts:
        m = pattern.search(page_text)
        if m:
            dashes = iter(m.groups())
            return re.sub("-", lambda _: next(dashes), text)  # noqa: B023  (called before the loop moves on)
    return text


# A line of pdfium's text that ends with an en or em dash right after a word, and the word
# that opens the next line.
_LINE_END_DASH = re.compile(r"([^\W_]+)([\u2013\u2014])[ \t]*\r?\n[ \t]*([^\W_]+)")


def _closed_up(page_texts: list[str]) -> list[tuple[re.Pattern[str], str]]:
    """(the two words closed up, the words with their dash) for the line-end dashes of the
    pages; not where the page itself prints the closed-up word."""
    out = []
    for page_text in page_texts:
        for m in _LINE_END_DASH.finditer(page_text):
            left, dash, right = m.groups()
            pattern = re.compile(rf"(?<![^\W_]){re.escape(left + right)}(?![^\W_])")
            if not pattern.search(page_text):
                out.append((pattern, left + dash + right))
    return out


def _undo_joins(text: str, joins: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, printed in joins:
        text = pattern.sub(printed, text)
    return text


def restore_dashes(doc: ParsedDoc, path: Path) -> ParsedDoc:
    """``doc`` with its dashes as printed (``restore_dashes_in`` on ``page_texts``)."""
    return restore_dashes_in(doc, page_texts(doc, path))


def page_texts(doc: ParsedDoc, path: Path) -> dict[int, str]:
    """pdfium's text of every page of ``path`` that holds a text or a table of ``doc``, by page number."""
    pages_needed = {b.page for b in doc.blocks if b.page}
    for t in doc.tables:
        if t.page:
            pages_needed.update(t.pages or [t.page])
    if not pages_needed:
        return {}
    import pypdfium2 as pdfium

    texts: dict[int, str] = {}
    pdf = pdfium.PdfDocument(str(path))
    try:
        for page_no in sorted(pages_needed):
            if 1 <= page_no <= len(pdf):
                textpage = pdf[page_no - 1].get_textpage()
                texts[page_no] = textpage.get_text_range()
                WORK.count("parse.pdfium_text_pages")
    finally:
        pdf.close()
    return texts


def restore_dashes_in(doc: ParsedDoc, texts: dict[int, str]) -> ParsedDoc:
    """``doc`` with the dashes docling-parse flattened or dropped as pdfium's ``texts`` print them."""
    if not texts:
        return doc

    def around(page: int | None) -> list[str]:
        return [texts[p] for p in (page, (page or 0) + 1, (page or 0) - 1) if p in texts]

    joins: dict[int | None, list[tuple[re.Pattern[str], str]]] = {page: _closed_up([text]) for page, text in texts.items()}
    blocks = []
    for b in doc.blocks:
        text = _restore(b.text, around(b.page)) if "-" in b.text else b.text
        text = _undo_joins(text, joins.get(b.page, []))
        blocks.append(b.model_copy(update={"text": text}) if text != b.text else b)
    tables = []
    for t in doc.tables:
        pages = [texts[p] for p in (t.pages or ([t.page] if t.page is not None else [])) if p in texts] + around(t.page)
        tables.append(
            t.model_copy(
                update={
                    "caption": _restore(t.caption, pages) if t.caption else t.caption,
                    "footnotes": [_restore(f, pages) for f in t.footnotes],
                    "cells": [c.model_copy(update={"text": _restore(c.text, pages)}) if "-" in c.text else c for c in t.cells],
                }
            )
        )
    return doc.model_copy(update={"blocks": blocks, "tables": tables})
