"""The ranking rules of ``search_store``, each with a name and a switch.

Every rule the search applies beyond the store's fused dense + BM25 ranking can be turned off
alone, so ``eval --ablate`` measures what each one adds on the questions of a validation half
(``evaluation.ablation``). A rule stays only while it gains there, or guards a case that a
real-page test pins.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Rules:
    """Which rules run (all by default).

    - ``routing``: the documents a query names by id, title, code or period rank first (``route``).
    - ``named_statements``: the tables of the financial statements a query names join the
      candidates and move up (``named_statements``).
    - ``named_rows``: a table whose row label the query holds moves up (``named_rows``).
    - ``lexical_tables``: BM25's own first tables join the candidates (``candidates.with_lexical``).
    - ``whole_table``: a hit on a piece of a split table comes back joined (``expand.whole_table``).
    - ``reference_last``: reference material (lists of abbreviations, glossaries, tables of
      contents, revision histories) ranks below evidence unless the query asks what a term
      means; a revision history keeps its place for a query about amendments, revisions or
      versions (``reference``).
    - ``parent_coverage``: the candidates whose whole text holds most of the query's distinctive
      words move up (``coverage``).
    - ``focused_tables``: a large table is read as the rows the query names (``focus``); ranking
      is unchanged, the contexts shrink.
    - ``markdown_tables``: a language model reads the tables of a context in Markdown, not HTML
      (``tables.markdown_tables``): the same words in fewer word pieces, so more evidence fits a
      budget; ranking is unchanged.
    """

    routing: bool = True
    named_statements: bool = True
    named_rows: bool = True
    lexical_tables: bool = True
    whole_table: bool = True
    reference_last: bool = True
    parent_coverage: bool = True
    focused_tables: bool = True
    markdown_tables: bool = True

    def without(self, name: str) -> Rules:
        """These rules with ``name`` off (ValueError for a name that is no rule)."""
        if name not in RULE_NAMES:
            raise ValueError(f"no ranking rule {name!r}; the rules are {', '.join(RULE_NAMES)}")
        return dataclasses.replace(self, **{name: False})


RULE_NAMES = tuple(f.name for f in dataclasses.fields(Rules))
ALL_RULES = Rules()
