"""Write the sample SOP corpus's questions to ``data/questions/sop.jsonl``.

    python -m evidence_pipeline.evaluation.sop_questions [OUT]

The questions come from ``evidence_pipeline.tools.samples`` (the generator's ground truth),
so they match the PDFs that ``evidence-pipeline generate`` writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from evidence_pipeline.evaluation.questions import load_questions
from evidence_pipeline.tools.samples.corpus import write_questions

DEFAULT_OUT = Path("data/questions/sop.jsonl")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else DEFAULT_OUT
    n = len(load_questions(write_questions(out)))  # loading validates the format
    print(f"wrote {n} questions to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
