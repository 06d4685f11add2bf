"""The command line: exit codes, one-line errors, input validation, secrets kept out of output.

Most checks call ``cli.main`` in this process (a subprocess loads torch again); two run
the installed console script to check real exit codes.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from evidence_pipeline import cli
from evidence_pipeline.orchestration.definitions import build_definitions
from evidence_pipeline.orchestration.resources import CorpusResource, StoreResource
from evidence_pipeline.orchestration.runner import ingest_paths
from evidence_pipeline.settings import StoreSettings
from evidence_pipeline_tests.dagster_env import write_corpus
from evidence_pipeline_tests.test_retrieval import small_store  # noqa: F401  (fixture)
from evidence_pipeline_tests.test_store import DIM, make_points

pytestmark = pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")

FAKE_KEY = "ep-fake-key-5c1f0e9b7d"
CORRUPT = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer <<>>\n%%EOF garbage"
UNREACHABLE = "http://127.0.0.1:9"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:  # argparse errors and --help
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def tmp_defs(tmp_path, monkeypatch):
    """`evidence-pipeline ingest` against a store and corpus under tmp_path, ephemeral instance."""
    from evidence_pipeline.orchestration import definitions

    defs = build_definitions(
        {"store": StoreResource(path=str(tmp_path / "store")), "corpus": CorpusResource(root=str(tmp_path / "corpus"))}
    )
    monkeypatch.setattr(definitions, "defs", defs)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return defs


def _edge_store(path: Path) -> Path:
    from evidence_pipeline.store.edge import EdgeStore

    with EdgeStore(StoreSettings(path=str(path))) as edge:
        edge.ensure_collection(DIM)
        edge.replace_document("a", make_points("a", {"a/p1": ["Aqueous Phase 1 max 1.8"]}))
    return path


# -- help ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["ingest", "search", "copy-store"])
def test_help_documents_exit_codes(capsys, command):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0
    codes = out[out.index("exit codes:") :]
    assert all(f"  {n}  " in codes for n in (0, 1, 2))


# -- bad arguments: one line, exit 2 -----------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["search", ""], "argument query: the query is empty"),
        (["search", "   \t"], "argument query: the query is empty"),
        (["search", "flow", "--k", "0"], "argument --k: must be at least 1, not 0"),
        (["search", "flow", "--k", "-1"], "argument --k: must be at least 1, not -1"),
        (["search", "flow", "--k", "two"], "argument --k: expected a whole number, not 'two'"),
        (["search", "flow", "--token-budget", "0"], "argument --token-budget: must be at least 1, not 0"),
        (["ingest", "--log-level", "LOUD", "x.pdf"], "argument --log-level: invalid choice: 'LOUD'"),
        # No corpus is assumed beside the repository: parse-quality and bench name their folders.
        (["parse-quality"], "parse-quality: choose at least one of --docling-tests DIR, --generated"),
        (["parse-quality", "--corpora", "/nonexistent/corpus"], "not a folder: /nonexistent/corpus"),
        (["bench", "--pdfs", "/nonexistent/pdfs"], "--pdfs /nonexistent/pdfs: no such folder"),
    ],
)
def test_bad_arguments_exit_2_with_the_reason(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert f"error: {message}" in err
    assert "Traceback" not in err


def test_ingest_missing_path_exits_2_and_registers_no_partition(capsys, tmp_path, tmp_defs):
    missing = tmp_path / "missing.pdf"
    code, out, err = run_cli(capsys, "ingest", str(missing))
    assert (code, out, err) == (2, "", f"error: no such file or folder: {missing}\n")
    # The runner checks too, before it registers anything (the Python API path).
    (tmp_path / "real.md").write_text("# Real\n\nText.\n")
    with dg.instance_for_test() as instance:
        with pytest.raises(FileNotFoundError, match="missing.pdf"):
            ingest_paths([tmp_path / "real.md", missing], tmp_defs, instance)
        assert instance.get_dynamic_partitions("documents") == []


def test_ingest_folder_without_documents_exits_2(capsys, tmp_path, tmp_defs):
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli(capsys, "ingest", "--quiet", str(tmp_path / "empty"))
    assert (code, out) == (2, "")
    assert err == f"error: no documents found in {tmp_path / 'empty'}\n"


# -- ingest: exit 1 when any document failed, one line per failure -------------------


def test_ingest_with_one_bad_file_exits_1_with_one_line_and_no_trace(capsys, tmp_path, tmp_defs):
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "limits.md").write_text("# Limits\n\n| Item | Min | Max |\n|---|---|---|\n| Temperature (C) | 2 | 8 |\n")
    (corpus / "corrupt.pdf").write_bytes(CORRUPT)
    code, out, err = run_cli(capsys, "ingest", "--quiet", str(corpus))
    assert code == 1  # one of two failed: not 0
    summary, failed = out.splitlines()
    assert summary.startswith("ingested 1 of 2 documents") and "1 failed" in summary
    assert failed.startswith(f"  FAILED {corpus / 'corrupt.pdf'}: ") and "corrupt PDF" in failed
    assert failed.count(str(corpus / "corrupt.pdf")) == 1  # the file once, then the cause
    assert "Traceback" not in err and "Stack Trace" not in err and len(err.splitlines()) < 5, err

    # --log-level DEBUG prints the whole record, stack trace included.
    code, out, err = run_cli(capsys, "ingest", "--quiet", "--log-level", "debug", str(corpus / "corrupt.pdf"))
    assert code == 1 and "corrupt PDF" in out
    assert "Stack Trace" in err or "Traceback" in err

    # All documents fine (here: unchanged, skipped) -> 0.
    code, out, _ = run_cli(capsys, "ingest", "--quiet", str(corpus / "limits.md"))
    assert code == 0 and out.startswith("ingested 0 of 1 documents (1 unchanged")


def test_failure_line_names_the_file_once_on_one_line():
    from evidence_pipeline.orchestration.runner import DocumentOutcome

    relative = Path("docs/corrupt.pdf")
    for error in (f"{relative.resolve()}: corrupt PDF:\n  bad xref", f"{relative}: corrupt PDF: bad xref", "corrupt PDF: bad xref"):
        outcome = DocumentOutcome(relative, "corrupt", False, error=error)
        assert outcome.failure_line() == "docs/corrupt.pdf: corrupt PDF: bad xref"


def test_console_script_exit_codes(tmp_path):
    """The installed entry point returns the codes (no torch is loaded on these paths)."""
    exe = Path(sys.executable).with_name("evidence-pipeline")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for argv, code, message in (
        (["ingest", str(tmp_path / "missing.pdf")], 2, f"error: no such file or folder: {tmp_path / 'missing.pdf'}"),
        (["search", "  "], 2, "error: argument query: the query is empty"),
        (["copy-store", "--to-url", "qdrant:6333"], 2, "error: --to-url 'qdrant:6333' is not an http(s) URL"),
    ):
        done = subprocess.run([str(exe), *argv], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == code, (argv, done.stderr)
        assert message in done.stderr.splitlines()[-1]


# -- search -----------------------------------------------------------------------


def test_search_with_nothing_found_names_the_store(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.setenv("EVIDENCE_STORE_PATH", str(tmp_path / "empty-store"))
    code, out, err = run_cli(capsys, "search", "flow rate", "--json")
    assert (code, json.loads(out)) == (0, [])
    assert err.startswith(f"no results in {(tmp_path / 'empty-store').resolve()} ")


def test_search_budget_smaller_than_the_first_parent_says_so(capsys, small_store, monkeypatch):
    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.setenv("EVIDENCE_STORE_PATH", small_store.path)
    code, out, err = run_cli(capsys, "search", "pump flow rate limits", "--token-budget", "50", "--json")
    assert code == 0
    assert len(json.loads(out)) == 1
    [line] = err.splitlines()
    assert line.startswith("note: the first result alone is ") and line.endswith(" tokens, over the budget of 50")
    assert int(line.split()[6]) > 50


def _search_sample(capsys, monkeypatch, sample_store, *argv: str) -> tuple[int, str, str]:
    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.setenv("EVIDENCE_STORE_PATH", sample_store.settings.path)
    return run_cli(capsys, "search", *argv)


def test_search_prints_every_parent_and_what_the_score_is(capsys, monkeypatch, sample_store):
    from evidence_pipeline.retrieval import search
    from evidence_pipeline.store.base import SCORE_NOTE

    question, caption = sample_store.table_questions()[0]
    hits = search(question, 3, store_settings=sample_store.settings)
    code, out, err = _search_sample(capsys, monkeypatch, sample_store, question, "--k", "3")
    assert (code, err) == (0, "")
    assert (
        out.splitlines()[0]
        == SCORE_NOTE
        == ("score: reciprocal-rank fusion of dense and BM25 ranks, 1/(60+rank) summed; compare within one query only")
    )
    starts = [out.index(f"\n#{rank}  score {hit.score:.4f}  {hit.doc_id}  pages ") for rank, hit in enumerate(hits, 1)]
    assert starts == sorted(starts)
    for start, end, hit in zip(starts, [*starts[1:], len(out)], hits):
        block = out[start:end]
        assert f"    matched: {hit.matched_text}\n" in block
        assert "\n    " + hit.context_text.replace("\n", "\n    ") + "\n" in block  # every parent, as an LLM reads it
        assert hit.unit_kind != "table" or ("<td>" not in block and "|---|" in block)  # its table in Markdown
    assert out[starts[0] :].splitlines()[1].endswith(caption)


def test_search_brief_is_one_line_per_hit(capsys, monkeypatch, sample_store):
    from evidence_pipeline.retrieval import search
    from evidence_pipeline.store.base import SCORE_NOTE

    question, caption = sample_store.table_questions()[0]
    hits = search(question, 4, store_settings=sample_store.settings)
    code, out, _ = _search_sample(capsys, monkeypatch, sample_store, question, "--k", "4", "--brief")
    pages = [", ".join(map(str, h.pages)) for h in hits]
    where = [h.caption or " > ".join(h.section_path) for h in hits]
    assert code == 0 and out.splitlines() == [SCORE_NOTE] + [
        f"#{n}  score {h.score:.4f}  {h.doc_id}  pages {p}  {w}" for n, (h, p, w) in enumerate(zip(hits, pages, where), 1)
    ]
    assert where[0] == caption


def test_search_context_is_what_a_language_model_gets_within_the_budget(capsys, monkeypatch, sample_store):
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.retrieval import context_texts, render_context, search

    question, _ = sample_store.table_questions()[0]
    count = token_counter(None).count
    budget = sum(count(t) for t in context_texts(search(question, 3, store_settings=sample_store.settings))) + 10
    hits = search(question, token_budget=budget, store_settings=sample_store.settings)
    assert len(hits) >= 3  # the budget holds several parents, not just the first
    code, out, err = _search_sample(capsys, monkeypatch, sample_store, question, "--context", "--token-budget", str(budget))
    assert (code, err) == (0, "")
    assert out == render_context(hits) + "\n"
    assert count(out) <= budget
    # Each document + section header once, however many parents under it.
    lines = out.splitlines()
    heads = [(line, lines[n + 1]) for n, line in enumerate(lines) if line.startswith("Document: ")]
    assert len(heads) == len(set(heads)) == len({(h.doc_id, tuple(h.section_path)) for h in hits})


def test_search_json_is_the_hits_and_excludes_the_other_views(capsys, monkeypatch, sample_store):
    from evidence_pipeline.retrieval import search

    question, _ = sample_store.table_questions()[0]
    code, out, _ = _search_sample(capsys, monkeypatch, sample_store, question, "--json")
    assert code == 0 and json.loads(out) == [h.model_dump() for h in search(question, store_settings=sample_store.settings)]
    code, _, err = _search_sample(capsys, monkeypatch, sample_store, question, "--json", "--brief")
    assert code == 2 and "not allowed with argument" in err


def test_search_json_says_where_the_answer_is_printed(capsys, monkeypatch, sample_store, sample_corpus):
    import pypdfium2 as pdfium

    asked = [q for q in sample_store.questions if q.get("kind") == "table_cell"]
    seen = 0
    for q in asked[:4]:
        code, out, _ = _search_sample(capsys, monkeypatch, sample_store, q["question"], "--json")
        first = json.loads(out)[0]
        assert code == 0 and first["doc_id"] == q["doc_id"] and first["boxes"], q["question"]
        row = first["row_box"]
        if row is None:  # the best child was not a row: the table's region still holds the answer
            row = next(b for b in first["boxes"] if b["page"] == q["page"])
        pdf = pdfium.PdfDocument(str(sample_corpus / f"{q['doc_id']}.pdf"))
        page = pdf[row["page"] - 1]
        assert (page.get_width(), page.get_height()) == pytest.approx((row["page_width"], row["page_height"]), abs=0.01)
        height = row["page_height"]
        inside = page.get_textpage().get_text_bounded(left=row["l"], bottom=height - row["b"], right=row["r"], top=height - row["t"])
        pdf.close()
        assert q["answers"][0] in inside, (q["question"], inside)
        seen += first["row_box"] is not None
    assert seen >= 2  # most table-cell questions are answered by a row child


def test_parse_json_shows_what_is_embedded(capsys, monkeypatch, sample_corpus, parse_cached):
    from evidence_pipeline.embedding import token_counter
    from evidence_pipeline.pipeline import PipelineOptions, prepare

    monkeypatch.setenv("EVIDENCE_PARSE_ISOLATION", "inline")
    code, out, _ = run_cli(capsys, "parse", str(sample_corpus / "SOP-8812.pdf"), "--json")
    assert code == 0
    shown = json.loads(out)["units"]
    units, children = prepare(parse_cached(sample_corpus / "SOP-8812.pdf"), token_counter(None), PipelineOptions())
    assert [u["unit_id"] for u in shown] == [u.unit_id for u in units]
    for got, unit in zip(shown, units):
        mine = [c for c in children if c.unit_id == unit.unit_id]
        assert got["row_sentences"] == unit.row_sentences
        assert [(c["child_id"], c["kind"], c["embed_text"]) for c in got["children"]] == [(c.child_id, c.kind, c.embed_text) for c in mine]
        assert all(c["embed_text"] == f"{unit.location}\n{c['text']}" for c in got["children"])
    # A footnote marker in a cell is resolved in the row sentence that gets embedded.
    [table] = [u for u in shown if u["footnotes"] and any("(note: " in s for s in u["row_sentences"])][:1]
    rows = [c["text"] for c in table["children"] if c["kind"] == "row"]
    assert rows == table["row_sentences"] and any(table["footnotes"][0].lstrip("*† ") in r for r in rows)


# -- copy-store --------------------------------------------------------------------


@pytest.mark.parametrize("url", ["qdrant:6333", "not a url", "ftp://qdrant:6333", "http://", "http://[bad"])
def test_copy_store_bad_url_exits_2(capsys, url):
    code, out, err = run_cli(capsys, "copy-store", "--to-url", url)
    assert (code, out) == (2, "")
    assert err == f"error: --to-url {url!r} is not an http(s) URL (e.g. http://qdrant:6333)\n"


def test_copy_store_missing_or_empty_source(capsys, tmp_path):
    code, _, err = run_cli(capsys, "copy-store", "--to-url", UNREACHABLE, "--from-path", str(tmp_path / "nope"))
    assert (code, err) == (2, f"error: --from-path {tmp_path / 'nope'}: no such folder\n")
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli(capsys, "copy-store", "--to-url", UNREACHABLE, "--from-path", str(tmp_path / "empty"))
    assert (code, out) == (1, "")
    assert err == f"error: nothing to copy: the store at {(tmp_path / 'empty').resolve()} holds no points\n"


def test_copy_store_unreachable_server_exits_1_in_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("QDRANT_API_KEY", FAKE_KEY)
    source = _edge_store(tmp_path / "edge")
    code, out, err = run_cli(capsys, "copy-store", "--to-url", UNREACHABLE, "--from-path", str(source))
    assert (code, out) == (1, "")
    [line] = err.splitlines()
    assert line.startswith(f"error: cannot reach Qdrant at {UNREACHABLE} (collection 'evidence'): ")
    assert FAKE_KEY not in err


# -- the API key is never shown -------------------------------------------------------


def test_store_settings_never_show_the_api_key(monkeypatch):
    monkeypatch.setenv("QDRANT_URL", "http://qdrant:6333")
    monkeypatch.setenv("QDRANT_API_KEY", FAKE_KEY)
    settings = StoreSettings.from_env()
    assert settings.api_key.get_secret_value() == FAKE_KEY
    shown = [repr(settings), str(settings), settings.model_dump_json(), json.dumps(settings.model_dump(mode="json")), settings.location]
    assert not [s for s in shown if FAKE_KEY in s]
    assert settings.location == "http://qdrant:6333 (collection 'evidence')"
    # Credentials written into the URL are left out wherever it is named.
    assert StoreSettings(url=f"http://reader:{FAKE_KEY}@qdrant:6333").location == "http://***@qdrant:6333 (collection 'evidence')"
    assert settings.redact(f"refused: {FAKE_KEY}") == "refused: ***"
    # Dagster shows the variable's name, not its value.
    resource = StoreResource.from_env()
    assert resource.api_key == "QDRANT_API_KEY" and FAKE_KEY not in repr(resource)


def test_api_key_stays_out_of_cli_output_and_the_dagster_event_log(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("QDRANT_API_KEY", FAKE_KEY)
    monkeypatch.setenv("QDRANT_URL", UNREACHABLE)
    seen: list[str] = []

    # A console-script run (its own stdout and stderr).
    exe = Path(sys.executable).with_name("evidence-pipeline")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    source = _edge_store(tmp_path / "edge")
    for url in (UNREACHABLE, f"http://user:{FAKE_KEY}@127.0.0.1:9"):
        done = subprocess.run(
            [str(exe), "copy-store", "--to-url", url, "--from-path", str(source)], capture_output=True, text=True, env=env, timeout=120
        )
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        seen += [done.stdout, done.stderr]

    code, out, err = run_cli(capsys, "search", "flow rate")
    assert code == 1 and err.startswith(f"error: cannot reach Qdrant at {UNREACHABLE}")
    seen += [out, err]

    # A Dagster run whose store resource is the server (from the environment).
    corpus = tmp_path / "corpus"
    write_corpus(corpus)
    defs = build_definitions({"store": StoreResource.from_env(), "corpus": CorpusResource(root=str(corpus))})
    with dg.instance_for_test() as instance:
        summary = ingest_paths([corpus / "limits.md"], defs, instance, force=True)
        [failure] = summary.failures
        assert failure.failure_line().startswith(f"{corpus / 'limits.md'}: StoreError: cannot reach Qdrant at {UNREACHABLE}")
        seen.append(failure.failure_line())
        for run in instance.get_runs():
            seen.append(str(run.run_config))
            seen += [str(entry) for entry in instance.all_logs(run.run_id)]
    seen += list(capsys.readouterr())
    assert len(seen) > 10
    assert not [s for s in seen if FAKE_KEY in s]


def test_a_bad_setting_is_one_line_and_a_usage_error(monkeypatch, capsys):
    from evidence_pipeline.cli import main

    monkeypatch.setenv("EVIDENCE_PARSE_TIMEOUT_S", "soon")
    assert main(["parse", "missing.pdf"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [err[0]] and "EVIDENCE_PARSE_TIMEOUT_S" in err[0] and "Traceback" not in err[0]
