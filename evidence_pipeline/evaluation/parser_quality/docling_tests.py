"""Section 1: tables against the DoclingDocument JSON that Docling's ML pipeline wrote for
its own test PDFs (read with the json module, so no docling import here).

Detection precision/recall (same page, box IoU >= 0.5), caption links, cell-text F1.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evidence_pipeline.errors import ParseError
from evidence_pipeline.evaluation.parser_quality.metrics import (
    Counts,
    iou,
    match_boxes,
    multiset_counts,
    ratio,
    same_caption,
    total_counts,
)
from evidence_pipeline.evaluation.parser_quality.models import DoclingTestRow, DoclingTestsSection, DoclingTestTotals
from evidence_pipeline.records import BBox, ParsedDoc


@dataclass
class GroundTable:
    label: str  # "table" or "document_index" (Docling files a table of contents as a table)
    page: int | None
    bbox: BBox | None
    caption: str | None
    cells: list[str]


def load_groundtruth(path: Path) -> list[GroundTable]:
    """Tables of a DoclingDocument JSON, boxes turned to top-left origin with the page height."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    texts = {t["self_ref"]: t.get("text", "") for t in doc.get("texts", [])}
    heights = {int(k): v["size"]["height"] for k, v in doc.get("pages", {}).items()}
    out = []
    for t in doc.get("tables", []):
        page, box = None, None
        if t.get("prov"):
            prov = t["prov"][0]
            page, b = prov["page_no"], prov["bbox"]
            if b.get("coord_origin", "TOPLEFT") == "BOTTOMLEFT":
                h = heights[page]
                box = BBox(l=b["l"], t=h - b["t"], r=b["r"], b=h - b["b"])
            else:
                box = BBox(l=b["l"], t=b["t"], r=b["r"], b=b["b"])
        caption = " ".join(texts.get(c["$ref"], "") for c in t.get("captions", [])).strip() or None
        cells = [c.get("text", "") for c in t.get("data", {}).get("table_cells", [])]
        out.append(GroundTable(t.get("label", "table"), page, box, caption, cells))
    return out


def score_docling_test(doc: ParsedDoc, truth: list[GroundTable]) -> DoclingTestRow:
    pred = doc.tables
    m = match_boxes([(g.page, g.bbox) for g in truth], [(t.page, t.bbox) for t in pred])
    cells = Counts()
    caps_truth = caps_ok = 0
    misses = []
    for i, g in enumerate(truth):
        j = m.get(i)
        where = f"{g.label} p{g.page}" + (f" {g.caption[:40]!r}" if g.caption else "")
        if j is None:
            best = max((iou(g.bbox, t.bbox) for t in pred if t.page == g.page and g.bbox and t.bbox), default=0.0)
            misses.append(f"missed {where} (best IoU {best:.2f})")
        else:
            cells = cells.add(multiset_counts(g.cells, [c.text for c in pred[j].cells]))
        if g.caption:
            caps_truth += 1
            if j is not None and same_caption(g.caption, pred[j].caption):
                caps_ok += 1
            elif j is not None:
                misses.append(f"caption of {where}: got {pred[j].caption!r}")
    matched_pred = set(m.values())
    for j, t in enumerate(pred):
        if j not in matched_pred:
            misses.append(f"extra table p{t.page} {t.n_rows}x{t.n_cols} {(t.caption or '')[:40]!r}")
    return DoclingTestRow(
        doc=doc.doc_id,
        n_truth=len(truth),
        n_pred=len(pred),
        matched=len(m),
        captions_truth=caps_truth,
        captions_ok=caps_ok,
        cells=cells,
        misses=misses,
        n_data=sum(g.label == "table" for g in truth),
        matched_data=sum(truth[i].label == "table" for i in m),
    )


def docling_tests_section(parse: Callable[[Path], ParsedDoc], root: Path) -> DoclingTestsSection:
    """Every ``groundtruth/*.json`` under ``root`` whose PDF is in ``root/pdfs``."""
    rows: list[DoclingTestRow] = []
    for gt in sorted((root / "groundtruth").glob("*.json")):
        pdf = root / "pdfs" / f"{gt.stem}.pdf"
        if not pdf.is_file():
            continue
        truth = load_groundtruth(gt)
        try:
            rows.append(score_docling_test(parse(pdf), truth))
        except ParseError as exc:
            failed = ParsedDoc(doc_id=pdf.stem, source=str(pdf), title="", n_pages=0, content_hash="", parser="")
            rows.append(score_docling_test(failed, truth))
            rows[-1].misses.insert(0, f"FAILED: {exc.reason}")
    cells = total_counts(r.cells for r in rows)
    n_truth, n_pred, matched = (sum(getattr(r, k) for r in rows) for k in ("n_truth", "n_pred", "matched"))
    data_truth = sum(r.n_data for r in rows)
    caps_truth, caps_ok = sum(r.captions_truth for r in rows), sum(r.captions_ok for r in rows)
    totals = DoclingTestTotals(
        tables_truth=n_truth,
        tables_pred=n_pred,
        tables_matched=matched,
        recall=ratio(matched, n_truth),
        recall_data_tables=ratio(sum(r.matched_data for r in rows), data_truth),
        data_tables_truth=data_truth,
        precision=ratio(matched, n_pred),
        caption_links=ratio(caps_ok, caps_truth),
        captions_truth=caps_truth,
        cell_precision=cells.precision,
        cell_recall=cells.recall,
        cell_f1=cells.f1,
    )
    return DoclingTestsSection(docs=rows, totals=totals)
