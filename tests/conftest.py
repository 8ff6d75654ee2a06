"""Every test's `extractor run` and `extract --queue` write to a throwaway queue, never to out/."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _throwaway_queue(tmp_path_factory):
    patch = pytest.MonkeyPatch()
    patch.setenv("EXTRACTOR_QUEUE", str(tmp_path_factory.mktemp("queue") / "queue.sqlite"))
    yield
    patch.undo()
