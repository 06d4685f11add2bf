"""The near-twin SOP set: twin PDFs and their questions, each asked once by ID and once by title.

    python -m evidence_pipeline.evaluation.twin_questions OUT_DIR [--variants N] [--seed S]

writes ``OUT_DIR/corpus/*.pdf`` and ``OUT_DIR/truth/`` (``tools.samples.twins``) and
``OUT_DIR/questions.jsonl`` in the format of ``shared/eval/FORMAT.md``.

Among near twins a question that does not say which document it is about has no single answer,
so every question names its document: its truth question is written twice, once naming the
document by ID (``kind`` ``exact_id``: "In SOP-8821, ...") and once by its title or the
distinctive part of it (``kind`` ``title_ref``: "Under the Lipid Nanoparticle Formulation,
Line 3 procedure, ..."). Half of all questions therefore name a title, and the two kinds ask
the same things. ``content`` (extra key, ignored by the loader) says what is asked:
``table_cell``, ``footnote``, ``long_tail``, ``similar`` or ``prose``; a question of the base
corpus's ``exact_id`` kind becomes ``table_cell`` or ``prose`` by where its answer is printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evidence_pipeline.evaluation.questions import Question, summary_line, write_questions
from evidence_pipeline.tools.samples.twins import DEFAULT_VARIANTS, Twin, write_twins

QUESTIONS_FILE = "questions.jsonl"
# Rotated over a document's questions, so the phrasing does not give the kind away.
ID_FORMS = ("In {ref}, {q}", "According to {ref}, {q}", "Under {ref}, {q}")
TITLE_FORMS = ("Under the {ref} procedure, {q}", "According to the {ref} SOP, {q}", "In the {ref} procedure, {q}")
TITLE_NOUN = "the {ref} procedure"  # where the question names its document inside the sentence


class TwinQuestion(Question):
    content: str


def _lower_first(question: str) -> str:
    first = question.split(" ", 1)[0]
    return question if first.isupper() else question[0].lower() + question[1:]


def phrase(question: str, doc_id: str, ref: str, forms: tuple[str, ...], n: int, *, by_id: bool) -> str:
    """``question`` naming its document by ``ref``: where it already names ``doc_id`` the ID is
    replaced in place; otherwise the form ``n`` (rotating) puts the reference in front."""
    if doc_id in question:
        return question if by_id else question.replace(doc_id, TITLE_NOUN.format(ref=ref))
    return forms[n % len(forms)].format(ref=ref, q=_lower_first(question))


def twin_questions(twins: list[Twin]) -> list[TwinQuestion]:
    """Each truth question of each twin, once by ID and once by title (full title and the
    distinctive part alternate)."""
    out: list[TwinQuestion] = []
    for twin in twins:
        assert twin.truth is not None, "render the twins first"
        tables = {t.key for t in twin.spec.tables()}
        for n, tq in enumerate(twin.truth.questions):
            spec_q = twin.spec.questions[n]
            in_table = spec_q.at.split("/")[0] in tables
            content = tq.kind if tq.kind != "exact_id" else ("table_cell" if in_table else "prose")
            title_ref = twin.title if n % 2 == 0 else twin.title_part
            common = dict(doc_id=twin.doc_id, answers=tq.answers, must_include=tq.must_include, page=tq.page, content=content)
            out.append(
                TwinQuestion(
                    id=f"{tq.id}-id",
                    question=phrase(tq.question, twin.doc_id, twin.doc_id, ID_FORMS, n, by_id=True),
                    kind="exact_id",
                    **common,
                )
            )
            out.append(
                TwinQuestion(
                    id=f"{tq.id}-title",
                    question=phrase(tq.question, twin.doc_id, title_ref, TITLE_FORMS, n, by_id=False),
                    kind="title_ref",
                    **common,
                )
            )
    return out


def generate(out_dir: Path, variants: int = DEFAULT_VARIANTS, seed: int = 0) -> tuple[list[Twin], Path]:
    """Write the twin corpus and its question file; returns the twins and the file's path."""
    twins = write_twins(out_dir, variants, seed)
    path = write_questions(twin_questions(twins), Path(out_dir) / QUESTIONS_FILE)
    return twins, path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence_pipeline.evaluation.twin_questions", description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--variants", type=int, default=DEFAULT_VARIANTS, help="twins of each sample document")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    twins, path = generate(args.out_dir, args.variants, args.seed)
    print(summary_line(len(twins), args.out_dir / "corpus", path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
