"""The Korean sample SOP corpus and its questions, in Korean.

    python -m evidence_pipeline.evaluation.korean_questions OUT_DIR

writes ``OUT_DIR/corpus/*.pdf`` (``tools.samples.docs_korean``, set in NanumGothic from
Debian's ``fonts-nanum``), ``OUT_DIR/truth/`` and ``OUT_DIR/questions.jsonl`` in the format
of ``shared/eval/FORMAT.md``. The questions come from the generator's ground truth, as the
English set's do: answers are printed on the page the truth records.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evidence_pipeline.evaluation.questions import summary_line
from evidence_pipeline.tools.samples.corpus import generate_corpus, write_questions
from evidence_pipeline.tools.samples.docs_korean import korean_specs
from evidence_pipeline.tools.samples.truth import load_truth

QUESTIONS_FILE = "questions.jsonl"


def generate(out_dir: Path) -> tuple[list[Path], Path]:
    """Write the Korean corpus and its question file; returns the PDFs and the file's path."""
    out_dir = Path(out_dir)
    pdfs = generate_corpus(out_dir / "corpus", korean_specs())
    truths = [t for t in load_truth(out_dir / "truth") if t.doc_id in {p.stem for p in pdfs}]
    return pdfs, write_questions(out_dir / QUESTIONS_FILE, truths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence_pipeline.evaluation.korean_questions", description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    pdfs, path = generate(args.out_dir)
    print(summary_line(len(pdfs), args.out_dir / "corpus", path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
