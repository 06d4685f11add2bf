"""What ``parent_text`` on every child costs the embedded store (issue 14, "leaner points"):
payload bytes, size on disk and upsert time of the same points with and without it.

    python -m evidence_pipeline.benchmark.payload_size [PATH ...] [--rounds 3] [--json]

PATH: documents, files or folders (default: the generated sample corpus). The points are
the pipeline's own (``pipeline.document_points``) with random unit dense vectors: what the
store stores and costs does not depend on the vectors' values, and no model runs. Each
variant is written into a fresh Edge store, document by document as an ingest writes,
``rounds`` times; the best round's time counts. Size: the ``segments`` folder (blocks in
use), without the WAL, whose files Edge allocates 32 MiB at a time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evidence_pipeline.benchmark.inputs import documents
from evidence_pipeline.benchmark.timing import load_1min, timed
from evidence_pipeline.store.base import Point


def disk_bytes(folder: Path) -> int:
    """Bytes of disk blocks in use under ``folder`` (sparse and preallocated files as stored)."""
    return sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file())


def _without_parent_text(points: Sequence[Point]) -> list[Point]:
    return [p.model_copy(update={"payload": {k: v for k, v in p.payload.items() if k != "parent_text"}}) for p in points]


def points_of(paths: Sequence[Path], dim: int = 384) -> dict[str, list[Point]]:
    """doc_id -> the pipeline's points for each document, with random unit dense vectors."""
    from evidence_pipeline import pipeline
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.parser import DoclingParser

    parser, counter, options = DoclingParser(), token_counter(None), pipeline.PipelineOptions()
    rng = np.random.default_rng(0)
    out = {}
    for path in paths:
        doc = parser.parse(path)
        units, children = pipeline.prepare(doc, counter, options)
        dense = rng.standard_normal((len(children), dim)).astype(np.float32)
        dense /= np.linalg.norm(dense, axis=1, keepdims=True)
        out[doc.doc_id] = pipeline.document_points(doc, units, children, dense, pipeline.sparse_vectors(children), "bench")
    return out


def _write(docs: dict[str, list[Point]], path: Path) -> tuple[float, int]:
    """Seconds to write ``docs`` into a new Edge store at ``path`` (flush included), and its segments' bytes."""
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store.edge import EdgeStore

    shutil.rmtree(path, ignore_errors=True)
    with EdgeStore(StoreSettings(path=str(path))) as store:
        store.ensure_collection(len(next(iter(docs.values()))[0].dense))
        with timed() as span:
            for doc_id, points in docs.items():
                store.replace_document(doc_id, points)
            store.flush()
    size = disk_bytes(path / "segments")
    shutil.rmtree(path, ignore_errors=True)
    return span.wall, size


def measure(docs: dict[str, list[Point]], work: Path, rounds: int = 3) -> dict:
    variants = {"with": docs, "without": {d: _without_parent_text(ps) for d, ps in docs.items()}}
    best: dict[str, float] = {v: float("inf") for v in variants}
    size: dict[str, int] = {}
    load = load_1min()
    for r in range(rounds):
        for v in variants if r % 2 == 0 else list(reversed(variants)):
            seconds, size[v] = _write(variants[v], work / f"store-{v}")
            best[v] = min(best[v], seconds)
    n = sum(map(len, docs.values()))
    payload = {v: sum(len(json.dumps(p.payload)) for ps in d.values() for p in ps) for v, d in variants.items()}
    parents = {p.payload["parent_id"]: len(p.payload["parent_text"]) for ps in docs.values() for p in ps}
    return {
        "documents": len(docs),
        "points": n,
        "parents": len(parents),
        "parent_text_chars": sum(parents.values()),
        "rounds": rounds,
        "load": load,
        "load_end": load_1min(),
        **{
            f"{v}_{k}": x
            for v in variants
            for k, x in (("payload_bytes", payload[v]), ("segments_bytes", size[v]), ("upsert_s", best[v]), ("points_per_s", n / best[v]))
        },
    }


def text(r: dict) -> str:
    mb = 1 << 20
    return "\n".join(
        [
            f"{r['documents']} documents, {r['points']} points (children), {r['parents']} parents "
            f"({r['parent_text_chars'] / r['parents']:.0f} chars of parent_text each on average)",
            f"payload JSON:   with parent_text {r['with_payload_bytes'] / mb:.1f} MiB, without {r['without_payload_bytes'] / mb:.1f} MiB",
            f"segments:       with {r['with_segments_bytes'] / mb:.1f} MiB, without {r['without_segments_bytes'] / mb:.1f} MiB "
            f"({r['with_segments_bytes'] / r['without_segments_bytes']:.2f}x)",
            f"upsert (best of {r['rounds']}): with {r['with_points_per_s']:,.0f} points/s, without {r['without_points_per_s']:,.0f} points/s "
            f"({r['with_upsert_s'] / r['without_upsert_s']:.2f}x the time)",
            f"load average (1 min): {r['load']:.1f} at start, {r['load_end']:.1f} at end",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evidence_pipeline.benchmark.payload_size", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="documents, files or folders (default: the generated sample corpus)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="payload-size-") as tmp:
        work = Path(tmp)
        paths = documents(args.paths, work)
        result = measure(points_of(paths), work, args.rounds)
    print(json.dumps(result, indent=2) if args.json else text(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
