"""Every test's `extractor run` and `extract --queue` write to a throwaway queue, never to out/; every test
sees the output a plain CI shell gets and reaches the endpoints it names, whatever the developer's shell sets;
and the test process keeps no regex programs in the checkout (tests compile patterns of their own;
tests/test_regex_cache.py turns it on itself)."""

import pytest

# Variables that reshape what the command line prints (rich and typer read them): FORCE_COLOR puts colour codes
# in text the tests read, COLUMNS rewraps it. A test of their effect sets them itself (monkeypatch.setenv).
OUTPUT_SHAPING = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES", "TERMINAL_WIDTH")
# Variables that send the LLM clients elsewhere: a proxy would take the tests' requests to 127.0.0.1 (unless a
# test server is on loopback, which is never proxied) and OPENAI_BASE_URL the default endpoint's. A test of their
# effect sets them itself.
ROUTING = tuple(f"{scheme}_proxy" for scheme in ("http", "https", "all", "no"))
ROUTING = (*ROUTING, *(name.upper() for name in ROUTING), "OPENAI_BASE_URL")


@pytest.fixture(autouse=True, scope="session")
def _throwaway_queue(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("EXTRACTOR_QUEUE", str(tmp_path_factory.mktemp("queue") / "queue.sqlite"))
    yield
    patch.undo()


@pytest.fixture(autouse=True, scope="session")
def _plain_output():
    patch = pytest.MonkeyPatch()
    for name in OUTPUT_SHAPING + ROUTING:
        patch.delenv(name, raising=False)
    yield
    patch.undo()


@pytest.fixture(autouse=True, scope="session")
def _no_regex_programs_kept():
    from extractor import regex_cache

    patch = pytest.MonkeyPatch()
    patch.setattr(regex_cache, "_writable", False)
    yield
    patch.undo()


@pytest.fixture
def merges(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every merge of a note's numbers into facts (the validator's FactSet, to_facts), counted."""
    from extractor.schemas import concepts
    from extractor.validator import factset

    calls = [0]
    merge = concepts.merge_printings

    def counted(printings):
        calls[0] += 1
        return merge(printings)

    monkeypatch.setattr(concepts, "merge_printings", counted)
    monkeypatch.setattr(factset, "merge_printings", counted)
    return calls
