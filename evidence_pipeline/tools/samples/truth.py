"""Ground truth of a generated document: what the parser must find, and the questions.

Read without reportlab: tests and ``parse-quality`` load the truth JSON written beside
the PDFs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evidence_pipeline.tools.samples.spec import Block, Columns, DocSpec, Fig, H, P, QuestionKind, T


class TruthModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TruthSection(TruthModel):
    number: str
    title: str
    level: int
    page: int


class TruthTable(TruthModel):
    label: str  # "Table 1"
    caption: str  # full caption text as printed
    caption_position: Literal["above", "below"]
    pages: list[int]
    header_rows: list[list[str]]  # spanning header text repeated over covered columns
    body_rows: list[list[str]]
    row_pages: list[int]  # page of each body row
    footnotes: dict[str, str]  # marker -> text (without the marker)
    context_above: str | None  # paragraph directly above the caption/table, if any
    ruled: bool
    continues: bool  # crosses a page break (header row repeated on the next page)


class TruthFigure(TruthModel):
    caption: str
    page: int


class TruthQuestion(TruthModel):
    id: str
    question: str
    doc_id: str
    answers: list[str]
    must_include: list[str]
    page: int
    kind: QuestionKind


class SampleTruth(TruthModel):
    doc_id: str
    title: str
    title_line: str  # the title as printed on page 1 (carries the document ID)
    revision: str
    n_pages: int
    page_size: Literal["A4", "Letter"]
    sections: list[TruthSection]
    tables: list[TruthTable]
    figures: list[TruthFigure]
    two_column_pages: list[int]
    questions: list[TruthQuestion]


def truth_from_pages(spec: DocSpec, n_pages: int, pages: Mapping[str, list[int]]) -> SampleTruth:
    """The ground truth of ``spec`` from the pages its tracked flowables were drawn on."""

    def page(key: str) -> int:
        return pages[key][0]

    sections = []
    flat: list[Block] = []
    for b in spec.blocks:
        flat += b.blocks if isinstance(b, Columns) else [b]
    for b in flat:
        if isinstance(b, H):
            sections.append(TruthSection(number=b.number, title=b.title, level=b.level, page=page(f"H/{b.number}")))
    tables = []
    for i, b in enumerate(spec.blocks):
        if not isinstance(b, T):
            continue
        prev = spec.blocks[i - 1] if i > 0 else None
        row_pages = [page(f"{b.key}/row/{row[0]}") for row in b.body_rows]
        table_pages = sorted(set(row_pages) | {page(f"{b.key}/caption")})
        tables.append(
            TruthTable(
                label=b.label,
                caption=b.caption,
                caption_position=b.caption_position,
                pages=table_pages,
                header_rows=b.header_rows,
                body_rows=b.body_rows,
                row_pages=row_pages,
                footnotes=dict(b.footnotes),
                context_above=prev.plain if isinstance(prev, P) else None,
                ruled=b.ruled,
                continues=len(set(row_pages)) > 1,
            )
        )
    figures = [TruthFigure(caption=b.caption, page=page(f"{b.key}/caption")) for b in spec.blocks if isinstance(b, Fig)]
    questions = [
        TruthQuestion(
            id=f"{spec.doc_id}-q{n:02d}",
            question=q.question,
            doc_id=spec.doc_id,
            answers=q.answers,
            must_include=q.must_include,
            page=page(q.at),
            kind=q.kind,
        )
        for n, q in enumerate(spec.questions, start=1)
    ]
    return SampleTruth(
        doc_id=spec.doc_id,
        title=spec.title,
        title_line=spec.title_line,
        revision=spec.revision,
        n_pages=n_pages,
        page_size=spec.page_size,
        sections=sections,
        tables=tables,
        figures=figures,
        two_column_pages=list(pages.get("columns", [])),
        questions=questions,
    )


def load_truth(truth_dir: Path) -> list[SampleTruth]:
    """Every ``SampleTruth`` JSON in ``truth_dir``, by file name."""
    return [SampleTruth.model_validate_json(p.read_text(encoding="utf-8")) for p in sorted(Path(truth_dir).glob("*.json"))]
