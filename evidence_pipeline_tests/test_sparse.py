import math

import pytest
from rank_bm25 import BM25Okapi

from evidence_pipeline.sparse import SparseEncoder, token_index, tokenize


def test_identifier_yields_parts_and_compound():
    assert tokenize("SOP-QA-070") == ["sop", "qa", "070", "sop-qa-070"]
    assert tokenize("USP <85>") == ["usp", "85", "usp<85>"]
    assert tokenize("USP<87>") == ["usp", "87", "usp<87>"]
    assert tokenize("ISO 9001:2015") == ["iso", "9001", "2015", "9001:2015"]
    assert "2.5" in tokenize("store at 2.5 °C") and "1,000" in tokenize("limit 1,000 CFU")


def test_close_identifiers_differ_by_a_compound_token():
    a, b = set(tokenize("SOP-QA-070")), set(tokenize("SOP-QA-007"))
    assert a - b == {"070", "sop-qa-070"}
    assert set(tokenize("USP <85>")) ^ set(tokenize("USP <87>")) == {"85", "87", "usp<85>", "usp<87>"}


def test_lowercase_nfkc_stopwords_and_numbers():
    # full-width forms fold to ASCII; stopwords go, numbers stay even when short
    assert tokenize("ＳＯＰ－ＱＡ－０７０") == ["sop", "qa", "070", "sop-qa-070"]
    assert tokenize("The limit of the 2 batches is in Table 3") == ["limit", "2", "batch", "table", "3"]
    assert tokenize("Studies and Processes") == ["study", "process"]
    assert tokenize("") == []


def test_token_index_is_a_fixed_31_bit_value():
    # blake2b, not Python's per-process salted hash: the same index in every process
    assert token_index("sop-qa-070") == 2041397982
    assert token_index("usp<85>") == 901411619
    assert all(0 <= token_index(t) < 2**31 for t in tokenize("Some words 123 A-B"))


def test_document_weights_are_bm25_tf_saturation():
    enc = SparseEncoder(k1=1.2, b=0.75, avg_len=40)
    vec = enc.encode_document("SOP sop QA")  # 3 tokens: sop x2, qa x1
    weights = dict(zip(vec.indices, vec.values))
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 40)
    assert weights[token_index("sop")] == pytest.approx(2 * 2.2 / (2 + norm))
    assert weights[token_index("qa")] == pytest.approx(1 * 2.2 / (1 + norm))
    assert vec.indices == sorted(vec.indices) and len(vec.indices) == 2


def test_query_is_one_per_unique_token():
    vec = SparseEncoder().encode_query("USP <85> usp")
    assert vec.values == [1.0, 1.0, 1.0]
    assert set(vec.indices) == {token_index(t) for t in ("usp", "85", "usp<85>")}
    assert SparseEncoder().encode_query("the of and").indices == []


CORPUS = [
    "Batch release requires QA approval per SOP-QA-070 before shipment.",
    "Table 3: Endotoxin limits per USP <85> for each product lot.",
    "Sterility testing follows USP <71>; microbial limits follow USP <61> and USP <62>.",
    "Deviation handling is described in SOP-QA-007 and requires a CAPA record.",
    "Row 2: Product B, bioburden limit 100 CFU per 100 mL, method USP <61>.",
    "The stability study stores samples at 25 °C and 60 % relative humidity.",
    "Cleaning validation residue limit is 10 ppm for product A equipment.",
    "Annual product review summarises batch release and deviation trends.",
]


def _qdrant_bm25_scores(docs_tokens, query, avg_len):
    """Score like Qdrant does: dot(query 1.0s, doc tf-part) with Modifier.IDF on the query side."""
    enc = SparseEncoder(avg_len=avg_len)
    vectors = [dict(zip(v.indices, v.values)) for v in (enc.encode_document(d) for d in CORPUS)]
    n = len(vectors)
    q = enc.encode_query(query)
    scores = []
    for vec in vectors:
        s = 0.0
        for idx in q.indices:
            df = sum(1 for v in vectors if idx in v)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))  # Qdrant's IDF
            s += idf * vec.get(idx, 0.0)
        scores.append(s)
    return scores


@pytest.mark.parametrize(
    "query",
    [
        "SOP-QA-070",
        "USP <85> endotoxin",
        "USP <61> bioburden",
        "deviation CAPA",
        "stability humidity",
        "cleaning residue limit",
    ],
)
def test_top_hit_agrees_with_rank_bm25(query):
    docs_tokens = [tokenize(d) for d in CORPUS]
    avg_len = sum(map(len, docs_tokens)) / len(docs_tokens)
    reference = BM25Okapi(docs_tokens, k1=1.2, b=0.75).get_scores(tokenize(query))
    ours = _qdrant_bm25_scores(docs_tokens, query, avg_len)
    best_ref = max(range(len(CORPUS)), key=lambda i: reference[i])
    best_ours = max(range(len(CORPUS)), key=lambda i: ours[i])
    assert best_ours == best_ref


def test_importing_the_encoder_loads_no_qdrant_package():
    import subprocess
    import sys
    from pathlib import Path

    code = "import sys, evidence_pipeline.sparse; print(sorted(m for m in sys.modules if 'qdrant' in m))"
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
