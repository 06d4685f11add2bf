"""Question files: JSON Lines in the format of ``shared/eval/FORMAT.md``, validated on load."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class Question(BaseModel):
    # Unknown keys are ignored so that files carrying extra bookkeeping still load.
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    question: str
    doc_id: str
    answers: list[str]
    must_include: list[str] = Field(default_factory=list)
    page: int | None = None
    kind: str | None = None

    @field_validator("answers")
    @classmethod
    def _non_empty_answers(cls, value: list[str]) -> list[str]:
        if not value or not all(a.strip() for a in value):
            raise ValueError("answers must hold at least one non-empty string")
        return value

    @field_validator("question", "doc_id", "id")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("page")
    @classmethod
    def _one_based(cls, value: int | None) -> int | None:
        if value is not None and value < 1:
            raise ValueError("page is 1-based")
        return value

    @property
    def kind_or_default(self) -> str:
        return self.kind or "unspecified"


class QuestionFileError(ValueError):
    """A question file that does not follow the format; the message names file and line."""


def parse_questions(lines: list[str], source: str = "<questions>") -> list[Question]:
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            q = Question.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise QuestionFileError(f"{source}:{n}: not JSON ({exc.msg})") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "record"
            raise QuestionFileError(f"{source}:{n}: {where}: {first['msg']}") from exc
        if q.id in seen:
            raise QuestionFileError(f"{source}:{n}: id {q.id!r} already used on line {seen[q.id]}")
        seen[q.id] = n
        questions.append(q)
    return questions


def load_questions(path: str | Path) -> list[Question]:
    path = Path(path)
    return parse_questions(path.read_text(encoding="utf-8").splitlines(), str(path))


def write_questions(questions: list[Question], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(q.model_dump(exclude_none=True), ensure_ascii=False) for q in questions]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def summary_line(n_docs: int, corpus_dir: Path, path: Path) -> str:
    """What a question generator wrote, validated by loading it back: documents, questions by kind."""
    by_kind: dict[str, int] = {}
    for q in load_questions(path):  # loading validates the format
        by_kind[q.kind_or_default] = by_kind.get(q.kind_or_default, 0) + 1
    total = sum(by_kind.values())
    return f"wrote {n_docs} documents to {corpus_dir} and {total} questions to {path} {json.dumps(by_kind, ensure_ascii=False)}"
