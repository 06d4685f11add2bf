"""docs/measurements.md from the latest reports: ``evidence-pipeline report`` (``make report``).

``evidence-pipeline eval --out data/reports/eval-X`` writes ``report.json`` and
``evidence-pipeline bench --out data/reports/bench`` writes ``bench.json``, and ``make coverage``
writes ``coverage.json`` (``parse-quality --coverage --out``); each records the commit and UTC
time it was written at and a digest of the code it measured, read when the command started
(``recorded``, ``running_code``). ``write_measurements`` reads every ``<reports>/*/report.json``,
``<reports>/*/bench.json`` and ``<reports>/coverage.json`` and renders one page: per eval set a
table of systems by metric, the word coverage per corpus with its worst files, the bench's
figures, and a note for each file it cannot render. A report that measured
other code than this checkout's (another fingerprint) is not rendered: its section stays as the
page had it and the note names the command to run again.
The page depends only on the reports' contents, so the same reports give the same page.
The command reads JSON only: it imports no model, parser or store.
"""

from __future__ import annotations

import functools
import hashlib
import json
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPORTS = Path("data/reports")
OUT = Path("docs/measurements.md")
REPORT_FILES = ("report.json", "bench.json")

# Report folder -> (the command that writes it, what it measures). Other folders render too,
# after these, without a command.
EVAL_SETS: dict[str, tuple[str, str]] = {
    "eval-sop": ("make eval", "the generated SOP corpus"),
    "eval-twins": ("make eval-twins", "near-twin SOPs, each question by id and by title"),
    "eval-korean": ("make eval-korean", "Korean SOPs, Korean questions"),
    "eval-scanned": ("make eval-scanned", "the SOPs as image-only scans (OCR)"),
    "eval-sec": ("make eval-sec", "ten 10-Qs, curated questions"),
    "eval-sec-lookup": ("make eval-sec-lookup", "the same 10-Qs, figure lookups"),
    "eval-finance": ("make eval-finance", "FinanceBench's filings"),
    "eval-protocols": ("make eval-protocols", "clinical-trial protocols and consent forms"),
    "eval-sponsor": ("make eval-sponsor", "fourteen sponsor-written protocols, hand-written questions"),
    "eval-finance-all": ("make eval-finance-all", "FinanceBench's 30 filings, dev and more questions"),
    "eval-lookup": ("make eval-lookup", "cell lookups generated from pdfplumber's tables of five corpora"),
    **{
        f"ablate-{name}": (f"make ablate (SET={name})", f"{about}, each ranking rule off in turn")
        for name, about in (
            ("sec", "the 10-Qs"),
            ("finance", "FinanceBench dev + more"),
            ("protocols", "the clinical protocols"),
            ("sponsor", "the sponsor protocols"),
            ("lookup", "the generated lookups"),
        )
    },
}
BENCH_COMMAND = "make bench"
COVERAGE_FILE = "coverage.json"  # directly under the reports folder
COVERAGE_COMMAND = "make coverage"
WORST_FILES = 8  # the files of lowest coverage listed
LOST_EXAMPLES = 6  # lost words shown per listed file

# (key in a system's "overall" block, column head); tokens per context is a count, the rest rates.
METRIC_COLUMNS = (
    ("evidence_hit@1", "ev@1"),
    ("evidence_hit@5", "ev@5"),
    ("doc_hit@1", "doc@1"),
    ("mrr@10", "mrr@10"),
    ("budget_hit@1000", "budget_hit@1000"),
    ("tokens_per_context", "tokens/context"),
)
CI_KEYS = ("evidence_hit@1_ci95_low", "evidence_hit@1_ci95_high")

LEGEND = """\
Metrics (`shared/eval/FORMAT.md`): **ev@k**, the share of questions whose evidence (the
question's document, holding an answer and every `must_include` string) is among the first k
contexts; **doc@1**, the first context is from the right document; **mrr@10**, mean reciprocal
rank of the evidence within ten; **budget_hit@1000**, the evidence within the first 1,000 tokens
of context; **tokens/context**, mean tokens of one context; **CI**, 95% bootstrap interval of
ev@1 over documents (1,000 draws, seed 0). Systems: `fixed512` (512-token windows, dense),
`bm25_windows` (plain BM25 over the same windows), `hybridchunker` (Docling's HybridChunker,
dense), `eu_dense` (evidence units, dense only), `full` (this pipeline: evidence units, hybrid
dense + BM25, routing, named rows and statements)."""


# What a measurement measures: the package's modules and the project file that pins its dependencies.
_PACKAGE = Path(__file__).resolve().parents[1]
_PROJECT_FILE = _PACKAGE.parent / "pyproject.toml"


def code_fingerprint(package: Path = _PACKAGE, project_file: Path = _PROJECT_FILE) -> str:
    """A digest of the code a report measures: the bytes of every Python module under
    ``package`` and of ``project_file`` (when there is one). The same code gives the same
    fingerprint whatever the commit, uncommitted changes included; docs, tests and question
    files do not count."""
    digest = hashlib.sha256()
    files = sorted(package.rglob("*.py"), key=lambda p: p.relative_to(package).as_posix())
    for path in [*files, project_file]:
        if path.is_file():
            name = path.relative_to(package).as_posix() if path.is_relative_to(package) else path.name
            digest.update(f"\n{name}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@functools.cache
def running_code() -> str:
    """This checkout's ``code_fingerprint``, read once per process. A command that measures reads
    it when it starts (``cli``), so an edit made while it runs does not pass for the code it
    measured."""
    return code_fingerprint()


class NoReports(Exception):
    """No report file under the reports folder: nothing to render."""


def recorded(repo: Path | None = None) -> dict[str, Any]:
    """What a report records about when and from what it was written: the git commit of
    ``repo`` (this checkout by default; None outside git), whether its code (the package's
    files and ``pyproject.toml``, what ``code_fingerprint`` reads) differed from it (``dirty``:
    docs, tests and question files do not count), the UTC time and the code's fingerprint
    (``running_code``)."""
    repo = repo or Path(__file__).resolve().parents[2]

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "--no-optional-locks", "-C", str(repo), *args],
                capture_output=True, text=True, timeout=10, check=True,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD") or None
    # the code a report measures (``code_fingerprint``): docs written after a measurement do not mark it
    status = git("status", "--porcelain", "--", _PACKAGE.name, _PROJECT_FILE.name) if commit else None
    out: dict[str, Any] = {
        "commit": commit,
        "dirty": None if status is None else bool(status),
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "code": running_code(),
    }
    try:
        from evidence_pipeline.pipeline import PIPELINE_VERSION

        out["pipeline_version"] = PIPELINE_VERSION
    except ImportError:  # a partial install: the report still records the rest
        pass
    return out


@dataclass
class Found:
    """One report file: its folder's name, its path, and its contents or why they are missing."""

    name: str
    path: Path
    data: dict[str, Any] | None = None
    error: str | None = None

    @property
    def kind(self) -> str | None:
        data = self.data
        if not isinstance(data, dict):
            return None
        systems = data.get("systems")
        if isinstance(systems, dict) and systems and all(isinstance(s, dict) and "overall" in s for s in systems.values()):
            return "eval"
        if isinstance(data.get("figures"), list):
            return "bench"
        coverage = data.get("coverage")
        if isinstance(coverage, dict) and isinstance(coverage.get("files"), list):
            return "coverage"
        return None

    @property
    def code(self) -> str | None:
        """The ``code_fingerprint`` the report recorded (None for a report written before they were)."""
        data = self.data if isinstance(self.data, dict) else {}
        meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
        rec = meta.get("recorded", data.get("recorded"))
        return rec.get("code") if isinstance(rec, dict) else None


def find_reports(root: Path) -> list[Found]:
    """Every ``root/*/report.json`` and ``root/*/bench.json``, by folder name, then
    ``root/coverage.json`` (named ``coverage``) when there is one."""
    found = []
    paths = sorted(p for name in REPORT_FILES for p in root.glob(f"*/{name}")) if root.is_dir() else []
    if (root / COVERAGE_FILE).is_file():
        paths.append(root / COVERAGE_FILE)
    for path in paths:
        entry = Found(name=path.parent.name if path.name in REPORT_FILES else path.stem, path=path)
        try:
            entry.data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            entry.error = f"cannot be read: {exc}"
        found.append(entry)
    return found


def _rate(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def _metric(value: Any, key: str) -> str:
    if key == "tokens_per_context" and isinstance(value, (int, float)):
        return f"{value:.0f}"
    return _rate(value)


def _ci(block: Mapping[str, Any]) -> str:
    lo, hi = (block.get(k) for k in CI_KEYS)
    if not all(isinstance(v, (int, float)) for v in (lo, hi)):
        return "-"
    return f"[{lo:.2f}, {hi:.2f}]"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *map(_row, rows)]


def _when(meta: Mapping[str, Any]) -> str:
    """The commit, pipeline version and time a report records, or that it records none."""
    rec = meta.get("recorded")
    if not isinstance(rec, dict) or not (rec.get("commit") or rec.get("utc")):
        started = meta.get("started")  # bench runs before `recorded` noted their local start time
        return f"started {started} (local time); commit not recorded" if started else "commit and time not recorded"
    parts = []
    if rec.get("commit"):
        parts.append(f"commit `{str(rec['commit'])[:10]}`" + (" with uncommitted code changes" if rec.get("dirty") else ""))
    if rec.get("pipeline_version"):
        parts.append(f"pipeline version {rec['pipeline_version']}")
    if rec.get("utc"):
        parts.append(str(rec["utc"]).replace("T", " ").replace("Z", " UTC"))
    return ", ".join(parts)


def _eval_section(entry: Found) -> list[str]:
    data = entry.data or {}
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    command, about = EVAL_SETS.get(entry.name, (None, None))
    title = f"### {entry.name}" + (f" — `{command}`" if command else "")
    facts = []
    if about:
        facts.append(about[0].upper() + about[1:])
    if "n_questions" in meta:
        facts.append(f"{meta['n_questions']} questions")
    if "n_docs" in meta:
        facts.append(f"{meta['n_docs']} documents")
    if meta.get("split") and meta["split"] != "all":
        facts.append(f"the {meta['split']} half (documents split by a hash of their id)")
    for key, label in (("parser", "parser"), ("embed_backend", "embeddings")):
        if meta.get(key):
            facts.append(f"{label} `{meta[key]}`")
    lines = [title, "", *(["; ".join(facts) + "."] if facts else []), f"Recorded: {_when(meta)}.", ""]
    header = ["system", "n", *(head for _, head in METRIC_COLUMNS), "ev@1 95% CI"]
    rows = []
    for name, system in data["systems"].items():
        overall = system.get("overall") or {}
        n = system.get("n", overall.get("n"))
        label = f"**{name}**" if name == "full" else name
        rows.append([label, "-" if n is None else str(n), *(_metric(overall.get(k), k) for k, _ in METRIC_COLUMNS), _ci(overall)])
    lines += _table(header, rows) + [""]
    if isinstance(data.get("ablation"), dict) and data["ablation"]:
        from evidence_pipeline.evaluation.ablation import ablation_table

        lines += ["What each ranking rule adds to `full` (full minus full with the rule off; points, 95% CI over documents):", ""]
        lines += _table(*ablation_table(data["ablation"])) + [""]
    return lines


def _number(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


def _bench_section(entry: Found) -> list[str]:
    data = entry.data or {}
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    title = f"## Speed: {entry.name}" + (f" — `{BENCH_COMMAND}`" if entry.name == "bench" else "")
    facts = []
    if "quick" in meta:
        facts.append("Quick run (`--quick`: small sizes, CI smoke test)" if meta["quick"] else "Full run")
    if meta.get("cpu_count"):
        facts.append(f"{meta['cpu_count']} CPUs")
    if isinstance(meta.get("load_start"), (int, float)):
        facts.append(f"load average {meta['load_start']:.1f} at start")
    if meta.get("embed_backend"):
        facts.append(f"embeddings `{meta['embed_backend']}`")
    lines = [title, "", *(["; ".join(facts) + "."] if facts else []), f"Recorded: {_when(meta)}.", ""]
    lines += ["Speeds depend on the machine and its load: compare a ratio with its baseline, measured in the same run.", ""]
    header = ["figure", "value", "unit", "baseline", "ratio", "target", "met"]
    rows = []
    for fig in data["figures"]:
        if not isinstance(fig, dict):
            continue
        ratio = fig.get("ratio")
        rows.append([
            str(fig.get("label") or fig.get("key") or "?").strip(), _number(fig.get("value")), str(fig.get("unit") or ""),
            _number(fig.get("baseline")), _number(ratio) + ("×" if isinstance(ratio, (int, float)) and ratio else ""),
            str(fig.get("target") or ""), _number(fig.get("met")),
        ])  # fmt: skip
    return lines + _table(header, rows) + [""]


def _corpus(folder: str) -> str:
    """A coverage row's corpus: its folder's name (the folder above, for a ``pdfs/`` folder)."""
    path = Path(folder)
    return path.parent.name if path.name == "pdfs" else path.name or folder


def _share(row: Mapping[str, Any]) -> float | None:
    share = row.get("share")
    return share if isinstance(share, (int, float)) and not isinstance(share, bool) else None


def _unreadable(row: Mapping[str, Any]) -> int:
    value = row.get("unreadable")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _coverage_corpora(rows: Sequence[Mapping[str, Any]], floor: float) -> list[list[str]]:
    """Per corpus: files, files without a figure, mean, min, files below ``floor``, and the words
    pdfium could not read (each file's distinct ones, summed; outside every share)."""
    by_corpus: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_corpus.setdefault(_corpus(str(row.get("folder", ""))), []).append(row)
    out = []
    for name, files in by_corpus.items():
        shares = [v for v in map(_share, files) if v is not None]
        out.append([
            name, str(len(files)), str(len(files) - len(shares)),
            f"{sum(shares) / len(shares):.4f}" if shares else "-", f"{min(shares):.4f}" if shares else "-",
            str(sum(v < floor for v in shares)), str(sum(map(_unreadable, files))),
        ])  # fmt: skip
    return out


def _lost_examples(row: Mapping[str, Any]) -> str:
    """The first lost words of a file, each with the page pdfium's text first holds it on."""
    pages: dict[str, Any] = {}
    for place in row.get("lost_at") or []:
        if isinstance(place, dict):
            pages.setdefault(str(place.get("word")), place.get("page"))
    words = [str(w) for w in (row.get("lost") or [])[:LOST_EXAMPLES]]
    shown = [f"{w} (p. {pages[w]})" if pages.get(w) else w for w in words]
    return ", ".join(f"`{w}`" for w in shown)


def _coverage_section(entry: Found) -> list[str]:
    data = entry.data or {}
    coverage = data["coverage"]
    goals = coverage.get("goals") if isinstance(coverage.get("goals"), dict) else {}
    mean_goal, floor = goals.get("mean", 0.997), goals.get("worst", 0.99)
    rows = [r for r in coverage["files"] if isinstance(r, dict)]
    lines = [
        f"## Word coverage — `{COVERAGE_COMMAND}`",
        "",
        "Share of each PDF's distinct words (pdfium's text layer) found in its evidence units or in the lines "
        f"recorded as page furniture; goals: mean ≥ {mean_goal}, no file below {floor}. "
        "Words holding a character pdfium could not read (no Unicode for its glyph, or a glyph it left out) "
        "are no reference: neither found nor lost, counted apart (unreadable words). "
        f"Parser `{data.get('parser', '?')}`; all files: mean {_rate4(coverage.get('mean'))}, min {_rate4(coverage.get('worst'))}.",
        f"Recorded: {_when(data)}.",
        "",
    ]
    header = ["corpus", "files", "no text layer", "mean", "min", f"below {floor}", "unreadable words"]
    lines += _table(header, _coverage_corpora(rows, floor)) + [""]
    worst = sorted((r for r in rows if _share(r) is not None), key=lambda r: (_share(r) or 0.0, str(r.get("file"))))[:WORST_FILES]
    if worst:
        lines += [f"The {len(worst)} files of lowest coverage (`parse-quality --coverage` lists each lost word's page and box):", ""]
        table = [
            [_corpus(str(r.get("folder", ""))), f"`{r.get('file')}`", f"{_share(r):.4f}", str(r.get("n_lost", "-")), _lost_examples(r)]
            for r in worst
        ]
        lines += _table(["corpus", "file", "share", "lost words", "first lost words"], table) + [""]
    return lines


def _rate4(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "-"


def _order(name: str) -> tuple[int, str]:
    names = list(EVAL_SETS)
    return (names.index(name), "") if name in names else (len(names), name)


@dataclass
class Kept:
    """The sections of the page as it was, by what they render: each eval set's section
    ("### NAME") and its overview row, the coverage section, each bench's section ("## Speed:
    NAME"). A section whose report is not under the reports folder is kept as it was
    (``render``): each says the commit it was recorded at."""

    evals: dict[str, list[str]]
    rows: dict[str, str]
    coverage: list[str] | None
    benches: dict[str, list[str]]

    @property
    def count(self) -> int:
        return len(self.evals) + len(self.benches) + (self.coverage is not None)


_RETRIEVAL = "## Retrieval, per eval set"
_COVERAGE = "## Word coverage"
_SPEED = "## Speed: "


def _name(heading: str, prefix: str) -> str:
    return heading[len(prefix) :].split(" — ", 1)[0].strip()


def kept_sections(page: str) -> Kept:
    """``Kept`` read off a page ``render`` wrote (an older page: what it holds of these)."""
    kept = Kept({}, {}, None, {})
    heading, body, in_retrieval = None, [], False

    def close() -> None:
        if heading is None:
            return
        lines = [heading, *body]
        while lines and not lines[-1].strip():
            lines.pop()
        if heading.startswith("### ") and in_retrieval:
            kept.evals[_name(heading, "### ")] = lines
        elif heading.startswith(_COVERAGE):
            kept.coverage = lines
        elif heading.startswith(_SPEED):
            kept.benches[_name(heading, _SPEED)] = lines

    for line in page.splitlines():
        if line.startswith("#"):
            close()
            heading, body = line, []
            if line.startswith("## "):
                in_retrieval = line == _RETRIEVAL
            continue
        body.append(line)
        if heading == _RETRIEVAL and line.startswith("| ") and not line.startswith("| set |"):
            kept.rows[line[2:].split(" |", 1)[0].strip()] = line
    close()
    return kept


OVERVIEW_HEADER = ["set", "command", "questions", "full ev@1", "full ev@5", "recorded"]


def _overview_row(entry: Found) -> str:
    """One eval set's line of the overview: its command, questions and full's ev@1 and ev@5."""
    full = (entry.data["systems"].get("full") or {}).get("overall") or {}
    meta = entry.data.get("meta") if isinstance(entry.data.get("meta"), dict) else {}
    command = EVAL_SETS.get(entry.name, ("-",))[0]
    return _row([
        entry.name, f"`{command}`" if command != "-" else "-", str(meta.get("n_questions", "-")),
        _rate(full.get("evidence_hit@1")), _rate(full.get("evidence_hit@5")), _when(meta),
    ])  # fmt: skip


def _command(entry: Found) -> str:
    """The command that writes ``entry``'s report again."""
    if entry.kind == "coverage":
        return COVERAGE_COMMAND
    if entry.kind == "bench" and entry.name == "bench":
        return BENCH_COMMAND
    return EVAL_SETS.get(entry.name, ("the command that wrote it",))[0]


def measured_other_code(found: list[Found], code: str) -> list[Found]:
    """The reports of ``found`` that recorded a ``code_fingerprint`` other than ``code``: their
    figures are of code this checkout does not run (a trial since dropped, a commit since
    changed). A report that recorded none cannot be told and is not among them."""
    return [f for f in found if f.kind is not None and f.code is not None and f.code != code]


def other_code_note(entry: Found, code: str) -> str:
    """Why ``entry`` (one of ``measured_other_code``) is not rendered, and what measures it again."""
    return f"measured other code than this checkout's (code {entry.code}, here {code}): run `{_command(entry)}` again; the page keeps its section as it was"


def render(found: list[Found], reports: Path, out: Path = OUT, kept: Kept | None = None, code: str | None = None) -> str:
    """The whole page for the reports ``find_reports`` found under ``reports``, to be written to
    ``out``; with ``kept`` (the page as it was), its sections for which no report was found stay
    as they were, in their places. With ``code`` (this checkout's ``code_fingerprint``), a
    report that measured other code is not rendered (``measured_other_code``): its section
    stays as ``kept`` has it, and a note says which command measures it again."""
    other = {id(f) for f in measured_other_code(found, code)} if code else set()
    current = [f for f in found if id(f) not in other]
    evals = sorted((f for f in current if f.kind == "eval"), key=lambda f: _order(f.name))
    benches = [f for f in current if f.kind == "bench"]
    coverages = [f for f in current if f.kind == "coverage"]
    skipped = [f for f in found if f.kind is None or id(f) in other]
    rendered = len(evals) + len(benches) + len(coverages)
    by_name = {f.name: f for f in evals}
    kept = kept or Kept({}, {}, None, {})
    kept = Kept(
        evals={n: v for n, v in kept.evals.items() if n not in by_name},
        rows={n: v for n, v in kept.rows.items() if n not in by_name},
        coverage=None if coverages else kept.coverage,
        benches={n: v for n, v in kept.benches.items() if n not in {f.name for f in benches}},
    )
    stays = (
        " The section with no report there stays as the page before had it, with the commit it was recorded at (`--fresh` drops it)."
        if kept.count == 1
        else f" The {kept.count} sections with no report there stay as the page before had them, each with the commit it "
        "was recorded at (`--fresh` drops them)."
        if kept.count
        else ""
    )
    lines = [
        "# Measurements",
        "",
        f"Generated by `make report` (`evidence-pipeline report --reports {reports} --out {out}`) from {rendered} "
        f"report{'s' if rendered != 1 else ''} in `{reports}/`.{stays} **Do not edit this file by hand**: run "
        "the command named in a section to measure again, then `make report`.",
        "",
    ]
    names = sorted({*by_name, *kept.evals}, key=_order)
    if names:
        lines += [_RETRIEVAL, "", LEGEND, ""]
        overview = [_overview_row(by_name[n]) if n in by_name else kept.rows.get(n, _row([n, *["-"] * 5])) for n in names]
        lines += _table(OVERVIEW_HEADER, []) + overview + [""]
        for name in names:
            lines += _eval_section(by_name[name]) if name in by_name else [*kept.evals[name], ""]
    for entry in coverages:
        lines += _coverage_section(entry)
    if kept.coverage is not None:
        lines += [*kept.coverage, ""]
    sections = {**{n: [*v, ""] for n, v in kept.benches.items()}, **{f.name: _bench_section(f) for f in benches}}
    for name in sorted(sections, key=lambda n: (n != "bench", n)):
        lines += sections[name]
    if skipped:
        lines += ["## Not rendered", ""]
        for entry in skipped:
            if code and entry.kind is not None:
                why = other_code_note(entry, code)
            else:
                why = entry.error or "neither an eval report (`systems`), a bench report (`figures`) nor a coverage report (`coverage`)"
            lines.append(f"- `{entry.path.relative_to(reports) if entry.path.is_relative_to(reports) else entry.path}`: {why}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def write_measurements(reports: Path = REPORTS, out: Path = OUT, fresh: bool = False) -> tuple[Path, list[Found]]:
    """Render the reports under ``reports`` into ``out``; ``NoReports`` when there is none. The
    sections of ``out`` as it was that no report renders stay (``kept_sections``: reports are not
    versioned, so a checkout that measured one set renews that set's section alone), unless
    ``fresh``. A report that measured other code than this checkout's is not rendered (``render``)."""
    found = find_reports(reports)
    if not found:
        names = " or ".join([*(f"*/{n}" for n in REPORT_FILES), COVERAGE_FILE])
        raise NoReports(f"no reports in {reports} ({names}): run `make eval` (or another make eval-* target) or `make bench` first")
    kept = kept_sections(out.read_text(encoding="utf-8")) if out.is_file() and not fresh else None
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(found, reports, out, kept, code=running_code()), encoding="utf-8")
    return out, found
