"""The sample corpus as files: PDFs, their ground truth and the question file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from evidence_pipeline.tools.samples.docs_manufacturing import calibration_doc, hold_time_doc, lnp_doc
from evidence_pipeline.tools.samples.docs_quality import endotoxin_doc, toc_doc, visual_inspection_doc
from evidence_pipeline.tools.samples.render import render
from evidence_pipeline.tools.samples.spec import DocSpec
from evidence_pipeline.tools.samples.truth import SampleTruth, TruthQuestion

QUESTIONS_FILE = "questions.jsonl"


def corpus_specs() -> list[DocSpec]:
    return [
        lnp_doc(),
        visual_inspection_doc(),
        endotoxin_doc(),
        calibration_doc(),
        hold_time_doc(),
        toc_doc(),
    ]


def build_corpus(specs: list[DocSpec] | None = None) -> list[tuple[str, bytes, SampleTruth]]:
    """Render every document (of the English corpus, or ``specs``) in memory: (doc_id, pdf bytes, truth)."""
    out = []
    for spec in corpus_specs() if specs is None else specs:
        pdf, truth = render(spec)
        out.append((spec.doc_id, pdf, truth))
    return out


def truth_dir_for(out_dir: Path) -> Path:
    return Path(out_dir).parent / "truth"


def generate_corpus(out_dir: Path, specs: list[DocSpec] | None = None) -> list[Path]:
    """Write the PDFs (of the English corpus, or ``specs``) into ``out_dir``, their truth JSON
    into ``out_dir.parent / "truth"`` and all questions into ``truth/questions.jsonl``."""
    out_dir = Path(out_dir)
    truth_dir = truth_dir_for(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    truth_dir.mkdir(parents=True, exist_ok=True)
    paths, truths = [], []
    for doc_id, pdf, truth in build_corpus(specs):
        path = out_dir / f"{doc_id}.pdf"
        path.write_bytes(pdf)
        (truth_dir / f"{doc_id}.json").write_text(truth.model_dump_json(indent=2) + "\n", encoding="utf-8")
        paths.append(path)
        truths.append(truth)
    write_questions(truth_dir / QUESTIONS_FILE, truths)
    return paths


def corpus_questions(truths: list[SampleTruth] | None = None) -> list[TruthQuestion]:
    if truths is None:
        truths = [truth for _, _, truth in build_corpus()]
    return [q for t in truths for q in t.questions]


def write_questions(out_path: Path, truths: list[SampleTruth] | None = None) -> Path:
    """Write every question of the corpus as JSON lines (one ``TruthQuestion`` dict a line)."""
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(q.model_dump(), ensure_ascii=False) for q in corpus_questions(truths)]
    out_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out_path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m evidence_pipeline.tools.samples OUT_DIR", file=sys.stderr)
        return 2
    out_dir = Path(args[0])
    for path in generate_corpus(out_dir):
        print(path)
    print(truth_dir_for(out_dir) / QUESTIONS_FILE)
    return 0
