"""Paths of the test fixtures and gold files, named once for every test module."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
GOLD = ROOT / "evals" / "gold"

SEED_000 = FIXTURES / "000_a279831d03f6579a.txt"
SEED_002 = FIXTURES / "002_59f0e0194afd947c.txt"
HTML_000 = FIXTURES / "html" / "000_a279831d03f6579a.htm"
HTML_002 = FIXTURES / "html" / "002_59f0e0194afd947c.htm"
EDGAR_KMX = FIXTURES / "edgar" / "0001170010-20-000045.txt"
TEXT_000 = FIXTURES / "text" / "000_aligned_excerpt.txt"
TEXT_002 = FIXTURES / "text" / "002_aligned.txt"
