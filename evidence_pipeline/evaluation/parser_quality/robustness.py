"""Section 3: robustness, speed and memory on the shared corpora.

Every PDF converts or fails alone with a reason; pages/s over one warm parser; peak RSS
(this process, and the largest 10-Q in a fresh one); RSS growth across 50 conversions;
10-Q income statements and balance sheets found as tables with their row labels.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evidence_pipeline.errors import ParseError
from evidence_pipeline.evaluation.parser_quality.memory import (
    current_rss_mb,
    fresh_process_probe,
    own_peak_rss_mb,
    peak_rss_mb,
)
from evidence_pipeline.evaluation.parser_quality.metrics import normalise
from evidence_pipeline.evaluation.parser_quality.models import (
    FileResult,
    MemoryGrowth,
    RobustnessSection,
    Speed,
    StatementFinding,
)
from evidence_pipeline.records import ParsedDoc, Table

GROWTH_RUNS = 50
GROWTH_FIRST = 5
REVENUE_LABEL = re.compile(r"^(total\s+)?(net\s+)?(sales|revenues?)(\s*\(\d+\))?:?$")
ASSETS_LABEL = re.compile(r"^total\s+assets(\s*\(\d+\))?:?$")


def timed_parse(parse: Callable[[Path], ParsedDoc], path: Path, corpus: str) -> tuple[FileResult, ParsedDoc | None]:
    """Parse one file; any failure is recorded with its reason and does not stop the run."""
    wall, cpu = time.perf_counter(), time.process_time()
    doc, error = None, None
    try:
        doc = parse(path)
    except ParseError as exc:
        error = exc.reason
    except Exception as exc:  # noqa: BLE001 - an unexpected type is itself a finding
        error = f"unexpected {type(exc).__name__} (not a ParseError): {exc}"
    res = FileResult(
        corpus=corpus,
        name=path.name,
        ok=doc is not None,
        pages=doc.n_pages if doc else 0,
        seconds=time.perf_counter() - wall,
        cpu_seconds=time.process_time() - cpu,
        tables=len(doc.tables) if doc else 0,
        error=error,
    )
    return res, doc


def row_labels(table: Table) -> list[str]:
    """Normalised texts of the body rows' first column."""
    return [normalise(r[0]) for r in table.grid()[table.header_rows :] if r and r[0].strip()]


def statement_check(doc: ParsedDoc) -> StatementFinding:
    """Is there a table whose row labels include a revenue total, and one with total assets?"""
    found: dict[str, str | None] = {}
    for key, pattern in (("revenue", REVENUE_LABEL), ("total_assets", ASSETS_LABEL)):
        hit = next((t for t in doc.tables if any(pattern.match(x) for x in row_labels(t))), None)
        if hit is None:
            found[key] = None
            continue
        # a statement split into several tables on its page still passes; the count shows it
        n = sum(t.page == hit.page for t in doc.tables)
        found[key] = f"p{hit.page} {hit.n_rows}x{hit.n_cols}" + (f" (1 of {n} on page)" if n > 1 else "")
    return StatementFinding(**found)


def memory_growth(parse: Callable[[Path], ParsedDoc], path: Path, runs: int = GROWTH_RUNS, first: int = GROWTH_FIRST) -> MemoryGrowth:
    """RSS after ``first`` and after ``runs`` conversions of the same file (gc before each reading)."""
    marks = {}
    for i in range(1, runs + 1):
        parse(path)
        if i in (first, runs):
            gc.collect()
            marks[i] = current_rss_mb()
    return MemoryGrowth(
        file=path.name,
        runs=runs,
        first=first,
        rss_after_first_mb=round(marks[first], 1),
        rss_after_last_mb=round(marks[runs], 1),
        growth_mb=round(marks[runs] - marks[first], 1),
    )


def robustness_section(
    parse: Callable[[Path], ParsedDoc],
    corpora: Sequence[Path],
    extra_results: Sequence[FileResult] = (),
    growth_pdf: Path | None = None,
    rss_probe: bool = True,
) -> RobustnessSection:
    """``extra_results``: timings of shared-corpus files already parsed by the same parser."""
    growth = memory_growth(parse, growth_pdf) if growth_pdf is not None else None
    results: list[FileResult] = []
    statements: dict[str, StatementFinding] = {}
    sec_pages: dict[Path, int] = {}
    for root in corpora:
        root = Path(root)
        folder = root / "pdfs" if (root / "pdfs").is_dir() else root
        for path in sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".pdf"):
            res, doc = timed_parse(parse, path, root.name)
            results.append(res)
            if doc is not None and "10q" in root.name.lower():
                statements[path.name] = statement_check(doc)
                sec_pages[path] = doc.n_pages
    timed = [*extra_results, *results]
    pages = sum(r.pages for r in timed if r.ok)
    seconds = sum(r.seconds for r in timed)
    cpu = sum(r.cpu_seconds for r in timed)
    probe = None
    if rss_probe and sec_pages:
        largest = max(sec_pages, key=lambda p: (sec_pages[p], p.stat().st_size))
        probe = fresh_process_probe(largest)
    return RobustnessSection(
        files=results,
        ok=sum(r.ok for r in results),
        failed=sum(not r.ok for r in results),
        failures=[f"{r.corpus}/{r.name}: {r.error}" for r in results if not r.ok],
        speed=Speed(
            files=len(timed),
            pages=pages,
            seconds=round(seconds, 1),
            pages_per_s=round(pages / seconds, 2) if seconds else None,
            cpu_s_per_page=round(cpu / pages, 3) if pages else None,
        ),
        peak_rss_mb_this_process=round(peak_rss_mb(), 1),
        peak_rss_mb_this_process_vmhwm=round(own_peak_rss_mb(), 1),
        largest_10q=probe,
        memory_growth=growth,
        statements=statements,
    )
