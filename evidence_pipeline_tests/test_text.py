"""The caption vocabulary and the normaliser: each caller keeps the caption test it used.

The parser lays out pages with the strict form (a caption line, not a sentence citing a
table); units read parsed documents with the loose form (any text opening with "Table N").
"""

from __future__ import annotations

import pytest

from evidence_pipeline.text import (
    FIGURE_CAPTION_RE,
    TABLE_CAPTION_RE,
    fold,
    is_caption_line,
    names_table,
    normalise,
)
from evidence_pipeline.units import is_table_caption

LINES = {
    # text: (strict table caption, any caption line, figure caption, names a table)
    "Table 3-1: Buffer compositions": (True, True, False, True),
    "Table 1. Results": (True, True, False, True),
    "Table 2 Results": (True, True, False, True),
    "TABLE 4": (True, True, False, True),
    "Table A1 – Reagents": (True, True, False, True),
    "Tab. 5: Limits": (True, True, False, True),
    "Tbl. 6 Flow rates": (True, True, False, False),
    "표 1 시험 결과": (True, True, False, False),
    "[표 2]": (True, True, False, False),
    "Table 1 shows the flow rates": (False, False, False, True),
    "Tablets must be stored dry.": (False, False, False, False),
    "Figure 1: Mixer schematic": (False, True, True, False),
    "Fig. 2 Layout": (False, True, True, False),
    "Listing 3: build script": (False, True, False, False),
    "Exhibit 10.1": (False, True, False, False),
    "Figure 1 shows the mixer": (False, False, False, False),
    "The flow rate is 5 mL/min.": (False, False, False, False),
}


@pytest.mark.parametrize("text", sorted(LINES))
def test_caption_forms(text: str):
    strict, line, figure, named = LINES[text]
    assert bool(TABLE_CAPTION_RE.match(text)) is strict
    assert is_caption_line(text) is line
    assert bool(FIGURE_CAPTION_RE.match(text)) is figure
    assert names_table(text) is named
    assert is_table_caption(text) is named  # units keep the loose form


def test_normalise_folds_case_width_and_space():
    assert fold("ＳＯＰ–QA") == "sop–qa"
    assert normalise("  Flow\u00a0RATE\n  max ") == "flow rate max"
    assert normalise("2\u20138 °C") == "2\u20138 °c"
    assert normalise("2\u20138 \u2212 co\u00adop", dashes=True) == "2-8 - coop"
    assert normalise(None) == ""
