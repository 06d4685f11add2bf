"""The twin question file: FORMAT.md questions, each asked once by document ID and once by title."""

from __future__ import annotations

import json
import re

import pytest

from evidence_pipeline.evaluation.questions import load_questions
from evidence_pipeline.evaluation.twin_questions import QUESTIONS_FILE, generate, main, phrase
from evidence_pipeline.tools.samples.twins import MANIFEST

VARIANTS = 2


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("twins")
    twins, path = generate(out, VARIANTS)
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return out, twins, load_questions(path), raw


def test_files_and_manifest(generated):
    out, twins, questions, _ = generated
    assert sorted(p.stem for p in (out / "corpus").glob("*.pdf")) == sorted(t.doc_id for t in twins)
    assert len(list((out / "truth").glob("SOP-*.json"))) == len(twins) == 6 * VARIANTS
    manifest = {m["doc_id"]: m for m in json.loads((out / "truth" / MANIFEST).read_text(encoding="utf-8"))}
    lnp = next(t for t in twins if t.base_id == "SOP-8812" and t.variant == 2)
    assert manifest[lnp.doc_id]["title"] == "Lipid Nanoparticle Formulation by Microfluidic Mixing, Line 2"
    assert manifest[lnp.doc_id]["title_part"] == "Lipid Nanoparticle Formulation, Line 2"
    assert len(manifest[lnp.doc_id]["siblings"]) == VARIANTS - 1
    assert {q.doc_id for q in questions} == set(manifest)


def test_half_the_questions_name_a_title_and_half_an_id(generated):
    _, twins, questions, raw = generated
    by_id = {t.doc_id: t for t in twins}
    kinds = [q.kind for q in questions]
    assert kinds.count("title_ref") == kinds.count("exact_id") == len(questions) // 2 > 0
    for q in questions:
        twin = by_id[q.doc_id]
        if q.kind == "exact_id":
            assert re.search(rf"(?<![\w-]){re.escape(q.doc_id)}(?!\w)", q.question), q.question
        else:
            assert q.doc_id not in q.question, q.question
            assert twin.title in q.question or twin.title_part in q.question, q.question
    # Both distinctive forms of the title are used.
    titled = [q for q in questions if q.kind == "title_ref"]
    assert any(by_id[q.doc_id].title in q.question for q in titled)
    assert any(by_id[q.doc_id].title not in q.question for q in titled)
    # What is asked is kept beside the reference kind.
    assert {r["content"] for r in raw} >= {"table_cell", "footnote", "prose", "long_tail", "similar"}


def test_the_two_forms_ask_the_same_thing(generated):
    _, _, questions, _ = generated
    pairs: dict[str, list] = {}
    for q in questions:
        pairs.setdefault(q.id.rsplit("-", 1)[0], []).append(q)
    assert all(len(p) == 2 for p in pairs.values())
    for by_id, by_title in pairs.values():
        assert (by_id.kind, by_title.kind) == ("exact_id", "title_ref")
        assert (by_id.answers, by_id.must_include, by_id.page) == (by_title.answers, by_title.must_include, by_title.page)
        assert by_id.question != by_title.question


def test_answers_come_from_the_twin_truth_and_differ_between_twins(generated):
    _, twins, questions, _ = generated
    truth = {t.doc_id: t.truth for t in twins}
    for q in questions:
        own = truth[q.doc_id]
        assert any(tq.answers == q.answers and tq.page == q.page for tq in own.questions), q.id
    # The same question asked of two twins has two different answers.
    lnp = sorted((q for q in questions if q.kind == "exact_id" and "Aqueous Phase 1 in mL/min" in q.question), key=lambda q: q.doc_id)
    assert len(lnp) == VARIANTS and len({tuple(q.answers) for q in lnp}) == VARIANTS


def test_phrase_puts_the_reference_in_front_or_in_place():
    q = "What is the AQL for cracked or broken vials?"
    assert phrase(q, "SOP-QA-700", "SOP-QA-700", ("In {ref}, {q}",), 0, by_id=True) == (
        "In SOP-QA-700, what is the AQL for cracked or broken vials?"
    )
    inline = "How often is SOP-QA-700 reviewed?"
    assert phrase(inline, "SOP-QA-700", "SOP-QA-700", ("In {ref}, {q}",), 0, by_id=True) == inline
    assert phrase(inline, "SOP-QA-700", "Visual Inspection, Fill Line FL-1", ("x {ref} {q}",), 0, by_id=False) == (
        "How often is the Visual Inspection, Fill Line FL-1 procedure reviewed?"
    )
    assert phrase("QA reviews what?", "D-1", "T", ("In {ref}, {q}",), 0, by_id=True) == "In T, QA reviews what?"


def test_command_line_writes_the_set(tmp_path, capsys):
    assert main([str(tmp_path), "--variants", "2", "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    assert "wrote 12 documents" in printed and '"title_ref"' in printed
    assert len(load_questions(tmp_path / QUESTIONS_FILE)) > 0
