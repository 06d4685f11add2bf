"""Parent coverage: candidates whose whole text holds the query's distinctive words move up."""

from evidence_pipeline.retrieval.coverage import by_coverage, coverage_scores, query_words

QUERY = "At what temperature must agalsidase beta vials be stored?"
SYNOPSIS = (
    "Synopsis. Name of company: Genzyme. Title: an open-label study of agalsidase beta in lactating women. "
    "Dose: 1 mg/kg every two weeks. Duration: 12 months. Number of subjects: 10. " * 3
)
STORAGE = "Drug supplies. Agalsidase beta vials must be stored at 2° to 8°C; do not freeze."
OTHER = "Adverse events are recorded at every visit and reported within 24 hours."


def test_the_text_holding_every_distinctive_word_scores_highest():
    words = query_words(QUERY)
    assert words == {"temperature", "agalsidase", "beta", "vial", "stored"}  # stopwords out, plurals folded
    scores = coverage_scores([SYNOPSIS, STORAGE, OTHER], words)
    assert scores[1] > scores[0] > scores[2] == 0.0


def test_a_word_every_candidate_holds_weighs_least():
    words = query_words("beta storage")
    texts = ["beta storage", "beta", "beta", "beta"]
    scores = coverage_scores(texts, words)
    assert scores[0] > 2 * scores[1]  # "storage" is rarer among the candidates than "beta"


def test_by_coverage_moves_the_covering_parent_up_and_only_movable_ones():
    hits = [{"t": SYNOPSIS, "k": "table"}, {"t": OTHER, "k": "section"}, {"t": STORAGE, "k": "section"}]
    moved = by_coverage(hits, QUERY, lambda h: h["t"], weight=4.0)
    assert moved[0]["t"] == STORAGE
    kept = by_coverage(hits, QUERY, lambda h: h["t"], weight=4.0, movable=lambda h: h["k"] != "table")
    assert kept[0]["t"] == SYNOPSIS and kept[1]["t"] == STORAGE  # the table keeps its place
    assert by_coverage(hits, "the of and", lambda h: h["t"]) == hits  # no content word: unchanged
