"""Near-twin SOPs: same procedure and table shapes, other IDs, titles and values; deterministic."""

from __future__ import annotations

import hashlib
import re

import pypdfium2
import pytest

from evidence_pipeline.tools.samples.corpus import build_corpus
from evidence_pipeline.tools.samples.twins import (
    DEFAULT_VARIANTS,
    FAMILIES,
    Twin,
    build_twins,
    numbers_in,
    occurs,
    render_twins,
    twin_ids,
)

VARIANTS = 3  # 18 documents: enough siblings to collide, fast to draw


def _pdf_pages(pdf: bytes) -> list[str]:
    doc = pypdfium2.PdfDocument(pdf)
    try:
        return [" ".join(page.get_textpage().get_text_range().split()) for page in doc]
    finally:
        doc.close()


@pytest.fixture(scope="module")
def twins() -> list[Twin]:
    return render_twins(build_twins(VARIANTS))


@pytest.fixture(scope="module")
def texts(twins) -> dict[str, list[str]]:
    return {t.doc_id: _pdf_pages(t.pdf) for t in twins}


def _families(twins: list[Twin]) -> dict[str, list[Twin]]:
    out: dict[str, list[Twin]] = {}
    for t in twins:
        out.setdefault(t.base_id, []).append(t)
    return out


def _id_shape(doc_id: str) -> tuple[str, int]:
    prefix, number = re.fullmatch(r"(.*?)(\d+)", doc_id).groups()
    return prefix, len(number)


def test_same_seed_gives_the_same_bytes_and_another_seed_other_values(twins):
    again = render_twins(build_twins(VARIANTS))
    assert [t.doc_id for t in again] == [t.doc_id for t in twins]
    for first, second in zip(twins, again):
        assert first.pdf == second.pdf, first.doc_id
        assert first.truth == second.truth
    other = build_twins(VARIANTS, seed=1)
    assert [t.doc_id for t in other] == [t.doc_id for t in twins]
    assert any(a.spec.tables()[0].body_rows != b.spec.tables()[0].body_rows for a, b in zip(twins, other))


def test_the_sample_corpus_is_untouched_by_building_twins():
    before = [hashlib.sha256(pdf).hexdigest() for _, pdf, _ in build_corpus()]
    build_twins(VARIANTS)
    assert [hashlib.sha256(pdf).hexdigest() for _, pdf, _ in build_corpus()] == before


def test_ids_are_confusable_members_of_the_base_family():
    used = {"SOP-8812", "SOP-QA-070", "SOP-QA-007"}
    assert twin_ids("SOP-8812", 3, used) == ["SOP-8821", "SOP-8281", "SOP-8218"]
    # Digit permutations first; then the permutations of the next number.
    assert twin_ids("SOP-QA-070", 4, used) == ["SOP-QA-700", "SOP-QA-071", "SOP-QA-107", "SOP-QA-017"]
    assert twin_ids("SOP-QA-007", 3, used) == ["SOP-QA-008", "SOP-QA-080", "SOP-QA-800"]
    assert len(used) == 13  # every ID handed out once


def test_twins_share_table_shapes_and_differ_in_values(twins):
    families = _families(twins)
    assert len(families) == len(FAMILIES) and all(len(f) == VARIANTS for f in families.values())
    for base_id, family in families.items():
        first = family[0]
        for other in family[1:]:
            assert other.doc_id != first.doc_id and _id_shape(other.doc_id) == _id_shape(base_id)
            # The title differs only by the distinguishing part.
            assert first.title.rsplit(", ", 1)[0] == other.title.rsplit(", ", 1)[0]
            assert first.label != other.label and other.title.endswith(", " + other.label)
            for a, b in zip(first.truth.tables, other.truth.tables, strict=True):
                assert (a.caption, a.header_rows, list(a.footnotes)) == (b.caption, b.header_rows, list(b.footnotes))
                assert [r[0] for r in a.body_rows] == [r[0] for r in b.body_rows]
                assert [len(r) for r in a.body_rows] == [len(r) for r in b.body_rows]
                # Every cell holding a non-zero number is printed differently in each twin.
                for ra, rb in zip(a.body_rows, b.body_rows):
                    for ca, cb in zip(ra[1:], rb[1:]):
                        if any(float(n.replace(",", "")) for n in numbers_in(ca)):
                            assert ca != cb, (first.doc_id, other.doc_id, ra[0])
    lnp = families["SOP-8812"]
    assert lnp[0].truth.tables[0].body_rows[0][:2] == ["Aqueous Phase 1", lnp[0].truth.tables[0].body_rows[0][1]]
    assert lnp[0].truth.tables[0].body_rows[0][1] != "0.6"  # the base document's value moved


def test_the_distinguishing_part_is_printed_and_in_the_scope(twins, texts):
    for t in twins:
        pages = texts[t.doc_id]
        first_page = pages[0]
        assert f"{t.doc_id}: {t.title}" in first_page
        assert all(f"{t.doc_id} Rev." in p for p in pages)
    lnp = _families(twins)["SOP-8812"]
    assert "mixing skid MX-302 of line 2 in suite B2" in " ".join(texts[lnp[1].doc_id])


def test_every_answer_is_printed_on_its_page_and_in_no_sibling(twins, texts):
    n_questions = 0
    for family in _families(twins).values():
        for twin in family:
            own = texts[twin.doc_id]
            siblings = [" ".join(texts[s.doc_id]) for s in family if s is not twin]
            assert twin.truth.questions, twin.doc_id
            for q in twin.truth.questions:
                n_questions += 1
                for answer in q.answers:
                    assert occurs(answer, own[q.page - 1]), (q.id, answer, q.page)
                    assert not any(occurs(answer, s) for s in siblings), (q.id, answer)
                for must in q.must_include:
                    assert occurs(must, " ".join(own)), (q.id, must)
                # A number the question names is still printed in its document.
                for number in numbers_in(re.sub(re.escape(twin.doc_id), "", q.question)):
                    assert occurs(number, " ".join(own)), (q.id, number)
    assert n_questions >= 6 * VARIANTS * 4


def test_the_default_set_is_large_enough():
    twins = build_twins()  # specs only: no drawing
    assert len(twins) == len(FAMILIES) * DEFAULT_VARIANTS >= 40
    pairs = sum(len(f) * (len(f) - 1) // 2 for f in _families(twins).values())
    assert pairs >= 20
    assert 300 <= sum(len(t.spec.questions) for t in twins) <= 400  # each asked twice: by ID and by title
    assert len({t.doc_id for t in twins}) == len(twins)
    assert not {t.doc_id for t in twins} & {f.build().doc_id for f in FAMILIES}


def test_bad_variant_count_is_refused():
    with pytest.raises(ValueError, match="variants"):
        build_twins(1)
