"""Wall clock, CPU time and machine load: on a shared machine a figure means little without its load."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass
class Span:
    wall: float = 0.0
    cpu: float = 0.0  # this process, all threads: cpu > wall means threads ran in parallel


@contextmanager
def timed() -> Iterator[Span]:
    span = Span()
    w, c = time.perf_counter(), time.process_time()
    try:
        yield span
    finally:
        span.wall = time.perf_counter() - w
        span.cpu = time.process_time() - c


def load_1min() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default), without numpy."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def page_count(files) -> int:
    """Pages of the PDFs ``files``, read with pypdfium2 (the denominator of every pages/s figure)."""
    import pypdfium2

    total = 0
    for f in files:
        pdf = pypdfium2.PdfDocument(str(f))
        total += len(pdf)
        pdf.close()
    return total
