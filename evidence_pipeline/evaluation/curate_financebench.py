"""Curate ``financebench-dev/questions.jsonl`` into a scorable question file.

FinanceBench's gold answers are often computed ("$1577.00", a ratio, "Yes") or phrased,
and its evidence names the 1-based page that holds what the answer rests on. Each question
is reduced, by hand, to strings PRINTED on its evidence page: the figure or phrase the
answer rests on as ``answers``, and a second figure the computation needs as
``must_include``. Questions whose answer is a judgement with nothing to print are dropped
with the reason. Every kept string is then checked against the evidence page's text
(pdfplumber, normalised as the metrics normalise): a reduction not printed there is
dropped, so a typo here cannot make an unanswerable question.

    python -m evidence_pipeline.evaluation.curate_financebench [--corpus DIR] [--out FILE] [--cache DIR]

writes ``data/questions/financebench.jsonl`` and ``data/questions/financebench.curation.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evidence_pipeline.evaluation.curate_sec import page_texts
from evidence_pipeline.evaluation.curation import curation_main
from evidence_pipeline.evaluation.metrics import normalize
from evidence_pipeline.evaluation.questions import Question

DEFAULT_CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "financebench-dev"
DEFAULT_OUT = Path("data/questions/financebench.jsonl")

# FinanceBench id -> the reduction (what the evidence page prints), or the reason to drop.
# ``page`` overrides the first evidence page where the answer sits on another one.
REDUCTIONS: dict[str, dict | str] = {
    "financebench_id_03029": {"answers": ["1,577"], "kind": "table_cell"},  # Purchases of PP&E
    "financebench_id_04672": {"answers": ["8,738"], "kind": "table_cell"},  # PP&E net
    "financebench_id_06655": {"answers": ["34,616"], "must_include": ["25,309"], "page": 40, "kind": "table_cell"},
    "financebench_id_08135": {"answers": ["177,866"], "must_include": ["135,987"], "kind": "table_cell"},
    "financebench_id_00799": {"answers": ["5,308"], "must_include": ["5,853"], "kind": "table_cell"},
    "financebench_id_01079": {"answers": ["Czech Republic"], "kind": "prose"},
    "financebench_id_01148": {"answers": ["producing responsible packaging"], "kind": "prose"},
    "financebench_id_00684": {"answers": ["2,725"], "must_include": ["14,694"], "kind": "table_cell"},
    "financebench_id_00476": {"answers": ["Securities registered pursuant to Section 12(b)"], "kind": "table_cell"},
    "financebench_id_01028": {"answers": ["LACC"], "must_include": ["EMEA", "APAC"], "kind": "table_cell"},
    "financebench_id_00723": "judgement: which margin applies to a financial services company; nothing printed answers it",
    "financebench_id_00720": "judgement: which margin applies to a financial services company; nothing printed answers it",
    "financebench_id_01351": {"answers": ["21.6"], "must_include": ["24.6"], "kind": "table_cell"},
    "financebench_id_01964": {"answers": ["Customer deposits"], "kind": "table_cell"},
    "financebench_id_01981": {"answers": ["retention remained high"], "kind": "prose"},
    "financebench_id_00382": {"answers": ["3,142,308"], "kind": "table_cell"},
    "financebench_id_01911": "computed: a ratio of two adjusted figures the release does not print",
    "financebench_id_01912": {"answers": ["a decrease of 44%"], "page": 4, "kind": "prose"},
    "financebench_id_00302": {"answers": ["14,882"], "must_include": ["13,745"], "kind": "table_cell"},
    "financebench_id_00702": {"answers": ["Consumer Healthcare JV"], "kind": "table_cell"},
    "financebench_id_02416": {"answers": ["Trillium"], "kind": "prose"},
    "financebench_id_00283": {"answers": ["in connection with separating Upjohn"], "must_include": ["90%"], "kind": "prose"},
    "financebench_id_00724": {"answers": ["Developed Rest of World"], "must_include": ["(74)"], "kind": "table_cell"},
    "financebench_id_02419": {"answers": ["separating Upjohn"], "kind": "prose"},
    "financebench_id_00601": {"answers": ["marketing expenses"], "kind": "prose"},
    "financebench_id_00603": {"answers": ["47 new stores"], "kind": "prose"},
    "financebench_id_00605": {"answers": ["$328.1 million"], "must_include": ["$900.0 million"], "kind": "prose"},
    "financebench_id_00606": {"answers": ["store payroll and benefits"], "kind": "prose"},
}


def curate(corpus: Path, cache: Path | None = None) -> tuple[list[Question], list[dict]]:
    rows = [json.loads(line) for line in (corpus / "questions.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    questions: list[Question] = []
    decisions: list[dict] = []
    texts: dict[str, list[str]] = {}
    for row in rows:
        decision: dict = {"id": row["id"], "doc_id": row["doc_id"], "question": row["question"]}
        decisions.append(decision)
        reduction = REDUCTIONS.get(row["id"], "no reduction made for this question")
        if isinstance(reduction, str):
            decision.update(kept=False, reason=reduction)
            continue
        pdf = corpus / "pdfs" / f"{row['doc_id']}.pdf"
        if not pdf.is_file():
            decision.update(kept=False, reason=f"source PDF {pdf.name} not in the corpus")
            continue
        if row["doc_id"] not in texts:
            print(f"text of {pdf.name}", file=sys.stderr)
            texts[row["doc_id"]] = page_texts(pdf, cache)
        page = reduction.get("page") or row["evidence"][0]["page"]
        answers, must = reduction["answers"], reduction.get("must_include", [])
        text = texts[row["doc_id"]][page - 1] if page <= len(texts[row["doc_id"]]) else ""
        missing = [s for s in [*answers[:1], *must] if normalize(s) not in text]
        if missing:
            decision.update(kept=False, reason=f"{missing} not printed on page {page}", answers=answers)
            continue
        q = Question(
            id=row["id"], question=row["question"], doc_id=row["doc_id"],
            answers=answers, must_include=must, page=page, kind=reduction.get("kind"),
        )
        questions.append(q)
        decision.update(kept=True, answers=answers, must_include=must, page=page, gold_answer=row["answer"])
    return questions, decisions


def main(argv: list[str] | None = None) -> int:
    return curation_main(
        argv,
        module="evidence_pipeline.evaluation.curate_financebench",
        description=__doc__.split("\n\n")[0],
        corpus=DEFAULT_CORPUS,
        out=DEFAULT_OUT,
        source="questions.jsonl",
        curate=curate,
        total_key="questions",
        label=lambda d: d["id"],
    )


if __name__ == "__main__":
    raise SystemExit(main())
