"""Counts of the work this process did: pages decoded, model sessions opened, word pieces embedded.

Tests assert these counts instead of timings (``test_work_counters``): a count does not depend
on the machine's load, and a regression that does the same work twice (a second model export,
a second decode of every page, OCR on a page that has a text layer) doubles a count at once.
``evidence-pipeline bench`` reports them beside the CPU time of each stage (``CLOCK``).

Names are ``stage.what``. What the parser's worker process counts comes back with each parsed
document and is added here (``parser.worker``), so a count covers the whole ingest.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

# The counts and what each one counts; ``count`` refuses any other name, so a typo cannot
# count into a name no test reads.
NAMES: dict[str, str] = {
    "parse.documents": "documents parsed",
    "parse.pages": "pages laid out by the rule layout model (Docling decoded each of them once)",
    "parse.prepass_pages": "pages decoded a second time by docling-parse, for the document's body size",
    "parse.pdfium_text_pages": "pages whose text pdfium read (the dash check, the text-layer check)",
    "parse.rendered_pages": "pages rendered to pixels (OCR)",
    "parse.ocr_pages": "pages read by OCR",
    "embed.model_exports": "embedding models exported to ONNX and written into the model cache",
    "embed.sessions": "embedding model sessions (ONNX Runtime or torch) created",
    "embed.texts": "texts run through the embedding model",
    "embed.word_pieces": "word pieces run through the embedding model, [CLS] and [SEP] included",
    "embed.padding": "padding word pieces added to batch texts to one length",
    "embed.memo_hits": "texts whose vector an earlier batch of this process had made",
    "store.opens": "embedded or server stores opened",
    "store.flushes": "store flushes (writes made durable)",
    "store.upserts": "points upserted",
    "dagster.runs": "Dagster runs executed in this process",
}


class WorkCounters:
    """Thread-safe named counts (``NAMES``)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def count(self, name: str, n: int = 1) -> None:
        if name not in NAMES:
            raise KeyError(f"unknown work count {name!r}")
        with self._lock:
            self._counts[name] += n

    def add(self, counts: Mapping[str, int]) -> None:
        """Counts made elsewhere (the parser's worker process)."""
        for name, n in counts.items():
            self.count(name, n)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    @contextmanager
    def delta(self) -> Iterator[dict[str, int]]:
        """The counts made inside the block: the dict fills when the block ends."""
        before = self.snapshot()
        out: dict[str, int] = {}
        try:
            yield out
        finally:
            after = self.snapshot()
            out.update({k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)})


WORK = WorkCounters()


# CPU seconds per stage, for ``evidence-pipeline bench`` (tests count work, they never time it).
# ``process``: the whole process's CPU over the stage (a stage that runs threads of its own, such
# as a parse or an embedding, while the caller waits); ``thread``: the calling thread's alone (a
# part of a parse that runs beside the others on a thread of its own).
STAGES: dict[str, str] = {
    "parse": "a document parsed: every thread of the parser's process (the worker)",
    "parse.prepass": "of which the body-size pre-pass, a second decode of every page (its own thread)",
    "parse.text_layer": "of which the text-layer check of every page (OCR or not)",
    "parse.ocr": "of which pages rendered and read by OCR",
    "parse.convert": "of which Docling's document read into a ParsedDoc (headings, tables, dashes)",
    "units": "evidence units: the card, tables, sections, statements",
    "split": "long tables split to the parent budget",
    "children": "children fitted to the model's window",
    "embed": "children embedded (every thread of the embedding)",
    "sparse": "BM25 vectors of the children",
    "points": "points built: ids and payloads",
    "upsert": "points written to the store, the document's old points deleted",
}


class StageClock:
    """Thread-safe CPU seconds per stage (``STAGES``)."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()

    @contextmanager
    def cpu(self, stage: str, *, thread: bool = False) -> Iterator[None]:
        if stage not in STAGES:
            raise KeyError(f"unknown stage {stage!r}")
        clock = time.thread_time if thread else time.process_time
        started = clock()
        try:
            yield
        finally:
            self.add({stage: clock() - started})

    def add(self, seconds: Mapping[str, float]) -> None:
        with self._lock:
            for stage, s in seconds.items():
                self._seconds[stage] += s

    def snapshot(self) -> dict[str, float]:
        with self._lock:
            return dict(self._seconds)

    @contextmanager
    def delta(self) -> Iterator[dict[str, float]]:
        before = self.snapshot()
        out: dict[str, float] = {}
        try:
            yield out
        finally:
            out.update({k: v - before.get(k, 0.0) for k, v in self.snapshot().items() if v != before.get(k, 0.0)})


CLOCK = StageClock()
