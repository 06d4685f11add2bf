"""Routing on real documents: do a question set's questions resolve to their own document?

    python -m evidence_pipeline.evaluation.routing_eval --docs DIR --questions FILE.jsonl \
        [--cache DIR] [--pages 5] [--cards] [--scale 1000]

Parses the first ``--pages`` pages of every PDF under ``--docs`` (or reads the ``ParsedDoc``
JSON cached under ``--cache``), builds their cards, and resolves every question (JSON Lines with
``question`` and ``doc_id``; ``--split dev|validation``: the questions of that half) against
them. Prints top-1 accuracy (the question's document is the strongest), coverage (anything
resolved), wrong-top (another document is the strongest), what search does with it under the
default routing (``route.routed_of``: routed to its own document alone, among others, or
to others only: ``routed_own``, ``routed_among``, ``routed_elsewhere``) and the time per query;
``--scale N`` repeats the cards to N documents to time a large index.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from pydantic import BaseModel

from evidence_pipeline.cards import CARD_PAGES, DocumentCard, build_card
from evidence_pipeline.evaluation.splits import split_of
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.retrieval.named_documents import RoutingIndex
from evidence_pipeline.retrieval.route import DEFAULT_ROUTING, routed_of


class RoutingFigures(BaseModel):
    questions: int
    top1: float
    coverage: float
    wrong_top: float
    routed_own: float
    routed_among: float
    routed_elsewhere: float
    ms_per_query: float
    cards: int


def load_cards(docs: Path, cache: Path | None, pages: int) -> list[DocumentCard]:
    """Cards of every PDF under ``docs``; parsed ``ParsedDoc``s are cached as JSON in ``cache``."""
    parser = None
    cards = []
    for path in sorted(docs.rglob("*.pdf")):
        cached = cache / f"{path.stem}.json" if cache else None
        if cached is not None and cached.exists():
            doc = ParsedDoc.model_validate_json(cached.read_text())
        else:
            if parser is None:
                from evidence_pipeline.parser import DoclingParser

                parser = DoclingParser()
            doc = parser.parse(path, pages=(1, pages))
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                cached.write_text(doc.model_dump_json())
        cards.append(build_card(doc))
    return cards


def load_questions(path: Path) -> list[tuple[str, str]]:
    """``(question, doc_id)`` pairs of a JSON Lines file (extra keys ignored)."""
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out.append((row["question"], row["doc_id"]))
    return out


def scaled(cards: list[DocumentCard], n: int) -> list[DocumentCard]:
    """``n`` cards: the real ones, then copies under other ids and organisation names (titles
    and periods kept), to time a large index."""
    out = list(cards)
    i = 0
    while len(out) < n:
        card = cards[i % len(cards)]
        out.append(
            card.model_copy(
                update={
                    "doc_id": f"{card.doc_id}#{i}",
                    "organisation": f"{card.organisation} {i}" if card.organisation else None,
                    "names": [f"{n} {i}" for n in card.names],
                    "tickers": [f"X{i}"],
                    "identifiers": [f"{x}-{i}" for x in card.identifiers],
                }
            )
        )
        i += 1
    return out


def evaluate(cards: list[DocumentCard], questions: list[tuple[str, str]]) -> RoutingFigures:
    index = RoutingIndex(cards)
    hits = covered = wrong = 0
    if questions:
        index.resolve(questions[0][0])  # compiles the patterns once, outside the timing
    start = time.perf_counter()
    results = [index.resolve(q) for q, _ in questions]
    elapsed = time.perf_counter() - start
    routed = Counter(_routed_kind(routed_of(resolved, DEFAULT_ROUTING), doc_id) for (_, doc_id), resolved in zip(questions, results))
    for (_, doc_id), resolved in zip(questions, results):
        if resolved:
            covered += 1
            top = resolved[0][0]
            # a copy made by --scale counts as its original
            hits += top.split("#")[0] == doc_id
            wrong += top.split("#")[0] != doc_id
    n = max(len(questions), 1)
    return RoutingFigures(
        questions=len(questions),
        top1=round(hits / n, 3),
        coverage=round(covered / n, 3),
        wrong_top=round(wrong / n, 3),
        routed_own=round(routed["own"] / n, 3),
        routed_among=round(routed["among"] / n, 3),
        routed_elsewhere=round(routed["elsewhere"] / n, 3),
        ms_per_query=round(1000 * elapsed / n, 3),
        cards=len(cards),
    )


def _routed_kind(routed: list[str], doc_id: str) -> str:
    """ "own": routed to ``doc_id`` alone; "among": to it and others; "elsewhere": to others only;
    "none": to no document (a copy made by ``scaled`` counts as its original)."""
    originals = {d.split("#")[0] for d in routed}
    if not originals:
        return "none"
    if doc_id not in originals:
        return "elsewhere"
    return "own" if originals == {doc_id} else "among"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evidence_pipeline.evaluation.routing_eval")
    ap.add_argument("--docs", type=Path, required=True, help="folder of PDFs")
    ap.add_argument("--questions", type=Path, required=True, help="JSON Lines with question and doc_id")
    ap.add_argument("--cache", type=Path, help="folder for parsed documents (JSON)")
    ap.add_argument("--pages", type=int, default=CARD_PAGES, help="first pages parsed for a card")
    ap.add_argument("--split", choices=("dev", "validation", "all"), default="all", help="the questions of one half (by document)")
    ap.add_argument("--cards", action="store_true", help="print the cards")
    ap.add_argument("--misses", action="store_true", help="print questions whose top document is not theirs")
    ap.add_argument("--scale", type=int, default=0, help="also time an index of this many cards")
    args = ap.parse_args(argv)
    if not args.docs.is_dir():
        print(f"{args.docs}: not a folder", file=sys.stderr)
        return 2
    cards = load_cards(args.docs, args.cache, args.pages)
    questions = load_questions(args.questions)
    if args.split != "all":
        questions = [(q, d) for q, d in questions if split_of(d) == args.split]
    if args.cards:
        for card in cards:
            print(json.dumps(card.model_dump(exclude_defaults=True), ensure_ascii=False))
    figures = evaluate(cards, questions)
    print(f"{args.questions.name}: {figures.model_dump_json()}")
    if args.misses:
        index = RoutingIndex(cards)
        for q, doc_id in questions:
            resolved = index.resolve(q)
            if not resolved or resolved[0][0] != doc_id:
                print(f"  miss [{doc_id}] {q[:110]} -> {resolved[:3]}")
    if args.scale:
        big = evaluate(scaled(cards, args.scale), questions)
        print(f"{args.scale} cards: {big.ms_per_query} ms per query")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
