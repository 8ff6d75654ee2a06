"""`import extractor` against `import pydantic`, each in fresh interpreters (the front door's bar: at most 2x).

Prints the median wall time of `python -c "import X"` over RUNS interpreters each, an empty
interpreter as the floor, and the ratios (whole process, and above the floor), all measured in this run.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 15


def seconds(code: str) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    floor, pydantic, extractor = seconds("pass"), seconds("import pydantic"), seconds("import extractor")
    print(
        f"python -c ...      median of {RUNS}: pass {floor * 1000:.0f} ms, import pydantic {pydantic * 1000:.0f} ms, import extractor {extractor * 1000:.0f} ms"
    )
    print(
        f"import extractor / import pydantic: {extractor / pydantic:.2f}x (bar: <= 2x); above the empty interpreter: "
        f"{(extractor - floor) / max(pydantic - floor, 1e-9):.2f}x"
    )


if __name__ == "__main__":
    main()
