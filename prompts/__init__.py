"""Versioned prompt files (package data: the LLM backend reads them through importlib.resources)."""
