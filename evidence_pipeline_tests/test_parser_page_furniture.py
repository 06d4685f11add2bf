"""Page headers and footers: the lines at a page's edge, and running text over a stretch of pages.
Pinned on real pages of the shared filings."""

from __future__ import annotations

import pytest

from evidence_pipeline.parser.page_furniture import _stretches
from evidence_pipeline.units import build_units
from evidence_pipeline_tests.conftest import CORPORA

TENQ = CORPORA / "sec-10q-dev" / "pdfs"


def test_a_stretch_is_a_run_of_pages_close_together():
    # Apple's name over its statements on pp. 3, 5-9, and once more over an exhibit on p. 35:
    # the run is a stretch, the lone page is not, and it no longer spoils the run
    assert _stretches({3, 5, 6, 7, 8, 9, 35}) == {3, 5, 6, 7, 8, 9}
    assert _stretches({53, 54, 55, 57, 58}) == {53, 54, 55, 57, 58}
    # fewer than three pages, or pages far apart, are no stretch
    assert _stretches({4, 5}) == set() and _stretches({2, 10, 20}) == set()
    # a run must fill at least half of the pages from its first to its last
    assert _stretches({1, 4, 7, 10}) == set()
    assert _stretches({1, 2, 3, 30, 31, 32}) == {1, 2, 3, 30, 31, 32}


def test_a_footer_line_of_several_items_is_furniture_whole(corpora):
    """Pfizer's 10-K closes each page with one line of three items, "Pfizer Inc.", "2021 Form
    10-K" and the page number, set right under the last paragraph (its height varies by page).
    Every item on that last line is at the page's edge: all three run over the pages and are
    furniture. Only the lowest one was before, so the name and the page number stayed body text
    ("For additional information, see Notes 1Q, 1S, 5D and 16. Pfizer Inc. 32")."""
    from evidence_pipeline.parser import DoclingParser

    path = corpora / "financebench-dev" / "pdfs" / "PFIZER_2021_10K.pdf"
    if not path.is_file():
        pytest.skip("financebench corpus not present")
    doc = DoclingParser().parse(path, pages=(22, 29))
    names = [b for b in doc.blocks if b.text == "Pfizer Inc."]
    assert {b.page for b in names} == set(range(22, 30))
    assert all(b.label == "page_footer" for b in names), [(b.page, b.label) for b in names]
    numbers = {b.page: b for b in doc.blocks if b.text.isdigit() and b.label == "page_footer"}
    assert [numbers[p].text for p in range(22, 30)] == [str(p - 6) for p in range(22, 30)]
    body = "\n".join(u.text for u in build_units(doc))
    assert "Pfizer Inc." not in body and "Form 10-K 1" not in body


@pytest.mark.skipif(not TENQ.is_dir(), reason="shared corpora not present")
def test_an_exhibits_own_page_numbers_are_furniture():
    """Intel's 2022 Q3 10-Q ends with an exhibit numbered on its own ("-4-" ... "-9-", pp. 53-58),
    each number the last line of its page and set above the margin band, on fewer pages than a
    third of the document. A page number on the last line of three pages or more close together
    is furniture, like a running line in the margin band."""
    from evidence_pipeline.parser import DoclingParser

    doc = DoclingParser().parse(TENQ / "2022 Q3 INTC.pdf", pages=(40, 61))
    numbers = {b.text: b for b in doc.blocks if b.text.startswith("-") and b.text.strip("-").isdigit()}
    assert set(numbers) >= {"-4-", "-5-", "-6-", "-8-", "-9-"}
    assert all(b.label == "page_footer" for b in numbers.values()), [(b.page, b.label, t) for t, b in numbers.items()]
    body = "\n".join(u.text for u in build_units(doc))
    assert "\n-5-" not in body and "-6-\n" not in body
