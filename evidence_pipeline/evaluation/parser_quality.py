"""Parser quality and speed: ``evidence-pipeline parse-quality``.

Three measurements of ``DoclingParser`` (the rule route unless Docling weights are set):

1. ``docling_tests``: tables against the DoclingDocument JSON that Docling's ML pipeline
   wrote for its own test PDFs (read with the json module, so no docling import here):
   detection precision/recall (same page, box IoU >= 0.5), caption links, cell-text F1.
2. ``generated``: the SOP corpus of ``samples`` whose truth is exact: tables, captions,
   header rows, body cells, footnote links, section headers with levels, continuations.
3. ``robustness``: every shared-corpus PDF converts or fails alone with a reason; pages/s
   over one warm parser; peak RSS (this process, and the largest 10-Q in a fresh one);
   RSS growth across 50 conversions; 10-Q income statements and balance sheets found as
   tables with their row labels.

Text comparison normalises NFKC, case, dashes and white space. Cell and caption texts
drop white space entirely: the measure is which characters land in which cell, not how
two text extractors space words.
"""

from __future__ import annotations

import gc
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from evidence_pipeline.errors import ParseError
from evidence_pipeline.records import BBox, ParsedDoc, Table

IOU_MATCH = 0.5
GOALS = {
    "docling_tests": {"recall": 0.9, "caption_links": 0.9, "cell_f1": 0.85},
    "generated": 0.95,
    "pages_per_s": 5.0,
    "peak_rss_mb": 1536.0,
    "growth_mb": 25.0,  # "no growth": allocator noise stays well under this over 45 conversions
}
GROWTH_RUNS = 50
GROWTH_FIRST = 5
REVENUE_LABEL = re.compile(r"^(total\s+)?(net\s+)?(sales|revenues?)(\s*\(\d+\))?:?$")
ASSETS_LABEL = re.compile(r"^total\s+assets(\s*\(\d+\))?:?$")

_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u00ad": ""})


def default_corpora_root() -> Path:
    """``shared/corpora`` beside the repository (``../shared/corpora`` from its root)."""
    return Path(__file__).resolve().parents[3] / "shared" / "corpora"


# --------------------------------------------------------------------------- metrics


def normalise(text: str | None) -> str:
    t = unicodedata.normalize("NFKC", text or "").translate(_DASHES).casefold()
    return " ".join(t.split())


def text_key(text: str | None) -> str:
    """Normalised text without any white space (cell and caption comparison)."""
    return "".join(normalise(text).split())


def iou(a: BBox, b: BBox) -> float:
    w = min(a.r, b.r) - max(a.l, b.l)
    h = min(a.b, b.b) - max(a.t, b.t)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = a.width * a.height + b.width * b.height - inter
    return inter / union if union > 0 else 0.0


def match_boxes(
    truth: Sequence[tuple[int | None, BBox | None]],
    pred: Sequence[tuple[int | None, BBox | None]],
    threshold: float = IOU_MATCH,
) -> dict[int, int]:
    """Greedy one-to-one matching by IoU on the same page: ``{truth index: pred index}``."""
    pairs = []
    for i, (tp, tb) in enumerate(truth):
        for j, (pp, pb) in enumerate(pred):
            if tp is None or tp != pp or tb is None or pb is None:
                continue
            v = iou(tb, pb)
            if v >= threshold:
                pairs.append((v, i, j))
    return greedy_match(pairs)


def greedy_match(pairs: list[tuple[float, int, int]]) -> dict[int, int]:
    """One-to-one matching, best-scoring (score, truth index, predicted index) pairs first."""
    out: dict[int, int] = {}
    used: set[int] = set()
    for _, i, j in sorted(pairs, reverse=True):
        if i not in out and j not in used:
            out[i] = j
            used.add(j)
    return out


@dataclass
class Counts:
    """True positives against the sizes of the truth and predicted multisets."""

    tp: int = 0
    n_truth: int = 0
    n_pred: int = 0

    def add(self, other: "Counts") -> "Counts":
        return Counts(self.tp + other.tp, self.n_truth + other.n_truth, self.n_pred + other.n_pred)

    @property
    def precision(self) -> float | None:
        return self.tp / self.n_pred if self.n_pred else None

    @property
    def recall(self) -> float | None:
        return self.tp / self.n_truth if self.n_truth else None

    @property
    def f1(self) -> float | None:
        if not self.n_truth and not self.n_pred:
            return None
        return 2 * self.tp / (self.n_truth + self.n_pred)


def multiset_counts(truth: Iterable[str], pred: Iterable[str]) -> Counts:
    """Overlap of two multisets of texts, compared by ``text_key``; empty texts are dropped."""
    t = Counter(k for k in map(text_key, truth) if k)
    p = Counter(k for k in map(text_key, pred) if k)
    return Counts(sum((t & p).values()), sum(t.values()), sum(p.values()))


def same_caption(truth: str | None, pred: str | None) -> bool:
    return bool(text_key(truth)) and text_key(truth) == text_key(pred)


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


# --------------------------------------------------------------------------- 1. Docling's test PDFs


@dataclass
class GroundTable:
    label: str  # "table" or "document_index" (Docling files a table of contents as a table)
    page: int | None
    bbox: BBox | None
    caption: str | None
    cells: list[str]


def load_groundtruth(path: Path) -> list[GroundTable]:
    """Tables of a DoclingDocument JSON, boxes turned to top-left origin with the page height."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    texts = {t["self_ref"]: t.get("text", "") for t in doc.get("texts", [])}
    heights = {int(k): v["size"]["height"] for k, v in doc.get("pages", {}).items()}
    out = []
    for t in doc.get("tables", []):
        page, box = None, None
        if t.get("prov"):
            prov = t["prov"][0]
            page, b = prov["page_no"], prov["bbox"]
            if b.get("coord_origin", "TOPLEFT") == "BOTTOMLEFT":
                h = heights[page]
                box = BBox(l=b["l"], t=h - b["t"], r=b["r"], b=h - b["b"])
            else:
                box = BBox(l=b["l"], t=b["t"], r=b["r"], b=b["b"])
        caption = " ".join(texts.get(c["$ref"], "") for c in t.get("captions", [])).strip() or None
        cells = [c.get("text", "") for c in t.get("data", {}).get("table_cells", [])]
        out.append(GroundTable(t.get("label", "table"), page, box, caption, cells))
    return out


@dataclass
class DoclingTestRow:
    doc: str
    n_truth: int
    n_pred: int
    matched: int
    captions_truth: int
    captions_ok: int
    cells: Counts
    misses: list[str] = field(default_factory=list)
    n_data: int = 0  # truth tables labelled "table" (not a table of contents)
    matched_data: int = 0


def score_docling_test(doc: ParsedDoc, truth: list[GroundTable]) -> DoclingTestRow:
    pred = doc.tables
    m = match_boxes([(g.page, g.bbox) for g in truth], [(t.page, t.bbox) for t in pred])
    cells = Counts()
    caps_truth = caps_ok = 0
    misses = []
    for i, g in enumerate(truth):
        j = m.get(i)
        where = f"{g.label} p{g.page}" + (f" {g.caption[:40]!r}" if g.caption else "")
        if j is None:
            best = max((iou(g.bbox, t.bbox) for t in pred if t.page == g.page and g.bbox and t.bbox), default=0.0)
            misses.append(f"missed {where} (best IoU {best:.2f})")
        else:
            cells = cells.add(multiset_counts(g.cells, [c.text for c in pred[j].cells]))
        if g.caption:
            caps_truth += 1
            if j is not None and same_caption(g.caption, pred[j].caption):
                caps_ok += 1
            elif j is not None:
                misses.append(f"caption of {where}: got {pred[j].caption!r}")
    matched_pred = set(m.values())
    for j, t in enumerate(pred):
        if j not in matched_pred:
            misses.append(f"extra table p{t.page} {t.n_rows}x{t.n_cols} {(t.caption or '')[:40]!r}")
    n_data = sum(g.label == "table" for g in truth)
    matched_data = sum(truth[i].label == "table" for i in m)
    return DoclingTestRow(doc.doc_id, len(truth), len(pred), len(m), caps_truth, caps_ok, cells, misses, n_data, matched_data)


def docling_tests_section(parse: Callable[[Path], ParsedDoc], root: Path) -> dict:
    rows: list[DoclingTestRow] = []
    for gt in sorted((root / "groundtruth").glob("*.json")):
        pdf = root / "pdfs" / f"{gt.stem}.pdf"
        if not pdf.is_file():
            continue
        truth = load_groundtruth(gt)
        try:
            rows.append(score_docling_test(parse(pdf), truth))
        except ParseError as exc:
            failed = ParsedDoc(doc_id=pdf.stem, source=str(pdf), title="", n_pages=0, content_hash="", parser="")
            rows.append(score_docling_test(failed, truth))
            rows[-1].misses.insert(0, f"FAILED: {exc.reason}")
    cells = Counts()
    for r in rows:
        cells = cells.add(r.cells)
    n_truth, n_pred, matched = (sum(getattr(r, k) for r in rows) for k in ("n_truth", "n_pred", "matched"))
    data_truth = sum(r.n_data for r in rows)
    data_matched = sum(r.matched_data for r in rows)
    caps_truth, caps_ok = sum(r.captions_truth for r in rows), sum(r.captions_ok for r in rows)
    return {
        "docs": [
            asdict(r) | {"cell_f1": r.cells.f1, "cell_precision": r.cells.precision, "cell_recall": r.cells.recall}
            for r in rows
        ],
        "totals": {
            "tables_truth": n_truth,
            "tables_pred": n_pred,
            "tables_matched": matched,
            "recall": ratio(matched, n_truth),
            "recall_data_tables": ratio(data_matched, data_truth),
            "data_tables_truth": data_truth,
            "precision": ratio(matched, n_pred),
            "caption_links": ratio(caps_ok, caps_truth),
            "captions_truth": caps_truth,
            "cell_precision": cells.precision,
            "cell_recall": cells.recall,
            "cell_f1": cells.f1,
        },
        "goals": GOALS["docling_tests"],
    }


# --------------------------------------------------------------------------- 2. generated SOPs


def _grid_texts(rows: Iterable[Sequence[str]]) -> list[str]:
    return [x for row in rows for x in row]


def _match_generated(truth_tables, heads: list[Table]) -> dict[int, int]:
    """Truth table -> parsed head table on its first page with the most shared cell texts."""
    pairs = []
    for i, want in enumerate(truth_tables):
        texts = _grid_texts([*want.header_rows, *want.body_rows])
        for j, t in enumerate(heads):
            if t.page is not None and want.pages and t.page != want.pages[0]:
                continue
            c = multiset_counts(texts, _grid_texts(t.grid()))
            # a quarter of the truth cells: the first part of a long table holds only some rows
            if c.tp and c.tp >= 0.25 * min(c.n_truth, c.n_pred):
                pairs.append((c.tp, i, j))
    return greedy_match(pairs)


@dataclass
class GeneratedRow:
    doc: str
    tables_truth: int = 0
    tables_pred: int = 0
    tables_matched: int = 0
    captions_ok: int = 0
    headers_ok: int = 0
    body: Counts = field(default_factory=Counts)
    footnotes_truth: int = 0
    footnotes_ok: int = 0
    sections_truth: int = 0
    sections_ok: int = 0
    continues_truth: int = 0
    continues_ok: int = 0
    continues_false: int = 0
    misses: list[str] = field(default_factory=list)


def score_generated(doc: ParsedDoc, truth) -> GeneratedRow:
    """One parsed SOP against its ``SampleTruth``."""
    row = GeneratedRow(truth.doc_id)
    heads = [t for t in doc.tables if t.continues is None]
    parts = {t.id: [t, *(p for p in doc.tables if p.continues == t.id)] for t in heads}
    m = _match_generated(truth.tables, heads)
    row.tables_truth, row.tables_pred, row.tables_matched = len(truth.tables), len(heads), len(m)
    for i, want in enumerate(truth.tables):
        row.footnotes_truth += len(want.footnotes)
        row.continues_truth += int(want.continues)
        j = m.get(i)
        body_truth = _grid_texts(want.body_rows)
        if j is None:
            row.misses.append(f"missed {want.label} p{want.pages[0]} {want.caption[:40]!r}")
            row.body = row.body.add(multiset_counts(body_truth, []))
            continue
        head = heads[j]
        mine = parts[head.id]
        if same_caption(want.caption, head.caption):
            row.captions_ok += 1
        else:
            row.misses.append(f"caption of {want.label}: got {head.caption!r}")
        header = [[text_key(x) for x in r] for r in head.grid()[: head.header_rows]]
        if header == [[text_key(x) for x in r] for r in want.header_rows]:
            row.headers_ok += 1
        else:
            row.misses.append(f"header of {want.label}: {head.header_rows} rows {head.grid()[: head.header_rows]} vs {want.header_rows}")
        body = [x for p in mine for x in _grid_texts(p.grid()[p.header_rows :])]
        c = multiset_counts(body_truth, body)
        row.body = row.body.add(c)
        if c.tp < c.n_truth or c.tp < c.n_pred:
            row.misses.append(f"body of {want.label}: {c.tp} of {c.n_truth} truth cells, {c.n_pred} parsed")
        notes = [normalise(f) for p in mine for f in p.footnotes]
        for marker, text in want.footnotes.items():
            if any(n.startswith(normalise(marker)) and normalise(text) in n for n in notes):
                row.footnotes_ok += 1
            else:
                row.misses.append(f"footnote {marker} of {want.label} not linked (got {[p.footnotes for p in mine]})")
        if want.continues and len(mine) > 1:
            row.continues_ok += 1
        elif want.continues:
            row.misses.append(f"{want.label} crosses a page but no part continues it")
    matched_heads = {heads[j].id for j in m.values()}
    for t in heads:
        if t.id not in matched_heads:
            row.misses.append(f"extra table p{t.page} {t.n_rows}x{t.n_cols} {(t.caption or '')[:40]!r}")
    for t in doc.tables:
        if t.continues is not None:
            want = next((truth.tables[i] for i, j in m.items() if heads[j].id == t.continues), None)
            if want is None or not want.continues:
                row.continues_false += 1
                row.misses.append(f"{t.id} p{t.page} marked as continuing {t.continues}")
    heads_found = {(text_key(b.text), b.level) for b in doc.blocks if b.label == "section_header"}
    row.sections_truth = len(truth.sections)
    for s in truth.sections:
        if (text_key(f"{s.number} {s.title}"), s.level) in heads_found:
            row.sections_ok += 1
        else:
            row.misses.append(f"section {s.number} {s.title!r} (level {s.level}) not found with its level")
    return row


def generated_section(parse: Callable[[Path], ParsedDoc], pdfs: Sequence[Path], truth_dir: Path) -> dict:
    from evidence_pipeline.tools.samples.truth import SampleTruth

    rows = []
    for pdf in pdfs:
        truth = SampleTruth.model_validate_json((Path(truth_dir) / f"{pdf.stem}.json").read_text(encoding="utf-8"))
        rows.append(score_generated(parse(pdf), truth))
    s = lambda k: sum(getattr(r, k) for r in rows)  # noqa: E731
    body = Counts()
    for r in rows:
        body = body.add(r.body)
    cont_pred = s("continues_ok") + s("continues_false")
    totals = {
        "table_recall": ratio(s("tables_matched"), s("tables_truth")),
        "table_precision": ratio(s("tables_matched"), s("tables_pred")),
        "caption_accuracy": ratio(s("captions_ok"), s("tables_truth")),
        "header_accuracy": ratio(s("headers_ok"), s("tables_truth")),
        "body_cell_f1": body.f1,
        "footnote_links": ratio(s("footnotes_ok"), s("footnotes_truth")),
        "section_recall": ratio(s("sections_ok"), s("sections_truth")),
        "continuation_recall": ratio(s("continues_ok"), s("continues_truth")),
        "continuation_precision": ratio(s("continues_ok"), cont_pred),
    }
    counts = {k: s(k) for k in ("tables_truth", "tables_pred", "tables_matched", "footnotes_truth", "sections_truth", "continues_truth")}
    return {
        "docs": [asdict(r) | {"body_cell_f1": r.body.f1} for r in rows],
        "totals": totals,
        "counts": counts,
        "goal": GOALS["generated"],
    }


# --------------------------------------------------------------------------- 3. robustness and speed


def current_rss_mb() -> float:
    """Resident set size now (Linux /proc), in MB."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return peak_rss_mb()


def peak_rss_mb() -> float:
    """ru_maxrss of this process, in MB (kilobytes on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


@dataclass
class FileResult:
    corpus: str
    name: str
    ok: bool
    pages: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    tables: int = 0
    error: str | None = None


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
        corpus,
        path.name,
        doc is not None,
        doc.n_pages if doc else 0,
        time.perf_counter() - wall,
        time.process_time() - cpu,
        len(doc.tables) if doc else 0,
        error,
    )
    return res, doc


def row_labels(table: Table) -> list[str]:
    """Normalised texts of the body rows' first column."""
    return [normalise(r[0]) for r in table.grid()[table.header_rows :] if r and r[0].strip()]


def statement_check(doc: ParsedDoc) -> dict:
    """Is there a table whose row labels include a revenue total, and one with total assets?"""
    out = {}
    for key, pattern in (("revenue", REVENUE_LABEL), ("total_assets", ASSETS_LABEL)):
        hit = next((t for t in doc.tables if any(pattern.match(x) for x in row_labels(t))), None)
        if hit is None:
            out[key] = None
            continue
        # a statement split into several tables on its page still passes; the count shows it
        n = sum(t.page == hit.page for t in doc.tables)
        out[key] = f"p{hit.page} {hit.n_rows}x{hit.n_cols}" + (f" (1 of {n} on page)" if n > 1 else "")
    return out


def memory_growth(parse: Callable[[Path], ParsedDoc], path: Path, runs: int = GROWTH_RUNS, first: int = GROWTH_FIRST) -> dict:
    marks = {}
    for i in range(1, runs + 1):
        parse(path)
        if i in (first, runs):
            gc.collect()
            marks[i] = current_rss_mb()
    return {
        "file": path.name,
        "runs": runs,
        f"rss_after_{first}_mb": round(marks[first], 1),
        f"rss_after_{runs}_mb": round(marks[runs], 1),
        "growth_mb": round(marks[runs] - marks[first], 1),
        "goal_mb": GOALS["growth_mb"],
    }


_PROBE = """
import json, sys, time
from pathlib import Path
from evidence_pipeline.evaluation.parser_quality import own_peak_rss_mb
from evidence_pipeline.parser import DoclingParser
from evidence_pipeline.settings import ParserSettings
t = time.perf_counter()
doc = DoclingParser(ParserSettings.from_env()).parse(Path(sys.argv[1]))
print(json.dumps({"pages": doc.n_pages, "seconds": time.perf_counter() - t, "peak_rss_mb": own_peak_rss_mb()}))
"""


def fresh_process_peak_rss(path: Path, timeout_s: float = 900.0) -> dict:
    """Parse one file in a new interpreter and report its peak RSS (imports included)."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path)], capture_output=True, text=True, timeout=timeout_s
    )
    if proc.returncode != 0:
        return {"file": path.name, "error": (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1]}
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"file": path.name, **{k: round(v, 1) for k, v in data.items()}, "goal_mb": GOALS["peak_rss_mb"]}


def robustness_section(
    parse: Callable[[Path], ParsedDoc],
    corpora: Sequence[Path],
    extra_results: Sequence[FileResult] = (),
    growth_pdf: Path | None = None,
    rss_probe: bool = True,
) -> dict:
    """``extra_results``: timings of shared-corpus files already parsed by the same parser."""
    growth = memory_growth(parse, growth_pdf) if growth_pdf is not None else None
    results: list[FileResult] = []
    statements: dict[str, dict] = {}
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
        probe = fresh_process_peak_rss(largest)
    return {
        "files": [asdict(r) for r in results],
        "ok": sum(r.ok for r in results),
        "failed": sum(not r.ok for r in results),
        "failures": [f"{r.corpus}/{r.name}: {r.error}" for r in results if not r.ok],
        "speed": {
            "files": len(timed),
            "pages": pages,
            "seconds": round(seconds, 1),
            "pages_per_s": round(pages / seconds, 2) if seconds else None,
            "cpu_s_per_page": round(cpu / pages, 3) if pages else None,
            "goal_pages_per_s": GOALS["pages_per_s"],
        },
        "peak_rss_mb_this_process": round(peak_rss_mb(), 1),
        "peak_rss_mb_this_process_vmhwm": round(own_peak_rss_mb(), 1),
        "largest_10q": probe,
        "memory_growth": growth,
        "statements": statements,
    }


# --------------------------------------------------------------------------- the whole report


def run_report(
    *,
    docling_tests: Path | None = None,
    generated: bool = False,
    corpora: Sequence[Path] = (),
    parser=None,
    progress: Callable[[str], None] = lambda msg: None,
) -> dict:
    """Run the chosen sections with one parser instance; the first parse is the warm-up."""
    if parser is None:
        from evidence_pipeline.parser import DoclingParser
        from evidence_pipeline.settings import ParserSettings

        parser = DoclingParser(ParserSettings.from_env())
    shared_results: list[FileResult] = []

    def parse(path: Path) -> ParsedDoc:
        progress(f"parsing {path.name}")
        return parser.parse(path)

    def parse_timed(path: Path) -> ParsedDoc:
        res, doc = timed_parse(parse, path, path.parent.parent.name)
        shared_results.append(res)
        if doc is None:
            raise ParseError(str(path), res.error or "failed")
        return doc

    report: dict = {
        "parser": getattr(parser, "name", type(parser).__name__),
        "cpus": os.cpu_count(),
        "load_avg_start": [round(x, 2) for x in os.getloadavg()],
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="parse-quality-") as tmp:
        gen_pdfs: list[Path] = []
        if generated or corpora:
            from evidence_pipeline.tools.samples.corpus import generate_corpus

            gen_pdfs = generate_corpus(Path(tmp) / "corpus")
        # Warm-up and the 50-conversion memory check use a one- or two-page PDF.
        small = Path(docling_tests) / "pdfs" / "2305.03393v1-pg9.pdf" if docling_tests else None
        tiny = min(gen_pdfs, key=lambda p: p.stat().st_size) if gen_pdfs else None
        warm = small if small is not None and small.is_file() else tiny
        if warm is not None:
            t = time.perf_counter()
            res, _ = timed_parse(parse, warm, "warm-up")
            report["warm_up"] = {"file": warm.name, "seconds": round(time.perf_counter() - t, 1), "ok": res.ok}
        if docling_tests is not None:
            report["docling_tests"] = docling_tests_section(parse_timed, Path(docling_tests))
        if generated:
            report["generated"] = generated_section(parse, gen_pdfs, Path(tmp) / "truth")
        if corpora:
            report["robustness"] = robustness_section(parse, corpora, shared_results, growth_pdf=tiny)
    report["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    report["total_seconds"] = round(time.perf_counter() - started, 1)
    return report


# --------------------------------------------------------------------------- text rendering


def _f(v, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def _goal(v, goal, higher: bool = True) -> str:
    if v is None:
        return "n/a"
    ok = v >= goal if higher else v <= goal
    return f"{'ok  ' if ok else 'MISS'} (goal {'>=' if higher else '<='} {goal})"


def render_text(report: dict) -> str:
    out = [f"parser {report['parser']}; {report['cpus']} CPUs; load average {report['load_avg_start']} at start, {report['load_avg_end']} at end; {report['total_seconds']} s in all"]
    if "warm_up" in report:
        w = report["warm_up"]
        out.append(f"warm-up (converter build + first parse, excluded from speed): {w['file']} {w['seconds']} s")
    if "docling_tests" in report:
        d = report["docling_tests"]
        out += ["", "1. Docling test PDFs vs Docling's ML output (tables matched by page + IoU >= 0.5)"]
        out.append(f"{'document':28} {'truth':>5} {'ours':>5} {'match':>5} {'capt':>7} {'cell P':>7} {'cell R':>7} {'cell F1':>7}")
        for r in d["docs"]:
            out.append(
                f"{r['doc'][:28]:28} {r['n_truth']:>5} {r['n_pred']:>5} {r['matched']:>5} "
                f"{str(r['captions_ok']) + '/' + str(r['captions_truth']):>7} {_f(r['cell_precision']):>7} {_f(r['cell_recall']):>7} {_f(r['cell_f1']):>7}"
            )
        t, g = d["totals"], d["goals"]
        out.append(f"  table recall     {_f(t['recall'])}  ({t['tables_matched']}/{t['tables_truth']})  {_goal(t['recall'], g['recall'])}")
        out.append(f"    without Docling's table-of-contents 'document_index': {_f(t['recall_data_tables'])} (of {t['data_tables_truth']})")
        out.append(f"  table precision  {_f(t['precision'])}  ({t['tables_matched']}/{t['tables_pred']})")
        out.append(f"  caption links    {_f(t['caption_links'])}  (of {t['captions_truth']} captioned)  {_goal(t['caption_links'], g['caption_links'])}")
        out.append(f"  cell-text F1     {_f(t['cell_f1'])}  (P {_f(t['cell_precision'])}, R {_f(t['cell_recall'])}, micro)  {_goal(t['cell_f1'], g['cell_f1'])}")
        for r in d["docs"]:
            for m in r["misses"]:
                out.append(f"    {r['doc']}: {m}")
    if "generated" in report:
        d = report["generated"]
        out += ["", f"2. Generated SOP corpus ({len(d['docs'])} documents, exact truth)"]
        out.append(f"{'document':14} {'tables':>8} {'capt':>5} {'head':>5} {'body F1':>7} {'notes':>6} {'sections':>8} {'contin':>6}")
        for r in d["docs"]:
            out.append(
                f"{r['doc'][:14]:14} {str(r['tables_matched']) + '/' + str(r['tables_truth']):>8} {r['captions_ok']:>5} {r['headers_ok']:>5} "
                f"{_f(r['body_cell_f1']):>7} {str(r['footnotes_ok']) + '/' + str(r['footnotes_truth']):>6} "
                f"{str(r['sections_ok']) + '/' + str(r['sections_truth']):>8} {str(r['continues_ok']) + '/' + str(r['continues_truth']):>6}"
            )
        for k, v in d["totals"].items():
            out.append(f"  {k:23} {_f(v)}  {_goal(v, d['goal'])}")
        for r in d["docs"]:
            for m in r["misses"]:
                out.append(f"    {r['doc']}: {m}")
    if "robustness" in report:
        d = report["robustness"]
        out += ["", f"3. Robustness and speed: {d['ok']} converted, {d['failed']} failed"]
        for line in d["failures"]:
            out.append(f"  FAILED {line}")
        out.append(f"{'corpus':20} {'file':30} {'pages':>5} {'s':>7} {'pages/s':>7} {'tables':>6}")
        for r in d["files"]:
            rate = r["pages"] / r["seconds"] if r["ok"] and r["seconds"] else None
            out.append(f"{r['corpus'][:20]:20} {r['name'][:30]:30} {r['pages']:>5} {r['seconds']:>7.1f} {_f(rate, 2):>7} {r['tables']:>6}")
        s = d["speed"]
        out.append(
            f"  speed: {s['pages']} pages in {s['seconds']} s over {s['files']} shared-corpus files = {_f(s['pages_per_s'], 2)} pages/s "
            f"{_goal(s['pages_per_s'], s['goal_pages_per_s'])}; CPU {_f(s['cpu_s_per_page'])} s/page"
        )
        out.append(
            f"  peak RSS of this process (all sections): ru_maxrss {d['peak_rss_mb_this_process']} MB, VmHWM {d['peak_rss_mb_this_process_vmhwm']} MB"
        )
        p = d["largest_10q"]
        if p:
            if "error" in p:
                out.append(f"  largest 10-Q in a fresh process: {p['file']} FAILED {p['error']}")
            else:
                out.append(
                    f"  largest 10-Q (most pages) in a fresh process: {p['file']} ({p['pages']} pages, {p['seconds']} s incl. imports) peak RSS (VmHWM) {p['peak_rss_mb']} MB "
                    f"{_goal(p['peak_rss_mb'], p['goal_mb'], higher=False)}"
                )
        g = d["memory_growth"]
        if g:
            keys = [k for k in g if k.startswith("rss_after_")]
            out.append(
                f"  memory over {g['runs']} conversions of {g['file']}: " + ", ".join(f"{k[4:]} {g[k]} MB" for k in keys)
                + f"; growth {g['growth_mb']} MB {_goal(g['growth_mb'], g['goal_mb'], higher=False)}"
            )
        if d["statements"]:
            out.append("  10-Q statements as tables with row labels (revenue total / total assets):")
            for name, found in d["statements"].items():
                out.append(f"    {name:24} revenue: {found['revenue'] or 'NOT FOUND':27} total assets: {found['total_assets'] or 'NOT FOUND'}")
            n = len(d["statements"])
            rev = sum(bool(f["revenue"]) for f in d["statements"].values())
            ta = sum(bool(f["total_assets"]) for f in d["statements"].values())
            out.append(f"    found: revenue {rev}/{n}, total assets {ta}/{n}")
    return "\n".join(out)
