"""The command line both question curations share: read a benchmark's file, write the
question file in the FORMAT.md format and, beside it, every decision (kept or dropped, and why)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from evidence_pipeline.evaluation.questions import Question, write_questions

Curate = Callable[[Path, Path | None], tuple[list[Question], list[dict]]]


def curation_main(
    argv: list[str] | None,
    *,
    module: str,
    description: str,
    out: Path,
    source: str,
    curate: Curate,
    total_key: str,
    label: Callable[[dict], str],
) -> int:
    """``source``: the benchmark's file inside the corpus folder; ``total_key``: how the summary
    counts what it read ("rows", "questions"); ``label``: how a dropped decision is named."""
    ap = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    ap.add_argument("--corpus", type=Path, required=True, help=f"the benchmark's folder: {source} and pdfs/")
    ap.add_argument("--out", type=Path, default=out)
    ap.add_argument("--cache", type=Path, default=None, help="folder for the extracted page texts (speeds up reruns)")
    args = ap.parse_args(argv)
    if not (args.corpus / source).is_file():
        print(f"error: {args.corpus}/{source} not found", file=sys.stderr)
        return 2
    questions, decisions = curate(args.corpus, args.cache)
    write_questions(questions, args.out)
    notes = args.out.with_suffix(".curation.json")
    dropped = [d for d in decisions if not d["kept"]]
    summary = {total_key: len(decisions), "kept": len(questions), "dropped": len(dropped), "decisions": decisions}
    notes.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"kept {len(questions)} of {len(decisions)} questions -> {args.out}; decisions in {notes}")
    for d in dropped:
        print(f"  dropped {label(d)} ({d['doc_id']}): {d['reason']}")
    return 0
