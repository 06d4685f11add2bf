"""``evidence-pipeline bench``: throughput and latency of every stage, each beside a
baseline measured in the same run (raw sentence-transformers, qdrant-client local mode).

``run_bench(out_dir, quick)`` returns the report (see ``report.py``) and writes
bench.json + bench.md when ``out_dir`` is set.
"""

from evidence_pipeline.benchmark.runner import run_bench

__all__ = ["run_bench"]
