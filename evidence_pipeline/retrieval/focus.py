"""Stage 5, focus: a large table read as the rows the question asks for.

A whole schedule or glossary is too large a context: the row that answers sits somewhere in
1,000-2,000 tokens. A table parent longer than ``FOCUS_TOKENS`` is read as its head (document,
section, caption, columns, the list of its row names), the paragraphs around it, its header,
the rows that hold the query's words (at most ``FOCUS_ROWS``, best first: the row that matched,
then by the query's words each holds, weighted by how few rows hold them; ties in table order),
its footnotes, and one line saying how many rows were left out and which parent holds them all.
Best first, a budget that cuts the context keeps the rows likeliest to answer. The hit keeps
the whole table in ``parent_text`` (``get_parent`` reads it too); its ``focus`` is what
``render_context`` gives a language model (in Markdown, ``flow.as_markdown``). A table none of
whose rows holds a word of the query is not focused, nor is a primary financial statement:
questions about one combine its lines in words its row labels do not print ("operating
spending against revenue"), so the whole statement is the evidence.
"""

from __future__ import annotations

import functools
import html
import math
import re

from evidence_pipeline.bm25_query import STOPWORDS, tokenize
from evidence_pipeline.records import SearchHit
from evidence_pipeline.retrieval.query import Query
from evidence_pipeline.tables import TABLE_BODY, html_text
from evidence_pipeline.units import approx_tokens

FOCUS_TOKENS = 600
"""A table parent of more word pieces than this (estimated, ``units.approx_tokens``) is focused."""
FOCUS_ROWS = 8
"""Rows a focused table keeps at most."""

_ROW = re.compile(r"<tr>.*?</tr>", re.S)
_CELL = re.compile(r"<td>(.*?)</td>", re.S)


def _terms(text: str) -> set[str]:
    return {t for t in tokenize(text.lower()) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())}


@functools.lru_cache(maxsize=1024)
def _row_terms(text: str) -> tuple[frozenset[str], ...]:
    """The terms of each body row of the tables in ``text`` (a parent's), in order: read once
    per parent, as the same tables answer many queries."""
    return tuple(frozenset(_terms(" ".join(_cells(r)))) for b in TABLE_BODY.finditer(text) for r in _ROW.findall(b.group(1)))


def _cells(row_html: str) -> list[str]:
    return [html.unescape(c) for c in _CELL.findall(row_html)]


def _matched(cells: list[str], matched_text: str) -> bool:
    """The row is the one the best child reads ("label | column: value ..."): its label opens
    the sentence and every other filled cell is in it."""
    label = cells[0].strip() if cells else ""
    if not label or not matched_text.startswith(label + " |"):
        return False
    return all(c.strip() in matched_text for c in cells[1:] if c.strip())


def focus(hit: SearchHit, query: Query) -> SearchHit:
    """``hit`` with ``focus`` set when its table is large and some rows hold the query's words."""
    text = hit.parent_text
    if hit.unit_kind != "table" or hit.statement is not None or approx_tokens(text) <= FOCUS_TOKENS:
        return hit
    bodies = list(TABLE_BODY.finditer(text))
    rows = [(b, r) for b in bodies for r in _ROW.findall(b.group(1))]
    if len(rows) <= FOCUS_ROWS:
        return hit
    wanted = _terms(query.text)
    if not wanted:
        return hit
    row_terms = [terms & wanted for terms in _row_terms(text)]
    df: dict[str, int] = {}
    for terms in row_terms:
        for t in terms:
            df[t] = df.get(t, 0) + 1
    n = len(rows)
    scores = [sum(math.log(1 + n / df[t]) for t in terms) for terms in row_terms]
    label = hit.matched_text.split(" |", 1)[0].strip()
    for i, (_, r) in enumerate(rows):
        if label and f"<td>{html_text(label)}</td>" in r and _matched(_cells(r), hit.matched_text):
            scores[i] = math.inf
    ranked = sorted((i for i in range(n) if scores[i] > 0), key=lambda i: (-scores[i], i))[:FOCUS_ROWS]
    if not ranked:
        return hit
    keep = {row: place for place, row in enumerate(ranked)}  # row index -> its place, best first
    out, last, i = [], 0, 0
    for body in bodies:
        kept = []
        for r in _ROW.findall(body.group(1)):
            if i in keep:
                kept.append((keep[i], r))
            i += 1
        out.append(text[last : body.start()] + "<tbody>" + "".join(r for _, r in sorted(kept)) + "</tbody>")
        last = body.end()
    out.append(text[last:])
    note = f"[{len(keep)} of {n} rows shown, those the question names, best first; the whole table is parent {hit.parent_id}]"
    focused = "".join(out)
    end = focused.rfind("</table>") + len("</table>")
    focused = focused[:end] + "\n" + note + focused[end:]
    return hit.model_copy(update={"focus": focused})
