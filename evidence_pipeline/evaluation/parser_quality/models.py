"""The typed parser-quality report: one record per section, their rows, and the goals.

``ParserQualityReport.model_dump(mode="json")`` is what ``parse-quality --json`` prints and
``--out`` writes; per-row rates (``cell_f1``, ``body_cell_f1``) are computed fields, so the
counts are stored once and the rates derive from them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field

from evidence_pipeline.evaluation.parser_quality.metrics import Counts


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- goals


class DoclingTestGoals(_Record):
    recall: float = 0.9
    caption_links: float = 0.9
    cell_f1: float = 0.85


class Goals(_Record):
    docling_tests: DoclingTestGoals = DoclingTestGoals()
    generated: float = 0.95  # every figure of the generated section
    pages_per_s: float = 5.0
    peak_rss_mb: float = 1536.0
    growth_mb: float = 25.0  # "no growth": allocator noise stays well under this over 45 conversions


GOALS = Goals()


# --------------------------------------------------------------------------- 1. Docling's test PDFs


class DoclingTestRow(_Record):
    doc: str
    n_truth: int
    n_pred: int
    matched: int
    captions_truth: int
    captions_ok: int
    cells: Counts
    misses: list[str] = Field(default_factory=list)
    n_data: int = 0  # truth tables labelled "table" (not a table of contents)
    matched_data: int = 0

    @computed_field
    @property
    def cell_f1(self) -> float | None:
        return self.cells.f1

    @computed_field
    @property
    def cell_precision(self) -> float | None:
        return self.cells.precision

    @computed_field
    @property
    def cell_recall(self) -> float | None:
        return self.cells.recall


class DoclingTestTotals(_Record):
    tables_truth: int
    tables_pred: int
    tables_matched: int
    recall: float | None
    recall_data_tables: float | None
    data_tables_truth: int
    precision: float | None
    caption_links: float | None
    captions_truth: int
    cell_precision: float | None
    cell_recall: float | None
    cell_f1: float | None


class DoclingTestsSection(_Record):
    docs: list[DoclingTestRow]
    totals: DoclingTestTotals
    goals: DoclingTestGoals = GOALS.docling_tests


# --------------------------------------------------------------------------- 2. generated SOPs


class GeneratedRow(_Record):
    doc: str
    tables_truth: int = 0
    tables_pred: int = 0
    tables_matched: int = 0
    captions_ok: int = 0
    headers_ok: int = 0
    body: Counts = Counts()
    footnotes_truth: int = 0
    footnotes_ok: int = 0
    sections_truth: int = 0
    sections_ok: int = 0
    continues_truth: int = 0
    continues_ok: int = 0
    continues_false: int = 0
    misses: list[str] = Field(default_factory=list)

    @computed_field
    @property
    def body_cell_f1(self) -> float | None:
        return self.body.f1


class GeneratedTotals(_Record):
    """Each figure is compared with the one goal ``Goals.generated``."""

    table_recall: float | None
    table_precision: float | None
    caption_accuracy: float | None
    header_accuracy: float | None
    body_cell_f1: float | None
    footnote_links: float | None
    section_recall: float | None
    continuation_recall: float | None
    continuation_precision: float | None


class GeneratedCounts(_Record):
    tables_truth: int
    tables_pred: int
    tables_matched: int
    footnotes_truth: int
    sections_truth: int
    continues_truth: int


class GeneratedSection(_Record):
    docs: list[GeneratedRow]
    totals: GeneratedTotals
    counts: GeneratedCounts
    goal: float = GOALS.generated


# --------------------------------------------------------------------------- 3. robustness and speed


class FileResult(_Record):
    corpus: str
    name: str
    ok: bool
    pages: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    tables: int = 0
    error: str | None = None


class StatementFinding(_Record):
    """Where a 10-Q's income statement (revenue total) and balance sheet (total assets) were found."""

    revenue: str | None = None
    total_assets: str | None = None


class Speed(_Record):
    files: int
    pages: int
    seconds: float
    pages_per_s: float | None
    cpu_s_per_page: float | None
    goal_pages_per_s: float = GOALS.pages_per_s


class MemoryGrowth(_Record):
    file: str
    runs: int
    first: int  # RSS is read after this many conversions and after ``runs``
    rss_after_first_mb: float
    rss_after_last_mb: float
    growth_mb: float
    goal_mb: float = GOALS.growth_mb


class ProcessProbe(_Record):
    """One file parsed in a fresh interpreter: its peak RSS, imports included."""

    file: str
    pages: int | None = None
    seconds: float | None = None
    peak_rss_mb: float | None = None
    error: str | None = None
    goal_mb: float = GOALS.peak_rss_mb


class RobustnessSection(_Record):
    files: list[FileResult]
    ok: int
    failed: int
    failures: list[str]
    speed: Speed
    peak_rss_mb_this_process: float
    peak_rss_mb_this_process_vmhwm: float
    largest_10q: ProcessProbe | None
    memory_growth: MemoryGrowth | None
    statements: dict[str, StatementFinding]


# --------------------------------------------------------------------------- 4. word coverage


class CoverageGoals(_Record):
    mean: float = 0.997
    worst: float = 0.99


class WordPlace(_Record):
    """Where pdfium's text of a page holds a word: the 1-based page and the box of its characters,
    ``(l, t, r, b)`` in PDF points from the page's top-left corner."""

    word: str
    page: int
    box: tuple[float, float, float, float]


class CoverageFile(_Record):
    file: str
    folder: str = ""  # the folder given on the command line
    words: int  # distinct words of pdfium's text that pdfium read (the reference)
    covered: int  # of them, found in some evidence unit or in recorded page furniture
    furniture: int = 0  # of the covered, found only in page furniture (running headers, page numbers)
    n_lost: int = 0
    lost: list[str] = Field(default_factory=list)  # the first lost words, sorted
    lost_at: list[WordPlace] = Field(default_factory=list)  # where the listed lost words stand, in page order
    # distinct words of pdfium's text holding a character pdfium could not read (no Unicode for
    # its glyph) or standing on a glyph it left out (``coverage.read_page``): no reference,
    # neither found nor lost, not in ``words`` nor in ``share``
    unreadable: int = 0
    unreadable_shown: list[str] = Field(default_factory=list)  # the first of them, sorted
    error: str | None = None  # no text layer, or why the parse failed

    @computed_field  # type: ignore[prop-decorator]
    @property
    def share(self) -> float | None:
        return round(self.covered / self.words, 4) if self.words else None


class CoverageSection(_Record):
    files: list[CoverageFile]
    goals: CoverageGoals = CoverageGoals()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean(self) -> float | None:
        shares = [f.share for f in self.files if f.share is not None]
        return round(sum(shares) / len(shares), 4) if shares else None

    def folders(self) -> dict[str, CoverageSection]:
        """The same figures per folder, in the order given."""
        out: dict[str, CoverageSection] = {}
        for f in self.files:
            out.setdefault(f.folder, CoverageSection(files=[], goals=self.goals)).files.append(f)
        return out

    @computed_field  # type: ignore[prop-decorator]
    @property
    def worst(self) -> float | None:
        shares = [f.share for f in self.files if f.share is not None]
        return min(shares) if shares else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unreadable(self) -> int:
        """Words pdfium could not read, over the files (each file's distinct ones): outside every share."""
        return sum(f.unreadable for f in self.files)


# --------------------------------------------------------------------------- the whole report


class WarmUp(_Record):
    file: str
    seconds: float
    ok: bool


class ParserQualityReport(_Record):
    parser: str
    cpus: int | None
    load_avg_start: list[float]
    warm_up: WarmUp | None = None
    docling_tests: DoclingTestsSection | None = None
    generated: GeneratedSection | None = None
    robustness: RobustnessSection | None = None
    coverage: CoverageSection | None = None
    load_avg_end: list[float] = Field(default_factory=list)
    total_seconds: float = 0.0
    recorded: dict[str, Any] | None = None  # the commit and UTC time of the run (``measurements.recorded``)
