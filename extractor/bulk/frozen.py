"""Imported last by the forkserver (bulk/forkserver.py's preload): freezes what it has imported (gc.freeze).

The forkserver ends when the run's process does, and its interpreter's last collections walked everything it
had imported (~200,000 objects, never garbage): 0.45 s after an LLM run, 0.13 s after a rules run, during which
it still held the run's stdout and stderr, so a caller reading them waited that long past the run's end. Frozen,
they are skipped. The workers forked from it start with them frozen too (bulk/workers.py collect_less).
"""

import gc

gc.freeze()
