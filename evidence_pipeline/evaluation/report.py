"""Render evaluation results: a console table, report.json, report.md and a PNG bar chart.

The chart is drawn with Pillow (matplotlib is not a dependency of the project).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evidence_pipeline.evaluation.metrics import HEADLINE, K_MAX, METRICS, has_evidence, is_evidence_hit
from evidence_pipeline.evaluation.questions import Question
from evidence_pipeline.evaluation.systems import Answer, SystemRun

SHORT = {
    "evidence_hit@1": "ev@1",
    "evidence_hit@5": "ev@5",
    "doc_hit@1": "doc@1",
    "doc_hit@5": "doc@5",
    "page_hit@5": "page@5",
    "mrr@10": "mrr@10",
    "budget_hit@1000": "bud@1k",
    "tokens_per_context": "tok/ctx",
}
MISS_SYSTEM = "full"
MISS_EXAMPLES = 5
HEAD_CHARS = 240


def _fmt(value: Any, metric: str = "") -> str:
    if value is None:
        return "-"
    if metric == "tokens_per_context":
        return f"{value:.0f}"
    return f"{value:.3f}"


def _ci(block: Mapping[str, Any]) -> str:
    lo, hi = block.get(f"{HEADLINE}_ci95_low"), block.get(f"{HEADLINE}_ci95_high")
    return "-" if lo is None else f"[{lo:.2f}, {hi:.2f}]"


def plain_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([line(header), "  ".join("-" * w for w in widths), *map(line, rows)])


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _kinds(systems: Mapping[str, Any]) -> list[str]:
    return sorted({k for s in systems.values() for k in s["by_kind"]})


def _metric_rows(systems: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    header = ["system", "n", *(SHORT[m] for m in METRICS), "ev@1 95% CI"]
    rows = [[name, str(s["n"]), *(_fmt(s["overall"].get(m), m) for m in METRICS), _ci(s["overall"])] for name, s in systems.items()]
    return header, rows


def _kind_rows(systems: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    kinds = _kinds(systems)
    first = next(iter(systems.values()))
    header = ["system", *(f"{k} (n={first['by_kind'][k]['n']})" for k in kinds)]
    rows = [[name, *(_fmt(s["by_kind"].get(k, {}).get(HEADLINE)) for k in kinds)] for name, s in systems.items()]
    subset = first.get("subsets", {}).get("must_include")
    if subset:
        header.append(f"with must_include (n={subset['n']})")
        for row, s in zip(rows, systems.values()):
            row.append(_fmt(s["subsets"]["must_include"].get(HEADLINE)))
    return header, rows


def text_report(systems: Mapping[str, Any]) -> str:
    parts = ["All questions", plain_table(*_metric_rows(systems)), "", f"{HEADLINE} by kind", plain_table(*_kind_rows(systems))]
    return "\n".join(parts)


def evidence_rank(question: Question, answer: Answer) -> int | None:
    """The 1-based rank of the first context that is evidence (FORMAT.md: the question's
    document, holding an answer and every must_include string); None when none of the
    ``K_MAX`` contexts is."""
    return next((i for i, c in enumerate(answer.contexts, 1) if is_evidence_hit(c, question)), None)


def question_ranks(questions: Sequence[Question], runs: Mapping[str, SystemRun]) -> list[dict[str, Any]]:
    """Per question, the evidence rank each system gave it (``evidence_rank``): what moved
    between two commits, question by question, read off two reports. Under ``eval --ablate``
    also ``without``: the full system's rank with each rule off, so the questions a rule moves
    can be read off one report."""
    ablated = runs["full"].ablated if "full" in runs else {}
    ranks = []
    for n, q in enumerate(questions):
        entry: dict[str, Any] = {
            "id": q.id,
            "kind": q.kind_or_default,
            "doc_id": q.doc_id,
            "evidence_rank": {name: evidence_rank(q, run.answers[n]) for name, run in runs.items()},
        }
        if ablated:
            entry["without"] = {rule: evidence_rank(q, answers[n]) for rule, answers in ablated.items()}
        ranks.append(entry)
    return ranks


def misses(questions: Sequence[Question], run: SystemRun, examples: int = MISS_EXAMPLES) -> dict[str, dict]:
    """Per kind: how many questions the system missed at rank 1, and a few of them."""
    out: dict[str, dict] = {}
    for q, a in zip(questions, run.answers):
        if a.scores[HEADLINE]:
            continue
        entry = out.setdefault(q.kind_or_default, {"n_missed": 0, "examples": []})
        entry["n_missed"] += 1
        if len(entry["examples"]) < examples:
            top = a.contexts[0] if a.contexts else None
            reason = "no context"
            if top is not None:
                reason = (
                    "wrong document"
                    if top.doc_id != q.doc_id
                    else (
                        "answer without must_include"
                        if has_evidence(top.text, q.model_copy(update={"must_include": []}))
                        else "answer not in context"
                    )
                )
            entry["examples"].append(
                {
                    "id": q.id,
                    "question": q.question,
                    "doc_id": q.doc_id,
                    "answers": q.answers,
                    "must_include": q.must_include,
                    "top_doc": top.doc_id if top else None,
                    "top_head": " ".join(top.text.split())[:HEAD_CHARS] if top else "",
                    "why": reason,
                    "evidence_rank": evidence_rank(q, a),
                }
            )
    return out


def markdown_report(report: Mapping[str, Any]) -> str:
    systems = report["systems"]
    meta = report.get("meta", {})
    lines = ["# Retrieval evaluation", ""]
    for key in ("questions", "docs", "n_docs", "n_questions", "model", "parser", "seconds", "recorded"):
        if key in meta:
            lines.append(f"- {key}: {meta[key]}")
    if "chunks" in meta:
        lines.append("- indexed points: " + ", ".join(f"{k} {v}" for k, v in meta["chunks"].items()))
    lines += ["", "Metrics as defined in `shared/eval/FORMAT.md`; CI: bootstrap over documents, 1000 draws, seed 0.", ""]
    lines += ["## All questions", "", md_table(*_metric_rows(systems)), ""]
    lines += [f"## {HEADLINE} by kind", "", md_table(*_kind_rows(systems)), ""]
    lines += ["![evidence_hit@1 by kind](report.png)", ""]
    miss = report.get("misses", {})
    if miss:
        lines += [f"## Misses of `{MISS_SYSTEM}` at rank 1, by kind", ""]
        for kind, entry in sorted(miss.items()):
            lines += [f"### {kind}: {entry['n_missed']} missed", ""]
            for ex in entry["examples"]:
                must = f"; must include {ex['must_include']}" if ex["must_include"] else ""
                rank = ex["evidence_rank"] or "not in top 10"
                lines.append(f"- **{ex['id']}** {ex['question']}  ")
                lines.append(f"  expected {ex['answers']}{must} in `{ex['doc_id']}`; {ex['why']}; evidence rank {rank}  ")
                lines.append(f"  top context (`{ex['top_doc']}`): {ex['top_head']}")
            lines.append("")
    if report.get("ablation"):
        from evidence_pipeline.evaluation.ablation import ablation_table

        lines += ["## What each ranking rule adds to `full`", ""]
        lines += ["Full minus full with the rule off, in points; 95% CI: bootstrap over documents.", ""]
        lines += [md_table(*ablation_table(report["ablation"])), ""]
    ranks = report.get("questions", [])
    if ranks:
        names = list(ranks[0]["evidence_rank"])
        rows = [[r["id"], r["kind"], *(str(r["evidence_rank"][n] or "-") for n in names)] for r in ranks]
        lines += ["## Evidence rank per question", "", f"The first context that is evidence, 1 to {K_MAX}; - when none is.", ""]
        lines += [md_table(["question", "kind", *names], rows), ""]
    return "\n".join(lines)


_COLORS = [(128, 128, 128), (230, 159, 0), (86, 180, 233), (0, 114, 178), (0, 158, 115), (204, 121, 167)]


def bar_chart(systems: Mapping[str, Any], path: Path) -> Path:
    """Grouped bars of evidence_hit@1: overall and per kind, one colour per system."""
    from PIL import Image, ImageDraw

    groups = ["overall", *_kinds(systems)]
    names = list(systems)
    bar_w, gap, plot_h, left, top, bottom = 14, 18, 260, 50, 40, 90
    group_w = bar_w * len(names) + gap
    width = left + group_w * len(groups) + 20
    height = top + plot_h + bottom
    img = Image.new("RGB", (max(width, 420), height), "white")
    draw = ImageDraw.Draw(img)
    draw.text((left, 10), f"{HEADLINE} by kind", fill="black")
    for tick in range(0, 11, 2):
        y = top + plot_h - plot_h * tick / 10
        draw.line([(left - 4, y), (width - 10, y)], fill=(225, 225, 225))
        draw.text((8, y - 6), f"{tick / 10:.1f}", fill="black")
    for g, group in enumerate(groups):
        x0 = left + g * group_w
        for s, name in enumerate(names):
            block = systems[name]["overall"] if group == "overall" else systems[name]["by_kind"].get(group, {})
            value = block.get(HEADLINE) or 0.0
            x = x0 + s * bar_w
            draw.rectangle([x, top + plot_h - plot_h * value, x + bar_w - 2, top + plot_h], fill=_COLORS[s % len(_COLORS)])
        draw.text((x0, top + plot_h + 6), group[:12], fill="black")
    for s, name in enumerate(names):
        x = left + (s % 3) * 130
        y = top + plot_h + 30 + (s // 3) * 16
        draw.rectangle([x, y, x + 10, y + 10], fill=_COLORS[s % len(_COLORS)])
        draw.text((x + 14, y - 1), name, fill="black")
    img.save(path)
    return path


def write_outputs(report: Mapping[str, Any], out_dir: Path) -> list[Path]:
    """report.json, report.md and report.png in ``out_dir``; the files' ``meta`` also records the
    commit and UTC time they were written at (``measurements.recorded``, read by ``make report``)."""
    from evidence_pipeline.evaluation.measurements import recorded

    report = {**report, "meta": {**report.get("meta", {}), "recorded": recorded()}}
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "report.json"
    json_path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path = out_dir / "report.md"
    md_path.write_text(markdown_report(report) + "\n", encoding="utf-8")
    png_path = bar_chart(report["systems"], out_dir / "report.png")
    return [json_path, md_path, png_path]
