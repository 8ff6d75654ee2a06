"""Reading TOML: the lexicon's files (kept parsed between runs), and settings, prompts and suite manifests with
errors that name the file."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

from extractor.regex_cache import derived


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """`tomllib.loads(text)`, the text of the package's own file at `path` (the lexicon's), kept between runs with the
    compiled regexes (regex_cache.derived): importing tomllib and parsing the lexicon's 26 KB of TOML were some 5 % of
    `extractor extract`'s start-up. Kept by path with the text it was parsed from, so an edited file is parsed again
    and replaces its entry (the cache does not fill with old versions). Each call gets its own copy."""
    kept = derived(str(path), 0, "tomllib.loads", lambda: (text, _loads(text)), lambda value: _parsed_from(value, text))
    # a copy: a caller's change never reaches the kept tables (or the file written at exit)
    return marshal.loads(marshal.dumps(kept[1]))


def _loads(text: str) -> dict[str, Any]:
    import tomllib  # only to parse a text no earlier run kept

    return tomllib.loads(text)


def _parsed_from(value: object, text: str) -> bool:
    return type(value) is tuple and len(value) == 2 and value[0] == text and type(value[1]) is dict


def read_toml(path: Path, error: type[Exception], unreadable: str = "cannot be read") -> dict[str, Any]:
    """The file's top-level table, or `error` saying which file and what is wrong with it."""
    import tomllib  # settings, prompts and manifests: a user's files, parsed each time (not on a rules run's path)

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as cause:
        raise error(f"{path}: {unreadable} ({cause.strerror or cause})") from cause
    except tomllib.TOMLDecodeError as cause:
        raise error(f"{path}: not valid TOML ({cause})") from cause
