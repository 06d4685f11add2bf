"""The console form of a ``ParserQualityReport``: one table per section, goals marked."""

from __future__ import annotations

from evidence_pipeline.evaluation.parser_quality.models import (
    CoverageSection,
    DoclingTestsSection,
    GeneratedSection,
    ParserQualityReport,
    RobustnessSection,
    WordPlace,
)


def _f(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _goal(v: float | None, goal: float, higher: bool = True) -> str:
    if v is None:
        return "n/a"
    ok = v >= goal if higher else v <= goal
    return f"{'ok  ' if ok else 'MISS'} (goal {'>=' if higher else '<='} {goal})"


def _of(num: int, den: int) -> str:
    return f"{num}/{den}"


def _docling_tests(d: DoclingTestsSection) -> list[str]:
    out = ["", "1. Docling test PDFs vs Docling's ML output (tables matched by page + IoU >= 0.5)"]
    out.append(f"{'document':28} {'truth':>5} {'ours':>5} {'match':>5} {'capt':>7} {'cell P':>7} {'cell R':>7} {'cell F1':>7}")
    for r in d.docs:
        out.append(
            f"{r.doc[:28]:28} {r.n_truth:>5} {r.n_pred:>5} {r.matched:>5} "
            f"{_of(r.captions_ok, r.captions_truth):>7} {_f(r.cell_precision):>7} {_f(r.cell_recall):>7} {_f(r.cell_f1):>7}"
        )
    t, g = d.totals, d.goals
    out.append(f"  table recall     {_f(t.recall)}  ({t.tables_matched}/{t.tables_truth})  {_goal(t.recall, g.recall)}")
    out.append(f"    without Docling's table-of-contents 'document_index': {_f(t.recall_data_tables)} (of {t.data_tables_truth})")
    out.append(f"  table precision  {_f(t.precision)}  ({t.tables_matched}/{t.tables_pred})")
    out.append(f"  caption links    {_f(t.caption_links)}  (of {t.captions_truth} captioned)  {_goal(t.caption_links, g.caption_links)}")
    out.append(
        f"  cell-text F1     {_f(t.cell_f1)}  (P {_f(t.cell_precision)}, R {_f(t.cell_recall)}, micro)  {_goal(t.cell_f1, g.cell_f1)}"
    )
    out += [f"    {r.doc}: {m}" for r in d.docs for m in r.misses]
    return out


def _generated(d: GeneratedSection) -> list[str]:
    out = ["", f"2. Generated SOP corpus ({len(d.docs)} documents, exact truth)"]
    out.append(f"{'document':14} {'tables':>8} {'capt':>5} {'head':>5} {'body F1':>7} {'notes':>6} {'sections':>8} {'contin':>6}")
    for r in d.docs:
        out.append(
            f"{r.doc[:14]:14} {_of(r.tables_matched, r.tables_truth):>8} {r.captions_ok:>5} {r.headers_ok:>5} "
            f"{_f(r.body_cell_f1):>7} {_of(r.footnotes_ok, r.footnotes_truth):>6} "
            f"{_of(r.sections_ok, r.sections_truth):>8} {_of(r.continues_ok, r.continues_truth):>6}"
        )
    for name, value in d.totals:
        out.append(f"  {name:23} {_f(value)}  {_goal(value, d.goal)}")
    out += [f"    {r.doc}: {m}" for r in d.docs for m in r.misses]
    return out


def _robustness(d: RobustnessSection) -> list[str]:
    out = ["", f"3. Robustness and speed: {d.ok} converted, {d.failed} failed"]
    out += [f"  FAILED {line}" for line in d.failures]
    out.append(f"{'corpus':20} {'file':30} {'pages':>5} {'s':>7} {'pages/s':>7} {'tables':>6}")
    for r in d.files:
        rate = r.pages / r.seconds if r.ok and r.seconds else None
        out.append(f"{r.corpus[:20]:20} {r.name[:30]:30} {r.pages:>5} {r.seconds:>7.1f} {_f(rate, 2):>7} {r.tables:>6}")
    s = d.speed
    out.append(
        f"  speed: {s.pages} pages in {s.seconds} s over {s.files} shared-corpus files = {_f(s.pages_per_s, 2)} pages/s "
        f"{_goal(s.pages_per_s, s.goal_pages_per_s)}; CPU {_f(s.cpu_s_per_page)} s/page"
    )
    out.append(
        f"  peak RSS of this process (all sections): ru_maxrss {d.peak_rss_mb_this_process} MB, VmHWM {d.peak_rss_mb_this_process_vmhwm} MB"
    )
    p = d.largest_10q
    if p is not None and p.error is not None:
        out.append(f"  largest 10-Q in a fresh process: {p.file} FAILED {p.error}")
    elif p is not None:
        out.append(
            f"  largest 10-Q (most pages) in a fresh process: {p.file} ({p.pages} pages, {p.seconds} s incl. imports) peak RSS (VmHWM) {p.peak_rss_mb} MB "
            f"{_goal(p.peak_rss_mb, p.goal_mb, higher=False)}"
        )
    g = d.memory_growth
    if g is not None:
        out.append(
            f"  memory over {g.runs} conversions of {g.file}: after_{g.first}_mb {g.rss_after_first_mb} MB, "
            f"after_{g.runs}_mb {g.rss_after_last_mb} MB; growth {g.growth_mb} MB {_goal(g.growth_mb, g.goal_mb, higher=False)}"
        )
    if d.statements:
        out.append("  10-Q statements as tables with row labels (revenue total / total assets):")
        for name, found in d.statements.items():
            out.append(f"    {name:24} revenue: {found.revenue or 'NOT FOUND':27} total assets: {found.total_assets or 'NOT FOUND'}")
        n = len(d.statements)
        rev = sum(bool(f.revenue) for f in d.statements.values())
        ta = sum(bool(f.total_assets) for f in d.statements.values())
        out.append(f"    found: revenue {rev}/{n}, total assets {ta}/{n}")
    return out


def place_line(p: WordPlace) -> str:
    """``page N (l, t, r, b): word``, the box in PDF points from the page's top-left corner."""
    l, t, r, b = p.box
    return f"page {p.page} ({l:.1f}, {t:.1f}, {r:.1f}, {b:.1f}): {p.word}"


def _coverage(c: CoverageSection) -> list[str]:
    out = [
        "",
        "4. Word coverage: distinct words of pdfium's text found in the evidence units",
        "   (found: in a unit or, column furn., only in lines recorded as page furniture;",
        "   unread.: words pdfium could not read (no Unicode for a glyph, or a glyph it left out), neither found nor lost,",
        "   outside words and share;",
        "   under a file, where pdfium's text holds its lost words: page (l, t, r, b) in points from the top-left)",
    ]
    out.append(f"{'document':44} {'words':>6} {'found':>6} {'furn.':>6} {'unread.':>7} {'share':>7}  lost (first 30)")
    for f in c.files:
        if f.error:
            unread = f.unreadable if f.unreadable else "-"
            out.append(f"{f.file[:44]:44} {'-':>6} {'-':>6} {'-':>6} {unread:>7} {'-':>7}  {f.error}")
            continue
        more = f" (+{f.n_lost - len(f.lost)} more)" if f.n_lost > len(f.lost) else ""
        out.append(
            f"{f.file[:44]:44} {f.words:>6} {f.covered:>6} {f.furniture:>6} {f.unreadable:>7} {_f(f.share, 4):>7}  {' '.join(f.lost)}{more}"
        )
        out += [f"    {place_line(p)}" for p in f.lost_at]
        if f.unreadable:
            more = f" (+{f.unreadable - len(f.unreadable_shown)} more)" if f.unreadable > len(f.unreadable_shown) else ""
            out.append(f"    unreadable by pdfium, not scored: {' '.join(f.unreadable_shown)}{more}")
    folders = c.folders()
    if len(folders) > 1:
        for name, part in folders.items():
            out.append(
                f"  {name}: mean {_f(part.mean, 4)}, worst {_f(part.worst, 4)} ({len(part.files)} files; "
                f"{part.unreadable} words unreadable by pdfium)"
            )
    out.append(
        f"  mean {_f(c.mean, 4)} {_goal(c.mean, c.goals.mean)}; worst {_f(c.worst, 4)} {_goal(c.worst, c.goals.worst)}; "
        f"{c.unreadable} words unreadable by pdfium, not scored"
    )
    return out


def render_text(report: ParserQualityReport) -> str:
    out = [
        f"parser {report.parser}; {report.cpus} CPUs; load average {report.load_avg_start} at start, "
        f"{report.load_avg_end} at end; {report.total_seconds} s in all"
    ]
    if report.warm_up is not None:
        w = report.warm_up
        out.append(f"warm-up (converter build + first parse, excluded from speed): {w.file} {w.seconds} s")
    if report.docling_tests is not None:
        out += _docling_tests(report.docling_tests)
    if report.generated is not None:
        out += _generated(report.generated)
    if report.robustness is not None:
        out += _robustness(report.robustness)
    if report.coverage is not None:
        out += _coverage(report.coverage)
    return "\n".join(out)
