# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)/data/dagster_home
SAMPLE_QUESTION ?= What is the maximum flow rate for Aqueous Phase 1 in SOP-8812?

.PHONY: install scaleout demo celery-demo lint test test-fast test-noshared test-isolated dev corpus screenshots clean-data eval eval-scanned eval-twins eval-korean eval-sec eval-sec-lookup eval-finance eval-protocols eval-sponsor eval-finance-all eval-lookup lookup-questions ablate bench report parse-quality coverage postgres postgres-stop dev-postgres bench-dagster

# The CPU torch goes in first: anything that pulls torch in later finds it satisfied
# instead of fetching a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,ocr,lint]'
	$(BIN)/evidence-pipeline prepare-model
	touch $@

install: $(VENV)/.installed

# Kubernetes / Celery / Postgres integrations (deploy/); the tests validate against them when present.
scaleout: install
	$(PY) -m pip install --quiet -e '.[test,scaleout]'

corpus: install
	$(BIN)/evidence-pipeline generate data/corpus

demo: corpus
	$(BIN)/evidence-pipeline ingest data/corpus
	$(BIN)/evidence-pipeline search "$(SAMPLE_QUESTION)" --k 3

# A backfill whose steps run on two Celery workers: a private Redis on localhost (Debian
# redis-server), a fresh Dagster instance and store under $(CELERY_DEMO_OUT).
CELERY_DEMO_DOCS ?= data/corpus
CELERY_DEMO_OUT ?= data/celery-demo
celery-demo: corpus
	@command -v redis-server >/dev/null || { echo "redis-server not found: apt-get install redis-server"; exit 1; }
	rm -rf $(CELERY_DEMO_OUT)
	$(PY) -m evidence_pipeline.tools.celery_backfill $(CELERY_DEMO_DOCS) --workers 2 --out $(CELERY_DEMO_OUT)

# ruff over the repository (rules and width in pyproject.toml), then mypy over the core packages
# ([tool.mypy]). `ruff check --fix .` and `ruff format .` make the first two pass.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# One worker per core of the 2-core CI machine. A test file runs whole on one worker (loadfile),
# so its module fixtures are built once; session fixtures are built once per worker.
# TEST_WORKERS=0 runs every test in this process.
# The tests run in a random order (pytest-randomly) whose seed the first line prints:
# TEST_SEED=N reruns an order. A test depends on nothing another test left behind.
TEST_WORKERS ?= 2
TEST_SEED ?= 20261202
PYTEST := $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile -p randomly --randomly-seed=$(TEST_SEED)
test: install
	@echo "test order: --randomly-seed=$(TEST_SEED) (TEST_SEED=$(TEST_SEED) make test repeats it)"
	$(PYTEST)

# The edit-test loop: everything but the tests marked slow (subprocesses, whole ingests, benches).
# Parses of the shared corpora are kept in a memo keyed by the parser's code and the installed
# packages (evidence_pipeline_tests/parse_memo.py): they run again after any change to the parser.
PARSE_MEMO ?= $(CURDIR)/data/cache/tests/parsed
test-fast: install
	EVIDENCE_TEST_PARSE_MEMO=$(PARSE_MEMO) $(PYTEST) -m 'not slow'

# As a fresh clone on a new machine runs it: no ../shared beside it (those tests skip and say
# why) and an empty model cache (the first test prepares the model as a first user's run does).
test-noshared: install
	@echo "test order: --randomly-seed=$(TEST_SEED); no shared corpora, empty model cache"
	tmp=$$(mktemp -d) && EVIDENCE_TEST_SHARED=$$tmp/no-shared EVIDENCE_MODEL_CACHE=$$tmp/models \
	  $(PYTEST) -rs -p no:cacheprovider; rc=$$?; rm -rf $$tmp; exit $$rc

# Each test file alone in its own process, two at a time: no file needs another to have run.
test-isolated: install
	ls evidence_pipeline_tests/test_*.py | xargs -P $(or $(filter-out 0,$(TEST_WORKERS)),1) -I{} \
	  sh -c '$(BIN)/pytest -q -p no:cacheprovider -p no:randomly "{}" >/dev/null 2>&1 || { echo "FAILED alone: {}"; exit 1; }'

# Measurements: each writes its reports under data/reports/; `make report` renders them into docs/measurements.md.
SHARED ?= ../shared/corpora

eval: corpus
	$(BIN)/evidence-pipeline eval --docs data/corpus --questions data/questions/sop.jsonl --out data/reports/eval-sop --cache data/cache/eval

# The same SOPs scanned: each page rendered to a grey image at 150 dpi with mild grain and tilt,
# rebuilt as an image-only PDF (same file names, same questions); OCR reads every page.
eval-scanned: corpus
	$(PY) -m evidence_pipeline.tools.samples.scanned data/corpus data/scanned --dpi 150 --noise 8 --max-tilt 0.3 --seed 7
	$(BIN)/evidence-pipeline eval --docs data/scanned --questions data/questions/sop.jsonl --out data/reports/eval-scanned --cache data/cache/eval

# Near-twin SOPs (each sample SOP on 7 other lines/sites, other values; every question asked
# once by document ID and once by title): `python -m evidence_pipeline.evaluation.twin_questions`.
eval-twins: install
	$(PY) -m evidence_pipeline.evaluation.twin_questions data/twins
	$(BIN)/evidence-pipeline eval --docs data/twins/corpus --questions data/twins/questions.jsonl --out data/reports/eval-twins --cache data/cache/eval

# Korean SOPs set in NanumGothic (Debian's fonts-nanum, installed by .ci/run), questions in Korean:
# `python -m evidence_pipeline.evaluation.korean_questions`.
eval-korean: install
	$(PY) -m evidence_pipeline.evaluation.korean_questions data/korean
	$(BIN)/evidence-pipeline eval --docs data/korean/corpus --questions data/questions/korean.jsonl --out data/reports/eval-korean --cache data/cache/eval

# The 10-Qs' questions: 31 curated from the corpus's own (`python -m scripts.datasets.curate_sec`,
# data/questions/sec-10q.jsonl) and 60 written from the PDFs' text (data/questions/sec-10q-more.jsonl).
SEC_QUESTIONS := data/cache/docs/sec-all.jsonl
$(SEC_QUESTIONS): data/questions/sec-10q.jsonl data/questions/sec-10q-more.jsonl
	mkdir -p $(dir $@) && cat $^ > $@

eval-sec: install $(SEC_QUESTIONS)
	$(PY) -m evidence_pipeline.evaluation.check_questions data/questions/sec-10q-more.jsonl $(SHARED)/sec-10q-dev/pdfs
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/sec-10q-dev/pdfs --questions $(SEC_QUESTIONS) --out data/reports/eval-sec --cache data/cache/eval

# The same filings, 40 figure lookups (4 per filing: a statement row, a balance-sheet or
# cash-flow row, two rows of notes or MD&A tables), written from the PDFs' text alone, each
# naming its company and period as the filing prints them (data/questions/sec-10q-lookup.jsonl).
eval-sec-lookup: install
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/sec-10q-dev/pdfs --questions data/questions/sec-10q-lookup.jsonl --out data/reports/eval-sec-lookup --cache data/cache/eval

# FinanceBench's filings (900 pages): the questions curated by
# `python -m scripts.datasets.curate_financebench --corpus $(SHARED)/financebench-dev` (decisions beside the file).
eval-finance: install
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/financebench-dev/pdfs --questions data/questions/financebench.jsonl --out data/reports/eval-finance --cache data/cache/eval

# Nine clinical-trial protocols and consent forms (shared/corpora/clinical-protocols; the tenth is a
# scan without text): 36 questions written by hand from the PDFs' text, not from this parser's
# output, every answer checked on its page by `python -m evidence_pipeline.evaluation.check_questions`.
eval-protocols: install
	$(PY) -m evidence_pipeline.evaluation.check_questions data/questions/protocols.jsonl $(SHARED)/clinical-protocols/pdfs
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/clinical-protocols/pdfs --questions data/questions/protocols.jsonl --out data/reports/eval-protocols --cache data/cache/eval

# The sets below are split by document (a hash of doc_id): SPLIT=dev to tune, SPLIT=validation to
# report; every document is indexed either way. `eval --docs` takes one folder, so the sets over
# several corpora link their PDFs, file by file, into one under data/cache/docs/.
SPLIT ?= all
LINK_DOCS = rm -rf $(1) && mkdir -p $(1) && ln -s $(foreach c,$(2),$(abspath $(SHARED))/$(c)/pdfs/*.pdf) $(1)/

# Fourteen sponsor protocols (829 pages): 151 questions written by hand from the PDFs' text
# (data/questions/sponsor-protocols.curation.md), every answer checked on its page first.
eval-sponsor: install
	$(PY) -m evidence_pipeline.evaluation.check_questions data/questions/sponsor-protocols.jsonl $(SHARED)/sponsor-protocols/pdfs
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/sponsor-protocols/pdfs --questions data/questions/sponsor-protocols.jsonl --split $(SPLIT) --out data/reports/eval-sponsor --cache data/cache/eval

# FinanceBench's 30 filings together: financebench-dev's 25 curated questions and financebench-more's 38
# (`python -m scripts.datasets.curate_financebench --corpus $(SHARED)/financebench-more --out data/questions/financebench-more.jsonl`).
eval-finance-all: install
	$(call LINK_DOCS,data/cache/docs/finance-all,financebench-dev financebench-more)
	cat data/questions/financebench.jsonl data/questions/financebench-more.jsonl > data/cache/docs/finance-all.jsonl
	$(BIN)/evidence-pipeline eval --docs data/cache/docs/finance-all --questions data/cache/docs/finance-all.jsonl --split $(SPLIT) --out data/reports/eval-finance-all --cache data/cache/eval

# Cell lookups generated from pdfplumber's tables of five corpora (64 documents), the gold taken
# by that extractor and not by this parser: `make lookup-questions` rewrites data/questions/lookup.jsonl
# (single process, nice; the extraction is cached in data/cache/lookup-tables).
LOOKUP_CORPORA := sec-10q-dev financebench-dev financebench-more clinical-protocols sponsor-protocols
lookup-questions: install
	nice -n 10 $(PY) -m scripts.datasets.lookup_questions --corpora $(addprefix $(SHARED)/,$(LOOKUP_CORPORA)) --out data/questions/lookup.jsonl

eval-lookup: install
	$(call LINK_DOCS,data/cache/docs/lookup,$(LOOKUP_CORPORA))
	$(BIN)/evidence-pipeline eval --docs data/cache/docs/lookup --questions data/questions/lookup.jsonl --split $(SPLIT) --out data/reports/eval-lookup --cache data/cache/eval

# What each ranking rule adds, on the validation half of each real-document set (SET=sec ... for
# one): `full` with every rule, beside itself with each rule off and beside plain BM25 windows, in
# one run. A rule stays only where it gains here (docs/measurements.md shows the tables).
ABLATE_SETS := sec finance protocols sponsor lookup
ABLATE_DOCS_sec := $(SHARED)/sec-10q-dev/pdfs
ABLATE_QUESTIONS_sec := $(SEC_QUESTIONS)
ABLATE_DOCS_finance := data/cache/docs/finance-all
ABLATE_QUESTIONS_finance := data/cache/docs/finance-all.jsonl
ABLATE_DOCS_protocols := $(SHARED)/clinical-protocols/pdfs
ABLATE_QUESTIONS_protocols := data/questions/protocols.jsonl
ABLATE_DOCS_sponsor := $(SHARED)/sponsor-protocols/pdfs
ABLATE_QUESTIONS_sponsor := data/questions/sponsor-protocols.jsonl
ABLATE_DOCS_lookup := data/cache/docs/lookup
ABLATE_QUESTIONS_lookup := data/questions/lookup.jsonl
SET ?= $(ABLATE_SETS)
ABLATE_SPLIT ?= validation
ablate: install $(SEC_QUESTIONS)
	$(call LINK_DOCS,data/cache/docs/finance-all,financebench-dev financebench-more)
	cat data/questions/financebench.jsonl data/questions/financebench-more.jsonl > data/cache/docs/finance-all.jsonl
	$(call LINK_DOCS,data/cache/docs/lookup,$(LOOKUP_CORPORA))
	$(foreach s,$(SET),$(BIN)/evidence-pipeline eval --docs $(ABLATE_DOCS_$(s)) --questions $(ABLATE_QUESTIONS_$(s)) \
	  --split $(ABLATE_SPLIT) --systems bm25_windows full --ablate --out data/reports/ablate-$(s) --cache data/cache/eval --quiet &&) true

# Speed per stage beside baselines of the same run; first the 10-Qs ingested end to end by
# `evidence-pipeline ingest` in a cold process (pages/s, CPU s/page per stage, peak RSS) and
# search() p50/p95 on that store: `evidence-pipeline bench --ingest DIR --ingest-only` alone.
bench: install
	$(BIN)/evidence-pipeline bench --out data/reports/bench --pdfs $(SHARED)/clinical-protocols/pdfs --ingest $(SHARED)/sec-10q-dev/pdfs

# docs/measurements.md from the latest reports the targets above wrote under data/reports/ (never edited by hand);
# the page's sections with no report here stay as they were (`evidence-pipeline report --fresh` drops them).
report: install
	$(BIN)/evidence-pipeline report --reports data/reports --out docs/measurements.md

parse-quality: install
	$(BIN)/evidence-pipeline parse-quality --docling-tests $(SHARED)/docling-tests --generated --corpora $(SHARED)/sec-10q-dev $(SHARED)/clinical-protocols --out data/reports/parse-quality.json

# Word coverage of every shared corpus with PDFs: each PDF's distinct words (pdfium's text layer)
# found in its evidence units or recorded furniture, lost words listed with page and box. The
# parses come from (and go to) eval's cache, so after the eval-* targets nothing parses again.
COVERAGE_CORPORA := sec-10q-dev financebench-dev financebench-more clinical-protocols sponsor-protocols docling-tests
coverage: install
	mkdir -p data/reports
	$(BIN)/evidence-pipeline parse-quality --coverage $(addprefix $(SHARED)/,$(COVERAGE_CORPORA)) --cache data/cache/eval --quiet --out data/reports/coverage.json

# The UI end-to-end test, keeping its screenshots for the README (needs chromium).
screenshots: install
	EVIDENCE_UI_SCREENSHOTS=$(CURDIR)/docs $(BIN)/pytest -q evidence_pipeline_tests/test_ui.py evidence_pipeline_tests/test_search_page.py

# Dagster 1.13 marks `dagster dev` as superseded by `dg dev` (the dg CLI, a project layout this
# repository does not use) and warns on every start; the command itself is supported.
DEV_WARNINGS := PYTHONWARNINGS='ignore:Function `dev_command` is superseded'

dev: corpus
	$(DEV_WARNINGS) $(BIN)/dagster dev -w workspace.yaml

# A local PostgreSQL cluster for Dagster's storage (Debian package `postgresql`; .ci/run installs it),
# in data/postgres on 127.0.0.1:$(PG_PORT). Idempotent: a running cluster is left as it is.
PG_PORT ?= 5433
PG_URL := postgresql+psycopg2://dagster@127.0.0.1:$(PG_PORT)/dagster

postgres: install
	@command -v pg_ctl >/dev/null || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || apt-get install -y -qq postgresql
	$(PY) -m evidence_pipeline.tools.postgres start data/postgres --port $(PG_PORT)

postgres-stop:
	$(PY) -m evidence_pipeline.tools.postgres stop data/postgres --port $(PG_PORT)

# `make dev` with the instance on Postgres (deploy/postgres/dagster.yaml) in data/dagster_home_pg.
dev-postgres: corpus postgres
	mkdir -p data/dagster_home_pg && cp deploy/postgres/dagster.yaml data/dagster_home_pg/
	$(DEV_WARNINGS) DAGSTER_HOME=$(CURDIR)/data/dagster_home_pg DAGSTER_PG_URL=$(PG_URL) $(BIN)/dagster dev -w workspace.yaml

# Dagster at 100,000 documents on Postgres: partitions, sensor ticks, a batched backfill through
# the daemon (report in data/reports/dagster-scale). BENCH_DAGSTER_ARGS="--docs 100000 --backfill 1000".
BENCH_DAGSTER_ARGS ?=
bench-dagster: postgres
	$(PY) -m evidence_pipeline.benchmark.dagster_scale --pg-url $(PG_URL) --out data/reports/dagster-scale $(BENCH_DAGSTER_ARGS)

clean-data:
	rm -rf data/corpus data/truth data/twins data/korean data/scanned data/store data/dagster_home_pg data/celery-demo data/dagster_home/storage data/dagster_home/history data/dagster_home/schedules data/dagster_home/logs
