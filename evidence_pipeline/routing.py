"""Document routing: which documents does a query refer to?

``RoutingIndex(cards).resolve(query)`` returns ``[(doc_id, strength), ...]``, strongest first,
for the documents the query names: by an identifier (exact), by its title or a distinctive part
of it, by its organisation (a legal or short name, or a ticker printed in capitals), or by a
period ("Q3 2023", "fiscal 2022", "quarter ended July 2023", "three months ended April 1,
2023", a balance-sheet date "as of October 30, 2022"). A query that names no document gets
``[]``. Everything comes from the cards.

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

from evidence_pipeline.cards import ORDINALS, DocumentCard, parse_date

ID_WEIGHT, ORG_WEIGHT, TITLE_WEIGHT, PERIOD_WEIGHT = 1.0, 0.55, 0.6, 0.35
PERIOD_ALONE = 0.2
"""Weight of a period when nothing else in the query points at a document: below
``Routing.min_strength``, so a period alone routes to no document (it ranks them in ``resolve``).
Several documents of other issuers cover one period: a query that names only "FY2023" had been
routed to the one annual report of fiscal 2023, not to the fourth quarter's earnings release
that also reports the year (weight 0.3, at ``min_strength``). Measured (full ev@1 / ev@5, 0.3 ->
0.2): `make eval-finance` 0.360 / 0.760 -> 0.360 / 0.800, every other set unchanged."""
TWIN_PENALTY = 0.5
ADJACENT = 0.2
"""Period score of a span that ends or starts just beside the asked one (see ``_overlap_score``)."""
TYPE_WEIGHT = 0.1
"""Added when the query names the document type ("10-Q", "protocol") of a document it points at."""
TITLE_CAP_WORDS = 3
TITLE_MIN_NAMED = 0.6
"""A query names a title when it holds at least this share of the title's IDF mass, or of the
mass of ``TITLE_CAP_WORDS`` words found in no other title (long titles are named by a part).
The strength adds the share of the whole title held, so a near twin whose own distinctive
word ("Line 3") is absent from the query ranks below the title the query holds whole."""

_WORD = re.compile(r"[a-z0-9]+(?:[.&][a-z0-9]+)*")
_STOP = frozenset(
    "a an and are as at be by did do does for from has have how in inc is it its of on or the this "
    "to under was were what when which with per vs".split()
)
_ID_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)+|[A-Za-z]*\d[A-Za-z0-9]*")
_QUARTER = [
    re.compile(r"\bQ([1-4])\s*(?:FY|fiscal(?:\s+year)?)?\s*['’]?\s*(\d{4}|\d{2})\b", re.I),
    re.compile(r"\b(?:FY|fiscal(?:\s+year)?)\s*['’]?(\d{4}|\d{2})\s*Q([1-4])\b", re.I),
    re.compile(r"\b(\d{4})\s*Q([1-4])\b", re.I),
    re.compile(
        r"\b(first|second|third|fourth)\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?(fiscal\s+(?:year\s+)?)?(\d{4})", re.I
    ),
    re.compile(r"\b(fiscal\s+(?:year\s+)?)?(\d{4})\s+(first|second|third|fourth)\s+quarter\b", re.I),
]
_FISCAL_YEAR = re.compile(r"\b(?:FY\s*['’]?|fiscal\s+(?:year\s+)?)(\d{4}|\d{2})\b", re.I)
_ENDED = re.compile(
    r"\b(quarter|three\s+months|six\s+months|nine\s+months|twelve\s+months|year|period|\d+\s+weeks)"
    r"\s+ended\s+([a-z]{3,9}\.?\s+(?:\d{1,2},?\s+)?\d{4})",
    re.I,
)
# A balance-sheet date: "as of October 30, 2022", "at December 31, 2022" (a whole date only:
# "as of 2022" is a year, below).
_AS_OF = re.compile(r"\b(?:as\s+of|as\s+at|at)\s+([a-z]{3,9}\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[a-z]{3,9}\.?\s+\d{4})", re.I)
_BARE_YEAR = re.compile(r"\b(?:in|of|for|during|as of|year|end of)\s+(20\d\d|19\d\d)\b", re.I)


@dataclass(frozen=True)
class PeriodRef:
    """A period the query names: a fiscal quarter/year, a calendar span, or an end date."""

    year: int
    quarter: int | None = None
    fiscal: bool = False
    end: date | None = None
    month_only: bool = False
    weak: bool = False


def _year(text: str) -> int:
    y = int(text)
    return y + 2000 if y < 100 else y


def query_periods(query: str) -> list[PeriodRef]:
    """Every period reference in ``query``."""
    refs: list[PeriodRef] = []
    spans: list[tuple[int, int]] = []
    for i, pattern in enumerate(_QUARTER):
        for m in pattern.finditer(query):
            g = m.groups()
            if i == 0:
                refs.append(PeriodRef(_year(g[1]), int(g[0]), fiscal=bool(re.search(r"fy|fiscal", m.group(0), re.I))))
            elif i == 1:
                refs.append(PeriodRef(_year(g[0]), int(g[1]), fiscal=True))
            elif i == 2:
                refs.append(PeriodRef(int(g[0]), int(g[1])))
            elif i == 3:
                fiscal = bool(g[1]) or "fiscal" in m.group(0).lower()
                refs.append(PeriodRef(int(g[2]), ORDINALS[g[0].lower()], fiscal=fiscal))
            else:
                refs.append(PeriodRef(int(g[1]), ORDINALS[g[2].lower()], fiscal=bool(g[0])))
            spans.append(m.span())
    for m in _ENDED.finditer(query):
        text = m.group(2)
        end = parse_date(text)
        month_only = end is None
        if end is None:
            parts = text.replace(".", "").split()
            end = parse_date(f"{parts[0]} 1, {parts[-1]}")
        if end is not None:
            refs.append(PeriodRef(end.year, end=end, month_only=month_only))
            spans.append(m.span())
    for m in _AS_OF.finditer(query):
        end = parse_date(m.group(1))
        if end is not None and not any(a <= m.start() < b for a, b in spans):
            refs.append(PeriodRef(end.year, end=end))
            spans.append(m.span())
    for m in _FISCAL_YEAR.finditer(query):
        if not any(a <= m.start() < b for a, b in spans):
            refs.append(PeriodRef(_year(m.group(1)), fiscal=True))
            spans.append(m.span())
    if not refs:
        refs.extend(PeriodRef(int(m.group(1)), weak=True) for m in _BARE_YEAR.finditer(query))
    return refs


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
    return math.exp(-(-inter) / 45.0) * ADJACENT


@dataclass(frozen=True)
class CardPeriod:
    """A card's period, parsed once: end date, span, fiscal year and quarter."""

    end: date | None
    span: tuple[date, date] | None
    months: int
    fiscal_year: int | None
    fiscal_quarter: int | None

    @classmethod
    def of(cls, card: DocumentCard) -> "CardPeriod":
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


# A ticker, or a short name printed in capitals ("AAPL", "3M", "GE"), matched case-sensitively.
_PRINTED_NAME = re.compile(r"(?<![\w.-])(?:[A-Z][A-Z.]{0,5}|\d[A-Z]{1,3}|[A-Z]\d[A-Z]?)(?![\w])")
_SHORT_NAME = re.compile(r"\d[A-Z]{1,3}|[A-Z]\d[A-Z]?|[A-Z]{2}")


def _type_pattern(doc_type: str) -> re.Pattern[str]:
    """A document type as queries write it: "10-K", "10K" and "10 K" alike."""
    parts = [re.escape(p) for p in re.split(r"[-\s]+", doc_type.strip()) if p]
    return re.compile(r"(?<![\w-])" + r"[-\s]?".join(parts) + r"(?![\w-])", re.I)


def _words(text: str) -> list[str]:
    text = re.sub(r"['’]s\b", "", text.lower())
    return _WORD.findall(text)


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
                words = tuple(w for w in _words(name or "") if w not in _STOP)
                if words and not (len(words) == 1 and len(words[0]) < 3):
                    self.names[words].add(card.doc_id)
                    self.max_name_len = max(self.max_name_len, len(words))
                elif words and _SHORT_NAME.fullmatch((name or "").strip()):
                    # "3M", "GE": too short to find among lowercased words, named as printed
                    self.tickers[name.strip()].add(card.doc_id)
            for ticker in card.tickers:
                self.tickers[ticker].add(card.doc_id)
            sequence = [w for w in _words(card.title) if w not in _STOP]
            words = set(sequence)
            self.title_words[card.doc_id] = words
            self.title_pairs[card.doc_id] = set(zip(sequence, sequence[1:]))
            for w in words:
                postings[w].add(card.doc_id)
        n = max(len(cards), 1)
        self.idf = {w: math.log(1 + n / len(docs)) for w, docs in postings.items()}
        self.postings = dict(postings)
        self.title_mass = {d: sum(self.idf[w] for w in ws) for d, ws in self.title_words.items()}
        self.rare_df = max(20, n // 20)
        self.title_cap = TITLE_CAP_WORDS * math.log(1 + n)

    def resolve(self, query: str) -> list[tuple[str, float]]:
        """``(doc_id, strength)`` of the documents ``query`` refers to, strongest first."""
        scores: dict[str, float] = defaultdict(float)
        for doc in self._by_id(query):
            scores[doc] += ID_WEIGHT
        words = _words(query)
        orgs = self._by_organisation(query, words)
        for doc in orgs:
            scores[doc] += ORG_WEIGHT
        titles = self._by_title(words)
        for doc, coverage in titles.items():
            scores[doc] += TITLE_WEIGHT * coverage
        for doc in list(scores):
            pattern = self.type_patterns.get(self.cards[doc].doc_type)
            if pattern is not None and pattern.search(query):
                scores[doc] += TYPE_WEIGHT
        refs = query_periods(query)
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

    def _by_id(self, query: str) -> set[str]:
        found: set[str] = set()
        for token in _ID_TOKEN.findall(query):
            found |= self.ids.get(_norm_id(token), set())
        return found

    def _by_organisation(self, query: str, words: list[str]) -> set[str]:
        found: set[str] = set()
        for token in _PRINTED_NAME.findall(query):
            found |= self.tickers.get(token, set()) | self.tickers.get(token.rstrip("."), set())
        for n in range(1, min(self.max_name_len, len(words)) + 1):
            for i in range(len(words) - n + 1):
                found |= self.names.get(tuple(words[i : i + n]), set())
        return found

    def _by_title(self, query_words: list[str]) -> dict[str, float]:
        """Documents whose title the query holds: the share of the title's IDF mass present.
        See ``TITLE_MIN_NAMED``. Only titles
        that share a rare word with the query (in at most ``rare_df`` titles) are candidates:
        a title named by common words alone is not named."""
        words = set(query_words)
        sequence = [w for w in query_words if w not in _STOP]
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


def resolve(query: str, cards: Sequence[DocumentCard]) -> list[tuple[str, float]]:
    """One-off form of ``RoutingIndex(cards).resolve(query)``."""
    return RoutingIndex(cards).resolve(query)
