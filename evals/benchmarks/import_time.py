"""Start-up against `import pydantic`, each in fresh interpreters: the front door (`import extractor`, bar: at
most 2x) and the command line (issue 23, goal 2: `extractor --help` and a rules extraction, bar: at most 4x).

Prints the median wall time of each command over RUNS fresh processes, an empty interpreter, and the
ratios to `python -c "import pydantic"`, all measured in this run; and the same for CPU time (user + system),
which other processes on a shared machine disturb less than wall time. The commands take turns within each
round, so a load change on the machine touches all of them alike. Bytecode is written and one warm-up
round runs first: an installed package has its .pyc files, and after its first run the programs of its regexes
(extractor.regex_cache), so the figures include compiling neither (PYTHONDONTWRITEBYTECODE, which turns both
off, is dropped for the children).

    python evals/benchmarks/import_time.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "tests" / "fixtures" / "000_a279831d03f6579a.txt"
RUNS = 15
FRONT_DOOR_BAR = 2.0  # import extractor / import pydantic
CLI_BAR = 4.0  # extractor --help, extractor extract SEED --backend rules / import pydantic
PASS, PYDANTIC, FRONT_DOOR = "python -c pass", 'python -c "import pydantic"', 'python -c "import extractor"'


def extractor_command() -> list[str]:
    """The installed `extractor` script beside this interpreter, as users run it; else `python -m extractor.cli`."""
    script = Path(sys.executable).with_name("extractor")
    return [str(script)] if script.exists() else [sys.executable, "-m", "extractor.cli"]


def commands() -> dict[str, list[str]]:
    """What is timed, by the label printed."""
    python, cli = sys.executable, extractor_command()
    return {
        PASS: [python, "-c", "pass"],
        PYDANTIC: [python, "-c", "import pydantic"],
        FRONT_DOOR: [python, "-c", "import extractor"],
        "extractor --help": [*cli, "--help"],
        f"extractor extract {SEED.name} --backend rules": [*cli, "extract", str(SEED), "--backend", "rules"],
    }


def medians(timed: dict[str, list[str]], runs: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU seconds of each command over `runs` rounds (one warm-up round first), output discarded."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    times: dict[str, list[float]] = {label: [] for label in timed}
    cpu: dict[str, list[float]] = {label: [] for label in timed}
    for round_number in range(runs + 1):
        for label, command in timed.items():
            before, started = _children_cpu(), time.perf_counter()
            subprocess.run(command, check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if round_number:  # round 0 writes the bytecode and the regex programs, and warms the file cache
                times[label].append(time.perf_counter() - started)
                cpu[label].append(_children_cpu() - before)
    return (
        {label: statistics.median(values) for label, values in times.items()},
        {label: statistics.median(values) for label, values in cpu.items()},
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="Fresh interpreters per command.")
    runs = parser.parse_args().runs
    seconds, cpu = medians(commands(), runs)
    floor, pydantic, extractor = seconds[PASS], seconds[PYDANTIC], seconds[FRONT_DOOR]
    print(
        f"python -c ...      median of {runs}: pass {floor * 1000:.0f} ms, import pydantic {pydantic * 1000:.0f} ms, import extractor {extractor * 1000:.0f} ms"
    )
    print(
        f"import extractor / import pydantic: {extractor / pydantic:.2f}x (bar: <= {FRONT_DOOR_BAR:g}x); above the empty interpreter: "
        f"{(extractor - floor) / max(pydantic - floor, 1e-9):.2f}x"
    )
    print(
        f"command-line start-up (goal 2), median of {runs} fresh processes each, as a multiple of the floor (wall; CPU):"
    )
    for label, value in seconds.items():
        if label == FRONT_DOOR:
            continue
        note = " (the floor)" if label == PYDANTIC else ""
        if label.startswith("extractor "):
            note = f"  bar: <= {CLI_BAR:g}x, {'met' if value / pydantic <= CLI_BAR else 'NOT met'}"
        print(
            f"  {label:<62} {value * 1000:5.0f} ms {value / pydantic:5.2f}x; "
            f"{cpu[label] * 1000:4.0f} ms {cpu[label] / cpu[PYDANTIC]:5.2f}x{note}"
        )


if __name__ == "__main__":
    main()
