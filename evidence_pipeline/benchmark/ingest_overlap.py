"""End-to-end ingest with and without parse/embed overlap, in the same run.

``python -m evidence_pipeline.benchmark.ingest_overlap DIR [--limit N] [--rounds R]``

Each measurement is a fresh process ingesting DIR's documents into a fresh store through
``orchestration.runner.ingest_paths`` (the Dagster job, as ``evidence-pipeline ingest`` runs
it), once with ``read_ahead=False`` (parse, then embed, one after the other) and once with
``read_ahead=True`` (the parser's worker process parses the next document while this one is
embedded and written). The two alternate; pages/s is pages over wall time, model loading
and the parser's start-up included (both pay them alike).

``--joint`` adds a third run in each round: overlap, with every child embedded whole
(``EVIDENCE_CHILD_VECTORS=joint``) instead of its prefix and text
apart (``mixed``, the default; ``Embedder.embed_children``).
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

from evidence_pipeline.benchmark.timing import page_count


def _child(read_ahead: bool, files: list[str]) -> None:
    from evidence_pipeline.orchestration.definitions import defs
    from evidence_pipeline.orchestration.runner import default_instance, ingest_paths

    start = time.perf_counter()
    summary = ingest_paths(files, defs, default_instance(), read_ahead=read_ahead)
    print(
        json.dumps(
            {"seconds": time.perf_counter() - start, "failed": len(summary.failures), "children": sum(o.children for o in summary.outcomes)}
        )
    )


def measure(files: list[Path], rounds: int = 1, joint: bool = False) -> dict:
    pages = page_count(files)
    out: dict = {"documents": len(files), "pages": pages, "runs": []}
    plan = [(False, "mixed"), (True, "mixed")] + ([(True, "joint")] if joint else [])
    for r in range(rounds):
        for read_ahead, vectors in plan if r % 2 == 0 else plan[::-1]:
            with tempfile.TemporaryDirectory(prefix="evidence-overlap-") as tmp:
                env = {
                    **os.environ,
                    "EVIDENCE_STORE_PATH": str(Path(tmp) / "store"),
                    "HF_HUB_OFFLINE": "1",
                    "EVIDENCE_CHILD_VECTORS": vectors,
                }
                env.pop("DAGSTER_HOME", None)  # an ephemeral instance per run
                cmd = [
                    sys.executable,
                    "-m",
                    "evidence_pipeline.benchmark.ingest_overlap",
                    "--child",
                    "1" if read_ahead else "0",
                    *map(str, files),
                ]
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
                result = json.loads(proc.stdout.strip().splitlines()[-1])
                result.update(read_ahead=read_ahead, child_vectors=vectors, pages_per_s=pages / result["seconds"])
                out["runs"].append(result)

    def best(read_ahead: bool, vectors: str) -> float:
        return max(r["pages_per_s"] for r in out["runs"] if r["read_ahead"] is read_ahead and r["child_vectors"] == vectors)

    out.update(sequential_pages_per_s=best(False, "mixed"), overlap_pages_per_s=best(True, "mixed"))
    out["ratio"] = out["overlap_pages_per_s"] / out["sequential_pages_per_s"]
    if joint:
        out["joint_pages_per_s"] = best(True, "joint")
        out["ratio_to_joint"] = out["overlap_pages_per_s"] / out["joint_pages_per_s"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--limit", type=int, help="the first N documents (by name)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--joint", action="store_true", help="also ingest with every child embedded whole (the baseline)")
    parser.add_argument("--child", choices=["0", "1"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child == "1", args.paths)
        return 0
    from evidence_pipeline.corpus import expand_paths

    files = sorted(expand_paths([Path(p) for p in args.paths]), key=lambda p: p.name)[: args.limit]
    print(json.dumps(measure(files, args.rounds, args.joint), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
