"""Query the index: dense + BM25 fused by RRF in Qdrant, one hit per parent.

Document routing: dense vectors barely tell SOP-QA-070 from SOP-QA-007, or Apple's
10-Q for one quarter from the next, and BM25 sees the names in every document. The
cards of the indexed documents (their card points' payloads, ``stored_cards``) resolve
the documents a query refers to (``routing.RoutingIndex``: an id, a title or part of it,
an organisation, a period). The same hybrid query then also runs restricted to those
documents, and the routed list ranks above the global one (``Routing``): a document the
query names comes first; nothing is filtered out, so the global list fills the rest and
a query that names no document gets the global list unchanged.
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

from evidence_pipeline.embedding import Embedder, token_counter
from evidence_pipeline.records import DocumentCard, SearchHit, document_head
from evidence_pipeline.payload import DocumentStamp, PointPayload
from evidence_pipeline.routing import RoutingIndex
from evidence_pipeline.row_names import NAMED_ROW_DEPTH, promote_named_rows
from evidence_pipeline.settings import EmbeddingSettings, StoreSettings
from evidence_pipeline.sparse import SparseEncoder
from evidence_pipeline.splitting import piece_number
from evidence_pipeline.statements import NamedStatements
from evidence_pipeline.units import approx_tokens
from evidence_pipeline.store import reading_store
from evidence_pipeline.store.base import RRF_K, SparseVector, Store, StoredHit


def to_hit(stored: StoredHit) -> SearchHit:
    p = PointPayload.model_validate(stored.payload)
    return SearchHit(
        parent_id=p.parent_id,
        unit_id=p.unit_id,
        score=stored.score,
        doc_id=p.doc_id,
        doc_title=p.doc_title,
        pages=p.pages,
        section_path=p.section_path,
        caption=p.caption,
        unit_kind=p.unit_kind,
        matched_text=p.text,
        parent_text=p.parent_text,
        statement=p.statement,
    )


@dataclass(frozen=True)
class Routing:
    """How the documents a query names rank against the rest.

    ``mode``: ``first`` puts the routed list's parents first and fills with the global list;
    ``fusion`` fuses both lists by RRF with the routed list weighted ``weight`` (ties go to
    the routed list); ``off`` ignores the cards. Routed are the documents whose strength is
    at least ``min_strength`` and ``ratio`` of the strongest one's (``RoutingIndex.resolve``).

    Measured (full system, `eval` sets): ``first``, ``fusion`` with weight 1.2 and with 2 gave
    the same figures (eval-sec doc@1 0.742 -> 0.903, ev@1 0.129 -> 0.194 at a 3000 budget;
    SOP ev@1 0.906 -> 0.943); ``ratio`` 0.6 routed to too many documents (doc@1 0.839).
    ``first`` is the simplest: the routed documents' parents always rank above the rest.
    """

    mode: Literal["first", "fusion", "off"] = "first"
    min_strength: float = 0.3
    ratio: float = 0.8
    weight: float = 2.0


DEFAULT_ROUTING = Routing()

CARD_FIELDS = tuple(DocumentStamp.model_fields)
_routing_indexes: "weakref.WeakKeyDictionary[object, tuple[object, str, RoutingIndex]]" = weakref.WeakKeyDictionary()


def stored_cards(store: Store) -> list[DocumentCard]:
    """The cards of the documents in ``store``, read from their card points' payloads."""
    return _cards(store.payloads("unit_kind", "card", CARD_FIELDS))


def _cards(payloads: list[dict]) -> list[DocumentCard]:
    return [DocumentStamp.model_validate(p).card() for p in payloads]


def routing_index(store: Store) -> RoutingIndex:
    """The routing index of the documents in ``store``, rebuilt only when its cards change.
    The card payloads (one small point per document) are read again unless the store's
    ``revision`` says nothing changed since the last call (an embedded store kept open
    between searches: ~1,000 cards to read at 100k children)."""
    revision = store.revision
    cached = _routing_indexes.get(store)
    if cached is not None and revision is not None and cached[0] == revision:
        return cached[2]
    payloads = store.payloads("unit_kind", "card", CARD_FIELDS)
    key = json.dumps(sorted(payloads, key=lambda p: p["doc_id"]), sort_keys=True)
    index = cached[2] if cached is not None and cached[1] == key else RoutingIndex(_cards(payloads))
    _routing_indexes[store] = (revision, key, index)
    return index


def routed_documents(query: str, index: RoutingIndex, routing: Routing, doc_ids: Sequence[str] | None = None) -> list[str]:
    resolved = [(d, s) for d, s in index.resolve(query) if doc_ids is None or d in doc_ids]
    if not resolved or resolved[0][1] < routing.min_strength:
        return []
    top = resolved[0][1]
    return [d for d, s in resolved if s >= max(routing.min_strength, routing.ratio * top)]


def weighted_rrf(rankings: Sequence[tuple[Sequence[StoredHit], float]], k: int, rrf_k: int = RRF_K) -> list[StoredHit]:
    """Reciprocal rank fusion with a weight per list; a parent keeps its first-seen hit.

    Equal scores are ordered as the earliest list that holds them ranks them (the routed
    list goes first), then by parent id, so one query gives one order on every run.
    """
    scores: dict[str, float] = {}
    first: dict[str, tuple[int, int, StoredHit]] = {}
    for n, (ranking, weight) in enumerate(rankings):
        for rank, hit in enumerate(ranking):
            parent = hit.payload["parent_id"]
            scores[parent] = scores.get(parent, 0.0) + weight / (rrf_k + rank + 1)
            first.setdefault(parent, (n, rank, hit))
    order = sorted(scores, key=lambda p: (-scores[p], first[p][0], first[p][1], p))[:k]
    return [first[p][2].model_copy(update={"score": scores[p]}) for p in order]


def routed_first(routed: Sequence[StoredHit], stored: Sequence[StoredHit], k: int) -> list[StoredHit]:
    """The routed list's parents, then the global list's other parents, k in all."""
    seen = {h.payload["parent_id"] for h in routed}
    return [*routed, *(h for h in stored if h.payload["parent_id"] not in seen)][:k]


WHOLE_TABLE_TOKENS = 6000
"""A split table comes back whole when all its pieces together fit this many word pieces
(estimated, ``units.approx_tokens``); above it, the piece that matched plus the pieces that
hold a term of the query (an identifier or a figure such as "FT-2070"), in order, to this size.
The piece that matched alone is often not the one holding the asked row: its caption and
header match as well as the row does, and every piece repeats them. The estimate runs below the
model's count on tables (markup and figures): 3000 and 6000 gave the same figures on the SOP
and near-twin sets (every split table there came back whole)."""

_KEY_TERM = re.compile(r"[A-Za-z]*\d[\w.,/-]*|[A-Z][A-Za-z0-9]*[-_/][A-Za-z0-9-_/]+")


def query_terms(query: str) -> list[str]:
    """Terms of ``query`` that pick rows: identifiers and figures ("FT-2070", "2,184", "Q3")."""
    return [t.strip(".,") for t in _KEY_TERM.findall(query) if len(t.strip(".,")) >= 2]


def whole_table(store: Store, hit: StoredHit, query: str, max_tokens: int = WHOLE_TABLE_TOKENS) -> StoredHit:
    """``hit`` with the text of its whole split table, or of the pieces that matter (see
    ``WHOLE_TABLE_TOKENS``); a hit that is not a piece of a split table comes back as is."""
    payload = hit.payload
    if payload.get("unit_id") == payload.get("parent_id") or max_tokens <= 0:
        return hit
    pieces = sorted(store.parent(payload["parent_id"]), key=lambda p: piece_number(p.payload["unit_id"], p.payload["parent_id"]))
    if len(pieces) < 2:
        return hit
    texts = context_texts([to_hit(p) for p in pieces])
    sizes = [approx_tokens(t) for t in texts]
    if sum(sizes) > max_tokens:
        lowered = [p.payload.get("parent_text", "").lower() for p in pieces]
        # a term every piece holds (the document's id in each head) picks no row
        terms = [t for t in (t.lower() for t in query_terms(query)) if not all(t in text for text in lowered)]
        wanted = [p.payload["unit_id"] == payload["unit_id"] or any(t in text for t in terms) for p, text in zip(pieces, lowered)]
        keep, used = [], 0
        for n in sorted(range(len(pieces)), key=lambda n: (pieces[n].payload["unit_id"] != payload["unit_id"], n)):
            if wanted[n] and (not keep or used + sizes[n] <= max_tokens):
                keep.append(n)
                used += sizes[n]
        if len(keep) < 2:
            return hit
        pieces = [pieces[n] for n in sorted(keep)]
        texts = context_texts([to_hit(p) for p in pieces])
    pages = sorted({page for p in pieces for page in p.payload.get("pages", [])})
    merged = {**payload, "parent_text": "\n\n".join(texts), "pages": pages}
    return hit.model_copy(update={"payload": merged})


LEXICAL_TABLES = 10
"""Tables of BM25's own ranking that ``with_lexical`` adds to the candidates for
``promote_named_rows`` (only a table has rows a query can name; see ``with_lexical``)."""


def with_lexical(fused: Sequence[StoredHit], lexical: Sequence[StoredHit]) -> list[StoredHit]:
    """The fused list, then the parents of BM25's own ranking of tables that it does not hold, in
    that ranking's order: candidates for ``promote_named_rows`` only (they follow every fused
    parent, so none moves up unless the query names one of its rows).

    A statement whose row the query names ("research and development") can rank 21st in the
    fused list, below prose and MD&A tables that share the query's other words, while BM25
    alone ranks it 7th: the label's words are rare in the prose around it. Measured (full system,
    ev@1 / ev@5, same commit and cache, fused list only -> with BM25's first 20): `make eval-sec`
    0.387 / 0.548 -> 0.419 / 0.613, `make eval-finance` 0.440 / 0.680 -> 0.440 / 0.720;
    `make eval-sec-lookup`, `make eval`, `make eval-twins` and `make eval-korean` unchanged
    (pipeline version 13; the first figures with ``[]`` passed for ``lexical`` in ``search_store``).
    The extra BM25 query costs 1-4 ms of search p50 (README, "Measured").

    Only tables: a section chunk has no row to name, so BM25's own first 20 had added at most
    the tables among them. Its first ``LEXICAL_TABLES`` tables instead (on version 16's parse,
    which gives the same figures as version 17's at 10; ev@5 at 5 / 10 / 20 / 30 tables):
    `make eval-sec` 0.613 / 0.645 / 0.645 / 0.645 (was 0.613 with the first 20 parents of any
    kind: Intel's income statement and Microsoft's inventories note now among the candidates),
    `make eval-finance` 0.720 / 0.760 / 0.720 / 0.720 (was 0.760; at 20 and more, the pension
    plans' "Equities" row is named by "a public equities analyst");
    ev@1 unchanged but eval-finance at 20-30 (0.360 -> 0.320); `make eval-sec-lookup`, `make
    eval`, `make eval-twins`, `make eval-korean`, `make eval-protocols` unchanged at 10. The
    filtered query costs under 1.5 ms of search p50 (README, "Measured")."""
    seen = {h.payload["parent_id"] for h in fused}
    return [*fused, *(h for h in lexical if h.payload["parent_id"] not in seen)]


STATEMENT_TABLES = 5
"""Parents of each statement the query names that may join the candidates (``with_statements``):
a statement split in pieces is one parent."""


def with_statements(
    found: Sequence[StoredHit], store: Store, sparse: SparseVector, statements: NamedStatements, doc_ids: Sequence[str] | None
) -> list[StoredHit]:
    """``found``, then BM25's ranking of the tables that are a statement the query names
    (payload ``statement``: "... shown in the statement of income" asks for the "Consolidated
    Statements of Operations") that it does not hold: candidates for ``promote_named_rows``,
    which moves them up. A statement whose rows the question does not name ("year-over-year
    change in revenue" of a statement that prints "Total net sales") can be in neither the
    fused list nor BM25's first tables."""
    if not statements.kinds:
        return list(found)
    ranked = store.sparse_search(sparse, STATEMENT_TABLES, doc_ids=doc_ids, unit_kind="table", statements=statements.kinds)
    return with_lexical(found, ranked)


def _statement_strength(statements: NamedStatements) -> Callable[[StoredHit], float]:
    return lambda hit: statements.strength(hit.payload)


def _parent_text(hit: StoredHit) -> str:
    return hit.payload.get("parent_text", "")


def search_store(
    store: Store,
    embedder: Embedder,
    query: str,
    k: int = 5,
    *,
    doc_ids: Sequence[str] | None = None,
    dense_only: bool = False,
    routing: Routing = DEFAULT_ROUTING,
    dense: Sequence[float] | None = None,
    whole_table_tokens: int = WHOLE_TABLE_TOKENS,
) -> list[SearchHit]:
    """``dense``: the query's embedding when the caller already has it (``search`` embeds
    before it takes the store, so the store is held only for the query itself).
    A hit on a piece of a split table carries the whole table (``whole_table``)."""
    # A query the dense model only spells out (Korean asked of the English MiniLM): its vector
    # ranks noise and fusing it drags the BM25 ranking down, so BM25 answers alone and the
    # query is not embedded at all.
    hybrid = embedder.reads(query)
    if dense is None and (hybrid or dense_only):
        dense = embedder.embed_query(query).tolist()
    if dense_only:
        return [to_hit(s) for s in store.dense_search(list(dense), k, doc_ids=doc_ids)]
    sparse = SparseEncoder().encode_query(query)

    depth = max(k, NAMED_ROW_DEPTH)
    index = routing_index(store) if routing.mode != "off" or doc_ids else None
    routed_docs = [] if routing.mode == "off" else routed_documents(query, index, routing, doc_ids)
    # the documents the query is about: a measure after one of their names is the company's own
    cards = index.cards if index is not None else {}
    about = [d for d in routed_docs or doc_ids or () if d in cards]
    statements = NamedStatements(query, names=[n for d in about for n in cards[d].known_as])

    def ranked(ids: Sequence[str] | None) -> list[StoredHit]:
        # the statements a query asks a measure of are those of the documents it is about: the
        # routed ones, or the caller's (``NamedStatements.without_measures``)
        named = statements if ids else statements.without_measures()
        if not hybrid:
            found = store.sparse_search(sparse, depth, doc_ids=ids)
            return promote_named_rows(found, query, _parent_text, statement=_statement_strength(named))[:k]
        fused = store.hybrid_search(list(dense), sparse, depth, doc_ids=ids)
        found = with_lexical(fused, store.sparse_search(sparse, LEXICAL_TABLES, doc_ids=ids, unit_kind="table"))
        found = with_statements(found, store, sparse, named, ids)
        return promote_named_rows(found, query, _parent_text, depth=len(found), statement=_statement_strength(named))[:k]

    if routed_docs and set(routed_docs) != set(doc_ids or ()):
        routed = ranked(routed_docs)
        if routing.mode == "first":
            # the global list only fills what the routed documents leave: not asked when they fill k
            stored = routed[:k] if len(routed) >= k else routed_first(routed, ranked(doc_ids), k)
        else:
            stored = weighted_rrf([(routed, routing.weight), (ranked(doc_ids), 1.0)], k)
    else:
        stored = ranked(doc_ids)
    return [to_hit(whole_table(store, s, query, whole_table_tokens)) for s in stored]


def _shared_head(hit: SearchHit) -> str:
    """The lines a parent's text opens with that name its document and section (see EvidenceUnit)."""
    return "".join(line + "\n" for line in document_head(hit.doc_id, hit.doc_title, hit.section_path))


def context_texts(hits: Sequence[SearchHit]) -> list[str]:
    """Document-aware aggregation: when several parents share a document and section, the
    shared header is rendered once (with the first of them) and left out of the others."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    texts = []
    for hit in hits:
        key = (hit.doc_id, tuple(hit.section_path))
        head = _shared_head(hit)
        if key in seen and hit.parent_text.startswith(head):
            texts.append(hit.parent_text[len(head) :])
        else:
            texts.append(hit.parent_text)
        seen.add(key)
    return texts


def render_context(hits: Sequence[SearchHit]) -> str:
    return "\n\n".join(context_texts(hits))


def pack(hits: Sequence[SearchHit], token_budget: int, count_tokens: Callable[[str], int]) -> list[SearchHit]:
    """Parents in rank order while their aggregated text fits ``token_budget`` (the first always)."""
    packed: list[SearchHit] = []
    used = 0
    for hit, text in zip(hits, context_texts(hits)):
        n = count_tokens(text)
        if packed and used + n > token_budget:
            break
        packed.append(hit)
        used += n
    return packed


# With a token budget and no k, the budget decides how many parents come back: up to
# this many candidates are fetched, then packed (a default k would stop the budget early).
BUDGET_CANDIDATES = 50
DEFAULT_K = 5


def check_query(query: str, k: int | None, token_budget: int | None) -> None:
    """ValueError with a one-line reason for input no search can answer."""
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the query is empty")
    if k is not None and k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"the token budget must be at least 1, not {token_budget}")


def budget_note(hits: Sequence[SearchHit], token_budget: int, count_tokens: Callable[[str], int]) -> str | None:
    """Why a packed list exceeds its budget: the first parent alone is larger (it is kept anyway)."""
    if not hits:
        return None
    first = count_tokens(context_texts(hits[:1])[0])
    if first <= token_budget:
        return None
    return f"the first result alone is {first} tokens, over the budget of {token_budget}"


def search(
    query: str,
    k: int | None = None,
    *,
    token_budget: int | None = None,
    store_settings: StoreSettings | None = None,
    embedding_settings: EmbeddingSettings | None = None,
    doc_ids: Sequence[str] | None = None,
) -> list[SearchHit]:
    """The k best distinct parents (tables or section chunks) for ``query`` (k defaults to 5).

    With ``token_budget``, the parents that fit it in rank order (counted in the embedding
    model's word pieces, shared headers once; see ``render_context``), the first always,
    even when it alone is larger (``budget_note`` says so). The budget is applied before
    k: without k, up to ``BUDGET_CANDIDATES`` parents are considered; with k, at most k.
    The embedded store stays open for the next search in this process and is handed over
    when another process queues for it (``store/reader.py``); the embedding model loads
    once per process. Raises ValueError for an empty query, k < 1 or a budget < 1.
    """
    check_query(query, k, token_budget)
    settings = embedding_settings or EmbeddingSettings.from_env()
    embedder = Embedder(settings)
    limit = k if k is not None else (BUDGET_CANDIDATES if token_budget is not None else DEFAULT_K)
    # Embed first: the embedded store admits one process at a time, so it is held only for the query.
    dense = embedder.embed_query(query).tolist() if embedder.reads(query) else None
    with reading_store(store_settings or StoreSettings.from_env()) as store:
        hits = search_store(store, embedder, query, limit, doc_ids=doc_ids, dense=dense)
    if token_budget is not None:
        hits = pack(hits, token_budget, token_counter(settings.model).count)
    return hits
