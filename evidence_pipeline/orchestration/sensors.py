"""Sensor: keep the partitions and the index in step with the corpus folder.

Each tick scans the folder (recursively) and

- registers a partition for every new document;
- requests runs for documents whose CONTENT changed: size + mtime is only the cheap
  pre-check that lets an untouched file skip hashing; a touched file with the same
  SHA-256 requests nothing;
- for a document whose file is gone, deletes its points from the store and then its
  partition.

The cursor remembers, per key, the file's size:mtime, SHA-256, doc id and path. When
the cursor is empty (first tick, or reset from the UI) the sensor asks the instance
instead: the ``content_hash`` in the latest ``raw_pdfs`` materialization of each
partition is what was last ingested (or attempted), so a reset requests nothing for
documents that have not changed. Documents that failed are not retried until their
file changes; the re-ingestion schedule retries them.
"""


import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from evidence_pipeline.corpus import doc_id_for, doc_id_from_key, scan
from evidence_pipeline.errors import StoreError
from evidence_pipeline.orchestration.assets import documents
from evidence_pipeline.orchestration.batching import MAX_PARTITIONS_PER_RUN
from evidence_pipeline.orchestration.history import latest_metadata
from evidence_pipeline.orchestration.partition_ranges import range_tags
from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
from evidence_pipeline.records import sha256_file
from evidence_pipeline.staleness import document_state
from evidence_pipeline.store.base import DocumentVersion

CURSOR_VERSION = 1


@dataclass
class Seen:
    """What the sensor knew about a file at its last tick."""

    fingerprint: str  # size:mtime_ns, the cheap pre-check
    content_hash: str
    doc_id: str
    path: str


def fingerprint(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def load_cursor(raw: str | None) -> tuple[dict[str, Seen], dict[str, str]]:
    """(files by key, deletions still pending: key -> doc id); empty for no or an old cursor."""
    data = json.loads(raw) if raw else {}
    if data.get("v") != CURSOR_VERSION:
        return {}, {}
    return {k: Seen(*v) for k, v in data["files"].items()}, dict(data.get("deleting", {}))


def dump_cursor(files: dict[str, Seen], deleting: dict[str, str]) -> str:
    return json.dumps(
        {
            "v": CURSOR_VERSION,
            "files": {k: [s.fingerprint, s.content_hash, s.doc_id, s.path] for k, s in sorted(files.items())},
            "deleting": dict(sorted(deleting.items())),
        },
        ensure_ascii=False,
    )


@dataclass
class CursorDiff:
    """The folder now against the cursor of the last tick."""

    now: dict[str, Seen] = field(default_factory=dict)  # the next cursor's files
    unsettled: list[str] = field(default_factory=list)  # new, or hash differs from the cursor's
    gone: dict[str, str] = field(default_factory=dict)  # key -> doc id of files the cursor knew, now absent


def diff_cursor(
    seen: Mapping[str, Seen],
    found: Mapping[str, Path],
    *,
    fingerprint: Callable[[Path], str] = fingerprint,
    content_hash: Callable[[Path], str] = lambda path: sha256_file(str(path)),
) -> CursorDiff:
    """Compare the files ``found`` now (key -> path) with the cursor's ``seen``. A file whose
    fingerprint and path are unchanged keeps its cursor entry without being hashed; any
    other is hashed, and is unsettled unless its hash equals the cursor's (a ``touch``)."""
    diff = CursorDiff()
    for key, path in found.items():
        fp = fingerprint(path)
        prev = seen.get(key)
        if prev is not None and prev.fingerprint == fp and prev.path == str(path):
            diff.now[key] = prev
            continue
        diff.now[key] = Seen(fp, content_hash(path), doc_id_for(path), str(path))
        if prev is None or prev.content_hash != diff.now[key].content_hash:
            diff.unsettled.append(key)
    diff.gone = {k: s.doc_id for k, s in seen.items() if k not in found}
    return diff


def changed_keys(unsettled: list[str], now: Mapping[str, Seen], last: Mapping[str, Mapping]) -> dict[str, str]:
    """key -> content hash of the unsettled files whose content was not what the latest
    ``raw_pdfs`` materialization (``last``) saw: those need a run. The sensor watches content
    only; pipeline-version changes are the schedule's."""
    wanted = {}
    for key in unsettled:
        meta = last.get(key)
        indexed = DocumentVersion(str(meta.get("content_hash", "")), "") if meta else None
        if document_state(now[key].content_hash, indexed, None).stale:
            wanted[key] = now[key].content_hash
    return wanted


def batched_run_requests(
    order: list[str], wanted: dict[str, str], *, max_per_run: int = MAX_PARTITIONS_PER_RUN, prefix: str = ""
) -> list[dg.RunRequest]:
    """Run requests for the keys in ``wanted`` (key -> content hash), batched.

    ``order`` is the order of the dynamic partitions in the instance; a multi-document
    run covers a partition key RANGE, so only keys adjacent in that order share a run
    (at most ``max_per_run``; models load once per run). The run key names the keys and
    their hashes, so the daemon never launches the same work twice.
    """
    requests: list[dg.RunRequest] = []
    stretch: list[str] = []

    def flush() -> None:
        for start in range(0, len(stretch), max_per_run):
            chunk = stretch[start : start + max_per_run]
            digest = hashlib.sha256("\n".join(f"{k}\t{wanted[k]}" for k in chunk).encode()).hexdigest()[:16]
            if len(chunk) == 1:
                requests.append(dg.RunRequest(partition_key=chunk[0], run_key=f"{prefix}{chunk[0]}:{digest}"))
            else:
                requests.append(
                    dg.RunRequest(
                        run_key=f"{prefix}{chunk[0]}..{chunk[-1]}:{digest}",
                        tags=range_tags(chunk[0], chunk[-1]),
                    )
                )
        stretch.clear()

    for key in order:
        if key in wanted:
            stretch.append(key)
        else:
            flush()
    flush()
    return requests


def _under(path: str | None, root: Path) -> bool:
    if not path:
        return False
    try:
        Path(path).resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def build_corpus_sensor(job, minimum_interval_seconds: int = 30) -> dg.SensorDefinition:
    @dg.sensor(
        job=job,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=dg.DefaultSensorStatus.STOPPED,
        description=(
            "Scans the corpus folder: registers new documents as partitions, ingests new and changed files "
            "(by SHA-256 content hash), and removes deleted files' partitions and points."
        ),
    )
    def corpus_sensor(
        context: dg.SensorEvaluationContext, corpus: CorpusResource, store: StoreResource
    ) -> dg.SensorResult:
        root = Path(corpus.root)
        seen, deleting = load_cursor(context.cursor)
        registered = list(context.instance.get_dynamic_partitions(documents.name))
        registered_set = set(registered)
        found = scan(root)
        for path in found.duplicates:
            context.log.warning(f"{path}: same document id as another file of the corpus; skipped")

        diff = diff_cursor(seen, found.paths)
        now = diff.now
        # The instance settles the rest: a document whose last ingest saw this hash needs no run.
        wanted = changed_keys(diff.unsettled, now, latest_metadata(context.instance, "raw_pdfs", diff.unsettled))

        # Gone: known to the cursor, or (after a reset) registered from a file of this folder.
        gone = dict(diff.gone)
        if not seen:
            orphans = [k for k in registered if k not in found.paths and k not in deleting]
            for key, meta in latest_metadata(context.instance, "raw_pdfs", orphans).items():
                if _under(meta.get("source_path"), root) and not Path(meta["source_path"]).exists():
                    gone[key] = meta.get("doc_id") or doc_id_from_key(key) or key
        deleting = {**deleting, **gone}
        deleting = {k: d for k, d in deleting.items() if k not in found.paths}  # a file that came back stays
        deleted: list[str] = []
        if deleting:
            try:
                # Do not wait for a busy store: the deletion is retried next tick.
                with store.open(lock_timeout_s=0) as s:
                    for key, doc_id in deleting.items():
                        n = s.delete_document(doc_id)
                        context.log.info(f"{key}: file deleted; removed {n} points of document {doc_id!r}")
                        deleted.append(key)
            except StoreError as exc:
                # Typically the embedded store is held by a running ingest; retry next tick.
                context.log.warning(f"cannot delete points now, will retry: {exc}")
        deleting = {k: d for k, d in deleting.items() if k not in deleted}

        new_keys = [k for k in found.paths if k not in registered_set]
        order = [k for k in registered if k not in deleted] + new_keys
        requests = batched_run_requests(order, wanted)
        partition_requests = []
        if new_keys:
            partition_requests.append(documents.build_add_request(new_keys))
        if [k for k in deleted if k in registered_set]:
            partition_requests.append(documents.build_delete_request([k for k in deleted if k in registered_set]))
        context.log.info(
            f"{len(found.paths)} documents: {len(new_keys)} new, {len(wanted)} to ingest, "
            f"{len(deleted)} deleted, {len(deleting)} deletions pending"
        )
        return dg.SensorResult(
            run_requests=requests,
            dynamic_partitions_requests=partition_requests,
            cursor=dump_cursor(now, deleting),
        )

    return corpus_sensor
