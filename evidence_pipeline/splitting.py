"""Split table units that are too large for one parent, by rows.

Every piece repeats the caption, the section path and the header rows, so a
piece read alone still says what its numbers are. Context before the table
stays with the first piece, footnotes and context after with the last. All
pieces keep the original table id as ``parent_id`` so search dedupes them.
"""

from __future__ import annotations

from evidence_pipeline.page_boxes import regions
from evidence_pipeline.records import EvidenceUnit
from evidence_pipeline.tables import table_html
from evidence_pipeline.units import TokenCount, approx_tokens


def piece_id(unit_id: str, n: int | str) -> str:
    """The unit id of piece ``n`` of a split table (``n`` "": the prefix every piece id starts with)."""
    return f"{unit_id}-s{n}"


def piece_number(unit_id: str, parent_id: str) -> int:
    """Which piece of its parent table a unit is (0 for a unit that was not split)."""
    n = unit_id.removeprefix(piece_id(parent_id, ""))
    return int(n) if n != unit_id and n.isdigit() else 0


def split_unit(unit: EvidenceUnit, max_tokens: int, count_tokens: TokenCount = approx_tokens) -> list[EvidenceUnit]:
    if unit.kind != "table" or len(unit.rows) < 2 or count_tokens(unit.text) <= max_tokens:
        return [unit]
    bare = unit.model_copy(
        update={"rows": [], "row_pages": [], "row_boxes": [], "context_before": [], "context_after": [], "footnotes": []}
    )
    base = count_tokens(bare.text)
    head = count_tokens("\n".join(unit.context_before))
    tail = count_tokens("\n".join([*unit.footnotes, *unit.context_after]))
    empty = count_tokens(table_html([], []))
    row_cost = [max(1, count_tokens(table_html([], [r])) - empty) for r in unit.rows]

    groups: list[list[int]] = [[]]
    size = base + head
    for i, cost in enumerate(row_cost):
        if groups[-1] and size + cost > max_tokens:
            groups.append([])
            size = base
        groups[-1].append(i)
        size += cost
    # The last piece also carries the footnotes and context after: if they push it
    # over, its trailing rows move into a new final piece (always at least one row).
    if base + tail + sum(row_cost[i] for i in groups[-1]) > max_tokens and len(groups[-1]) > 1:
        final: list[int] = [groups[-1].pop()]
        while len(groups[-1]) > 1 and base + tail + sum(row_cost[i] for i in [groups[-1][-1], *final]) <= max_tokens:
            final.insert(0, groups[-1].pop())
        groups.append(final)
    groups = [g for g in groups if g]
    # The estimate ignores the structural map's row list and part line; measure each
    # piece and halve any that is still over budget (a single row is never cut).
    while True:
        pieces = _pieces(unit, groups)
        over = [n for n, piece in enumerate(pieces) if len(groups[n]) > 1 and count_tokens(piece.text) > max_tokens]
        if not over:
            break
        for n in reversed(over):
            half = len(groups[n]) // 2
            groups[n : n + 1] = [groups[n][:half], groups[n][half:]]
    return pieces if len(pieces) > 1 else [unit]


def _pieces(unit: EvidenceUnit, groups: list[list[int]]) -> list[EvidenceUnit]:
    pieces = []
    for n, rows in enumerate(groups):
        first, last = n == 0, n == len(groups) - 1
        pages = sorted({p for i in rows if i < len(unit.row_pages) and (p := unit.row_pages[i]) is not None})
        row_boxes = [unit.row_boxes[i] for i in rows if i < len(unit.row_boxes)]
        placed = [b for b in row_boxes if b is not None]
        boxes = regions([(b.page, b.bbox) for b in placed], {b.page: b.size for b in placed})
        pieces.append(
            unit.model_copy(
                update={
                    "unit_id": piece_id(unit.unit_id, n),
                    "rows": [unit.rows[i] for i in rows],
                    "row_pages": [unit.row_pages[i] for i in rows if i < len(unit.row_pages)],
                    "row_boxes": row_boxes,
                    "pages": pages or unit.pages,
                    "boxes": boxes or unit.boxes,
                    "context_before": unit.context_before if first else [],
                    "footnotes": unit.footnotes if last else [],
                    "context_after": unit.context_after if last else [],
                    "piece": n,
                    "n_pieces": len(groups),
                }
            )
        )
    return pieces


def split_units(units: list[EvidenceUnit], max_tokens: int, count_tokens: TokenCount = approx_tokens) -> list[EvidenceUnit]:
    return [piece for unit in units for piece in split_unit(unit, max_tokens, count_tokens)]
