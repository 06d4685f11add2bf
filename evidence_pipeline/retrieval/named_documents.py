"""Which documents a query names, read off the documents' cards.

``RoutingIndex(cards).resolve(query)`` returns ``[(doc_id, strength), ...]``, strongest first,
for the documents the query names: by an identifier (exact), by its title or a distinctive part
of it, by its organisation (a legal or short name, or a ticker or the initials of a name of
three words or more printed in capitals), or by a period (``query.PeriodRef``) beside one of
those. A query that names no document gets ``[]``. Everything comes from
the cards; nothing is listed in the code.

Strengths (0..1) add up by kind, so a document that matches several references outranks one
that matches a single one: an identifier alone is decisive; organisation and period together
beat either alone; a period alone (no organisation or title in the query) is a weak hint.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from evidence_pipeline.cards import short_names
from evidence_pipeline.records import DocumentCard
from evidence_pipeline.retrieval.query import PeriodRef, Query, read_query
from evidence_pipeline.vocabulary import NAME_STOPWORDS, name_words, without_dates

ID_WEIGHT, ORG_WEIGHT, TITLE_WEIGHT, PERIOD_WEIGHT = 1.0, 0.55, 0.6, 0.35
PERIOD_ALONE = 0.2
"""Weight of a period when nothing else in the query points at a document: below
``route.Routing.min_strength``, so a period alone routes to no document (it only ranks them:
several issuers' documents cover one period)."""
TWIN_PENALTY = 0.5
"""Factor on the title strength of a near twin whose title the query holds less of than another's."""
ADJACENT = 0.2
"""Period score of a span that ends or starts just beside the asked one (see ``_overlap_score``)."""
TYPE_WEIGHT = 0.1
"""Added when the query names the document type ("10-Q", "protocol") of a document it points at."""
RARE_TITLES_PART, RARE_TITLES_MIN, RARE_TITLES_MAX = 10, 2, 20
"""A title word can name a document when at most a tenth of the titles hold it (at least 2, at
most 20 titles): the words every filing's title prints ("form", "fiscal", "k") name none, and
neither does a title made of them alone (a cover whose name is a logo)."""
TITLE_CAP_WORDS = 3
TITLE_MIN_NAMED = 0.6
"""A query names a title when it holds at least this share of the title's IDF mass, or of the
mass of ``TITLE_CAP_WORDS`` words found in no other title (long titles are named by a part).
The strength adds the share of the whole title held, so a near twin whose own distinctive
word ("Line 3") is absent from the query ranks below the title the query holds whole."""


def _quarter_span(year: int, quarter: int) -> tuple[date, date]:
    start = date(year, 3 * quarter - 2, 1)
    end = date(year + (quarter == 4), (3 * quarter) % 12 + 1, 1) - timedelta(days=1)
    return start, end


def _overlap_score(a: tuple[date, date], b: tuple[date, date]) -> float:
    """1 when the spans coincide, the shared share when they overlap; a span that misses the
    asked one scores low (a quarter next to the asked one is another quarter: high enough to
    rank above a year away, too low to be routed beside the one that matches)."""
    inter = (min(a[1], b[1]) - max(a[0], b[0])).days
    length = max((a[1] - a[0]).days, 1)
    if inter > 0:
        return min(1.0, inter / length)
    gap = -inter  # days between the spans
    return math.exp(-gap / 45.0) * ADJACENT


@dataclass(frozen=True)
class CardPeriod:
    """A card's period, parsed once: end date, span, fiscal year and quarter."""

    end: date | None
    span: tuple[date, date] | None
    months: int
    fiscal_year: int | None
    fiscal_quarter: int | None

    @classmethod
    def of(cls, card: DocumentCard) -> CardPeriod:
        end = date.fromisoformat(card.period_end) if card.period_end else None
        months = card.period_months or 12
        span = (end - timedelta(days=round(30.4 * months)), end) if end else None
        return cls(end, span, months, card.fiscal_year, card.fiscal_quarter)


def period_score(period: CardPeriod, ref: PeriodRef) -> float:
    """How well a card's period answers ``ref`` (0..1). A quarter matches the stated fiscal
    quarter exactly, else the calendar quarter by overlap (either reading of "Q1 2023" is
    plausible when the query does not say "fiscal"); an end date matches within three days,
    a month ("quarter ended July 2023") when the period ends in it or in its first week."""
    end = period.end
    if ref.end is not None:
        if end is None:
            return 0.0
        if ref.month_only:
            month = (ref.end.year, ref.end.month)
            early = end - timedelta(days=7)
            if (early.year, early.month) <= month <= (end.year, end.month):
                return 1.0
        days = abs((end - ref.end).days)
        return 1.0 if days <= 3 and not ref.month_only else 0.4 * math.exp(-days / 60)
    if ref.quarter is not None:
        if period.fiscal_quarter == ref.quarter and period.fiscal_year == ref.year:
            return 1.0
        if period.span is None:
            return 0.0
        calendar = _overlap_score(_quarter_span(ref.year, ref.quarter), period.span)
        if period.months > 3:  # an annual report holds the quarter, but is not the quarter's report
            calendar = min(calendar, 0.4)
        return (0.6 if ref.fiscal else 0.8) * calendar
    if period.fiscal_year == ref.year:
        return (0.7 if ref.weak else 1.0) if period.fiscal_quarter is None else 0.5
    if end is not None and end.year == ref.year:
        return 0.4 if ref.fiscal else 0.5
    return 0.0


# A short name a card gives in capitals ("GE"): matched as printed (``Query.printed_names``)
_SHORT_NAME = re.compile(r"\d[A-Z]{1,3}|[A-Z]\d[A-Z]?|[A-Z]{2}")


def _type_pattern(doc_type: str) -> re.Pattern[str]:
    """A document type as queries write it: "10-K", "10K" and "10 K" alike."""
    parts = [re.escape(p) for p in re.split(r"[-\s]+", doc_type.strip()) if p]
    return re.compile(r"(?<![\w-])" + r"[-\s]?".join(parts) + r"(?![\w-])", re.I)


def _norm_id(text: str) -> str:
    return re.sub(r"[^A-Z0-9]", "", text.upper())


class RoutingIndex:
    """The cards of the indexed documents, prepared once for many queries."""

    def __init__(self, cards: Sequence[DocumentCard]):
        self.cards = {c.doc_id: c for c in cards}
        self.periods = {c.doc_id: CardPeriod.of(c) for c in cards if c.period_end or c.fiscal_year}
        self.type_patterns = {t: _type_pattern(t) for t in {c.doc_type for c in cards} if t}
        self.ids: dict[str, set[str]] = defaultdict(set)
        self.names: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self.tickers: dict[str, set[str]] = defaultdict(set)
        self.max_name_len = 1
        self.title_words: dict[str, set[str]] = {}
        self.title_pairs: dict[str, set[tuple[str, str]]] = {}
        postings: dict[str, set[str]] = defaultdict(set)
        for card in cards:
            for ident in [card.doc_id, *card.identifiers]:
                if len(_norm_id(ident)) >= 4 and re.search(r"\d", ident):
                    self.ids[_norm_id(ident)].add(card.doc_id)
            for name in [card.organisation, *card.names]:
                words = tuple(w for w in name_words(name or "") if w not in NAME_STOPWORDS)
                if words and not (len(words) == 1 and len(words[0]) < 3):
                    self.names[words].add(card.doc_id)
                    self.max_name_len = max(self.max_name_len, len(words))
                elif words and _SHORT_NAME.fullmatch((name or "").strip()):
                    # "GE": too short to find among lowercased words, named as printed
                    self.tickers[(name or "").strip()].add(card.doc_id)
            for ticker in card.tickers:
                self.tickers[ticker].add(card.doc_id)
            for initials in filter(None, (_initials(name) for name in [card.organisation, *card.names])):
                self.tickers[initials].add(card.doc_id)
            # a date in the title is the document's period, matched by ``period_score``: as title
            # words, "January 28, 2023" would name every filing of that day's period by its title
            sequence = [w for w in name_words(without_dates(card.title)) if w not in NAME_STOPWORDS]
            title_words = set(sequence)
            self.title_words[card.doc_id] = title_words
            self.title_pairs[card.doc_id] = set(zip(sequence, sequence[1:]))
            for w in title_words:
                postings[w].add(card.doc_id)
        n = max(len(cards), 1)
        self.idf = {w: math.log(1 + n / len(docs)) for w, docs in postings.items()}
        self.postings = dict(postings)
        self.title_mass = {d: sum(self.idf[w] for w in ws) for d, ws in self.title_words.items()}
        self.rare_df = max(RARE_TITLES_MIN, min(RARE_TITLES_MAX, n // RARE_TITLES_PART))
        self.title_cap = TITLE_CAP_WORDS * math.log(1 + n)

    def resolve(self, query: Query | str) -> list[tuple[str, float]]:
        """``(doc_id, strength)`` of the documents ``query`` refers to, strongest first."""
        if isinstance(query, str):
            query = read_query(query)
        scores: dict[str, float] = defaultdict(float)
        for doc in self._by_id(query.identifiers):
            scores[doc] += ID_WEIGHT
        words = list(query.words)
        orgs = self._by_organisation(query.printed_names, words, _capitalised(query.text))
        for doc in orgs:
            scores[doc] += ORG_WEIGHT
        titles = self._by_title(words)
        for doc, coverage in titles.items():
            scores[doc] += TITLE_WEIGHT * coverage
        for doc in list(scores):
            doc_type = self.cards[doc].doc_type
            pattern = self.type_patterns.get(doc_type) if doc_type else None
            if pattern is not None and pattern.search(query.text):
                scores[doc] += TYPE_WEIGHT
        refs = query.periods
        if refs:
            pointed = set(scores)
            candidates = [d for d in pointed if d in self.periods] if pointed else self.periods.keys()
            weight = PERIOD_WEIGHT if pointed else PERIOD_ALONE
            for doc in candidates:
                p = max(period_score(self.periods[doc], ref) for ref in refs)
                if p > 0:
                    scores[doc] += weight * p
        ranked = sorted(((d, min(s, 1.0)) for d, s in scores.items() if s > 0.05), key=lambda x: (-x[1], x[0]))
        return [(d, round(s, 4)) for d, s in ranked]

    def _by_id(self, identifiers: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for token in identifiers:
            found |= self.ids.get(_norm_id(token), set())
        return found

    def _by_organisation(self, printed_names: Sequence[str], words: list[str], capitalised: frozenset[str] | None = None) -> set[str]:
        """The documents an organisation name in the query names. A name of one word counts only
        where the query prints it capitalised, as a name (``capitalised``; None: the query is
        all lower case): "square feet" does not name Square, Inc."""
        found: set[str] = set()
        for token in printed_names:
            found |= self.tickers.get(token, set()) | self.tickers.get(token.rstrip("."), set())
        for n in range(1, min(self.max_name_len, len(words)) + 1):
            for i in range(len(words) - n + 1):
                if n == 1 and capitalised is not None and words[i] not in capitalised:
                    continue
                found |= self.names.get(tuple(words[i : i + n]), set())
        return found

    def _by_title(self, query_words: list[str]) -> dict[str, float]:
        """Documents whose title the query holds: the share of the title's IDF mass present
        (``TITLE_MIN_NAMED``). Only titles that share a rare word with the query (in at most ``rare_df`` titles) are candidates:
        a title named by common words alone is not named."""
        words = set(query_words)
        sequence = [w for w in query_words if w not in NAME_STOPWORDS]
        pairs = set(zip(sequence, sequence[1:]))
        matched: dict[str, float] = defaultdict(float)
        held: dict[str, set[str]] = defaultdict(set)
        present = [w for w in words if w in self.postings]
        rare = [w for w in present if len(self.postings[w]) <= self.rare_df]
        if not rare:
            return {}
        candidates: set[str] = set().union(*(self.postings[w] for w in rare))
        for w in present:
            docs = self.postings[w]
            for doc in candidates if len(docs) > len(candidates) else docs:
                if doc in candidates and doc in docs:
                    matched[doc] += self.idf[w]
                    held[doc].add(w)
        out: dict[str, float] = {}
        for doc, mass in matched.items():
            total = self.title_mass[doc]
            if len(held[doc]) < 2 or not total:
                continue
            named = min(1.0, mass / min(total, self.title_cap))
            if named >= TITLE_MIN_NAMED:
                out[doc] = 0.6 * named + 0.4 * mass / total
        if len(out) <= 50:  # a near twin: what the query holds of it, it holds of another too, and more
            # Or it holds as many of the other's words, and more of the word pairs the other's
            # title prints side by side: "the ..., Line 1 procedure ... Aqueous Phase 2" holds
            # every word of both "..., Line 1" and "..., Line 2", but "line 1" only of the first.
            adjacent = {doc: len(self.title_pairs[doc] & pairs) for doc in out}
            for doc in list(out):
                if any(
                    held[doc] < held[other] or (len(held[doc]) <= len(held[other]) and adjacent[doc] < adjacent[other])
                    for other in out
                    if other != doc
                ):
                    out[doc] *= TWIN_PENALTY
        return out


def _capitalised(text: str) -> frozenset[str] | None:
    """The words (``name_words``) that ``text`` prints with a capital first letter; None when it
    prints no capital at all (a query typed in lower case names nothing by case)."""
    if not any(ch.isupper() for ch in text):
        return None
    return frozenset(w for token in text.split() if token[:1].isupper() for w in name_words(token))


INITIALS_MIN_WORDS = 3


def _initials(name: str | None) -> str | None:
    """The initials an organisation of ``INITIALS_MIN_WORDS`` words or more is known by, in
    capitals ("Northern Pacific Rail Works, Inc." -> "NPRW"); its legal form (``cards.short_names``)
    and small words left out."""
    if not name:
        return None
    words = [w for w in name_words((short_names(name) or [name])[-1]) if w not in NAME_STOPWORDS and w[:1].isalpha()]
    return "".join(w[0] for w in words).upper() if len(words) >= INITIALS_MIN_WORDS else None


def resolve(query: Query | str, cards: Sequence[DocumentCard]) -> list[tuple[str, float]]:
    """One-off form of ``RoutingIndex(cards).resolve(query)``."""
    return RoutingIndex(cards).resolve(query)
