"""Every test's `extractor run` and `extract --queue` write to a throwaway queue, never to out/; and every test
sees the output a plain CI shell gets, whatever the developer's shell sets."""

import pytest

# Variables that reshape what the command line prints (rich and typer read them): FORCE_COLOR puts colour codes
# in text the tests read, COLUMNS rewraps it. A test of their effect sets them itself (monkeypatch.setenv).
OUTPUT_SHAPING = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES", "TERMINAL_WIDTH")


@pytest.fixture(autouse=True, scope="session")
def _throwaway_queue(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("EXTRACTOR_QUEUE", str(tmp_path_factory.mktemp("queue") / "queue.sqlite"))
    yield
    patch.undo()


@pytest.fixture(autouse=True, scope="session")
def _plain_output():
    patch = pytest.MonkeyPatch()
    for name in OUTPUT_SHAPING:
        patch.delenv(name, raising=False)
    yield
    patch.undo()
