"""The documents of the sample corpus as data: headings, paragraphs, tables, figures, questions.

A ``DocSpec`` says what a document holds; ``render`` decides where it lands on the page and
``truth`` records where it landed. Tracker keys (``key`` and ``Q.at``) name the flowables
whose pages the truth reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

QuestionKind = Literal["table_cell", "footnote", "long_tail", "exact_id", "similar", "prose"]


@dataclass
class H:
    number: str
    title: str

    @property
    def level(self) -> int:
        return self.number.count(".") + 1


@dataclass
class P:
    text: str
    lead: str = ""  # bold prefix ("Step 3", "WARNING:")
    key: str | None = None
    style: str = "body"

    @property
    def plain(self) -> str:
        return f"{self.lead} {self.text}" if self.lead else self.text


@dataclass
class T:
    key: str
    label: str
    title: str
    header_rows: list[list[str]]  # truth form; spanned cells repeat the text
    body_rows: list[list[str]]
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)  # (row, col, nrows, ncols)
    footnotes: list[tuple[str, str]] = field(default_factory=list)
    caption_position: Literal["above", "below"] = "above"
    separator: str = ": "
    ruled: bool = True
    col_widths: list[float] | None = None
    wrap_cols: frozenset[int] = frozenset()
    # False for a long table: kept together it would be pushed onto a fresh page
    # instead of starting mid-page and crossing the break.
    keep_together: bool = True
    compact: bool = False  # tighter rows, as in long listings

    @property
    def caption(self) -> str:
        return f"{self.label}{self.separator}{self.title}"


@dataclass
class Fig:
    key: str
    caption: str


@dataclass
class Columns:
    blocks: list[H | P]


Block = H | P | T | Fig | Columns


@dataclass
class Q:
    kind: QuestionKind
    question: str
    answers: list[str]
    must_include: list[str]
    at: str  # tracker key whose page is the question's page


@dataclass(frozen=True)
class Labels:
    """The words a rendered page prints around the content (meta line, running header/footer)."""

    revision: str = "Revision"
    effective_date: str = "Effective date"
    owner: str = "Owner:"
    header_revision: str = "Rev."
    footer: str = "Effective {effective} - CONFIDENTIAL"
    page: str = "Page {page} of {total}"
    step: str = "Step"


ENGLISH = Labels()
KOREAN = Labels(
    revision="개정",
    effective_date="시행일",
    owner="담당 부서:",
    header_revision="개정",
    footer="시행일 {effective} - 대외비",
    page="{page} / {total} 페이지",
    step="단계",
)


@dataclass
class DocSpec:
    doc_id: str
    title: str
    revision: str
    effective: str
    owner: str
    page_size: Literal["A4", "Letter"]
    blocks: list[Block]
    questions: list[Q]
    # "hangul": body text in Korean, set in NanumGothic (Debian's fonts-nanum) instead of Helvetica.
    script: Literal["latin", "hangul"] = "latin"
    labels: Labels = ENGLISH

    @property
    def title_line(self) -> str:
        return f"{self.doc_id}: {self.title}"

    def tables(self) -> list[T]:
        return [b for b in self.blocks if isinstance(b, T)]


def steps(start: int, texts: list[str], labels: Labels = ENGLISH) -> list[P]:
    """Numbered procedure steps ("Step 3 ...") starting at ``start``."""
    return [P(text, lead=f"{labels.step} {start + i}", style="step") for i, text in enumerate(texts)]


def references(texts: list[str]) -> list[P]:
    """Numbered references ("[1] ...")."""
    return [P(text, lead=f"[{i}]", style="ref") for i, text in enumerate(texts, start=1)]


def cell_q(kind: QuestionKind, table: T, row: str, question: str, answer: str, must: list[str] | None = None) -> Q:
    """A question answered by one cell of ``table``; by default the caption must come with it."""
    return Q(kind, question, [answer], must if must is not None else [table.caption], f"{table.key}/row/{row}")
