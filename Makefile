# Each target bootstraps its own virtualenv from nothing; only python3 (>=3.11) is needed.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench bench-bulk eval browser review clean

$(BIN)/extractor: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

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

## test: run the test suite (installs Debian's chromium for the report's browser test when run as root)
test: $(BIN)/extractor browser
	$(BIN)/python -m pytest -q

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

## bench: the validator's mutation benchmark (detection rates per mutation and rule family)
bench: $(BIN)/extractor
	$(BIN)/python evals/benchmarks/validator_mutations.py

## bench-bulk: bulk-run throughput and memory (rules over 1k and 5k documents; LLM path at concurrency 1-64)
bench-bulk: $(BIN)/extractor
	$(BIN)/python evals/benchmarks/bulk_throughput.py

clean:
	rm -rf $(VENV) out .pytest_cache
