"""Weight-free layout and table-structure models plugged into Docling's standard PDF pipeline.

Docling's own layout model and TableFormer need weights from the Hugging Face Hub. These
two models fill the same slots with rules over what docling-parse already extracts
(text lines with fonts, words, stroked rulings, thin filled rectangles), so the result is
a real DoclingDocument: reading order, caption/footnote links and heading levels still
come from Docling's own stages.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import ClassVar

import docling.pipeline.standard_pdf_pipeline as standard_pdf_pipeline
from docling.datamodel.base_models import Cluster, LayoutPrediction, Page, Table, TableStructurePrediction
from docling.datamodel.document import ConversionResult
from docling.datamodel.pipeline_options import BaseLayoutOptions, BaseTableStructureOptions
from docling.models.base_layout_model import BaseLayoutModel
from docling.models.base_table_model import BaseTableStructureModel
from docling.models.factories import get_layout_factory
from docling.models.factories.table_factory import TableStructureFactory
from docling_core.types.doc import BoundingBox, CoordOrigin, DocItemLabel, TableCell

from evidence_pipeline.parser.geometry import Box, Rules, Span, is_bold_font
from evidence_pipeline.parser.page_layout import HEADING_NUMBER_RE, PageAnalyser, body_text_size
from evidence_pipeline.parser.table_grid import build_grid

_LABELS = {
    "table": DocItemLabel.TABLE,
    "caption": DocItemLabel.CAPTION,
    "section_header": DocItemLabel.SECTION_HEADER,
    # Docling's page assembly has no slot for TITLE clusters; the title travels as a
    # section header and is remembered in ``titles`` for the converter.
    "title": DocItemLabel.SECTION_HEADER,
    "footnote": DocItemLabel.FOOTNOTE,
    "page_header": DocItemLabel.PAGE_HEADER,
    "page_footer": DocItemLabel.PAGE_FOOTER,
    "text": DocItemLabel.TEXT,
    "list_item": DocItemLabel.LIST_ITEM,
}

# document hash -> title text found by the layout rules (read back by the parser)
titles: "OrderedDict[str, str]" = OrderedDict()
_body_sizes: "OrderedDict[str, dict[float, int]]" = OrderedDict()
# (document hash, page number) -> words, rulings and table grids the layout stage built,
# taken by the table stage so that it does not decode and build them again
_page_work: "OrderedDict[tuple[str, int], tuple]" = OrderedDict()
_lock = threading.Lock()


class RuleLayoutOptions(BaseLayoutOptions):
    kind: ClassVar[str] = "evidence_pipeline_rule_layout"


class RuleTableStructureOptions(BaseTableStructureOptions):
    kind: ClassVar[str] = "evidence_pipeline_rule_tables"


def _box(bbox: BoundingBox) -> Box:
    return Box(bbox.l, bbox.t, bbox.r, bbox.b)


def _page_rules(page: Page) -> Rules:
    backend = page._backend
    boxes: list[Box] = []
    fills: list[Box] = []
    if backend is None:
        return Rules()
    for b in backend.get_shape_lines() or []:
        boxes.append(_box(b))
    for b in backend.get_thin_shape_boxes(max_thickness=2.5) or []:
        boxes.append(_box(b))
    for b in backend.get_connected_shape_bounding_boxes() or []:
        if min(b.width, b.height) > 3:
            fills.append(_box(b))
    return Rules.from_boxes(boxes, fills)


def _spans(cells) -> list[Span]:
    spans = []
    for i, cell in enumerate(cells):
        text = cell.text.replace("\x02", "-").strip()
        if not text:
            continue
        b = cell.rect.to_bounding_box()
        if b.coord_origin != CoordOrigin.TOPLEFT:
            raise ValueError("docling-parse cells are expected in top-left coordinates")
        font = getattr(cell, "font_name", "") or ""
        spans.append(Span(i, text, Box(b.l, b.t, b.r, b.b), font, is_bold_font(font), b.height, [cell]))
    return spans


def _split_run_in_headings(lines: list[Span], words: list[Span]) -> list[Span]:
    """Split "5.1 Results We picked..." (bold number and title, then body text) into heading + text."""
    out: list[Span] = []
    for line in lines:
        if not line.bold or not HEADING_NUMBER_RE.match(line.text):
            out.append(line)
            continue
        inner = sorted((w for w in words if line.box.contains_center(w.box, 0.5)), key=lambda w: w.box.l)
        k = next((i for i, w in enumerate(inner) if not w.bold), None)
        if not k or k >= len(inner) or len(inner[:k]) < 2:
            out.append(line)
            continue
        for part in (inner[:k], inner[k:]):
            box = part[0].box
            for w in part[1:]:
                box = box.union(w.box)
            cells = [c for w in part for c in w.cells]
            out.append(Span(part[0].index, " ".join(w.text for w in part), box, part[0].font, part[0].bold, line.size, cells))
    return out


class RuleLayoutModel(BaseLayoutModel):
    """Layout clusters from the rules in ``page_layout``."""

    requires_layout_postprocessing = False  # clusters arrive final, with their cells

    def __init__(self, options: RuleLayoutOptions, artifacts_path=None, accelerator_options=None, **_):
        self.options = options

    @classmethod
    def get_options_type(cls) -> type[RuleLayoutOptions]:
        return RuleLayoutOptions

    def _body_size(self, key: str, spans: list[Span]) -> float:
        with _lock:
            weights = _body_sizes.setdefault(key, {})
            _body_sizes.move_to_end(key)
            while len(_body_sizes) > 64:
                _body_sizes.popitem(last=False)
            for s in spans:
                k = round(s.size * 2) / 2
                weights[k] = weights.get(k, 0) + len(s.text)
            return max(weights, key=lambda k: weights[k]) if weights else body_text_size(spans)

    def predict_layout(self, conv_res: ConversionResult, pages: Sequence[Page]) -> Sequence[LayoutPrediction]:
        out = []
        key = conv_res.input.document_hash
        for page in pages:
            if page._backend is None or not page._backend.is_valid() or page.size is None:
                out.append(LayoutPrediction())
                continue
            seg = page._backend.get_segmented_page()
            words = _spans(seg.word_cells) if seg is not None else []
            spans = _split_run_in_headings(_spans(page.cells), words)
            body = self._body_size(key, spans)
            analyser = PageAnalyser(page.size.width, page.size.height, body, page.page_no)
            rules = _page_rules(page)
            regions = analyser.analyse(spans, rules, words)
            with _lock:
                _page_work[(key, page.page_no)] = (words, rules, analyser.grids)
                while len(_page_work) > 64:
                    _page_work.popitem(last=False)
            clusters = []
            for i, reg in enumerate(regions):
                if reg.label == "title":
                    with _lock:
                        titles[key] = reg.text
                        while len(titles) > 64:
                            titles.popitem(last=False)
                cells = sorted((c for s in reg.spans for c in s.cells), key=lambda c: (c.rect.to_bounding_box().t, c.rect.to_bounding_box().l))
                clusters.append(
                    Cluster(
                        id=i,
                        label=_LABELS[reg.label],
                        bbox=BoundingBox(l=reg.box.l, t=reg.box.t, r=reg.box.r, b=reg.box.b, coord_origin=CoordOrigin.TOPLEFT),
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
        out = []
        for page in pages:
            prediction = TableStructurePrediction()
            page.predictions.tablestructure = prediction
            out.append(prediction)
            if page._backend is None or not page._backend.is_valid() or page.predictions.layout is None:
                continue
            with _lock:
                work = _page_work.pop((conv_res.input.document_hash, page.page_no), None)
            clusters = [c for c in page.predictions.layout.clusters if c.label == DocItemLabel.TABLE]
            if not clusters:
                continue
            if work is None:
                seg = page._backend.get_segmented_page()
                work = (_spans(seg.word_cells) if seg is not None else [], _page_rules(page), {})
            words, rules, grids = work
            for cluster in clusters:
                box = _box(cluster.bbox)
                grid = grids.get((box.l, box.t, box.r, box.b))
                if grid is None:
                    inner = [w for w in words if box.contains_center(w.box, 1.0)]
                    grid = build_grid(inner, rules.inside(box), box)
                cells = [
                    TableCell(
                        bbox=BoundingBox(l=c.box.l, t=c.box.t, r=c.box.r, b=c.box.b, coord_origin=CoordOrigin.TOPLEFT),
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
                prediction.table_map[cluster.id] = Table(
                    otsl_seq=[],
                    table_cells=cells,
                    num_rows=grid.n_rows,
                    num_cols=grid.n_cols,
                    id=cluster.id,
                    page_no=page.page_no,
                    cluster=cluster,
                    label=cluster.label,
                )
        return out


_table_factory: TableStructureFactory | None = None
_registered = False


def register_plugins() -> TableStructureFactory:
    """Register the rule models once per process; return the table factory that holds them."""
    global _table_factory, _registered
    with _lock:
        if not _registered:
            # Same call signature as the pipeline's, so the cached factory it uses is this one.
            layout_factory = get_layout_factory(allow_external_plugins=False)
            if RuleLayoutOptions not in layout_factory.classes:
                layout_factory.register(RuleLayoutModel, "evidence_pipeline", __name__)
            # A factory of our own: Docling's default table plugins import torchvision.
            _table_factory = TableStructureFactory()
            _table_factory.register(RuleTableStructureModel, "evidence_pipeline", __name__)
            _registered = True
    assert _table_factory is not None
    return _table_factory


class RulePdfPipeline(standard_pdf_pipeline.StandardPdfPipeline):
    """Docling's standard PDF pipeline, built with the rule-based table factory.

    The rule models read text cells and vector shapes only, never pixels, so no page image
    is rendered (see ``backend_options``): rendering was a fifth of the CPU time per page.
    """

    _init_lock = threading.Lock()

    def _init_models(self) -> None:
        factory = register_plugins()
        with RulePdfPipeline._init_lock:
            stock = standard_pdf_pipeline.get_table_structure_factory
            standard_pdf_pipeline.get_table_structure_factory = lambda allow_external_plugins=False: factory
            try:
                super()._init_models()
            finally:
                standard_pdf_pipeline.get_table_structure_factory = stock
        if not self.keep_images:
            # the stock preprocessing asks every page for an image at scale 1
            self.preprocessing_model._populate_page_images = lambda page: page  # type: ignore[method-assign]


def backend_options(threads: int = 2):
    """docling-parse options for the rule pipeline: decode text and shapes, render nothing.

    The threaded backend skips vector shapes whenever it does not render ("shapes only
    matter for the render"), but the rule models need them (rulings, shaded rows), so the
    content config is made to keep computing them.
    """
    import docling.backend.docling_parse_backend as dp_backend
    from docling.datamodel.backend_options import ThreadedDoclingParseBackendOptions

    with _lock:
        make = dp_backend._make_docling_parse_page_content_config
        if not getattr(make, "_keeps_shapes", False):

            def keep_shapes(**kwargs):
                kwargs["compute_shapes"] = True
                return make(**kwargs)

            keep_shapes._keeps_shapes = True  # type: ignore[attr-defined]
            dp_backend._make_docling_parse_page_content_config = keep_shapes
    return ThreadedDoclingParseBackendOptions(render_pages=False, parser_threads=threads)
