"""The figures of a bench run: a table for the terminal, bench.json and bench.md."""

from __future__ import annotations

import json
import math
from pathlib import Path


def _fig(key, label, value, unit, *, baseline=None, ratio=None, target=None, met=None, note=""):
    return {
        "key": key,
        "label": label,
        "value": value,
        "unit": unit,
        "baseline": baseline,
        "ratio": ratio,
        "target": target,
        "met": met,
        "note": note,
    }


def build_report(raw: dict) -> dict:
    figs = _ingest_e2e_figures(raw)
    if "parse_generated" not in raw:  # the end-to-end ingest alone (``bench --ingest-only``)
        return {"meta": raw["meta"], "figures": figs, "raw": raw}
    pg = raw["parse_generated"]
    figs.append(
        _fig(
            "parse.generated.pages_per_s",
            "parse, generated corpus",
            pg["pages_per_s"],
            "pages/s",
            note=f"{pg['pages']} pages, {pg['docs']} docs",
        )
    )
    if "parse_shared" in raw:
        ps = raw["parse_shared"]
        figs.append(
            _fig(
                "parse.shared.pages_per_s",
                f"parse, {ps.get('name', 'clinical-protocols')}",
                ps["pages_per_s"],
                "pages/s",
                note=f"{ps['pages']} pages, {ps['docs']} of {ps['of_docs']} docs",
            )
        )
    b = raw["build"]
    figs.append(_fig("build.units_per_s", "build units + split", b["units_per_s"], "units/s", note=f"{b['units']} units"))
    e = raw["embed"]
    figs.append(
        _fig(
            "embed.children_per_s",
            "embed children (fit + embed)",
            e["children_per_s"],
            "children/s",
            baseline=e["raw_children_per_s"],
            ratio=e["ratio"],
            target=">= 0.9x raw encode",
            met=e["ratio"] >= 0.9,
            note=f"{e['children']} children, best of {e['rounds']}, batch {e['batch_size']}; CPU-time ratio {e['ratio_cpu']:.2f}x",
        )
    )
    if "embed_backends" in raw:
        from evidence_pipeline.benchmark.embedding_backends import figures as backend_figures

        figs.extend(backend_figures(raw["embed_backends"], _fig))
    local_by_n = {r["children"]: r for r in raw["local"]}
    for r in raw["edge"]:
        n, up, se = r["children"], r["upsert"], r["search"]
        lo = local_by_n.get(n)
        figs.append(
            _fig(
                f"upsert.edge.{n}.points_per_s",
                f"upsert Edge, {n // 1000}k",
                up["points_per_s"],
                "points/s",
                baseline=lo["upsert"]["points_per_s"] if lo else None,
                ratio=up["points_per_s"] / lo["upsert"]["points_per_s"] if lo else None,
                target=">= 20000",
                met=up["points_per_s"] >= 20_000,
                note="baseline: qdrant-client local" if lo else "local mode not run at this size",
            )
        )
        at_100k = n >= 100_000
        for q in ("p50", "p95"):
            limit = 15 if q == "p50" else 40
            figs.append(
                _fig(
                    f"search.edge.{n}.{q}_ms",
                    f"search {q} Edge, {n // 1000}k",
                    se[f"{q}_ms"],
                    "ms",
                    baseline=lo["search"][f"{q}_ms"] if lo else None,
                    ratio=lo["search"][f"{q}_ms"] / se[f"{q}_ms"] if lo else None,
                    target=f"<= {limit} ms" if at_100k else None,
                    met=se[f"{q}_ms"] <= limit if at_100k else None,
                    note=f"{se['queries']} queries; ratio = local/Edge" if lo else f"{se['queries']} queries",
                )
            )
        figs.append(_fig(f"search.query_embed.{n}.p50_ms", f"  of which query embedding, {n // 1000}k", se["embed_p50_ms"], "ms"))
    for r in raw["local"]:
        n, up, se = r["children"], r["upsert"], r["search"]
        figs.append(_fig(f"upsert.local.{n}.points_per_s", f"upsert qdrant-client local, {n // 1000}k", up["points_per_s"], "points/s"))
        for q in ("p50", "p95"):
            figs.append(
                _fig(
                    f"search.local.{n}.{q}_ms",
                    f"search {q} qdrant-client local, {n // 1000}k",
                    se[f"{q}_ms"],
                    "ms",
                    note=f"{se['queries']} queries",
                )
            )
    sv = raw.get("service")
    if sv:
        for q in ("p50", "p95"):
            figs.append(
                _fig(
                    f"service.search.{q}_ms",
                    f"service /search {q}, HTTP",
                    sv[f"{q}_ms"],
                    "ms",
                    target="< 50 ms" if q == "p50" else None,
                    met=sv["p50_ms"] < 50 if q == "p50" else None,
                    note=f"{sv['queries']} queries, {sv['documents']} generated docs, {sv['points']} points"
                    + (
                        f"; of which embedding {sv['embed_p50_ms']:.0f} ms, store open+close {sv['store_open_close_p50_ms']:.0f} ms (p50)"
                        if q == "p50"
                        else ""
                    ),
                )
            )
    figs += _search_api_figures(raw)
    ic = raw["ingest_core"]
    figs.append(
        _fig(
            "ingest.peak_rss_mb",
            "ingest peak RSS",
            ic["peak_rss_mb"],
            "MiB",
            note=f"{ic['documents']} docs, {ic['children']} children; models alone {ic['rss_models_mb']:.0f} MiB",
        )
    )
    figs.append(_fig("ingest.first_s", "ingest (core), first", ic["first_s"], "s", note="models warm"))
    frac = ic["second_s"] / ic["first_s"]
    figs.append(
        _fig(
            "reingest.core.fraction",
            "re-ingest unchanged (core)",
            frac,
            "x first",
            target="<= 0.05",
            met=frac <= 0.05,
            note=f"{ic['second_s'] * 1000:.0f} ms; skipped {ic['skipped_second']}/{ic['documents']}",
        )
    )
    ir = raw.get("ingest_runner")
    if ir and "error" not in ir:
        frac = ir["second_s"] / ir["first_s"]
        figs.append(
            _fig(
                "reingest.runner.fraction",
                "re-ingest unchanged (Dagster ingest_paths)",
                frac,
                "x first",
                target="<= 0.05",
                met=frac <= 0.05,
                note=f"first {ir['first_s']:.1f} s, second {ir['second_s']:.1f} s",
            )
        )
    return {"meta": raw["meta"], "figures": figs, "raw": raw}


def _ingest_e2e_figures(raw: dict) -> list[dict]:
    """``evidence-pipeline ingest`` end to end and ``search()`` on its store (``ingest_e2e``)."""
    if "ingest_e2e" not in raw:
        return []
    from evidence_pipeline.benchmark.ingest_e2e import figures

    return figures(raw["ingest_e2e"], _fig)


def _search_api_figures(raw: dict) -> list[dict]:
    """evidence_pipeline.search() kept open against per call (baseline, same run), and the
    service's /search while another process ingests (``benchmark.search_latency``)."""
    figs = []
    runs = [("sample", "generated docs", raw.get("search_api"))]
    runs += [(str(r["children"]), f"{r['children'] // 1000}k synthetic", r["then"]) for r in raw["edge"] if "then" in r]
    for key, label, r in runs:
        if not r:
            continue
        kept, per_call = r["kept"], r["per_call"]
        for q, limit in (("p50", 15), ("p95", 40)):
            value, base = kept["total"][f"{q}_ms"], per_call["total"][f"{q}_ms"]
            figs.append(
                _fig(
                    f"search.api.{key}.{q}_ms",
                    f"evidence_pipeline.search() {q}, {label}",
                    value,
                    "ms",
                    baseline=base,
                    ratio=base / value,
                    target=f"<= {limit} ms",
                    met=value <= limit,
                    note=f"{r['queries']} queries; baseline: store opened per call; of which embedding "
                    f"{kept['embed'][f'{q}_ms']:.1f} ms, store {kept['store'][f'{q}_ms']:.1f} ms "
                    f"(per call: store {per_call['store'][f'{q}_ms']:.1f} ms)",
                )
            )
    si = raw.get("service_ingest")
    if si:
        ok = not si["failed_documents"] and not si["n_failed_requests"]
        figs.append(
            _fig(
                "service.search_during_ingest.p50_ms",
                "service /search p50, another process ingesting",
                si["p50_ms"],
                "ms",
                target="< 50 ms, no failures",
                met=si["p50_ms"] < 50 and ok,
                note=f"{si['requests']} requests back to back during a {si['ingest_s'] or 0:.0f} s ingest of "
                f"{si['documents']} docs; p95 {si['p95_ms']:.0f} ms, max {si['max_ms']:.0f} ms; failed: "
                f"{len(si['failed_documents'])} docs, {si['n_failed_requests']} requests",
            )
        )
    return figs


def _num(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}"


_HEAD = ("figure", "value", "unit", "baseline", "ratio", "target", "met", "note")


def _rows(report: dict) -> list[tuple[str, ...]]:
    return [
        (
            f["label"],
            _num(f["value"]),
            f["unit"],
            _num(f["baseline"]),
            _num(f["ratio"]) + ("x" if f["ratio"] else ""),
            f["target"] or "",
            _num(f["met"]),
            f["note"],
        )
        for f in report["figures"]
    ]


def _meta_line(report: dict) -> str:
    m = report["meta"]
    return (
        f"{'quick' if m['quick'] else 'full'} run, {m['cpu_count']} CPUs, torch {m.get('torch_threads')} threads, "
        f"load avg (1 min) {m['load_start']:.1f} at start, {m.get('load_end', float('nan')):.1f} at end "
        f"(load > CPUs = other processes competing); converter build {m.get('converter_build_s', 0):.1f} s, "
        f"model load {m.get('model_load_s', 0):.1f} s ({m.get('embed_backend', 'torch')}), total {m.get('total_s', 0):.0f} s"
        + (
            f"; qdrant-client local not run at {', '.join(str(n) for n in m['local_skipped_sizes'])} children "
            "(~950 points/s upsert, seconds per grouped query there)"
            if m.get("local_skipped_sizes")
            else ""
        )
    )


def text_table(report: dict) -> str:
    rows = [_HEAD, *_rows(report)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD) - 1)]
    lines = []
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i in (0, 2, 5) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) + "  " + r[-1])
    return "\n".join(lines) + "\n" + _meta_line(report)


def markdown(report: dict) -> str:
    out = ["# evidence-pipeline bench", "", _meta_line(report), "", "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
    out += ["| " + " | ".join(r) + " |" for r in _rows(report)]
    return "\n".join(out) + "\n"


def write_outputs(report: dict, out_dir: Path) -> list[Path]:
    from evidence_pipeline.evaluation.measurements import recorded  # the commit and UTC time, for `make report`

    report = {**report, "meta": {**report.get("meta", {}), "recorded": recorded()}}
    out_dir.mkdir(parents=True, exist_ok=True)
    js, md = out_dir / "bench.json", out_dir / "bench.md"
    js.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    md.write_text(markdown(report), encoding="utf-8")
    return [js, md]


def all_finite_positive(report: dict) -> bool:
    return all(isinstance(f["value"], (int, float)) and math.isfinite(f["value"]) and f["value"] > 0 for f in report["figures"])
