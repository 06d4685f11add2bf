"""End-to-end ingest with and without parse/embed overlap, in the same run.

``python -m evidence_pipeline.benchmark.ingest_overlap DIR [--limit N] [--rounds R]``

Each measurement is a fresh process ingesting DIR's documents into a fresh store through
``orchestration.runner.ingest_paths`` (the Dagster job, as ``evidence-pipeline ingest`` runs
it), once with ``read_ahead=False`` (parse, then embed, one after the other) and once with
``read_ahead=True`` (the parser's worker process parses the next document while this one is
embedded and written). The two alternate; pages/s is pages over wall time, model loading
and the parser's start-up included (both pay them alike).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _pages(files: list[Path]) -> int:
    import pypdfium2

    total = 0
    for f in files:
        pdf = pypdfium2.PdfDocument(str(f))
        total += len(pdf)
        pdf.close()
    return total


def _child(read_ahead: bool, files: list[str]) -> None:
    from evidence_pipeline.orchestration.definitions import defs
    from evidence_pipeline.orchestration.runner import default_instance, ingest_paths

    start = time.perf_counter()
    summary = ingest_paths(files, defs, default_instance(), read_ahead=read_ahead)
    print(json.dumps({"seconds": time.perf_counter() - start, "failed": len(summary.failures),
                      "children": sum(o.children for o in summary.outcomes)}))


def measure(files: list[Path], rounds: int = 1) -> dict:
    pages = _pages(files)
    out: dict = {"documents": len(files), "pages": pages, "runs": []}
    for r in range(rounds):
        for read_ahead in ((False, True) if r % 2 == 0 else (True, False)):
            with tempfile.TemporaryDirectory(prefix="evidence-overlap-") as tmp:
                env = {**os.environ, "EVIDENCE_STORE_PATH": str(Path(tmp) / "store"), "HF_HUB_OFFLINE": "1"}
                env.pop("DAGSTER_HOME", None)  # an ephemeral instance per run
                cmd = [sys.executable, "-m", "evidence_pipeline.benchmark.ingest_overlap", "--child",
                       "1" if read_ahead else "0", *map(str, files)]
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                result.update(read_ahead=read_ahead, pages_per_s=pages / result["seconds"])
                out["runs"].append(result)
    best = {flag: max(r["pages_per_s"] for r in out["runs"] if r["read_ahead"] is flag) for flag in (False, True)}
    out.update(sequential_pages_per_s=best[False], overlap_pages_per_s=best[True], ratio=best[True] / best[False])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--limit", type=int, help="the first N documents (by name)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--child", choices=["0", "1"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child == "1", args.paths)
        return 0
    from evidence_pipeline.corpus import expand_paths

    files = sorted(expand_paths([Path(p) for p in args.paths]), key=lambda p: p.name)[: args.limit]
    print(json.dumps(measure(files, args.rounds), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
