"""The run summary: the whole output folder (every run into it) from the manifest, and this run's pace."""

from __future__ import annotations

import json
import re
import resource
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from extractor.bulk.manifest import Manifest, Status
from extractor.bulk.outputs import SUMMARY, write_atomically
from extractor.bulk.runner import Tally
from extractor.llm.usage import Usage


def summarize(
    folder: Path, manifest: Manifest, tally: Tally, failures_written: int, facts: int | None
) -> dict[str, Any]:
    counts = manifest.counts()
    usage, seconds = Usage(), 0.0
    for spent, used in manifest.usage_rows():
        seconds += spent
        if used:
            usage.add(Usage.model_validate(json.loads(used)))
    extracted = counts.get(Status.done, 0) + counts.get(Status.review, 0)
    reasons = Counter(
        f"{stage}: {_shape(reason)}" for _, _, _, _, reason, stage in manifest.documents([Status.failed]) if reason
    )
    this_run = tally.finished
    return {
        "folder": str(folder),
        "updated": datetime.now(UTC).isoformat(timespec="seconds"),
        "settings": manifest.settings(),
        "inputs": manifest.input_count(),
        "superseded": len(manifest.superseded()),
        "documents": {status.value: counts.get(status, 0) for status in Status} | {"total": sum(counts.values())},
        "needs_review": counts.get(Status.review, 0),
        "validation_pass_rate": round(counts.get(Status.done, 0) / extracted, 4) if extracted else None,
        "facts": facts,
        "failed_inputs": failures_written,
        "failure_reasons": dict(reasons.most_common(20)),
        "llm": usage.model_dump(mode="json"),
        "work_seconds": round(seconds, 3),
        "this_run": {
            "inputs_listed": tally.total,
            "inputs_read": tally.seen,
            "inputs_not_reached": max(0, tally.total - tally.seen),
            "already_finished": tally.skipped,
            "duplicates": tally.duplicates,
            "finished": {status.value: n for status, n in tally.written.items()},
            "startup_seconds": round(tally.startup_seconds, 3),
            "seconds": round(tally.elapsed, 3),
            "documents_per_second": round(this_run / tally.elapsed, 3) if tally.elapsed > 0 else None,
            "llm": tally.usage.model_dump(mode="json"),
            "peak_memory_mb_main_process": peak_memory_mb(),
            "stopped_by": tally.stopped_by,
        },
    }


def write_summary(folder: Path, summary: dict[str, Any]) -> None:
    write_atomically(folder / SUMMARY, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def peak_memory_mb() -> float:
    """Peak resident memory of the main process, in MiB (workers are measured by the benchmark)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def summary_table(summary: dict[str, Any]) -> Table:
    documents, run = summary["documents"], summary["this_run"]
    table = Table(title=escape(f"Run summary: {summary['folder']}"), title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    rate = summary["validation_pass_rate"]
    rows = [
        ("inputs (distinct names)", f"{summary['inputs']:,}"),
        ("documents (distinct content)", f"{documents['total']:,}"),
        ("  done (passed validation)", f"{documents['done']:,}"),
        ("  needs review (failed validation)", f"{documents['review']:,}"),
        ("  failed (see failures.jsonl)", f"{documents['failed']:,}"),
        ("  exported, waiting for Batch API results", f"{documents['exported']:,}"),
        ("  not finished yet", f"{documents['pending']:,}"),
        ("validation pass rate", "-" if rate is None else f"{rate:.1%}"),
        ("facts", "-" if summary["facts"] is None else f"{summary['facts']:,}"),
        (
            "this run: finished",
            f"{sum(run['finished'].values()):,} in {run['seconds']:.1f} s"
            + (f" ({run['documents_per_second']:.1f} documents/s)" if run["documents_per_second"] else ""),
        ),
        ("this run: skipped", f"{run['already_finished']:,} finished before, {run['duplicates']:,} duplicates"),
    ]
    if summary["superseded"]:
        rows.append(("superseded (the file changed since; out of every count)", f"{summary['superseded']:,}"))
    llm = summary["llm"]
    if llm["requests"] or llm["cache_hits"]:
        cost = "no price for this model" if llm["cost_usd"] is None else f"${float(llm['cost_usd']):.4f}"
        rows.append(
            (
                "LLM (all runs)",
                f"{llm['requests']:,} requests, {llm['prompt_tokens']:,} + {llm['completion_tokens']:,} tokens, {cost}",
            )
        )
    reasons = list(summary["failure_reasons"].items())
    for reason, n in reasons[:5]:
        rows.append((f"  failed: {reason}", f"{n:,}"))
    if len(reasons) > 5:
        rows.append((f"  ... {len(reasons) - 5} more reasons", "see summary.json"))
    if run["inputs_not_reached"]:
        rows.append(("this run: inputs not reached", f"{run['inputs_not_reached']:,}"))
    if run["stopped_by"]:
        rows.append(("stopped", run["stopped_by"]))
    for what, value in rows:
        table.add_row(escape(what), escape(value))
    return table


def _shape(reason: str) -> str:
    """A reason without its particulars, to count alike failures together."""
    reason = reason.split(" (")[0]
    return re.sub(r"\d[\d,.]*", "N", reason)
