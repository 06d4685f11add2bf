"""The collection as a contract for applications that query Qdrant with their own client.

Everything here is derived from the code that writes the points, never written twice:
payload keys and types from ``payload.PointPayload``, vector names from ``settings``,
indexed keys, point ids and RRF constant from ``store.base``, the sparse query encoding
from ``bm25_query`` (the self-contained file an application copies).

``collection_contract(dim)`` returns it as a record (the service serves it at
``/contract``); ``contract_markdown`` renders the README's schema table.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from evidence_pipeline.bm25_query import TOKENIZER_VERSION
from evidence_pipeline.payload import PointPayload
from evidence_pipeline.settings import DENSE_VECTOR, SPARSE_VECTOR
from evidence_pipeline.store.base import INDEXED_KEYWORDS, POINT_NAMESPACE, RRF_K


class PayloadKey(BaseModel):
    model_config = ConfigDict(frozen=True)

    key: str
    type: str
    indexed: bool
    description: str


class CollectionContract(BaseModel):
    model_config = ConfigDict(frozen=True)

    dense_vector: str
    dense_distance: str
    dense_dim: int | None
    sparse_vector: str
    sparse_modifier: str
    sparse_query: str
    tokenizer_version: str
    point_id: str
    point_namespace: str
    group_by: str
    rrf_k: int
    payload: list[PayloadKey]


def _type_name(schema: dict[str, Any]) -> str:
    """A JSON-schema property as one short type name: ``string``, ``array of integer``, ``string or null``."""
    if "$ref" in schema:  # a nested record: its fields are in the key's description
        return "object"
    if "anyOf" in schema:
        return " or ".join(_type_name(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " or ".join(f'"{v}"' for v in schema["enum"])
    if schema.get("type") == "array":
        return "array of " + _type_name(schema.get("items", {}))
    return str(schema.get("type", "any"))


def payload_keys() -> list[PayloadKey]:
    """Every payload key a point carries, in ``PointPayload`` field order."""
    props = PointPayload.model_json_schema()["properties"]
    return [
        PayloadKey(
            key=name,
            type=_type_name(props[name]),
            indexed=name in INDEXED_KEYWORDS,
            description=field.description or "",
        )
        for name, field in PointPayload.model_fields.items()
    ]


def collection_contract(dim: int | None = None) -> CollectionContract:
    """The schema of the collection; ``dim`` is the embedding model's (384 for the default)."""
    return CollectionContract(
        dense_vector=DENSE_VECTOR,
        dense_distance="Cosine",
        dense_dim=dim,
        sparse_vector=SPARSE_VECTOR,
        sparse_modifier="IDF",
        sparse_query="bm25_query.query_vector(text): value 1.0 per distinct token index, indices sorted",
        tokenizer_version=TOKENIZER_VERSION,
        point_id=(
            "bytes 0-7: blake2b(doc_id + '\\x1f' + parent_id, digest_size=8); bytes 8-15: bytes 8-15 of "
            "uuid5(point_namespace, doc_id + '\\x1f' + child_id); version 5 and RFC 4122 variant bits set "
            "(the first 18 characters name the parent)"
        ),
        point_namespace=str(POINT_NAMESPACE),
        group_by="parent_id",
        rrf_k=RRF_K,
        payload=payload_keys(),
    )


def contract_markdown(contract: CollectionContract) -> str:
    """The schema as README markdown: vectors, ids, then one table row per payload key."""
    c = contract
    dim = f"{c.dense_dim}-dimensional" if c.dense_dim else "model-dimensional"
    lines = [
        f"- dense vector `{c.dense_vector}`: {dim}, {c.dense_distance} distance;",
        f"- sparse vector `{c.sparse_vector}`: BM25 term-frequency weights, modifier {c.sparse_modifier} "
        f"(Qdrant supplies IDF); query: `{c.sparse_query}`, tokenizer `{c.tokenizer_version}`;",
        f"- point id: `{c.point_id}`, namespace `{c.point_namespace}`;",
        f"- one point per child; group by `{c.group_by}` for one result per table or section chunk; RRF with k={c.rrf_k}.",
        "",
        "| payload key | type | indexed | meaning |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{p.key}` | {p.type} | {'keyword' if p.indexed else ''} | {p.description} |" for p in c.payload]
    return "\n".join(lines) + "\n"
