"""A corpus of any size from the project's filings: each copy made distinct by a line without numbers.

Bulk runs key documents by content, so plain copies would be one document; a trailing line
("Corpus copy bcd.") changes the hash and not the extraction (it holds no number).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = (
    "tests/fixtures/000_a279831d03f6579a.txt",
    "tests/fixtures/002_59f0e0194afd947c.txt",
    "tests/fixtures/html/000_a279831d03f6579a.htm",
    "tests/fixtures/html/002_59f0e0194afd947c.htm",
    "tests/fixtures/text/000_aligned_excerpt.txt",
    "tests/fixtures/text/002_aligned.txt",
    "evals/suites/heterogeneous/documents/002_10k_note.htm",
    "evals/suites/heterogeneous/documents/new_years_as_rows.txt",
    "evals/suites/heterogeneous/documents/new_two_plans.txt",
    "evals/suites/heterogeneous/documents/new_in_millions.htm",
)


def letters(number: int) -> str:
    """0 -> 'a', 25 -> 'z', 26 -> 'ba': a copy number written without digits."""
    word = ""
    while True:
        number, digit = divmod(number, 26)
        word = chr(ord("a") + digit) + word
        if number == 0:
            return word


def distinct_copy(data: bytes, suffix: str, number: int) -> bytes:
    if suffix in (".htm", ".html"):
        return data + f"\n<!-- corpus copy {letters(number)} -->\n".encode()
    return data + f"\nCorpus copy {letters(number)}.\n".encode()


def build_corpus(folder: Path, size: int, samples: tuple[str, ...] = SAMPLES, per_folder: int = 1000) -> list[Path]:
    """`size` distinct files in `folder`, cycling through `samples`, `per_folder` to a subfolder."""
    sources = [(ROOT / sample).read_bytes() for sample in samples]
    suffixes = [Path(sample).suffix for sample in samples]
    paths = []
    for number in range(size):
        which = number % len(samples)
        path = folder / f"part-{number // per_folder:03d}" / f"doc-{number:06d}{suffixes[which]}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(distinct_copy(sources[which], suffixes[which], number))
        paths.append(path)
    return paths
