"""Every change this package makes to Docling's own modules, in one place.

Each patch is applied at most once per process, under one lock, and checks whether it is
already in place, so calling any of them again (from several converters or threads) is
harmless. Nothing here holds per-conversion state (see ``conversion_state``).

1. ``keep_shapes_in_backend``: the threaded docling-parse backend skips vector shapes when
   it renders no page image ("shapes only matter for the render"); the rule models need
   them (rulings, shaded rows), so its content config keeps computing them.
2. ``register_rule_models``: the rule layout model joins Docling's cached layout factory;
   the rule table model gets a table factory of its own, because Docling's default table
   plugins import torchvision at module level.
3. ``rule_table_factory``: while a rule pipeline builds its models, Docling's pipeline
   module hands out that factory instead of the default one.
4. ``skip_page_images``: the preprocessing stage of a rule pipeline renders no page image
   (the rule models read text cells and shapes only, never pixels).
5. ``initialisms_are_not_numbering``: the heading-level stage reads no numbering marker in a
   heading that opens with an initialism ("U.S. Cell Phone Litigation" is not section "U.").
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from docling.models.factories.table_factory import TableStructureFactory

_lock = threading.RLock()
_table_factory: TableStructureFactory | None = None


def keep_shapes_in_backend() -> None:
    import docling.backend.docling_parse_backend as dp_backend

    with _lock:
        make = dp_backend._make_docling_parse_page_content_config
        if getattr(make, "_keeps_shapes", False):
            return

        def keep_shapes(**kwargs):
            kwargs["compute_shapes"] = True
            return make(**kwargs)

        keep_shapes._keeps_shapes = True  # type: ignore[attr-defined]
        dp_backend._make_docling_parse_page_content_config = keep_shapes


def register_rule_models(layout_model: type[Any], table_model: type[Any]) -> TableStructureFactory:
    """Register the rule models once per process; return the table factory that holds them."""
    from docling.models.factories import get_layout_factory

    global _table_factory
    with _lock:
        # Same call signature as the pipeline's: the factory getter is cached per signature.
        layout_factory = get_layout_factory(allow_external_plugins=False)
        if layout_model.get_options_type() not in layout_factory.classes:
            layout_factory.register(layout_model, "evidence_pipeline", layout_model.__module__)
        if _table_factory is None:
            factory = TableStructureFactory()
            factory.register(table_model, "evidence_pipeline", table_model.__module__)
            _table_factory = factory
        return _table_factory


@contextmanager
def rule_table_factory(factory: TableStructureFactory) -> Iterator[None]:
    """Docling's pipeline module returns ``factory`` as its table factory inside the block.

    The lock keeps two rule pipelines from interleaving the swap; a stock Docling pipeline
    built in another thread at that moment would see the rule factory, so build those
    elsewhere than in a process that builds rule pipelines concurrently.
    """
    import docling.pipeline.standard_pdf_pipeline as standard_pdf_pipeline

    with _lock:
        stock = standard_pdf_pipeline.get_table_structure_factory
        standard_pdf_pipeline.get_table_structure_factory = lambda allow_external_plugins=False: factory  # type: ignore[assignment]
        try:
            yield
        finally:
            standard_pdf_pipeline.get_table_structure_factory = stock


def skip_page_images(preprocessing_model) -> None:
    """This pipeline's preprocessing model asks for no page image (it asked for one at scale 1)."""
    preprocessing_model._populate_page_images = lambda page: page


# "U.S.", "U.K.", "e.g.": letters each followed by a dot, with no space between them
INITIALISM_RE = re.compile(r"^\s*\(?\s*[A-Za-z]\.[A-Za-z]\.")


def initialisms_are_not_numbering() -> None:
    """Docling's heading-level stage reads a heading's leading "A." or "(b)" as a numbering
    marker and ranks numbered headings apart from the rest (``heading_hierarchy_model``), so a
    heading that opens with "U.S." would outrank the headings beside it and take them in ("NOTE
    14 — CONTINGENCIES > U.S. Cell Phone Litigation > Other Contingencies"). After this patch an
    initialism is a word, not a marker: such a heading is levelled by its style, as its
    neighbours are."""
    import docling.models.stages.heading_hierarchy.heading_hierarchy_model as hierarchy

    with _lock:
        parse_marker = hierarchy._parse_marker
        if getattr(parse_marker, "_skips_initialisms", False):
            return

        def marker(text: str):
            return None if INITIALISM_RE.match(text or "") else parse_marker(text)

        marker._skips_initialisms = True  # type: ignore[attr-defined]
        hierarchy._parse_marker = marker
