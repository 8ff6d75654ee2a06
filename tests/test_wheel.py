"""The wheel as a user gets it: built from the working tree, installed into a fresh virtualenv, run from there.

The repository's schemas/, prompts/ and evals/ folders install under the one import name `extractor`
(setup.py's package-dir mapping), and the prompts and lexicons are package data. An editable install
hides mistakes in that mapping (its finder reads the repository), so this module builds the real wheel once
(`pip wheel`; build isolation fetches setuptools from the package registry), checks its file list,
installs it into a virtualenv made for the test and runs the installed `extractor` command from a
temporary folder: a rules extraction, and an LLM extraction against the tests' scripted server on
127.0.0.1 (which only works if the prompt files shipped).

The fresh virtualenv borrows the test environment's third-party packages through a .pth file that names
their site-packages folder: a path line only, so the editable install's finder hook there never runs and
the only `extractor` it can import is the installed wheel's. Select with `pytest -m wheel`.
"""

from __future__ import annotations

import json
import os
import shutil
import string
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixture_paths import ROOT, SEED_000
from llm_server import ScriptedServer, tool_reply
from scripted_answers import quoted_answer

from extractor.backends import rules
from extractor.document import Document
from extractor.llm.prompts import load_prompt
from extractor.loaders import load
from extractor.schemas.concepts import to_facts

pytestmark = [pytest.mark.wheel, pytest.mark.slow]  # a wheel built and installed in a fresh virtualenv

# Not part of a source tree: left out of the copy the wheel is built from (building in place leaves build/).
NOT_SOURCE = (
    ".git",
    ".venv",
    "out",
    "build",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".hypothesis",
    ".extractor-cache",
    "html_rows.c",  # Cython's output and the built module: the wheel's build makes its own
    "*.so",
)
# Variables that would let the installed command see anything but the wheel, a real endpoint or a proxy.
UNSET = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "EXTRACTOR_MODEL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
BUILD_SECONDS = 600  # the first build downloads setuptools into pip's cache
RUN_SECONDS = 120


def _run(
    command: list[str | Path], what: str, cwd: Path | None = None, timeout: float = RUN_SECONDS
) -> subprocess.CompletedProcess[str]:
    """Run a command; on failure, the assertion says what was being done and shows the command's output."""
    env = {name: value for name, value in os.environ.items() if name not in UNSET}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (
        f"{what} failed (exit {result.returncode}): {' '.join(str(part) for part in command)}\n"
        f"--- stdout (end) ---\n{result.stdout[-3000:]}\n--- stderr (end) ---\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of the working tree, built once for this module from a clean copy of it."""
    source = tmp_path_factory.mktemp("source") / "tree"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE), symlinks=True)
    dist = tmp_path_factory.mktemp("dist")
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, source],
        "building the wheel",
        timeout=BUILD_SECONDS,
    )
    built = sorted(dist.glob("*.whl"))
    assert len(built) == 1, f"expected one wheel in {dist}, found {[path.name for path in built]}"
    return built[0]


@dataclass(frozen=True)
class Installed:
    root: Path  # the fresh virtualenv
    python: Path
    command: Path  # its `extractor` console script


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """A new virtualenv with the wheel installed; third-party packages come from the test environment."""
    root = tmp_path_factory.mktemp("fresh") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", root], "creating the fresh virtualenv")
    python = root / "bin" / "python"
    _run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", wheel],
        "installing the wheel into the fresh virtualenv",
    )
    site = Path(
        _run(
            [python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            "finding the fresh site-packages",
        ).stdout.strip()
    )
    borrowed = sysconfig.get_paths()["purelib"]
    (site / "borrowed_test_packages.pth").write_text(borrowed + "\n")  # a path line only: no `import` line runs
    command = root / "bin" / "extractor"
    assert command.is_file(), (
        f"the wheel installed no `extractor` command in {command.parent}: {sorted(p.name for p in command.parent.iterdir())}"
    )
    return Installed(root, python, command)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A temporary current folder holding a copy of a real bundled note (nothing of the repository around it)."""
    shutil.copy(SEED_000, tmp_path / SEED_000.name)
    return tmp_path


def test_the_wheel_installs_one_top_level_package_with_its_data_files(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    top_level = {name.split("/", 1)[0] for name in names}
    info = {name for name in top_level if name.endswith(".dist-info")}
    assert len(info) == 1 and top_level - info == {"extractor"}, (
        f"the wheel must install only the package `extractor` (schemas/, prompts/, evals/ map under it); top-level names: {sorted(top_level)}"
    )
    prompts = [f"extractor/{path.relative_to(ROOT).as_posix()}" for path in sorted((ROOT / "prompts").glob("*/*.toml"))]
    lexicons = [
        f"extractor/{path.relative_to(ROOT).as_posix()}"
        for path in sorted((ROOT / "schemas" / "lexicon").glob("*/*.toml"))
    ]
    review = [
        path.relative_to(ROOT).as_posix()
        for folder in ("templates", "static")
        for path in sorted((ROOT / "extractor" / "review" / folder).iterdir())
    ]
    assert prompts and lexicons and review, "the repository's prompt, lexicon or review template files were not found"
    expected = prompts + lexicons + review
    missing = [inside for inside in expected if inside not in names]
    assert not missing, f"package data missing from {wheel.name}: {missing}"
    for folder in ("schemas", "prompts", "evals"):
        assert f"extractor/{folder}/__init__.py" in names, f"{folder}/ is not in the wheel as extractor.{folder}"


def test_the_installed_package_is_the_one_imported(installed: Installed, workdir: Path) -> None:
    probe = (
        "import importlib, importlib.util, json\n"
        "found = {name: importlib.import_module(name).__file__ for name in "
        "('extractor', 'extractor.schemas', 'extractor.prompts', 'extractor.evals')}\n"
        "found.update({name: importlib.util.find_spec(name) is not None for name in ('schemas', 'prompts', 'evals')})\n"
        "print(json.dumps(found))\n"
    )
    found = json.loads(
        _run([installed.python, "-I", "-c", probe], "importing the installed package", cwd=workdir).stdout
    )
    for name in ("extractor", "extractor.schemas", "extractor.prompts", "extractor.evals"):
        assert Path(found[name]).resolve().is_relative_to(installed.root.resolve()), (
            f"{name} was imported from {found[name]}, not from the fresh virtualenv {installed.root}"
        )
    assert not any(found[name] for name in ("schemas", "prompts", "evals")), f"top-level modules importable: {found}"


def test_the_installed_wheel_has_the_source_hash_of_the_checkout_it_was_built_from(
    installed: Installed, workdir: Path
) -> None:
    """The Ray engine refuses workers whose code differs from the driver's by this hash: a cluster's nodes run
    the wheel, the driver often a checkout, and the same code must hash the same in both."""
    from extractor.code_version import source_hash

    probe = "from extractor.code_version import source_hash; print(source_hash())"
    found = _run([installed.python, "-I", "-c", probe], "hashing the installed source", cwd=workdir).stdout.strip()
    assert found == source_hash()


def _facts(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _said(facts: list[dict]) -> set[str]:
    """What each fact says (concept, value, unit, period, dimensions), without where it was read."""
    return {
        json.dumps({key: fact.get(key) for key in ("concept", "value", "unit", "period", "dims")}, sort_keys=True)
        for fact in facts
    }


def _differences(got: list[dict], expected: list[dict]) -> str:
    extra, missing = sorted(_said(got) - _said(expected)), sorted(_said(expected) - _said(got))
    return f"{len(extra)} unexpected, e.g. {extra[:3]}; {len(missing)} missing, e.g. {missing[:3]}"


@pytest.fixture(scope="module")
def note() -> Document:
    return load(SEED_000)


@pytest.fixture(scope="module")
def rules_facts(note: Document) -> list[dict]:
    """The working tree's own rules extraction of the note, in process: what the installed command must print."""
    return [fact.to_json_dict() for fact in to_facts(rules.extract(note).note)]


def test_installed_command_extracts_a_note_with_the_rules_backend(
    installed: Installed, workdir: Path, rules_facts: list[dict]
) -> None:
    result = _run(
        [installed.command, "extract", SEED_000.name, "--format", "facts"],
        "the installed `extractor extract` (rules)",
        cwd=workdir,
    )
    facts = _facts(result.stdout)
    assert facts, f"the installed command printed no facts for {SEED_000.name}:\n{result.stderr[-2000:]}"
    assert _said(facts) == _said(rules_facts), (
        f"the installed rules backend differs from the working tree's: {_differences(facts, rules_facts)}"
    )


def test_installed_package_extracts_with_the_llm_backend_and_its_shipped_prompt(
    installed: Installed, workdir: Path, note: Document, rules_facts: list[dict]
) -> None:
    answer = quoted_answer(
        rules.extract(note), note
    )  # what a model would answer, written by the tests from the rules extraction
    with ScriptedServer() as server:
        server.script.append(tool_reply(answer))
        result = _run(
            # The console script run by the fresh interpreter in isolated mode (-I: no current folder, no PYTHONPATH).
            [
                installed.python,
                "-I",
                installed.command,
                "extract",
                SEED_000.name,
                "--backend",
                "llm",
                "--base-url",
                server.base_url,
                "--model",
                "scripted",
                "--cache",
                "off",
                "--format",
                "facts",
            ],
            "the installed `extractor extract --backend llm` against the scripted server",
            cwd=workdir,
        )
    assert len(server.requests) == 1, (
        f"expected one request to the scripted server, got {len(server.requests)}:\n{result.stderr[-2000:]}"
    )
    system = server.requests[0]["messages"][0]
    shipped = string.Template(load_prompt("stock_compensation@v1").system).safe_substitute().strip()
    assert system == {"role": "system", "content": shipped}, (
        f"the installed package's system prompt is not prompts/stock_compensation/v1.toml's: {str(system)[:300]}"
    )
    facts = _facts(result.stdout)
    assert facts and _said(facts) == _said(rules_facts), (
        f"the LLM backend did not read back the scripted answer (the rules extraction): {_differences(facts, rules_facts)}"
    )
