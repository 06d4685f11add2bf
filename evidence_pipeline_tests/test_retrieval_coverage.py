"""Parent coverage: candidates whose whole text holds the query's distinctive words move up."""

from collections import Counter

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


def _scanned_scores(texts, words):
    """coverage_scores as one regex scan of each whole text: what the word index must equal."""
    from evidence_pipeline.retrieval import coverage

    stems = coverage._stems(words)
    pattern = coverage._words_pattern(stems)
    counts = [Counter(m.group(1) for m in pattern.finditer(coverage._folded(t))) for t in texts]
    return counts, [coverage._stem_counts(t, tuple(s for s in stems if coverage._WORD.fullmatch(s))) for t in texts]


def test_the_word_index_counts_what_a_scan_of_the_text_finds():
    texts = [SYNOPSIS, STORAGE, OTHER, "Studies, study_studied; STUDYING stud. Ａｇａｌｓｉｄａｓｅ", "beta-blockers and betas"]
    for query in (QUERY, "which studies of beta blockers", "stud study studies", "agalsidase"):
        scanned, indexed = _scanned_scores(texts, query_words(query))
        assert indexed == scanned
    # a stem that spans words is found by the scan: the texts that hold it are scanned whole
    words = query_words("SOP-QA-070 study")
    assert "sop-qa-070" in words
    texts = ["See SOP-QA-070 for the study.", "A study of SOP-QA-007.", "sop qa 070"]
    scanned, _ = _scanned_scores(texts, words)
    assert scanned[0] == Counter({"sop-qa-070": 1, "stud": 1})  # "study" is matched by its stem
    assert "sop-qa-070" not in scanned[2] and scanned[2]["sop"] == 1  # the words alone are not the code
