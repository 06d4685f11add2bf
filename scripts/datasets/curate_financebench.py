"""Curate ``financebench-dev/questions.jsonl`` into a scorable question file.

FinanceBench's gold answers are often computed ("$1577.00", a ratio, "Yes") or phrased,
and its evidence names the 1-based page that holds what the answer rests on. Each question
is reduced, by hand, to strings PRINTED on its evidence page: the figure or phrase the
answer rests on as ``answers``, and a second figure the computation needs as
``must_include``. Questions whose answer is a judgement with nothing to print are dropped
with the reason. Every kept string is then checked against the evidence page's text
(pdfplumber, normalised as the metrics normalise): a reduction not printed there is
dropped, so a typo here cannot make an unanswerable question.

    python -m scripts.datasets.curate_financebench --corpus DIR [--out FILE] [--cache DIR]

writes ``data/questions/financebench.jsonl`` and ``data/questions/financebench.curation.json``;
``--corpus .../financebench-more --out data/questions/financebench-more.jsonl`` curates the 38
questions of the other 22 filings the same way (their reductions are in the same table).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evidence_pipeline.evaluation.metrics import normalize
from evidence_pipeline.evaluation.questions import Question
from scripts.datasets.curate_sec import page_texts
from scripts.datasets.curation import curation_main

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
    # financebench-more (22 filings): --corpus .../financebench-more --out data/questions/financebench-more.jsonl
    # Ratios computed from two printed figures keep the first as ``answers``, the second as ``must_include``.
    # PP&E net / total assets
    "financebench_id_00499": {"answers": ["9,178"], "must_include": ["46,455"], "page": 50, "kind": "table_cell"},
    "financebench_id_01226": {"answers": ["Combat Arms Earplugs litigation"], "kind": "prose"},
    "financebench_id_01865": {"answers": ["(0.9)"], "must_include": ["Consumer"], "kind": "table_cell"},  # organic sales change
    "financebench_id_02987": {"answers": ["253"], "must_include": ["282"], "kind": "table_cell"},  # PP&E net, 2019 and 2018
    "financebench_id_07966": {"answers": ["(116)"], "must_include": ["(155)"], "page": 73, "kind": "table_cell"},  # capex 2019, 2017
    "financebench_id_04735": {"answers": ["2,213,556"], "kind": "table_cell"},  # total current liabilities
    "financebench_id_00438": {"answers": ["6,098"], "must_include": ["17,606"], "kind": "table_cell"},  # operating income, revenue
    "financebench_id_00591": {"answers": ["7,838"], "must_include": ["4,756"], "kind": "table_cell"},  # operating cash flow, net income
    "financebench_id_08286": {"answers": ["11,588"], "kind": "table_cell"},
    "financebench_id_01935": {"answers": ["substitution of the Substitute Issuer for the Former Issuer"], "kind": "prose"},
    "financebench_id_01936": {
        "answers": ["Employee Costs"],
        "must_include": ["Liability balance at December 31, 2022"],
        "kind": "table_cell",
    },
    "financebench_id_03069": {"answers": ["167"], "must_include": ["Depreciation and amortization"], "page": 60, "kind": "table_cell"},
    "financebench_id_05718": {"answers": ["(389)"], "kind": "table_cell"},  # dividends paid
    "financebench_id_04254": {"answers": ["1,196"], "must_include": ["636"], "kind": "table_cell"},  # operating income, D&A
    "financebench_id_02608": {"answers": ["39,403"], "must_include": ["1,228"], "kind": "table_cell"},  # revenue, net earnings
    "financebench_id_00685": {"answers": ["9,912"], "must_include": ["46,298"], "kind": "table_cell"},  # gross profit, revenue
    "financebench_id_01077": {"answers": ["Current Health Ltd."], "must_include": ["Yardbird"], "kind": "prose"},
    "financebench_id_01275": {"answers": ["1,824"], "kind": "table_cell"},  # total cash provided by operating activities
    "financebench_id_04660": {"answers": ["1,001,425"], "must_include": ["577,464"], "kind": "table_cell"},
    "financebench_id_03473": {"answers": ["1,248"], "kind": "table_cell"},  # net income attributable to shareowners
    "financebench_id_01346": {"answers": ["23%"], "must_include": ["Effective tax rate"], "kind": "table_cell"},
    "financebench_id_00005": {"answers": ["1,721"], "must_include": ["3,147"], "kind": "table_cell"},  # receivables, other accrued
    "financebench_id_03471": {"answers": ["5,121.3"], "must_include": ["7,491.5"], "kind": "table_cell"},
    "financebench_id_04854": {"answers": ["3,676.2"], "must_include": ["(460.8)"], "kind": "table_cell"},
    "financebench_id_00956": {"answers": ["worldwide sales increased 1.3%"], "kind": "prose"},
    "financebench_id_00669": {"answers": ["One-time COVID-19 vaccine manufacturing exit related costs"], "kind": "prose"},
    "financebench_id_00711": {"answers": ["12,483"], "must_include": ["10,387"], "kind": "table_cell"},  # inventories
    "financebench_id_00651": {"answers": ["reflecting growth of 3.5%"], "must_include": ["increasing by 3.6%"], "kind": "prose"},
    "financebench_id_01484": {"answers": ["3.0%"], "must_include": ["(0.6)%"], "kind": "table_cell"},  # U.S. vs international
    "financebench_id_00299": {"answers": ["(473)"], "kind": "table_cell"},  # Corporate total net revenue
    "financebench_id_02119": {"answers": ["$66.56"], "kind": "prose"},  # tangible book value per share
    "financebench_id_00705": {
        "answers": ["$4,200,000,000 five year unsecured revolving credit agreement"],
        "must_include": ["$3,800,000,000 five year"],
        "kind": "prose",
    },
    "financebench_id_00882": {
        "answers": ["$4,200,000,000 364 day unsecured revolving credit agreement"],
        "must_include": ["$4,200,000,000 five year unsecured revolving credit agreement"],
        "kind": "prose",
    },
    "financebench_id_01474": {"answers": ["strong start to the year"], "kind": "prose"},
    "financebench_id_01476": {"answers": ["core constant currency EPS to increase 9 percent (previously 8 percent)"], "kind": "prose"},
    "financebench_id_00216": {"answers": ["37,857"], "must_include": ["50,171"], "kind": "table_cell"},  # current assets, liabilities
    "financebench_id_00215": {"answers": ["379,680"], "kind": "table_cell"},  # total assets
    "financebench_id_00566": {"answers": ["150,639"], "must_include": ["150,868"], "kind": "table_cell"},  # total debt
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
            id=row["id"],
            question=row["question"],
            doc_id=row["doc_id"],
            answers=answers,
            must_include=must,
            page=page,
            kind=reduction.get("kind"),
        )
        questions.append(q)
        decision.update(kept=True, answers=answers, must_include=must, page=page, gold_answer=row["answer"])
    return questions, decisions


def main(argv: list[str] | None = None) -> int:
    return curation_main(
        argv,
        module="scripts.datasets.curate_financebench",
        description=__doc__.split("\n\n")[0],
        out=DEFAULT_OUT,
        source="questions.jsonl",
        curate=curate,
        total_key="questions",
        label=lambda d: d["id"],
    )


if __name__ == "__main__":
    raise SystemExit(main())
