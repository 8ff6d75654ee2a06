"""Versioned prompt files: the text an LLM sees lives in prompts/, never in code, and is hashed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from string import Template

from extractor.tomlfile import read_toml

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


@dataclass(frozen=True)
class Prompt:
    """One prompt file: id, version, system and user templates ($name placeholders), and notes for people."""

    id: str
    version: int
    system: str
    user: str
    notes: str
    path: Path

    @property
    def hash(self) -> str:
        """Content hash of what the model sees (notes excluded): an extraction names exactly its prompt."""
        payload = json.dumps([self.id, self.version, self.system, self.user], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    @property
    def name(self) -> str:
        return f"{self.id}@v{self.version}"

    def messages(self, **values: str) -> list[dict[str, str]]:
        """System and user messages with every $placeholder filled; a missing value is an error, not blank."""
        return [
            {"role": "system", "content": Template(self.system).substitute(values).strip()},
            {"role": "user", "content": Template(self.user).substitute(values).strip()},
        ]


class PromptError(Exception):
    """A prompt file that is missing or malformed; the message names the file."""


def load_prompt(spec: str | Path = "stock_compensation") -> Prompt:
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
    return Prompt(
        id=str(data["id"]),
        version=int(data["version"]),
        system=data["system"],
        user=data["user"],
        notes=data.get("notes", "").strip(),
        path=path,
    )
