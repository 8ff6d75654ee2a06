# Each target bootstraps its own virtualenv from nothing; only python3 (>=3.11) is needed.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/extractor: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

## demo: extract the bundled sample filings with the rules backend (no LLM, no key) and score them against gold
demo: $(BIN)/extractor
	$(BIN)/extractor extract tests/fixtures/000_a279831d03f6579a.txt tests/fixtures/002_59f0e0194afd947c.txt --format table
	$(BIN)/extractor extract tests/fixtures/000_a279831d03f6579a.txt tests/fixtures/002_59f0e0194afd947c.txt --format facts -o out/sample.facts.jsonl
	$(BIN)/extractor score out/sample.facts.jsonl --gold evals/gold

## test: run the test suite
test: $(BIN)/extractor
	$(BIN)/python -m pytest -q

## bench: the validator's mutation benchmark (detection rates per mutation and rule family)
bench: $(BIN)/extractor
	$(BIN)/python evals/benchmarks/validator_mutations.py

clean:
	rm -rf $(VENV) out .pytest_cache
