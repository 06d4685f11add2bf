"""Section 3 of parse-quality: 10-Q statement detection, and the fresh-process memory probe."""

from __future__ import annotations

from evidence_pipeline.evaluation.parser_quality.memory import fresh_process_probe
from evidence_pipeline.evaluation.parser_quality.models import ParserQualityReport, StatementFinding
from evidence_pipeline.evaluation.parser_quality.rendering import render_text
from evidence_pipeline.evaluation.parser_quality.robustness import robustness_section, statement_check
from evidence_pipeline.tools.samples.truth import SampleTruth
from evidence_pipeline_tests.docs import box as _box
from evidence_pipeline_tests.docs import doc_with_tables as _doc
from evidence_pipeline_tests.docs import table_of as _table


def test_statement_check_reads_row_labels_of_the_body():
    income = _table("d/t1", 3, _box(0, 0, 1, 1), [["", "2023"], ["Products", "$1"], ["Total net sales", "$2"]])
    header_only = _table("d/t2", 5, _box(0, 0, 1, 1), [["Total assets", "x"], ["Cash", "1"]])
    balance = _table("d/t3", 6, _box(0, 0, 1, 1), [["", "2023"], ["Total assets (1)", "$9"]])
    assert statement_check(_doc([income, header_only, balance])) == StatementFinding(revenue="p3 3x2", total_assets="p6 2x2")
    piece = _table("d/t4", 6, _box(0, 0, 1, 1), [["", "2023"], ["Cash", "$1"]])
    assert statement_check(_doc([balance, piece])).total_assets == "p6 2x2 (1 of 2 on page)"
    assert statement_check(_doc([header_only])) == StatementFinding(revenue=None, total_assets=None)


def test_fresh_process_probe_parses_a_generated_sop(sample_corpus):
    """The probe is a module run with ``python -m``: pages from the parse, a peak RSS of its own."""
    pdf = sample_corpus / "SOP-MFG-231.pdf"
    truth = SampleTruth.model_validate_json((sample_corpus.parent / "truth" / "SOP-MFG-231.json").read_text())
    probe = fresh_process_probe(pdf, timeout_s=300)
    assert probe.error is None
    assert probe.file == pdf.name and probe.pages == truth.n_pages
    assert probe.seconds > 0 and 50 < probe.peak_rss_mb < probe.goal_mb * 4


def test_fresh_process_probe_reports_a_failure_in_one_line(tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 not really")
    probe = fresh_process_probe(bad, timeout_s=300)
    assert probe.file == "broken.pdf" and probe.pages is None
    assert probe.error and "broken.pdf" in probe.error


def test_robustness_section_keeps_going_past_a_broken_file_and_renders(sample_corpus, tmp_path):
    from evidence_pipeline.parser import DoclingParser

    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "SOP-MFG-231.pdf").write_bytes((sample_corpus / "SOP-MFG-231.pdf").read_bytes())
    (folder / "a-broken.pdf").write_bytes(b"%PDF-1.4 not really")
    section = robustness_section(DoclingParser().parse, [folder], rss_probe=False)
    assert (section.ok, section.failed) == (1, 1)
    assert [f.name for f in section.files] == ["SOP-MFG-231.pdf", "a-broken.pdf"]  # in path order
    assert section.failures[0].startswith("mixed/a-broken.pdf: ")
    assert section.speed.files == 2 and section.speed.pages == 2  # the failed file is timed too and section.speed.pages_per_s > 0
    assert section.largest_10q is None and section.memory_growth is None and section.statements == {}
    report = ParserQualityReport(parser="p", cpus=2, load_avg_start=[0.0], robustness=section)
    text = render_text(report)
    assert "3. Robustness and speed: 1 converted, 1 failed" in text and "FAILED mixed/a-broken.pdf" in text
