"""Build evals/suites/real/ from the real-filing corpus (../shared/corpus/real, see its README).

    python -m extractor.evals.build_real_suite [--corpus PATH] [--out PATH]

Re-runnable and deterministic: the same corpus gives the same bytes. For each gold filing:

- documents/<id>.html: the note's section.html with inline XBRL removed exactly as
  shared/tools/strip_ix.py removes it (the tags are the answer key; no backend may see them);
- gold/<id>.facts.jsonl: the facts a reader of the note can see (shown_in_section, in_note not
  false, non-zero: score_real.py's filter) in our facts format, for strict scoring;
- gold/<id>.xbrl.json: the same facts as the filer tagged them (raw axes, printed text,
  decimals), for loose scoring against the filer's own tags;
- tagged/<id>.json: every fact the filer tagged (gold_facts.json + extension_facts.json, any
  filter), for tag-backed precision.

nogold/ documents join as robustness documents: no gold, they only have to extract without error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from extractor.errors import ExtractorError
from extractor.evals.harness.loose import visible
from extractor.schemas.facts import Fact
from extractor.schemas.values import Period
from extractor.xbrl.mapping import award_of_member

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / ".." / "shared" / "corpus" / "real"
DEFAULT_OUT = ROOT / "evals" / "suites" / "real"
UNITS = {"duration": "years", "USD": "USD", "shares": "shares", "USD/share": "USD/share", "pure": "pure"}
_OPTION_HEADS = (
    "ShareBasedCompensationArrangementByShareBasedPaymentAwardOptions",
    "ShareBasedCompensationArrangementsByShareBasedPaymentAwardOptions",
)


class BuildError(ExtractorError):
    """The corpus is missing or not what its README describes."""


def strip_ix(raw: str) -> str:
    """shared/tools/strip_ix.py: drop the hidden ix:header, unwrap every other ix: element, drop ix attributes."""
    raw = re.sub(r"<ix:header\b.*?</ix:header>", "", raw, flags=re.S | re.I)
    raw = re.sub(r"</?ix:[^>]*>", "", raw, flags=re.I)
    return re.sub(r"\s(?:contextref|unitref|decimals|scale|format|sign|continuedat)=\"[^\"]*\"", "", raw, flags=re.I)


def _words(name: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return re.sub(r"[_\W]+", " ", spaced).strip().lower()


def our_dims(concept: str, dims: dict[str, str]) -> dict[str, str]:
    """The filer's axes as our dims: award (AwardType, then PlanName, then any *award* axis, by
    extractor.xbrl.mapping.award_of_member), line_item, bound; other axes have no key of ours."""
    out: dict[str, str] = {}
    award_axes = sorted(
        (a for a in dims if a == "AwardTypeAxis" or a == "PlanNameAxis" or "award" in a.lower()),
        key=lambda a: (a != "AwardTypeAxis", a != "PlanNameAxis"),
    )
    awards = [award_of_member(dims[a]) for a in award_axes]
    award = next((a for a in awards if a != "other"), "other" if "AwardTypeAxis" in dims else None)
    if award is None and concept.startswith(_OPTION_HEADS):
        award = "option"  # the options roll-forward: our gold always names the award
    if award is not None:
        out["award"] = award
    if member := dims.get("IncomeStatementLocationAxis"):
        out["line_item"] = _words(member.removesuffix("Member"))
    if dims.get("RangeAxis") in ("MinimumMember", "MaximumMember"):
        out["bound"] = "min" if dims["RangeAxis"] == "MinimumMember" else "max"
    return out


def to_fact(item: dict[str, Any]) -> Fact | None:
    """A corpus fact in our facts format; None for a unit we have no name for."""
    unit = UNITS.get(str(item.get("unit")))
    if unit is None:
        return None
    value = item["value"]
    return Fact(
        concept=item["concept"],
        value=value if isinstance(value, Decimal) else Decimal(value),
        unit=unit,  # type: ignore[arg-type]
        period=Period.model_validate(item["period"]),
        dims=our_dims(item["concept"], item.get("dims") or {}),
    )


@dataclass
class Built:
    documents: list[dict[str, Any]] = field(default_factory=list)  # suite.toml entries
    skipped_units: Counter[str] = field(default_factory=Counter)
    gold: int = 0


def _read_json(path: Path, decimal: bool = False) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
        return json.loads(text, parse_float=Decimal) if decimal else json.loads(text)
    except (OSError, ValueError) as error:
        raise BuildError(f"{path}: cannot be read ({error})") from error


def _dump(items: list[Any]) -> str:
    return json.dumps(items, indent=1, ensure_ascii=False) + "\n"


def build_gold_filing(corpus: Path, out: Path, entry: dict[str, Any], built: Built) -> None:
    fid = str(entry["id"])
    folder = corpus / fid
    raw = (folder / "section.html").read_text(encoding="utf-8", errors="replace")
    (out / "documents" / f"{fid}.html").write_text(strip_ix(raw), encoding="utf-8")
    plain = _read_json(folder / "gold_facts.json")
    exact = _read_json(folder / "gold_facts.json", decimal=True)
    shown = [i for i, item in enumerate(plain) if visible(item)]
    facts = []
    for i in shown:
        fact = to_fact(exact[i])
        if fact is None:
            built.skipped_units[str(exact[i].get("unit"))] += 1
        else:
            facts.append(fact)
    built.gold += len(shown)
    (out / "gold" / f"{fid}.facts.jsonl").write_text("".join(f.to_json() + "\n" for f in facts), encoding="utf-8")
    (out / "gold" / f"{fid}.xbrl.json").write_text(_dump([plain[i] for i in shown]), encoding="utf-8")
    extension = folder / "extension_facts.json"
    tagged = plain + (_read_json(extension) if extension.exists() else [])
    (out / "tagged" / f"{fid}.json").write_text(_dump(tagged), encoding="utf-8")
    paths = ", ".join(entry.get("source_paths", []))
    built.documents.append(
        {
            "id": fid,
            "path": f"documents/{fid}.html",
            "gold": f"gold/{fid}.facts.jsonl",
            "xbrl_gold": f"gold/{fid}.xbrl.json",
            "tagged": f"tagged/{fid}.json",
            "format": f"{entry.get('source_kind', 'html')}-note-html",
            "source": f"{entry.get('company')} {entry.get('form')} period ending {entry.get('period_end')};"
            f" {entry.get('repo')}@{entry.get('commit')}:{paths}",
            "tags": ["real", str(entry.get("source_kind", ""))],
        }
    )


def build_robustness(corpus: Path, out: Path, entry: dict[str, Any], built: Built) -> None:
    fid = str(entry["id"])
    raw = (corpus / "nogold" / fid / "section.html").read_text(encoding="utf-8", errors="replace")
    (out / "documents" / f"{fid}.html").write_text(strip_ix(raw), encoding="utf-8")
    built.documents.append(
        {
            "id": fid,
            "path": f"documents/{fid}.html",
            "robustness": True,
            "format": "plain-text-filing" if entry.get("plain_text") else "html-note",
            "source": f"{entry.get('company')} {entry.get('form')} {entry.get('period')};"
            f" {entry.get('repo')}@{entry.get('commit')}:{entry.get('source_path')}",
            "tags": ["real", "nogold"],
        }
    )


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)  # a JSON string or list of strings is valid TOML


def suite_toml(built: Built) -> str:
    lines = [
        "[suite]",
        'name = "real"',
        'description = """Real 10-K/10-Q stock-compensation notes (shared/corpus/real) with',
        "inline XBRL stripped; gold is the filers' own XBRL facts a reader of the note can see. Built by",
        'python -m extractor.evals.build_real_suite; scored strictly and loosely (value, period end, award)."""',
        "",
    ]
    for document in built.documents:
        lines.append("[[documents]]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in document.items()]
        lines.append("")
    return "\n".join(lines)


def readme(gold_entries: list[dict[str, Any]], nogold: list[dict[str, Any]], built: Built) -> str:
    rows = [
        f"| {e['id']} | {e.get('company')} | {e.get('form')} | {e.get('period_end')} | {e.get('source_kind')} |"
        f" `{e.get('repo')}@{e.get('commit')}` | {', '.join(f'`{p}`' for p in e.get('source_paths', []))} |"
        for e in gold_entries
    ]
    robust = [
        f"| {e['id']} | {e.get('company')} | {e.get('form')} | {e.get('period')} | `{e.get('repo')}@{e.get('commit')}` |"
        f" `{e.get('source_path')}` |"
        for e in nogold
    ]
    skipped = ", ".join(f"{unit}: {n}" for unit, n in sorted(built.skipped_units.items())) or "none"
    return f"""# Real filings suite

Generated by `python -m extractor.evals.build_real_suite` from the real-filing corpus (`shared/corpus/real`,
whose README describes every field); do not edit by hand, re-run the script. {len(gold_entries)} filings
with the filers' own XBRL as gold ({built.gold} visible gold facts), {len(nogold)} robustness documents.

## How it is built

- `documents/<id>.html`: the note's `section.html` with inline XBRL removed as `shared/tools/strip_ix.py`
  does (hidden `ix:header` dropped, `ix:` elements unwrapped, ix attributes dropped): the tags are the answer
  key, and no backend may see them.
- gold: the facts a reader of the note can see, the filter of `shared/tools/score_real.py`:
  `shown_in_section` true, `in_note` not false, value non-zero.
  - `gold/<id>.xbrl.json`: those facts as tagged (raw axes and members, `printed`, `decimals`), for loose
    scoring (`evals/harness/loose.py`): found = same |value| at printed precision, period end ±1 day and,
    where an award axis names one, the same award class; concept hit = found with the concept equal up to
    case, Arrangement(s) and trailing digits.
  - `gold/<id>.facts.jsonl`: the same facts in our facts format for strict scoring: concept as tagged,
    `duration` becomes `years`, dims `award` from the AwardType / PlanName / any award axis
    (`extractor.xbrl.mapping.award_of_member`), `line_item` and `bound` where tagged; other axes have no key.
    Facts with other units skipped: {skipped}.
- `tagged/<id>.json`: every fact the filer tagged (`gold_facts.json` + `extension_facts.json`), for
  tag-backed precision (predicted non-zero facts whose |value| and period end match any tag).
- `nogold/` documents are robustness documents (`robustness = true`): no gold; each must extract
  without error, and `extractor eval` lists what it found there.

`extractor eval evals/suites/real` prints these figures per document and overall;
`../shared/tools/run_real.sh` computes the same figures independently and must agree.

## Provenance

Test data from public GitHub repositories (data files only, read with git at the commits below).

| id | company | form | period end | kind | repository@commit | source file(s) |
| --- | --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Robustness documents (no XBRL, no gold):

| id | company | form | period | repository@commit | source file |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(robust)}
"""


def build(corpus: Path, out: Path) -> Built:
    """Write the suite to `out` (its generated files are replaced; anything else is left alone)."""
    if not (corpus / "manifest.json").is_file():
        raise BuildError(f"{corpus}: no real-filing corpus here (manifest.json missing); pass --corpus PATH")
    gold_entries = [
        e for e in _read_json(corpus / "manifest.json") if (corpus / str(e["id"]) / "gold_facts.json").is_file()
    ]
    nogold_manifest = corpus / "nogold" / "manifest.json"
    nogold = _read_json(nogold_manifest) if nogold_manifest.is_file() else []
    for sub in ("documents", "gold", "tagged"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for old in (out / sub).iterdir():
            if old.is_file():
                old.unlink()
    built = Built()
    for entry in gold_entries:
        build_gold_filing(corpus, out, entry, built)
    for entry in nogold:
        build_robustness(corpus, out, entry, built)
    (out / "suite.toml").write_text(suite_toml(built), encoding="utf-8")
    (out / "README.md").write_text(readme(gold_entries, nogold, built), encoding="utf-8")
    return built


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m extractor.evals.build_real_suite", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help="the corpus folder (default: ../shared/corpus/real)"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the suite folder (default: evals/suites/real)")
    args = parser.parse_args(argv)
    try:
        built = build(args.corpus.resolve(), args.out)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    robust = sum(bool(d.get("robustness")) for d in built.documents)
    skipped = sum(built.skipped_units.values())
    print(
        f"wrote {args.out}: {len(built.documents) - robust} gold documents ({built.gold} gold facts,"
        f" {skipped} skipped for their unit), {robust} robustness documents"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
