"""Start-up: `extractor --help` and a rules extraction import only what they use (no timing here: the
figures are `make bench`'s, evals/benchmarks/import_time.py). The LLM stack, FastAPI, pyarrow, the eval
harness and the review app cost about a second to import and are loaded only by the commands that need them."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest
from fixture_paths import ROOT, SEED_000

from extractor.bulk import forkserver
from extractor.cli import COMMANDS, app
from extractor.cli.lazy import load

NOT_AT_START_UP = ("openai", "instructor", "fastapi", "pyarrow", "extractor.evals", "extractor.review")

# Runs the command line as the `extractor` script does, then writes the modules it imported to a file.
PROBE = """
import json, sys
from extractor.cli import main
out, sys.argv = sys.argv[1], ["extractor", *sys.argv[2:]]
try:
    main()
finally:
    with open(out, "w") as file:
        json.dump(sorted(sys.modules), file)
"""


def loaded_by(tmp_path, *arguments: str) -> list[str]:
    record = tmp_path / "modules.json"
    ran = subprocess.run(
        [sys.executable, "-c", PROBE, str(record), *arguments], cwd=ROOT, capture_output=True, text=True
    )  # stderr is a pipe, and no variable makes rich take it for a terminal (conftest: OUTPUT_SHAPING)
    assert ran.returncode == 0, ran.stderr
    return json.loads(record.read_text())


def heavy(modules: list[str]) -> list[str]:
    return [name for name in modules if any(name == top or name.startswith(f"{top}.") for top in NOT_AT_START_UP)]


@pytest.mark.parametrize(
    "arguments",
    [
        ("--help",),
        ("extract", str(SEED_000), "--backend", "rules", "--output", "{tmp}/out.json"),
        ("extract", str(SEED_000), "--format", "table"),
    ],
    ids=["help", "extract-rules", "extract-table"],
)
def test_help_and_a_rules_extraction_load_no_llm_web_arrow_or_harness_modules(tmp_path, arguments):
    modules = loaded_by(tmp_path, *(argument.format(tmp=tmp_path) for argument in arguments))
    assert "extractor.cli" in modules
    assert heavy(modules) == []


def test_a_rules_extraction_of_a_text_note_loads_no_llm_settings_queue_html_parser_or_rich(tmp_path):
    """The rules backend reads no LLM settings, prompts or queue settings (pydantic models, TOML), a text
    input needs no lxml, and its one line on stderr (no terminal) needs no rich: their modules stay unloaded."""
    modules = loaded_by(tmp_path, "extract", str(SEED_000), "--backend", "rules")
    unused = ("extractor.llm.config", "extractor.llm.prompts", "extractor.queue.settings", "extractor.loaders.html")
    assert [name for name in modules if name in unused or name.split(".")[0] in ("lxml", "rich")] == []


# A rules bulk run through the command line, then a rules worker pool, in a fresh process: the forkserver the
# workers are forked from lives as long as the process that started it, and a pytest process may have started
# one for an LLM run. Prints the LLM client's packages the run's own process and a worker imported.
RUN_PROBE = """
import asyncio, json, sys
sys.path.insert(0, "tests")
from bulk_runs import llm_packages_loaded, llm_packages_of_worker
from extractor.cli import main
sys.argv = ["extractor", "run", sys.argv[1], "--out", sys.argv[2], "--workers", "1", "--quiet"]
try:
    main()
except SystemExit as exit:
    assert not exit.code, exit.code
driver = llm_packages_loaded()
from extractor.backends.choice import BackendName
from extractor.bulk.work import Job, Step
from extractor.bulk.workers import WorkerPool
async def worker():
    pool = WorkerPool(1, Step(BackendName.rules), concurrency=1, handler=llm_packages_of_worker)
    await pool.start()
    answer = await pool.run(Job("k", "a.txt", "a", b"text"))
    await pool.close()
    return answer
print(json.dumps({"driver": driver, "worker": asyncio.run(worker())}))
"""


def test_a_rules_bulk_run_and_its_workers_never_import_the_llm_client(tmp_path):
    """openai and instructor took ~1.5 s to import, in the run's process and again in the forkserver its workers
    come from: half of a small rules run's time. Only a run that asks an LLM imports them (forkserver.LLM_PRELOAD)."""
    ran = subprocess.run(
        [sys.executable, "-c", RUN_PROBE, str(SEED_000), str(tmp_path / "run")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout.splitlines()[-1]) == {"driver": [], "worker": []}
    assert (tmp_path / "run" / "records.jsonl").read_text().count("\n") == 1


# A bulk run through the command line in a fresh process (see above); an LLM one against a port nothing listens on.
# Records what the run's process had imported when it started the forkserver, and, as it readied its step (where
# the LLM client is imported), the forkservers it had started and the LLM client's packages it had imported.
STARTING_PROBE = """
import json, sys
import extractor.bulk.forkserver as forkserver
from extractor.cli import main
RUN_CODE = ("extractor.bulk.run", "extractor.bulk.work", "extractor.document", "extractor.findings")
seen, start = {}, forkserver.start_forkserver
def starting(backend):
    if "imported at the start" not in seen:
        seen["imported at the start"] = [name for name in RUN_CODE if name in sys.modules]
        start(backend)
        import extractor.bulk.run as bulk_run  # the probe's own imports come after the record
        prepare = bulk_run.prepare_step
        def preparing(*args, **kwargs):
            sys.path.insert(0, "tests")
            from bulk_runs import forkservers_started, llm_packages_loaded
            seen["forkservers"], seen["imported"] = forkservers_started(), llm_packages_loaded()
            return prepare(*args, **kwargs)
        bulk_run.prepare_step = preparing
    else:
        start(backend)
forkserver.start_forkserver = starting
sys.argv = ["extractor", "run", *sys.argv[1:], "--workers", "1", "--quiet"]
try:
    main()
except SystemExit as exit:
    seen["exit"] = exit.code
print(json.dumps(seen))
"""


@pytest.mark.parametrize("backend", ["rules", "llm"])
def test_a_bulk_run_starts_its_workers_forkserver_before_it_imports_its_own_code(tmp_path, backend):
    """The run's process and the forkserver its workers come from both import the run's code (~0.4 s; with an LLM,
    openai and instructor: ~1.5 s). The command line starts the forkserver before importing the run's code, and
    the run before readying its step, so the two import at once on two cores: a 2-document rules run
    1.05 -> 0.85 s, an LLM run 2.85 -> 1.9 s."""
    config = tmp_path / "extractor.toml"
    config.write_text('[llm]\nattempts = 1\nmodel = "scripted"\ncache = "off"\n')
    asked = ["--backend", backend] + (
        ["--config", str(config), "--base-url", "http://127.0.0.1:9/v1"] * (backend == "llm")
    )
    ran = subprocess.run(
        [sys.executable, "-c", STARTING_PROBE, str(SEED_000), "--out", str(tmp_path / "run"), *asked],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    seen = json.loads(ran.stdout.splitlines()[-1])
    assert seen["exit"] == (0 if backend == "rules" else 1)  # the LLM's endpoint cannot serve: left pending
    assert seen["imported at the start"] == []
    assert seen["imported"] == []  # the step is readied before the run's process has imported the LLM client
    (command,) = seen["forkservers"]
    assert "extractor.bulk.work" in command and ("extractor.backends.hybrid" in command) == (backend == "llm")


# Starts a rules run's forkserver and asks a process forked from it how many objects it started with frozen
# (one process and a pipe: a multiprocessing Pool's terminate can deadlock with a worker taking its queue's lock).
FROZEN_PROBE = """
import sys
sys.path.insert(0, "tests")
from bulk_runs import send_freeze_count
from extractor.backends.choice import BackendName
from extractor.bulk.forkserver import CONTEXT, start_forkserver
start_forkserver(BackendName.rules)
received, sent = CONTEXT.Pipe(duplex=False)
child = CONTEXT.Process(target=send_freeze_count, args=(sent,))
child.start()
sent.close()
assert received.poll(60), "no answer from the forked process"
print(received.recv())
child.join(60)
"""


def test_the_forkserver_freezes_what_it_imported_so_its_exit_does_not_hold_the_runs_output():
    """The forkserver ends after the run's process, still holding its stdout and stderr; its interpreter's last
    collections walked every object it had imported (0.43-0.62 s after an LLM run, 0.16-0.18 s after a rules run, for a
    caller waiting on the pipes). Its preload ends by freezing them, so a process forked from it inherits them
    frozen (without it: none)."""
    assert forkserver.RULES_PRELOAD[-1] == forkserver.LLM_PRELOAD[-1] == "extractor.bulk.frozen"  # after the rest
    ran = subprocess.run([sys.executable, "-c", FROZEN_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert int(ran.stdout) > 20_000, ran.stdout  # a rules run's modules: the lexicons, pydantic models, lxml


def test_an_llm_command_still_loads_what_it_needs(tmp_path):
    """The other side: a command's own --help imports its module (eval's imports the harness)."""
    modules = loaded_by(tmp_path, "eval-runs", "--help")
    assert "extractor.evals.harness.store" in modules


def test_the_listing_shows_each_command_as_its_own_help_would():
    """`extractor --help` lists placeholders; each summary must be the real command's first paragraph."""
    for name, (target, summary) in COMMANDS.items():
        command = load(name, target)
        assert command.name == name
        assert not command.hidden and not command.deprecated and command.short_help is None
        assert inspect.cleandoc(command.help or "").split("\n\n")[0] == summary, name


GC_PROBE = """
import gc, json, sys
from extractor.cli import main
sys.argv = ["extractor", "version"]
try:
    main()
finally:
    print(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count()}))
"""


def test_the_program_starts_without_the_collector_and_runs_its_command_with_it():
    """extractor/cli/startup.py: paused while the command loads, then what start-up made is frozen and the
    collector is on again, so a long run collects as usual."""
    ran = subprocess.run([sys.executable, "-c", GC_PROBE], cwd=ROOT, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    state = json.loads(ran.stdout.splitlines()[-1])
    assert state["enabled"] and state["frozen"] > 10_000


def test_invoking_the_app_in_process_leaves_the_collector_alone():
    import gc

    from typer.testing import CliRunner

    frozen = gc.get_freeze_count()
    assert CliRunner().invoke(app, ["version"]).exit_code == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_every_command_is_listed_in_order():
    from typer.testing import CliRunner

    listed = CliRunner().invoke(app, ["--help"], terminal_width=200).output
    lines = [line.strip("│ ").split()[0] for line in listed.splitlines() if line.startswith("│ ") and "  " in line]
    commands = [line for line in lines if line in COMMANDS]
    assert commands == list(COMMANDS)


def test_tests_reading_the_command_line_pass_whatever_the_shell_forces():
    """A developer's FORCE_COLOR or COLUMNS used to fail a dozen tests that read the command line's text:
    conftest removes them for the session, subprocesses included."""
    tests = [f"{__file__}::test_every_command_is_listed_in_order", "tests/test_queue.py::test_queue_commands"]
    forced = {**os.environ, "FORCE_COLOR": "1", "TTY_COMPATIBLE": "1", "COLUMNS": "40"}
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=ROOT,
        env=forced,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stdout[-2000:]
