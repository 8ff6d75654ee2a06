"""Ends what a killed run leaves behind: the local Ray instance that `--engine ray` started for it.

When the run ends, it shuts its Ray instance down. Killed with SIGKILL, it cannot: Ray's GCS server,
raylet and workers then go at once, but Ray's agents linger about a minute before they notice. So the
Ray engine starts this watcher in its own session (a Ctrl-C or kill sent to the run's process group
does not reach it), before it starts Ray. Every half second it notes the run's new descendants that are
Ray's (pid and start time, so a pid the system reuses is never mistaken for one of them); what the run
had started before (a caller's own processes) is never noted. When the run's pipe to it closes without
the word "done", the run died: it kills every noted process still alive, then exits.

    python -m extractor.bulk.reaper PID      (stdin: a pipe from process PID)
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

DONE = "done"  # the run's last word when it shut Ray down itself
READY = "ready"  # the watcher's first word: what ran before it is noted, and will not be touched
INTERVAL = 0.5  # seconds between two notes of the run's processes


def processes() -> dict[int, tuple[int, str]]:
    """Every process: pid -> (parent pid, start time in clock ticks since boot)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
        table[int(entry.name)] = (int(fields[1]), fields[19])
    return table


def descendants(root: int, table: dict[int, tuple[int, str]]) -> dict[int, str]:
    """The processes below `root` in `table`: pid -> start time."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, stack = {}, list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found[pid] = table[pid][1]
        stack.extend(children.get(pid, []))
    return found


def _of_ray(pid: int) -> bool:
    """A process of Ray's: its binaries and workers live in Ray's package, its workers are titled 'ray::…'."""
    try:
        return b"ray" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def watch(run: int, interval: float = INTERVAL) -> list[int]:
    """Note the run's processes until stdin ends; the ones killed (none if the run said "done")."""
    said: list[str] = []
    ended = threading.Event()

    def listen() -> None:
        said.extend(line.strip() for line in sys.stdin)
        ended.set()

    before = descendants(run, processes())  # the run's own processes, there before its Ray instance: never noted
    print(READY, flush=True)
    threading.Thread(target=listen, daemon=True).start()
    noted: dict[int, str] = {}
    me = os.getpid()
    while True:
        found = descendants(run, processes())
        noted.update(
            (pid, started)
            for pid, started in found.items()
            if pid not in noted and before.get(pid) != started and _of_ray(pid)
        )
        if ended.wait(interval):
            break
    if DONE in said:
        return []
    killed = []
    alive = processes()
    for pid, started in noted.items():
        if pid != me and alive.get(pid, (0, ""))[1] == started:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
    return killed


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the run's end ends the watch
    watch(int(sys.argv[1]))


if __name__ == "__main__":
    main()
