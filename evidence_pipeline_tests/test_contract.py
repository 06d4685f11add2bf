"""The collection contract: the published tokenizer, the schema, and the README's qdrant-client example."""

import ast
import hashlib
import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from evidence_pipeline import bm25_query
from evidence_pipeline.contract import collection_contract, contract_markdown
from evidence_pipeline.payload import PointPayload
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline_tests.corpus_store import corpus_store, sop_questions  # noqa: F401  (fixture)

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "docs" / "examples" / "qdrant_client_query.py"
TOKENIZER = REPO / "evidence_pipeline" / "bm25_query.py"

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect in the local Qdrant")


def _queries() -> list[str]:
    """Every question of the repository's question files, plus inputs that test the rules."""
    texts = [
        json.loads(line)["question"]
        for path in sorted((REPO / "data" / "questions").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return texts + [
        "USP <85> and USP<87>, EP <2.6.14>, <3.1>",
        "ISO-9001:2015 lot_A12 21/CFR 1,000 units 3.5 mL",
        "ＳＯＰ－ＱＡ－０７０ Straße ﬁle ÉCHANTILLON",
        "the of and",  # stopwords only: an empty vector
        "",
    ]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    return names


def test_tokenizer_file_uses_the_standard_library_only():
    assert _imports(TOKENIZER) <= set(sys.stdlib_module_names) | {"__future__"}
    assert "evidence_pipeline" not in _imports(EXAMPLE)


def test_a_copied_tokenizer_gives_exactly_the_pipelines_query_vectors(tmp_path):
    """The file copied alone into an empty folder, run by a Python that ignores PYTHONPATH."""
    shutil.copy(TOKENIZER, tmp_path / "bm25_query.py")
    queries = _queries()
    (tmp_path / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    script = (
        "import json, bm25_query\n"
        "qs = json.load(open('queries.json', encoding='utf-8'))\n"
        "print(json.dumps({'version': bm25_query.TOKENIZER_VERSION, 'vectors': [bm25_query.query_vector(q) for q in qs]}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-E", "-s", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60
    ).stdout
    copied = json.loads(out)
    assert copied["version"] == bm25_query.TOKENIZER_VERSION
    encoder = SparseEncoder()
    assert len(queries) > 100
    for query, (indices, values) in zip(queries, copied["vectors"], strict=True):
        expected = encoder.encode_query(query)
        assert (indices, values) == (expected.indices, expected.values), query
    assert copied["vectors"][-2] == [[], []]


def test_identifiers_stay_whole_tokens():
    tokens = bm25_query.tokenize("Under SOP-QA-070 see USP <85>; tables of batches")
    assert {"sop-qa-070", "usp<85>", "table", "batch"} <= set(tokens)
    assert bm25_query.token_index("sop-qa-070") != bm25_query.token_index("sop-qa-007")


def test_contract_lists_every_payload_key_with_its_type():
    contract = collection_contract(384)
    keys = {p.key: p for p in contract.payload}
    assert list(keys) == list(PointPayload.model_fields)
    assert keys["pages"].type == "array of integer"
    assert keys["caption"].type == "string or null"
    assert keys["unit_kind"].type == '"table" or "section" or "card"'
    assert {k for k, p in keys.items() if p.indexed} == {"doc_id", "parent_id", "unit_kind", "statement"}
    assert keys["statement"].type == "string or null"
    assert (contract.dense_vector, contract.sparse_vector, contract.dense_dim, contract.rrf_k) == ("dense", "bm25", 384, 60)
    md = contract_markdown(contract)
    assert md.count("\n| `") == len(keys) and "384-dimensional" in md


@pytest.fixture(scope="module")
def local_mode(corpus_store, tmp_path_factory):
    """The sample store copied into a qdrant-client local-mode folder, collection ``evidence``."""
    from evidence_pipeline.settings import StoreSettings
    from evidence_pipeline.store import open_store
    from evidence_pipeline.store.copy import copy_store
    from evidence_pipeline.store.server import ServerStore

    path = tmp_path_factory.mktemp("local-mode") / "qdrant"
    with open_store(corpus_store) as source, ServerStore(StoreSettings(), path=str(path)) as target:
        result = copy_store(source, target)
    assert result.documents == 6
    return path


def test_stored_points_follow_the_contract(local_mode):
    from qdrant_client import QdrantClient

    contract = collection_contract()
    client = QdrantClient(path=str(local_mode))
    try:
        info = client.get_collection("evidence")
        records, _ = client.scroll("evidence", limit=50, with_payload=True, with_vectors=True)
    finally:
        client.close()
    assert info.config.params.vectors[contract.dense_vector].distance.value == contract.dense_distance
    assert info.config.params.sparse_vectors[contract.sparse_vector].modifier.value.upper() == contract.sparse_modifier
    namespace = uuid.UUID(contract.point_namespace)
    for r in records:
        assert list(r.payload) == [p.key for p in contract.payload]
        assert r.payload["bm25_tokenizer"] == bm25_query.TOKENIZER_VERSION
        doc, parent, child = r.payload["doc_id"], r.payload["parent_id"], r.payload["child_id"]
        raw = bytearray(hashlib.blake2b(f"{doc}\x1f{parent}".encode(), digest_size=8).digest())
        raw += uuid.uuid5(namespace, f"{doc}\x1f{child}").bytes[8:]
        raw[6], raw[8] = (raw[6] & 0x0F) | 0x50, (raw[8] & 0x3F) | 0x80
        assert str(r.id) == str(uuid.UUID(bytes=bytes(raw)))  # the contract's recipe, spelled out here
        assert len(r.vector[contract.dense_vector]) == 384


def _five_questions(store_settings) -> list[str]:
    """The first question of five documents that names no document (the example has no routing)."""
    from evidence_pipeline.retrieval import routing_index
    from evidence_pipeline.store import open_store

    with open_store(store_settings) as store:
        index = routing_index(store)
    chosen: dict[str, str] = {}
    for q in sop_questions():
        if q["doc_id"] not in chosen and not index.resolve(q["question"]):
            chosen[q["doc_id"]] = q["question"]
    return list(chosen.values())[:5]


def test_readme_example_returns_the_first_parent_of_search(local_mode, corpus_store, tmp_path):
    from evidence_pipeline.retrieval import search

    questions = _five_questions(corpus_store)
    assert len(questions) == 5
    for source in (EXAMPLE, TOKENIZER):
        shutil.copy(source, tmp_path / source.name)
    proc = subprocess.run(
        [sys.executable, "-E", "-s", str(tmp_path / EXAMPLE.name), "--path", str(local_mode), "--json", *questions],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [a["question"] for a in answers] == questions
    for answer in answers:
        expected = search(answer["question"], k=3, store_settings=corpus_store)
        assert answer["parents"][0] == expected[0].parent_id, answer["question"]
        # Where the parent is printed, read from the plain point: the same regions search gives.
        where = answer["where"][0]
        assert where["boxes"] == [b.model_dump() for b in expected[0].boxes] and where["boxes"], answer["question"]
        row = where["row_box"]
        if row is not None:  # the plain client's best child was a row: its box lies inside the parent's region
            assert any(b["page"] == row["page"] and b["t"] <= row["t"] + 0.5 and row["b"] <= b["b"] + 0.5 for b in where["boxes"])
