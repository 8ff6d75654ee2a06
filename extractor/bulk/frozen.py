"""Imported last by the forkserver (bulk/forkserver.py's preload): freezes what it has imported (gc.freeze).

The forkserver ends when the run's process does, and its interpreter's last collections walked everything it had
imported (some 36,000 objects for a rules run, far more with the LLM client; never garbage): 0.43-0.62 s after an
LLM run, 0.16-0.18 s after a rules run, while it still held the run's stdout and stderr, so a caller reading them
waited that long past the run's end. Frozen, they are skipped. The workers forked from it start with them frozen
too (bulk/workers.py collect_less). Only the forkserver imports this module.
"""

import gc

gc.freeze()
