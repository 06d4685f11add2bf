"""Curate ``sec-10q-dev/questions.csv`` into a scorable question file.

The CSV's answers are long-form prose. Each is reduced to the figure as printed in
the PDF (``"$63,355 million"`` -> ``"63,355"``: statements print millions without the
unit), then checked against the source PDF's text (pdfplumber, normalised as the
metrics normalise). Questions whose reduced answer is not in the document, or that
have no figure at all (opinions, "not disclosed"), are dropped with the reason.
``OVERRIDES`` holds the hand-made reductions where the automatic one picks the wrong
figure or there is none; ``must_include`` there names a second figure of the same
table that the answer needs (e.g. revenue beside operating expenses).

    python -m scripts.datasets.curate_sec --corpus DIR [--out FILE] [--cache DIR]

writes ``data/questions/sec-10q.jsonl`` and ``data/questions/sec-10q.curation.json``
(one decision per CSV row: kept or dropped, and why).
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

from evidence_pipeline.evaluation.metrics import normalize
from evidence_pipeline.evaluation.questions import Question
from scripts.datasets.curation import curation_main

DEFAULT_OUT = Path("data/questions/sec-10q.jsonl")

# Row index (0-based, CSV order) -> the curated reduction, or the reason to drop the row.
OVERRIDES: dict[int, dict | str] = {
    0: {"answers": ["14,316"], "must_include": ["117,154"]},  # opex vs net sales, one income statement
    3: {"answers": ["1,003"], "must_include": ["694"]},  # interest expense, this year vs last
    # The answer's 32,348 is its own sum, never printed: score the printed revenue and R&D.
    5: {"answers": ["52,747"], "must_include": ["6,844"]},
    6: {"answers": ["23,198"]},  # "$23.198 billion" is printed in millions
    8: {"answers": ["48,116"], "must_include": ["53,812"]},  # total debt and face value, one table
    9: {"answers": ["4,268"], "must_include": ["3,742"]},
    10: {"answers": ["34.9"]},  # opex as % of revenue, printed "34.9 %" in the MD&A table
    13: {"answers": ["10,954"], "must_include": ["10,953"]},
    14: "no figure: the answer paraphrases risk factors",
    15: {"answers": ["5,476"], "must_include": ["11,715"]},
    16: {"answers": ["7,730"]},  # "$7.7 billion" rounds the statement's 7,730
    18: {"answers": ["11.0 billion"]},
    19: {"answers": ["12,831"], "must_include": ["10,776"]},
    20: {"answers": ["4,774"], "must_include": ["127,358"]},  # operating income and net sales
    21: {"answers": ["11.4 billion"]},
    23: {"answers": ["8.0 billion"]},  # the new Term Loan
    24: {"answers": ["2.3 billion"]},  # inventory valuation allowance
    25: "no figure: the answer infers a correlation the filing does not state",
    26: {"answers": ["1.7 billion"]},  # Commercial Paper outstanding
    27: "no figure: the answer says the filing does not tell",
    28: {"answers": ["264 million"]},  # accrued legal liabilities; a bare "264" matches too much
    29: "no figure: the answer summarises the debt note without a value",
    30: "no figure: the answer paraphrases risk factors",
    31: "no figure: the answer is that no accrual was recorded",
    32: {"answers": ["9,704"], "must_include": ["10,954"]},  # long-term portion and net carrying amount
    33: "no figure: the answer paraphrases forward-looking statements",
    34: "no figure: the answer says the filing does not tell",
    35: {"answers": ["11.0 billion"]},
    36: {"answers": ["19,145"]},  # additions to property, plant and equipment ("$19.145 billion")
    37: "no figure: the answer paraphrases the technology and content costs",
    38: "no figure: the answer says the filing does not tell",
    39: {"answers": ["972 million"]},  # Credit Facility borrowings, one sentence in the debt note
    40: {"answers": ["6.1 billion"]},  # remaining under the repurchase program
}

_MONEY = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(million|billion)?", re.IGNORECASE)


def reduce_answer(text: str) -> str | None:
    """The first dollar figure of a long answer, as a statement or the text prints it."""
    m = _MONEY.search(text)
    if not m:
        return None
    number, unit = m.group(1), (m.group(2) or "").lower()
    if unit == "billion":
        # "$23.198 billion" restates a table value in millions: 23,198.
        if re.fullmatch(r"\d+\.\d{3}", number):
            whole, frac = number.split(".")
            return f"{int(whole)},{frac}" if int(whole) else frac.lstrip("0")
        return f"{number} billion"
    return number


def doc_id_of(source_docs: str) -> str:
    return source_docs.strip().strip("*").strip()


def page_texts(pdf: Path, cache: Path | None) -> list[str]:
    """Normalised text of each page (pdfplumber), optionally cached as JSON."""
    cached = cache / f"{pdf.stem}.json" if cache else None
    if cached and cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    import pdfplumber

    with pdfplumber.open(pdf) as doc:
        texts = [normalize(page.extract_text() or "") for page in doc.pages]
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(json.dumps(texts), encoding="utf-8")
    return texts


def _pages_with(texts: list[str], strings: list[str]) -> list[int]:
    needles = [normalize(s) for s in strings]
    return [i for i, t in enumerate(texts, 1) if all(n in t for n in needles)]


def curate(corpus: Path, cache: Path | None = None) -> tuple[list[Question], list[dict]]:
    with open(corpus / "questions.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    questions: list[Question] = []
    decisions: list[dict] = []
    texts: dict[str, list[str]] = {}
    for i, row in enumerate(rows):
        doc_id = doc_id_of(row["Source Docs"])
        answer_text = row["Answer"].split("SOURCE(S):")[0].strip()
        decision = {"row": i, "doc_id": doc_id, "question": row["Question"].strip()}
        decisions.append(decision)
        override = OVERRIDES.get(i)
        if isinstance(override, str):
            decision.update(kept=False, reason=override)
            continue
        if override:
            answers, must = override["answers"], override.get("must_include", [])
            decision["reduction"] = "manual"
        else:
            figure = reduce_answer(answer_text)
            if figure is None:
                decision.update(kept=False, reason="no figure found in the answer")
                continue
            answers, must = [figure], []
            decision["reduction"] = "automatic"
        pdf = corpus / "pdfs" / f"{doc_id}.pdf"
        if not pdf.is_file():
            decision.update(kept=False, reason=f"source PDF {pdf.name} not in the corpus")
            continue
        if doc_id not in texts:
            print(f"text of {pdf.name}", file=sys.stderr)
            texts[doc_id] = page_texts(pdf, cache)
        answer_pages = _pages_with(texts[doc_id], answers[:1])
        if not answer_pages:
            decision.update(kept=False, reason=f"{answers[0]!r} not found in the PDF text", answers=answers)
            continue
        missing = [m for m in must if not _pages_with(texts[doc_id], [m])]
        if missing:
            decision.update(kept=False, reason=f"must_include {missing} not found in the PDF text", answers=answers)
            continue
        together = _pages_with(texts[doc_id], [*answers[:1], *must])
        if must and not together:
            decision.update(kept=False, reason="answer and must_include never share a page", answers=answers)
            continue
        candidates = together or answer_pages
        # A page is given only where the evidence is on exactly one page.
        page = candidates[0] if len(candidates) == 1 else None
        kind = "table_cell" if row["Source Chunk Type"].strip().lower() == "table" else "prose"
        q = Question(
            id=f"sec-q{i:02d}",
            question=row["Question"].strip(),
            doc_id=doc_id,
            answers=answers,
            must_include=must,
            page=page,
            kind=kind,
        )
        questions.append(q)
        decision.update(kept=True, answers=answers, must_include=must, page=page, pages_found=candidates[:10], kind=kind)
    return questions, decisions


def main(argv: list[str] | None = None) -> int:
    return curation_main(
        argv,
        module="scripts.datasets.curate_sec",
        description=__doc__.split("\n\n")[0],
        out=DEFAULT_OUT,
        source="questions.csv",
        curate=curate,
        total_key="rows",
        label=lambda d: f"row {d['row']}",
    )


if __name__ == "__main__":
    raise SystemExit(main())
