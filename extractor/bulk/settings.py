"""What a run can be asked that the command line shows before it loads the run: where documents are worked on,
and how long one may take. Its own module, importing nothing, so `extractor run` starts the forkserver (forkserver.py)
before it imports the bulk code."""

from __future__ import annotations

from enum import Enum

DOC_TIMEOUT = 300.0  # seconds a document may take (--doc-timeout): a pathological table must not hold a run


class Engine(str, Enum):
    """Where documents are worked on: this machine's worker processes, or a Ray cluster (the 'ray' extra)."""

    local = "local"
    ray = "ray"
