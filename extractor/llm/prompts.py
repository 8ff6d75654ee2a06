"""Versioned prompt files: the text an LLM sees lives in prompts/, never in code, and is hashed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from extractor.errors import ExtractorError
from extractor.tomlfile import read_toml

# Shipped as package data (the repository's prompts/ folder is the package extractor.prompts), so an
# installed wheel finds them as an editable install does. Wheels install as files: a real Path.
PROMPTS_DIR = Path(str(resources.files("extractor.prompts")))


UNITS = ("note", "block")


@dataclass(frozen=True)
class Example:
    """A worked example shown to the model before the real question: a user turn and the answer to copy."""

    user: str
    answer: str


@dataclass(frozen=True)
class Prompt:
    """One prompt file: id, version, system and user templates ($name placeholders), notes for people,
    how much of a note one request holds (`unit`), and worked examples (few-shot turns)."""

    id: str
    version: int
    system: str
    user: str
    notes: str
    path: Path
    unit: str = "note"  # note: the whole note (split only when long); block: one table or paragraph per request
    examples: tuple[Example, ...] = ()

    @property
    def hash(self) -> str:
        """Content hash of what the model sees and how it is asked (notes excluded): an extraction names
        exactly its prompt. Prompts with the defaults hash as before the unit and examples existed."""
        fields: list[object] = [self.id, self.version, self.system, self.user]
        if self.unit != "note" or self.examples:
            fields += [self.unit, [[example.user, example.answer] for example in self.examples]]
        payload = json.dumps(fields, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    @property
    def name(self) -> str:
        return f"{self.id}@v{self.version}"

    def messages(self, **values: str) -> list[dict[str, str]]:
        """System and user messages with every $placeholder filled; a missing value is an error, not blank."""
        shown = [
            turn
            for example in self.examples
            for turn in (
                {"role": "user", "content": example.user.strip()},
                {"role": "assistant", "content": example.answer.strip()},
            )
        ]
        return [
            {"role": "system", "content": Template(self.system).substitute(values).strip()},
            *shown,
            {"role": "user", "content": Template(self.user).substitute(values).strip()},
        ]


class PromptError(ExtractorError):
    """A prompt file that is missing or malformed; the message names the file."""


def load_prompt(spec: str | Path = "stock_compensation@v1") -> Prompt:
    """A prompt by id (latest version), by 'id@vN', or by the path of a .toml file."""
    path = Path(spec)
    if path.suffix != ".toml":
        name, _, version = str(spec).partition("@v")
        folder = PROMPTS_DIR / name
        versions = sorted(folder.glob("v*.toml"), key=lambda p: int(p.stem[1:]) if p.stem[1:].isdigit() else -1)
        if not versions:
            raise PromptError(f"no prompt '{name}' in {PROMPTS_DIR} (expected {folder}/v1.toml)")
        path = folder / f"v{version}.toml" if version else versions[-1]
    data = read_toml(path, PromptError)
    missing = [key for key in ("id", "version", "system", "user") if key not in data]
    if missing:
        raise PromptError(f"{path}: missing {', '.join(missing)}")
    unit = data.get("unit", "note")
    if unit not in UNITS:
        raise PromptError(f"{path}: unit must be one of {', '.join(UNITS)}, not {unit!r}")
    examples = data.get("examples", [])
    if not isinstance(examples, list) or not all(
        isinstance(e, dict) and {"user", "answer"} <= e.keys() for e in examples
    ):
        raise PromptError(f"{path}: each [[examples]] table needs 'user' and 'answer'")
    return Prompt(
        id=str(data["id"]),
        version=int(data["version"]),
        system=data["system"],
        user=data["user"],
        notes=data.get("notes", "").strip(),
        path=path,
        unit=unit,
        examples=tuple(Example(str(e["user"]), str(e["answer"])) for e in examples),
    )
