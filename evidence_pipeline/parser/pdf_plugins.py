"""Weight-free layout and table-structure models plugged into Docling's standard PDF pipeline.

Docling's own layout model and TableFormer need weights from the Hugging Face Hub. These
two models fill the same slots with rules over what docling-parse already extracts
(text lines with fonts, words, stroked rulings, thin filled rectangles), so the result is
a real DoclingDocument: reading order, caption/footnote links and heading levels still
come from Docling's own stages.

The models keep no state of their own: what one conversion shares between its pages and
stages lives in that conversion's ``ConversionState`` (see ``conversion_state``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Literal

import docling.pipeline.standard_pdf_pipeline as standard_pdf_pipeline
from docling.datamodel.base_models import Cluster, LayoutPrediction, Page, Table, TableStructurePrediction
from docling.datamodel.document import ConversionResult
from docling.datamodel.pipeline_options import BaseLayoutOptions, BaseTableStructureOptions
from docling.models.base_layout_model import BaseLayoutModel
from docling.models.base_table_model import BaseTableStructureModel
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel, TableCell

from evidence_pipeline.parser import docling_patches
from evidence_pipeline.parser.conversion_state import ConversionState, PageWork, attach, start_body_size, state_of
from evidence_pipeline.parser.grid import Grid
from evidence_pipeline.parser.ocr import OcrUnavailable, PageReader, scan_if_needed
from evidence_pipeline.parser.page_content import page_rules, page_words, spans_of, split_run_in_headings, to_box
from evidence_pipeline.parser.page_layout import PageAnalyser, body_text_size
from evidence_pipeline.parser.raised_markers import mark_lines
from evidence_pipeline.parser.table_finder import box_key
from evidence_pipeline.parser.table_grid import build_grid
from evidence_pipeline.work import WORK

_LABELS = {
    "table": DocItemLabel.TABLE,
    "caption": DocItemLabel.CAPTION,
    "section_header": DocItemLabel.SECTION_HEADER,
    # Docling's page assembly has no slot for TITLE clusters; the title travels as a
    # section header and its text as the conversion state's ``title``.
    "title": DocItemLabel.SECTION_HEADER,
    "footnote": DocItemLabel.FOOTNOTE,
    "page_header": DocItemLabel.PAGE_HEADER,
    "page_footer": DocItemLabel.PAGE_FOOTER,
    "text": DocItemLabel.TEXT,
    "list_item": DocItemLabel.LIST_ITEM,
}


class RuleLayoutOptions(BaseLayoutOptions):
    kind: ClassVar[str] = "evidence_pipeline_rule_layout"
    ocr: Literal["auto", "off"] = "auto"  # auto: pages without a usable text layer are read by OCR


class RuleTableStructureOptions(BaseTableStructureOptions):
    kind: ClassVar[str] = "evidence_pipeline_rule_tables"


def _bounding_box(l: float, t: float, r: float, b: float) -> BoundingBox:
    return BoundingBox(l=l, t=t, r=r, b=b, coord_origin=CoordOrigin.TOPLEFT)


class RuleLayoutModel(BaseLayoutModel):
    """Layout clusters from the rules in ``page_layout``."""

    requires_layout_postprocessing = False  # clusters arrive final, with their cells

    def __init__(self, options: RuleLayoutOptions, artifacts_path=None, accelerator_options=None, **_):
        self.options = options
        self.reader = PageReader() if options.ocr == "auto" else None

    @classmethod
    def get_options_type(cls) -> type[RuleLayoutOptions]:
        return RuleLayoutOptions

    def predict_layout(self, conv_res: ConversionResult, pages: Sequence[Page]) -> Sequence[LayoutPrediction]:
        state = state_of(conv_res)
        out = []
        for page in pages:
            if page._backend is None or not page._backend.is_valid() or page.size is None:
                out.append(LayoutPrediction())
                continue
            WORK.count("parse.pages")
            try:
                scan = scan_if_needed(self.reader, conv_res, page)
            except OcrUnavailable as exc:
                scan = None
                if state is not None:
                    state.warn_once(str(exc))
            if scan is None:
                words = page_words(page)
                rules = page_rules(page)
            else:
                words = spans_of(scan.words)
                rules = scan.rules
                if state is not None:
                    state.scanned(page.page_no, scan.seconds)
            spans = mark_lines(split_run_in_headings(spans_of(page.cells), words), words)
            body = state.body_size if state is not None else None
            if body is None:
                body = body_text_size(spans)
            running = state.running if state is not None else None
            analyser = PageAnalyser(page.size.width, page.size.height, body, page.page_no, running)
            regions = analyser.analyse(spans, rules, words)
            if state is not None:
                state.keep_page_work(page.page_no, PageWork(words, rules, analyser.grids))
            clusters = []
            for i, reg in enumerate(regions):
                if reg.label == "title" and state is not None:
                    state.found_title(reg.text)
                cells = sorted(
                    (c for s in reg.spans for c in s.cells), key=lambda c: (c.rect.to_bounding_box().t, c.rect.to_bounding_box().l)
                )
                clusters.append(
                    Cluster(
                        id=i,
                        label=_LABELS[reg.label],
                        bbox=_bounding_box(reg.box.l, reg.box.t, reg.box.r, reg.box.b),
                        confidence=1.0,
                        cells=cells,
                    )
                )
            out.append(LayoutPrediction(clusters=clusters))
        return out


class RuleTableStructureModel(BaseTableStructureModel):
    """Cell grids for the table clusters, from words and rulings (see ``table_grid``)."""

    def __init__(self, options: RuleTableStructureOptions, enabled: bool = True, artifacts_path=None, accelerator_options=None, **_):
        self.options = options
        self.enabled = enabled

    @classmethod
    def get_options_type(cls) -> type[RuleTableStructureOptions]:
        return RuleTableStructureOptions

    def predict_tables(self, conv_res: ConversionResult, pages: Sequence[Page]) -> Sequence[TableStructurePrediction]:
        state = state_of(conv_res)
        out = []
        for page in pages:
            prediction = TableStructurePrediction()
            page.predictions.tablestructure = prediction
            out.append(prediction)
            if page._backend is None or not page._backend.is_valid() or page.predictions.layout is None:
                continue
            work = state.take_page_work(page.page_no) if state is not None else None
            clusters = [c for c in page.predictions.layout.clusters if c.label == DocItemLabel.TABLE]
            if not clusters:
                continue
            if work is None:
                work = PageWork(page_words(page), page_rules(page), {})
            for cluster in clusters:
                box = to_box(cluster.bbox)
                grid = work.grids.get(box_key(box))
                if grid is None:
                    inner = [w for w in work.words if box.contains_center(w.box, 1.0)]
                    grid = build_grid(inner, work.rules.inside(box), box)
                prediction.table_map[cluster.id] = _table(grid, cluster, page.page_no)
        return out


def _table(grid: Grid, cluster: Cluster, page_no: int) -> Table:
    cells = [
        TableCell(
            bbox=_bounding_box(c.box.l, c.box.t, c.box.r, c.box.b),
            row_span=c.row_span,
            col_span=c.col_span,
            start_row_offset_idx=c.row,
            end_row_offset_idx=c.row + c.row_span,
            start_col_offset_idx=c.col,
            end_col_offset_idx=c.col + c.col_span,
            text=c.text,
            column_header=c.column_header,
            row_header=False,
            row_section=False,
        )
        for c in grid.cells
    ]
    return Table(
        otsl_seq=[],
        table_cells=cells,
        num_rows=grid.n_rows,
        num_cols=grid.n_cols,
        id=cluster.id,
        page_no=page_no,
        cluster=cluster,
        label=cluster.label,
    )


class RulePdfPipeline(standard_pdf_pipeline.StandardPdfPipeline):
    """Docling's standard PDF pipeline, built with the rule models.

    Each conversion gets its own ``ConversionState`` before its first page is laid out:
    the document's body text size from every converted page, then the title and the page
    work the stages fill in.
    """

    def _init_models(self) -> None:
        factory = docling_patches.register_rule_models(RuleLayoutModel, RuleTableStructureModel)
        with docling_patches.rule_table_factory(factory):
            super()._init_models()
        if not self.keep_images:
            docling_patches.skip_page_images(self.preprocessing_model)

    def _build_document(self, conv_res: ConversionResult) -> ConversionResult:
        state = ConversionState(body=start_body_size(conv_res, self._get_expected_page_nos(conv_res)))
        attach(conv_res, state)
        try:
            return super()._build_document(conv_res)
        finally:
            state.release_pages()


def backend_options(threads: int = 2):
    """docling-parse options for the rule pipeline: decode text and shapes, render nothing."""
    from docling.datamodel.backend_options import ThreadedDoclingParseBackendOptions

    docling_patches.keep_shapes_in_backend()
    return ThreadedDoclingParseBackendOptions(render_pages=False, parser_threads=threads)
