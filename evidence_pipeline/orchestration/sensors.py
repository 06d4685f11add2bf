"""Sensor: register new documents of the corpus folder and ingest new and changed files."""


import json
from pathlib import Path

import dagster as dg

from evidence_pipeline.corpus import doc_id_for, iter_documents, partition_key
from evidence_pipeline.orchestration.assets import documents
from evidence_pipeline.orchestration.resources import CorpusResource


def _fingerprint(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def build_corpus_sensor(job) -> dg.SensorDefinition:
    @dg.sensor(
        job=job,
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.STOPPED,
        description="Scans the corpus folder; registers new documents as partitions and ingests new and changed files.",
    )
    def corpus_sensor(context: dg.SensorEvaluationContext, corpus: CorpusResource) -> dg.SensorResult:
        seen: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
        registered = set(context.instance.get_dynamic_partitions(documents.name))
        new_keys, requests, current = [], [], {}
        for path in iter_documents(Path(corpus.root)):
            key = partition_key(doc_id_for(path))
            fingerprint = _fingerprint(path)
            current[key] = fingerprint
            if key not in registered:
                new_keys.append(key)
            if seen.get(key) != fingerprint:
                requests.append(dg.RunRequest(partition_key=key, run_key=f"{key}:{fingerprint}"))
        return dg.SensorResult(
            run_requests=requests,
            dynamic_partitions_requests=[documents.build_add_request(new_keys)] if new_keys else [],
            cursor=json.dumps(current),
        )

    return corpus_sensor
