"""The eval harness: run a backend over a suite, score facts against gold, store runs, compare them.

suite.py loads a suite manifest; runner.py runs a backend over it; outcomes.py and metrics.py
turn facts into per-fact outcomes and scores; store.py keeps runs in SQLite; compare.py says
what changed between two runs and whether it is more than noise; terminal.py and html.py report.
"""
