"""The process ``ingest_e2e`` measures: the CLI's own ingest of a folder, cold, then its CPU, its
workers' CPU, peak memory and work counts written as JSON.

Run only as ``python -m evidence_pipeline.benchmark.cli_ingest_probe FOLDER OUT``; nothing imports
it, so the benchmark package does not import the CLI that imports it.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path


def run(folder: str, out: str) -> int:
    """The measured process: the CLI's ingest, then its own CPU, its workers' and the counts."""
    from evidence_pipeline.cli import main
    from evidence_pipeline.work import CLOCK, WORK

    started = time.perf_counter()
    code = main(["ingest", "--quiet", folder])
    seconds = time.perf_counter() - started
    from evidence_pipeline.parser import shared_parser
    from evidence_pipeline.settings import ParserSettings

    closer = getattr(shared_parser(ParserSettings.from_env()), "close", None)
    if closer is not None:
        closer()  # the worker exits and is waited for: its CPU and memory count below
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    Path(out).write_text(json.dumps({
        "code": code, "ingest_s": seconds,
        "cpu_s": me.ru_utime + me.ru_stime, "children_cpu_s": kids.ru_utime + kids.ru_stime,
        "peak_rss_mb": me.ru_maxrss / 1024, "children_peak_rss_mb": kids.ru_maxrss / 1024,
        "work": WORK.snapshot(), "stages_cpu_s": CLOCK.snapshot(),
    }))  # fmt: skip
    return code


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2]))
