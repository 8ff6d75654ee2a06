"""Eval suites (data) and the harness that scores any backend against them (evals.harness)."""
