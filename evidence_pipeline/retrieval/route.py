"""Stage 1, route: the documents a query names, and the scopes the next stages search.

The cards of the stored documents (their card points' payloads, ``stored_cards``) resolve
the documents a query refers to (``named_documents.RoutingIndex``: an id, a title or part of it, an
organisation, a period). When the query names documents other than the caller's scope, the
routed documents are searched as a scope of their own that ranks above the caller's
(``fuse.fuse_scopes``); nothing is filtered out, and a query that names no document is
searched in the caller's scope alone.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from evidence_pipeline.payload import DocumentStamp
from evidence_pipeline.records import DocumentCard
from evidence_pipeline.retrieval.named_documents import RoutingIndex
from evidence_pipeline.retrieval.named_statements import NamedStatements
from evidence_pipeline.retrieval.query import Query
from evidence_pipeline.store.base import Store


@dataclass(frozen=True)
class Routing:
    """How the documents a query names rank against the rest.

    ``mode``: ``first`` puts the routed list's parents first and fills with the global list;
    ``fusion`` fuses both lists by RRF with the routed list weighted ``weight`` (ties go to
    the routed list); ``off`` ignores the cards. Routed are the documents whose strength is
    at least ``min_strength`` and ``ratio`` of the strongest one's (``RoutingIndex.resolve``).
    """

    mode: Literal["first", "fusion", "off"] = "first"
    min_strength: float = 0.3
    ratio: float = 0.8
    weight: float = 2.0


DEFAULT_ROUTING = Routing()

OFF = Routing(mode="off")

CARD_FIELDS = tuple(DocumentStamp.model_fields)
_routing_indexes: weakref.WeakKeyDictionary[object, tuple[object, str, RoutingIndex]] = weakref.WeakKeyDictionary()


def stored_cards(store: Store) -> list[DocumentCard]:
    """The cards of the documents in ``store``, read from their card points' payloads."""
    return _cards(store.payloads("unit_kind", "card", CARD_FIELDS))


def _cards(payloads: list[dict]) -> list[DocumentCard]:
    return [DocumentStamp.model_validate(p).card() for p in payloads]


def routing_index(store: Store) -> RoutingIndex:
    """The routing index of the documents in ``store``, rebuilt only when its cards change. The
    card payloads (one small point per document) are read again unless the store's ``revision``
    says nothing changed since the last call (an embedded store kept open between searches)."""
    revision = store.revision
    cached = _routing_indexes.get(store)
    if cached is not None and revision is not None and cached[0] == revision:
        return cached[2]
    payloads = store.payloads("unit_kind", "card", CARD_FIELDS)
    key = json.dumps(sorted(payloads, key=lambda p: p["doc_id"]), sort_keys=True)
    index = cached[2] if cached is not None and cached[1] == key else RoutingIndex(_cards(payloads))
    _routing_indexes[store] = (revision, key, index)
    return index


def routed_documents(query: Query | str, index: RoutingIndex, routing: Routing, doc_ids: Sequence[str] | None = None) -> list[str]:
    """The documents ``query`` is routed to, strongest first (within ``doc_ids`` when given); [] for none."""
    return routed_of([(d, s) for d, s in index.resolve(query) if doc_ids is None or d in doc_ids], routing)


def routed_of(resolved: Sequence[tuple[str, float]], routing: Routing) -> list[str]:
    """The documents of ``resolved`` (``RoutingIndex.resolve``'s answer, strongest first) that
    ``routing`` routes to: at least ``min_strength`` and ``ratio`` of the strongest; [] for none."""
    if not resolved or resolved[0][1] < routing.min_strength:
        return []
    top = resolved[0][1]
    return [d for d, s in resolved if s >= max(routing.min_strength, routing.ratio * top)]


@dataclass(frozen=True)
class Scope:
    """Where one ranked list is searched: the documents (None: every one) and the statements the
    query names there. A measure asks for the statement of the documents a query is about, so a
    scope of every document keeps only the statements named by name."""

    doc_ids: Sequence[str] | None
    statements: NamedStatements


@dataclass(frozen=True)
class Route:
    """The scopes to search, in rank order: ``routed`` (the documents the query names, None when
    it names none or only the caller's) ranks above ``scope`` (the caller's ``doc_ids``)."""

    routed: Scope | None
    scope: Scope


def route(store: Store, query: Query, routing: Routing = DEFAULT_ROUTING, doc_ids: Sequence[str] | None = None) -> Route:
    """The ``Route`` of ``query`` over ``store``: the documents it names (``routing``: ``Routing``), and the
    statements it names, a measure right after a name of the documents it is about (the routed
    ones, else the caller's) counting as the company's own."""
    index = routing_index(store) if routing.mode != "off" or doc_ids else None
    routed = routed_documents(query, index, routing, doc_ids) if index is not None and routing.mode != "off" else []
    cards = index.cards if index is not None else {}
    about = [d for d in routed or doc_ids or () if d in cards]
    statements = NamedStatements(query, names=[n for d in about for n in cards[d].known_as])

    def scope(ids: Sequence[str] | None) -> Scope:
        return Scope(ids, statements if ids else statements.without_measures())

    if routed and set(routed) != set(doc_ids or ()):
        return Route(scope(routed), scope(doc_ids))
    return Route(None, scope(doc_ids))
