"""Memory readings of this process, and the fresh-process probe.

``python -m evidence_pipeline.evaluation.parser_quality.memory FILE`` parses one file in a
new interpreter and prints one JSON line (pages, seconds, peak RSS); ``fresh_process_probe``
runs it and reads that line. A fresh process is the honest measure of what one conversion
costs: imports, converter build and the parse, nothing left over from earlier work.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from evidence_pipeline.evaluation.parser_quality.models import ProcessProbe

PROBE_MODULE = "evidence_pipeline.evaluation.parser_quality.memory"  # run with python -m


def peak_rss_mb() -> float:
    """ru_maxrss of this process, in MB (kilobytes on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def current_rss_mb() -> float:
    """Resident set size now (Linux /proc), in MB."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return peak_rss_mb()


def own_peak_rss_mb() -> float:
    """Peak RSS of this process image (VmHWM). Linux keeps ru_maxrss across fork and exec, so
    a child started from a big parent reports the parent's peak there; VmHWM starts afresh."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return peak_rss_mb()


def probe(path: Path) -> dict[str, float]:
    """Parse ``path`` with the configured parser in this process; pages, seconds and peak RSS."""
    from evidence_pipeline.parser import DoclingParser
    from evidence_pipeline.settings import ParserSettings

    started = time.perf_counter()
    doc = DoclingParser(ParserSettings.from_env()).parse(Path(path))
    return {"pages": doc.n_pages, "seconds": time.perf_counter() - started, "peak_rss_mb": own_peak_rss_mb()}


def fresh_process_probe(path: Path, timeout_s: float = 900.0) -> ProcessProbe:
    """Run ``probe`` in a new interpreter and report its peak RSS (imports included)."""
    proc = subprocess.run([sys.executable, "-m", PROBE_MODULE, str(path)], capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        return ProcessProbe(file=path.name, error=(proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1])
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return ProcessProbe(file=path.name, **{k: round(v, 1) for k, v in data.items()})


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(f"usage: python -m {PROBE_MODULE} FILE", file=sys.stderr)
        return 2
    print(json.dumps(probe(Path(args[0]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
