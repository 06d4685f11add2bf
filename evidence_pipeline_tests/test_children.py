from evidence_pipeline.children import build_children, fit_children, unit_children
from evidence_pipeline.embedding import token_counter
from evidence_pipeline.records import ChildUnit
from evidence_pipeline.units import build_units
from evidence_pipeline_tests.docs import lnp_doc


def test_every_child_fits_the_model_window_without_losing_words():
    counter = token_counter(None)
    long_text = " ".join(f"word{i} value {i}.5 mL/min" for i in range(200))
    child = ChildUnit(child_id="u-c0", unit_id="u", parent_id="u", doc_id="d", kind="sentence", text=long_text, prefix="d Title | 1 Scope")
    fitted = fit_children([child], counter)
    assert len(fitted) > 1
    assert all(counter.count(c.embed_text) <= counter.max_tokens for c in fitted)
    assert " ".join(c.text for c in fitted) == long_text
    assert [c.child_id for c in fitted] == [f"u-c0-w{k}" for k in range(len(fitted))]
    assert all(c.parent_id == "u" for c in fitted)


def test_short_children_pass_unchanged():
    units = build_units(lnp_doc())
    logical = [c for u in units for c in unit_children(u)]
    assert build_children(units, token_counter(None)) == logical
