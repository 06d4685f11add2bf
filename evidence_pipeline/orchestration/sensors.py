"""Sensor: keep the partitions and the index in step with the corpus folder.

Each tick scans the folder (recursively) and

- registers a partition for every new document (in requests of at most
  ``PARTITIONS_PER_REQUEST`` keys);
- requests runs for documents whose CONTENT changed; a touched file with the same
  SHA-256 requests nothing;
- for a document whose file is gone, deletes its points from the store and then its partition.

Per-file state lives in the instance: the latest ``raw_pdfs`` materialization of each partition
records the file's path, ``fingerprint`` (size:mtime_ns) and ``content_hash``. The cursor holds
one digest per bucket (``BUCKETS``, documents spread by key) over its files' keys, paths and
fingerprints, so it does not grow with the folder (but for deletions still pending) and an
unchanged folder costs a scan and no query or hash. Only a bucket whose digest moved is compared
with the instance, and only a file whose fingerprint differs is hashed. An empty cursor (first
tick, or reset from the UI) checks every bucket. A failed document is retried when its file
changes, or by the re-ingestion schedule.
"""

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg

from evidence_pipeline.corpus import doc_id_from_key, file_fingerprint, scan
from evidence_pipeline.errors import StoreError
from evidence_pipeline.orchestration.asset_job import ASSET_JOB_NAME
from evidence_pipeline.orchestration.assets import documents
from evidence_pipeline.orchestration.batching import MAX_PARTITIONS_PER_RUN
from evidence_pipeline.orchestration.history import latest_metadata
from evidence_pipeline.orchestration.partition_ranges import RANGE_END_TAG, RANGE_START_TAG, range_tags
from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
from evidence_pipeline.records import sha256_file
from evidence_pipeline.staleness import document_state
from evidence_pipeline.store.base import DocumentVersion

CURSOR_VERSION = 2
# 1,024 digests of 12 hex characters: about 20 KB of cursor; at 100,000 files a changed
# file costs the instance look-ups of the ~100 files of its bucket.
BUCKETS = 1024
DIGEST_CHARS = 12
PARTITIONS_PER_REQUEST = 10_000


def bucket_of(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big") % BUCKETS


@dataclass(frozen=True)
class FileState:
    """A file of the folder now: where it is and its cheap fingerprint."""

    path: str
    fingerprint: str


def stat_files(found: Mapping[str, Path]) -> dict[str, FileState]:
    states = {}
    for key, path in found.items():
        try:
            states[key] = FileState(str(path), file_fingerprint(path.stat()))
        except FileNotFoundError:  # deleted between the scan and the stat: gone next tick
            continue
    return states


def bucket_digests(files: Mapping[str, FileState]) -> dict[int, str]:
    """bucket -> digest of its (key, path, fingerprint) triples; empty buckets absent."""
    members: dict[int, list[str]] = {}
    for key, state in files.items():
        members.setdefault(bucket_of(key), []).append(f"{key}\t{state.path}\t{state.fingerprint}")
    return {
        b: hashlib.blake2b("\n".join(sorted(lines)).encode(), digest_size=DIGEST_CHARS // 2).hexdigest() for b, lines in members.items()
    }


@dataclass
class Cursor:
    buckets: dict[int, str] = field(default_factory=dict)  # bucket -> digest at the last tick
    deleting: dict[str, str] = field(default_factory=dict)  # key -> doc id whose points are still to delete
    fresh: bool = True  # no usable cursor: every bucket is checked

    @classmethod
    def load(cls, raw: str | None) -> "Cursor":
        data = json.loads(raw) if raw else {}
        if data.get("v") != CURSOR_VERSION:
            return cls()
        return cls({int(b): d for b, d in data["buckets"].items()}, dict(data.get("deleting", {})), fresh=False)

    def dump(self) -> str:
        return json.dumps(
            {
                "v": CURSOR_VERSION,
                "buckets": {str(b): d for b, d in sorted(self.buckets.items())},
                "deleting": dict(sorted(self.deleting.items())),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    def changed_buckets(self, now: Mapping[int, str]) -> set[int]:
        if self.fresh:
            return set(range(BUCKETS))
        return {b for b in set(now) | set(self.buckets) if now.get(b) != self.buckets.get(b)}


def changed_files(
    files: Mapping[str, FileState],
    last: Mapping[str, Mapping],
    *,
    content_hash: Callable[[str], str] = sha256_file,
) -> dict[str, str]:
    """key -> content hash of the ``files`` whose content is not what the latest ``raw_pdfs``
    materialization (``last``) saw: those need a run. A file whose path and fingerprint
    match the recorded ones is not hashed; any other is, and needs a run only if its hash
    differs (a ``touch`` does not). The sensor watches content only; pipeline-version
    changes are the schedule's."""
    wanted = {}
    for key, state in files.items():
        meta = last.get(key)
        if meta and meta.get("fingerprint") == state.fingerprint and meta.get("source_path") == state.path:
            continue
        digest = content_hash(state.path)
        indexed = DocumentVersion(str(meta.get("content_hash", "")), "") if meta else None
        if document_state(digest, indexed, None).stale:
            wanted[key] = digest
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


def gone_documents(orphans: list[str], last: Mapping[str, Mapping], root: Path) -> dict[str, str]:
    """key -> doc id of the registered documents that came from this folder and whose file
    is gone. A partition never materialized was registered by the sensor (the CLI
    materializes what it registers); one ingested from elsewhere (``evidence-pipeline
    ingest /other/x.pdf``) is not the sensor's to delete."""
    gone = {}
    for key in orphans:
        meta = last.get(key)
        if meta is None:
            gone[key] = doc_id_from_key(key) or key
        elif _under(meta.get("source_path"), root) and not Path(meta["source_path"]).exists():
            gone[key] = meta.get("doc_id") or doc_id_from_key(key) or key
    return gone


IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def in_flight_keys(instance: dg.DagsterInstance, job_name: str, order: list[str]) -> set[str]:
    """Partition keys covered by runs of the job that are queued or running (ranges expanded
    along ``order``, the partitions' order): their documents are requested already."""
    position = {k: i for i, k in enumerate(order)}
    keys: set[str] = set()
    for run in instance.get_runs(filters=dg.RunsFilter(job_name=job_name, statuses=IN_FLIGHT)):
        tags = run.tags
        if tags.get("dagster/partition"):
            keys.add(tags["dagster/partition"])
        first, last = position.get(tags.get(RANGE_START_TAG, "")), position.get(tags.get(RANGE_END_TAG, ""))
        if first is not None and last is not None:
            keys.update(order[first : last + 1])
    return keys


def partition_requests(new_keys: list[str], deleted: list[str]) -> list:
    requests: list = [
        documents.build_add_request(new_keys[start : start + PARTITIONS_PER_REQUEST])
        for start in range(0, len(new_keys), PARTITIONS_PER_REQUEST)
    ]
    if deleted:
        requests.append(documents.build_delete_request(deleted))
    return requests


def build_corpus_sensor(minimum_interval_seconds: int = 30) -> dg.SensorDefinition:
    @dg.sensor(
        job_name=ASSET_JOB_NAME,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=dg.DefaultSensorStatus.STOPPED,
        description=(
            "Scans the corpus folder: registers new documents as partitions, ingests new and changed files "
            "(by SHA-256 content hash), and removes deleted files' partitions and points."
        ),
    )
    def corpus_sensor(context: dg.SensorEvaluationContext, corpus: CorpusResource, store: StoreResource) -> dg.SensorResult:
        root = Path(corpus.root)
        cursor = Cursor.load(context.cursor)
        found = scan(root)
        for path in found.duplicates:
            context.log.warning(f"{path}: same document id as another file of the corpus; skipped")
        files = stat_files(found.paths)
        digests = bucket_digests(files)
        changed = cursor.changed_buckets(digests)

        # An unchanged folder with no deletion pending asks the instance nothing.
        busy = bool(changed or cursor.deleting)
        registered = list(context.instance.get_dynamic_partitions(documents.name)) if busy else []
        registered_set = set(registered)
        # Only the files of moved buckets are compared with the instance.
        to_check = [k for k in files if bucket_of(k) in changed]
        orphans = [k for k in registered if k not in files and bucket_of(k) in changed and k not in cursor.deleting]
        last = latest_metadata(context.instance, "raw_pdfs", [k for k in to_check if k in registered_set] + orphans)
        wanted = changed_files({k: files[k] for k in to_check}, last)
        # A registered document never materialized may be waiting in a queued run (a moved
        # bucket re-checks it): not requested twice.
        waiting = [k for k in wanted if k in registered_set and k not in last]
        if waiting:
            queued = in_flight_keys(context.instance, ASSET_JOB_NAME, registered)
            wanted = {k: h for k, h in wanted.items() if k not in queued}

        deleting = {**cursor.deleting, **gone_documents(orphans, last, root)}
        deleting = {k: d for k, d in deleting.items() if k not in files}  # a file that came back stays
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

        new_keys = [k for k in files if k not in registered_set] if changed else []
        order = [k for k in registered if k not in deleted] + new_keys
        requests = batched_run_requests(order, wanted) if wanted else []
        context.log.info(
            f"{len(files)} documents, {len(changed)} of {BUCKETS} buckets changed: {len(new_keys)} new, "
            f"{len(wanted)} to ingest, {len(deleted)} deleted, {len(deleting)} deletions pending"
        )
        return dg.SensorResult(
            run_requests=requests,
            dynamic_partitions_requests=partition_requests(new_keys, [k for k in deleted if k in registered_set]),
            cursor=Cursor(digests, deleting, fresh=False).dump(),
        )

    return corpus_sensor
