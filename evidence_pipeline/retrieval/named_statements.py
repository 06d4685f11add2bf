"""The financial statements a query names, and how strongly it names a stored table's.

A question often says which statement to read ("... shown in the cash flow statement", "...
the line items of the statement of income") without naming the row it needs, or asks a measure
a statement reports ("capital expenditure") without naming the statement. ``NamedStatements``
says which statements to fetch as candidates (``kinds``) and how strongly the query names the
statement a table is (``strength``), which ``named_rows.promote_named_rows`` fuses as a list of
its own. The statement a table is was decided when it was stored (``financial_statements``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from evidence_pipeline.financial_statements import SHEET_WORD, STATEMENT_WORD, kind_of_name, statement_name, statement_title
from evidence_pipeline.retrieval.query import Query, read_query
from evidence_pipeline.vocabulary import keyed_words

MEASURED = 1
"""The strength of a statement the query asks a measure of: below any statement it names by name
(two words or more)."""


class NamedStatements:
    """The financial statements a query names, read from the whole query: the instructions are
    where a question says which statement to use ("... by relying on the details shown in the
    cash flow statement")."""

    def __init__(self, query: Query | str, names: Iterable[str] = ()):
        """``names``: what the documents the query is about go by (``DocumentCard.known_as``). A
        measure right after one of them, whole, is the company's own as after a possessive ("XYZ
        revenue"); a word of a name alone is not (a company named "... International" does not
        make "international revenue" the whole company's)."""
        if isinstance(query, str):
            query = read_query(query)
        held = query.held
        keyed = {tuple(keyed_words(name)) for name in names}
        after_names = frozenset(start + len(name) for name in keyed if name for start in held.starts(name))
        self.words = held.known
        self.named = query.statements
        """The usual names of the primary statements the query names, by any of their names."""
        self.measured = tuple(
            dict.fromkeys(m.statement for m in query.measures if m.statement not in self.named and (m.whole or m.start in after_names))
        )
        """The statements the query asks a measure of (``STATEMENT_MEASURES``) and does not name."""

    @property
    def kinds(self) -> tuple[str, ...]:
        """The statements to fetch as candidates (``candidates.with_statements``)."""
        return self.named + self.measured

    def without_measures(self) -> NamedStatements:
        """These statements less those only asked a measure of: a measure asks for the statement of
        the document a query is about, and over every document it would name every filing's."""
        named = copy.copy(self)
        named.measured = ()
        return named

    def strength(self, payload: Mapping[str, Any]) -> int:
        """The words of the statement a stored table is (``statement_name`` of its
        ``statement_title``) when the query holds them all ("the cash flow statement" names
        "Consolidated Statements of Cash Flows") or names that statement by another of its names
        ("the statement of income" names "Statements of Operations"); ``MEASURED`` for a table of
        a statement only asked a measure of; 0 otherwise, and for a section chunk."""
        if not self.kinds and STATEMENT_WORD not in self.words and SHEET_WORD not in self.words:
            return 0
        if payload.get("statement") in self.measured and payload.get("unit_kind") == "table":
            return MEASURED
        title = statement_title(payload.get("caption"), payload.get("section_path") or ())
        name = statement_name(title) if title and payload.get("unit_kind") == "table" else frozenset()
        if not name:
            return 0
        return len(name) if name <= self.words or kind_of_name(name) in self.named else 0
