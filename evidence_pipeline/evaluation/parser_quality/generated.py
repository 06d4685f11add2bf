"""Section 2: the generated SOP corpus, whose truth is exact.

Tables, captions, header rows, body cells, footnote links, section headers with levels,
continuations across pages. The truth records are read without reportlab.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from evidence_pipeline.evaluation.parser_quality.metrics import (
    greedy_match,
    multiset_counts,
    normalise,
    ratio,
    same_caption,
    text_key,
    total_counts,
)
from evidence_pipeline.evaluation.parser_quality.models import (
    GeneratedCounts,
    GeneratedRow,
    GeneratedSection,
    GeneratedTotals,
)
from evidence_pipeline.records import ParsedDoc, Table
from evidence_pipeline.tools.samples.truth import SampleTruth, TruthTable


def _grid_texts(rows: Iterable[Sequence[str]]) -> list[str]:
    return [x for row in rows for x in row]


def _match_generated(truth_tables: Sequence[TruthTable], heads: list[Table]) -> dict[int, int]:
    """Truth table -> parsed head table on its first page with the most shared cell texts."""
    pairs = []
    for i, want in enumerate(truth_tables):
        texts = _grid_texts([*want.header_rows, *want.body_rows])
        for j, t in enumerate(heads):
            if t.page is not None and want.pages and t.page != want.pages[0]:
                continue
            c = multiset_counts(texts, _grid_texts(t.grid()))
            # a quarter of the truth cells: the first part of a long table holds only some rows
            if c.tp and c.tp >= 0.25 * min(c.n_truth, c.n_pred):
                pairs.append((c.tp, i, j))
    return greedy_match(pairs)


def score_generated(doc: ParsedDoc, truth: SampleTruth) -> GeneratedRow:
    """One parsed SOP against its ``SampleTruth``."""
    row = GeneratedRow(doc=truth.doc_id)
    heads = [t for t in doc.tables if t.continues is None]
    parts = {t.id: [t, *(p for p in doc.tables if p.continues == t.id)] for t in heads}
    m = _match_generated(truth.tables, heads)
    row.tables_truth, row.tables_pred, row.tables_matched = len(truth.tables), len(heads), len(m)
    for i, want in enumerate(truth.tables):
        row.footnotes_truth += len(want.footnotes)
        row.continues_truth += int(want.continues)
        j = m.get(i)
        body_truth = _grid_texts(want.body_rows)
        if j is None:
            row.misses.append(f"missed {want.label} p{want.pages[0]} {want.caption[:40]!r}")
            row.body = row.body.add(multiset_counts(body_truth, []))
            continue
        head = heads[j]
        mine = parts[head.id]
        if same_caption(want.caption, head.caption):
            row.captions_ok += 1
        else:
            row.misses.append(f"caption of {want.label}: got {head.caption!r}")
        header = [[text_key(x) for x in r] for r in head.grid()[: head.header_rows]]
        if header == [[text_key(x) for x in r] for r in want.header_rows]:
            row.headers_ok += 1
        else:
            row.misses.append(f"header of {want.label}: {head.header_rows} rows {head.grid()[: head.header_rows]} vs {want.header_rows}")
        body = [x for p in mine for x in _grid_texts(p.grid()[p.header_rows :])]
        c = multiset_counts(body_truth, body)
        row.body = row.body.add(c)
        if c.tp < c.n_truth or c.tp < c.n_pred:
            row.misses.append(f"body of {want.label}: {c.tp} of {c.n_truth} truth cells, {c.n_pred} parsed")
        notes = [normalise(f) for p in mine for f in p.footnotes]
        for marker, text in want.footnotes.items():
            if any(n.startswith(normalise(marker)) and normalise(text) in n for n in notes):
                row.footnotes_ok += 1
            else:
                row.misses.append(f"footnote {marker} of {want.label} not linked (got {[p.footnotes for p in mine]})")
        if want.continues and len(mine) > 1:
            row.continues_ok += 1
        elif want.continues:
            row.misses.append(f"{want.label} crosses a page but no part continues it")
    matched_heads = {heads[j].id for j in m.values()}
    for t in heads:
        if t.id not in matched_heads:
            row.misses.append(f"extra table p{t.page} {t.n_rows}x{t.n_cols} {(t.caption or '')[:40]!r}")
    for t in doc.tables:
        if t.continues is not None:
            want = next((truth.tables[i] for i, j in m.items() if heads[j].id == t.continues), None)
            if want is None or not want.continues:
                row.continues_false += 1
                row.misses.append(f"{t.id} p{t.page} marked as continuing {t.continues}")
    heads_found = {(text_key(b.text), b.level) for b in doc.blocks if b.label == "section_header"}
    row.sections_truth = len(truth.sections)
    for s in truth.sections:
        if (text_key(f"{s.number} {s.title}"), s.level) in heads_found:
            row.sections_ok += 1
        else:
            row.misses.append(f"section {s.number} {s.title!r} (level {s.level}) not found with its level")
    return row


def generated_section(parse: Callable[[Path], ParsedDoc], pdfs: Sequence[Path], truth_dir: Path) -> GeneratedSection:
    """Each PDF against ``truth_dir/<stem>.json``, as ``generate_corpus`` writes them."""
    rows = []
    for pdf in pdfs:
        truth = SampleTruth.model_validate_json((Path(truth_dir) / f"{pdf.stem}.json").read_text(encoding="utf-8"))
        rows.append(score_generated(parse(pdf), truth))

    def s(key: str) -> int:
        return sum(getattr(r, key) for r in rows)

    body = total_counts(r.body for r in rows)
    totals = GeneratedTotals(
        table_recall=ratio(s("tables_matched"), s("tables_truth")),
        table_precision=ratio(s("tables_matched"), s("tables_pred")),
        caption_accuracy=ratio(s("captions_ok"), s("tables_truth")),
        header_accuracy=ratio(s("headers_ok"), s("tables_truth")),
        body_cell_f1=body.f1,
        footnote_links=ratio(s("footnotes_ok"), s("footnotes_truth")),
        section_recall=ratio(s("sections_ok"), s("sections_truth")),
        continuation_recall=ratio(s("continues_ok"), s("continues_truth")),
        continuation_precision=ratio(s("continues_ok"), s("continues_ok") + s("continues_false")),
    )
    counts = GeneratedCounts(**{k: s(k) for k in GeneratedCounts.model_fields})
    return GeneratedSection(docs=rows, totals=totals, counts=counts)
