# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
BIN := $(VENV)/bin
export DAGSTER_HOME ?= $(CURDIR)/data/dagster_home
SAMPLE_QUESTION ?= What is the maximum flow rate for Aqueous Phase 1 in SOP-8812?

.PHONY: install scaleout demo celery-demo test dev corpus screenshots clean-data eval eval-scanned eval-twins eval-korean eval-sec eval-sec-lookup eval-finance eval-protocols bench parse-quality postgres postgres-stop dev-postgres bench-dagster

# The CPU torch goes in first: anything that pulls torch in later finds it satisfied
# instead of fetching a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,ocr]'
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

# One worker per core of the 2-core CI machine. A test file runs whole on one worker (loadfile),
# so its module fixtures are built once; session fixtures are built once per worker.
# TEST_WORKERS=0 runs every test in this process.
TEST_WORKERS ?= 2
test: install
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile

# Measurements quoted in the README; each writes its reports under data/reports/.
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

eval-sec: install
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/sec-10q-dev/pdfs --questions data/questions/sec-10q.jsonl --out data/reports/eval-sec --cache data/cache/eval

# The same filings, 40 figure lookups (4 per filing: a statement row, a balance-sheet or
# cash-flow row, two rows of notes or MD&A tables), written from the PDFs' text alone, each
# naming its company and period as the filing prints them (data/questions/sec-10q-lookup.jsonl).
eval-sec-lookup: install
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/sec-10q-dev/pdfs --questions data/questions/sec-10q-lookup.jsonl --out data/reports/eval-sec-lookup --cache data/cache/eval

# FinanceBench's filings (900 pages): the questions curated by
# `python -m evidence_pipeline.evaluation.curate_financebench` (decisions beside the file).
eval-finance: install
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/financebench-dev/pdfs --questions data/questions/financebench.jsonl --out data/reports/eval-finance --cache data/cache/eval

# Nine clinical-trial protocols and consent forms (shared/corpora/clinical-protocols; the tenth is a
# scan without text): 36 questions written by hand from the PDFs' text, not from this parser's
# output, every answer checked on its page by `python -m evidence_pipeline.evaluation.check_questions`.
eval-protocols: install
	$(PY) -m evidence_pipeline.evaluation.check_questions data/questions/protocols.jsonl $(SHARED)/clinical-protocols/pdfs
	$(BIN)/evidence-pipeline eval --docs $(SHARED)/clinical-protocols/pdfs --questions data/questions/protocols.jsonl --out data/reports/eval-protocols --cache data/cache/eval

bench: install
	$(BIN)/evidence-pipeline bench --out data/reports/bench

parse-quality: install
	$(BIN)/evidence-pipeline parse-quality --docling-tests $(SHARED)/docling-tests --generated --corpora $(SHARED)/sec-10q-dev $(SHARED)/clinical-protocols --out data/reports/parse-quality.json

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
