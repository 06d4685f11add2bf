"""Check a question file against its PDFs: every answer and every ``must_include`` string is
printed on the question's ``page``, read from the PDF's own text layer (pypdfium2, not this
project's parser) with FORMAT.md's matching. A hand-written set (``protocols.jsonl``) is checked
this way, so a typo or a figure taken from the wrong page shows before it is scored.

    python -m evidence_pipeline.evaluation.check_questions QUESTIONS DOCS_DIR

prints one line per problem and a summary; exit code 1 when a question fails, 2 when the
folder or the question file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from evidence_pipeline.evaluation.metrics import normalize
from evidence_pipeline.evaluation.parser_quality.coverage import pdf_page_texts
from evidence_pipeline.evaluation.questions import Question, QuestionFileError, load_questions


def problems(questions: Sequence[Question], docs: Path) -> list[str]:
    """One line per string a question expects on its page and the page does not print."""
    texts: dict[str, list[str]] = {}
    found: list[str] = []
    for q, n in Counter(q.id for q in questions).items():
        if n > 1:
            found.append(f"{q}: id used {n} times")
    for q in questions:
        if q.doc_id not in texts:
            pdf = docs / f"{q.doc_id}.pdf"
            texts[q.doc_id] = [normalize(t) for t in pdf_page_texts(pdf)] if pdf.is_file() else []
        pages = texts[q.doc_id]
        if not pages:
            found.append(f"{q.id}: no text for {q.doc_id}.pdf in {docs}")
            continue
        if q.page is None or not 1 <= q.page <= len(pages):
            found.append(f"{q.id}: page {q.page} is not a page of {q.doc_id} ({len(pages)} pages)")
            continue
        text = pages[q.page - 1]
        if not any(normalize(a) in text for a in q.answers):
            found.append(f"{q.id}: no answer printed on page {q.page}: {list(q.answers)}")
        found += [f"{q.id}: {m!r} not printed on page {q.page}" for m in q.must_include if normalize(m) not in text]
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evidence_pipeline.evaluation.check_questions", description=__doc__.split("\n\n")[0])
    ap.add_argument("questions", type=Path)
    ap.add_argument("docs", type=Path, help="folder of the PDFs, named <doc_id>.pdf")
    args = ap.parse_args(argv)
    if not args.docs.is_dir():
        print(f"error: {args.docs} is not a folder", file=sys.stderr)
        return 2
    try:
        questions = load_questions(args.questions)
    except (OSError, QuestionFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    found = problems(questions, args.docs)
    for line in found:
        print(line)
    kinds = Counter(q.kind or "-" for q in questions)
    docs = len({q.doc_id for q in questions})
    print(
        f"{len(questions)} questions on {docs} documents ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}): {len(found)} problems"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
