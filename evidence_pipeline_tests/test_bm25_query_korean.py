"""The BM25 tokenizer on Korean (rule 4 of bm25_query): eojeols match their stems; other text as before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from evidence_pipeline.bm25_query import TOKENIZER_VERSION, hangul_tokens, tokenize
from evidence_pipeline.sparse import SparseEncoder

QUESTIONS = Path(__file__).resolve().parents[1] / "data" / "questions"


def _score(query: str, document: str) -> float:
    enc = SparseEncoder()
    q, d = enc.encode_query(query), enc.encode_document(document)
    weights = dict(zip(d.indices, d.values))
    return sum(weights.get(i, 0.0) for i in q.indices)


def test_an_eojeol_shares_its_stem_with_the_bare_noun():
    # "유량은" (flow rate + topic particle) and "유량의" (+ genitive) both carry "유량"
    assert "유량" in tokenize("유량은") and "유량" in tokenize("유량의")
    assert set(tokenize("유량")) == {"유량"}
    assert hangul_tokens("에탄올") == ["에탄올", "에탄", "탄올"] and hangul_tokens("물") == ["물"]


def test_a_korean_question_scores_the_row_that_holds_its_stems():
    # the two rows differ only in the stem the question asks with a particle ("유량은");
    # by whole eojeols (ep-bm25-1) they tie
    flow = "수상 1 | 유량 (mL/min) / 최대: 1.8"
    pressure = "수상 1 | 압력 (mL/min) / 최대: 2.4"
    question = "수상 1의 최대 유량은 몇 mL/min인가?"
    assert _score(question, flow) > _score(question, pressure) > 0


def test_identifiers_and_units_next_to_hangul_stay_whole():
    tokens = tokenize("PT-104에서 측정하며 1.8 mL/min이다")
    assert {"pt-104", "ml/min", "1.8", "min", "pt", "104"} <= set(tokens)
    assert "pt-104에서" not in tokens and "min이다" not in tokens
    assert "sop-kr-101" in tokenize("SOP-KR-101에 따르면")


def test_text_without_hangul_tokenizes_as_in_ep_bm25_1():
    # The token lists of every English question the project ships, as ep-bm25-1 gave them
    # (digest taken with that version): the exact_id and English figures cannot move.
    questions = [json.loads(line)["question"] for name in ("sop.jsonl", "sec-10q.jsonl") for line in (QUESTIONS / name).open()]
    digest = hashlib.sha256(json.dumps([tokenize(q) for q in questions]).encode()).hexdigest()
    assert len(questions) == 84
    assert digest == "417cbd3b69d51b28dfbf59b0e1613a701051446e728e8d70651d5fb35469767b"
    assert TOKENIZER_VERSION == "ep-bm25-2"
