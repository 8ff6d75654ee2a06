"""Mine how filers label the numbers they tag in their stock-compensation notes.

Reads the inline-XBRL (`ixbrl`) filings of the real corpus and, for every
numeric tag inside the note's text block (``ix:nonFraction`` and duration
``ix:nonNumeric``), records the printed context: row label, column header and
table caption for tags in tables; the surrounding words for tags in prose.

    python -m extractor.evals.lexicon.mine [--corpus ../shared/corpus/real] [--out evals/lexicon/mined.tsv]

``--out X.tsv`` writes ``X_cells.tsv`` and ``X_prose.tsv``. See README.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parents[2]
IX = "http://www.xbrl.org/2013/inlineXBRL"
XBRLI = "http://www.xbrl.org/2003/instance"
XBRLDI = "http://xbrl.org/2006/xbrldi"
XHTML = "http://www.w3.org/1999/xhtml"
NS = {"ix": IX, "xbrli": XBRLI, "xbrldi": XBRLDI}
BLOCKS = {"div", "p", "li", "td", "th"}


@dataclass(frozen=True)
class Context:
    kind: str  # instant | duration
    award: str  # member of the award / plan axes ("" for none), "+"-joined


@dataclass
class Cell:
    filing: str
    concept: str
    award: str
    row_label: str
    column_header: str
    caption: str
    period_kind: str
    unit: str
    printed: str


@dataclass
class Prose:
    filing: str
    concept: str
    award: str
    cue: str
    sentence: str


# ---------------------------------------------------------------- helpers


def local(tag: object) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\xa0", " ").replace("\u200b", "")).strip()


def raw_text(el: etree._Element) -> str:
    """Text of el, with a space for each <br> and around block elements."""
    parts: list[str] = [el.text or ""]
    for ch in el:
        if isinstance(ch.tag, str):
            gap = " " if local(ch.tag) in BLOCKS or local(ch.tag) == "br" else ""
            parts += [gap, raw_text(ch), gap]
        parts.append(ch.tail or "")
    return "".join(parts)


def text_of(el: etree._Element) -> str:
    return collapse(raw_text(el))


def strip_prefix(name: str) -> str:
    prefix, _, loc = name.rpartition(":")
    return loc if prefix in ("", "us-gaap") else name


MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
DATE_RE = re.compile(rf"\b{MONTHS}\s+\d{{1,2}}\s*,?\s*(?:(?:19|20)\d\d)?\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b")
YEAR_RE = re.compile(r"\b(?:fiscal\s+)?(?:19|20)\d\d\b")
FOOTNOTE_RE = re.compile(r"\(\s*(?:\d{1,2}|[a-z]|[ivx]{1,4})\s*\)|[*†‡§]+")


def normalize(label: str) -> str:
    s = collapse(label).lower()
    s = s.replace("’", "'").replace("–", "-").replace("—", "-")
    s = re.sub(r"(\w)- (\w)", r"\1-\2", s)  # "weighted-<br/>average"
    s = DATE_RE.sub("<date>", s)
    s = YEAR_RE.sub("<year>", s)
    s = FOOTNOTE_RE.sub(" ", s)
    s = re.sub(r"\s+", " ", s).strip(" :,;")
    return s


SCALE_RE = re.compile(r"^\(?\s*(?:\$|dollars|amounts|shares)?\s*in (?:thousands|millions|billions)\b.*$")


def normalize_header(header: str) -> str:
    """normalize() each level; drop scale notes like "(in millions)" (kept in the example column)."""
    parts = [normalize(p) for p in header.split(" | ")]
    return " | ".join(p for p in parts if p and not SCALE_RE.match(p))


NUM_RE = re.compile(r"^[($\s]*[-—–]?\s*\$?\s*\d[\d,]*(?:\.\d+)?\s*%?\s*\)?$")


def is_number_cell(text: str) -> bool:
    t = text.strip()
    return bool(NUM_RE.match(t)) and not re.fullmatch(r"(?:19|20)\d\d", t)


# ---------------------------------------------------------------- XBRL


def read_contexts(root: etree._Element) -> dict[str, Context]:
    out: dict[str, Context] = {}
    for ctx in root.iterfind(".//xbrli:context", NS):
        kind = "instant" if ctx.find(".//xbrli:instant", NS) is not None else "duration"
        members = []
        for m in ctx.iterfind(".//xbrldi:explicitMember", NS):
            axis = m.get("dimension", "").rpartition(":")[2]
            if "Award" in axis or "PlanName" in axis:
                members.append((m.text or "").strip().rpartition(":")[2])
        for m in ctx.iterfind(".//xbrldi:typedMember", NS):
            axis = m.get("dimension", "").rpartition(":")[2]
            if "Award" in axis or "PlanName" in axis:
                members.append(text_of(m))
        out[ctx.get("id", "")] = Context(kind, "+".join(members))
    return out


def read_units(root: etree._Element) -> dict[str, str]:
    def measures(el: etree._Element | None) -> str:
        if el is None:
            return ""
        return "*".join((m.text or "").strip().rpartition(":")[2] for m in el.iterfind("xbrli:measure", NS))

    out: dict[str, str] = {}
    for u in root.iterfind(".//xbrli:unit", NS):
        div = u.find("xbrli:divide", NS)
        if div is not None:
            num = measures(div.find("xbrli:unitNumerator", NS))
            den = measures(div.find("xbrli:unitDenominator", NS))
            out[u.get("id", "")] = f"{num}/{den}".replace("USD/shares", "USD/share")
        else:
            out[u.get("id", "")] = measures(u)
    return out


def note_roots(root: etree._Element, text_block: str) -> list[etree._Element]:
    """The note's text block element followed by its continuations, in order."""
    start = next(
        (e for e in root.iter(f"{{{IX}}}nonNumeric") if e.get("name", "").rpartition(":")[2] == text_block), None
    )
    if start is None:
        return []
    conts = {e.get("id"): e for e in root.iter(f"{{{IX}}}continuation")}
    chain, nxt = [start], start.get("continuedAt")
    while nxt and nxt in conts:
        chain.append(conts[nxt])
        nxt = conts[nxt].get("continuedAt")
    return chain


def is_numeric_tag(el: etree._Element) -> bool:
    name = local(el.tag)
    if name == "nonFraction":
        return True
    return name == "nonNumeric" and el.get("format", "").rpartition(":")[2].startswith("dur")


# ---------------------------------------------------------------- tables


def grid(table: etree._Element) -> list[list[tuple[int, int, etree._Element]]]:
    """Rows of (first column, span, cell), expanding colspan and rowspan."""
    rows: list[list[tuple[int, int, etree._Element]]] = []
    carry: dict[int, int] = {}  # column -> rows still covered by a rowspan above
    for tr in table.iter(f"{{{XHTML}}}tr"):
        if tr.xpath("ancestor::*[local-name()='table'][1]")[0] is not table:
            continue
        row, col = [], 0
        for cell in tr:
            if local(cell.tag) not in ("td", "th"):
                continue
            while carry.get(col, 0) > 0:
                col += 1
            span = max(1, int(cell.get("colspan", "1") or 1))
            rspan = max(1, int(cell.get("rowspan", "1") or 1))
            row.append((col, span, cell))
            for c in range(col, col + span):
                carry[c] = rspan
            col += span
        carry = {c: n - 1 for c, n in carry.items() if n > 1}
        rows.append(row)
    return rows


def row_has_number(row: list[tuple[int, int, etree._Element]]) -> bool:
    for i, (_, _, cell) in enumerate(row):
        if any(is_numeric_tag(e) for e in cell.iter(f"{{{IX}}}*")):
            return True
        if i > 0 and is_number_cell(text_of(cell)):
            return True
    return False


def table_cells(table: etree._Element) -> dict[etree._Element, tuple[str, str]]:
    """cell -> (row label, column header) for every cell of the table's body."""
    rows = grid(table)
    first = next((i for i, r in enumerate(rows) if row_has_number(r)), len(rows))
    headers = rows[:first]
    out: dict[etree._Element, tuple[str, str]] = {}
    for row in rows[first:]:
        label = next((text_of(c) for _, _, c in row if text_of(c)), "")
        if is_number_cell(label) or label in ("$", "—", "-"):
            label = ""
        for col, span, cell in row:
            parts: list[str] = []
            for hrow in headers:
                for hcol, hspan, hcell in hrow:
                    t = text_of(hcell)
                    if t and hcol < col + span and col < hcol + hspan and (not parts or parts[-1] != t):
                        parts.append(t)
            out[cell] = (label, " | ".join(parts))
    return out


# ---------------------------------------------------------------- prose


def block_text(block: etree._Element, target: etree._Element) -> tuple[str, int, int]:
    """Whitespace-collapsed text of block and the span of target inside it."""
    pieces: list[str] = []
    span = [0, 0]

    def walk(el: etree._Element) -> None:
        if el is target:
            span[0] = len("".join(pieces))
        if el.text:
            pieces.append(el.text)
        for ch in el:
            if isinstance(ch.tag, str):
                gap = " " if local(ch.tag) in BLOCKS or local(ch.tag) == "br" else ""
                pieces.append(gap)
                walk(ch)
                pieces.append(gap)
            if ch.tail:
                pieces.append(ch.tail)
        if el is target:
            span[1] = len("".join(pieces))

    walk(block)
    raw = "".join(pieces)
    # collapse whitespace while mapping offsets
    before = collapse(raw[: span[0]])
    inner = collapse(raw[span[0] : span[1]])
    gap = " " if before and raw[: span[0]][-1:].isspace() else ""
    start = len(before) + len(gap)
    full = collapse(raw)
    return full, start, start + len(inner)


WORD_RE = re.compile(r"[A-Za-z$%][\w'’$%.-]*|\d[\d,.]*")


def cue_words(text: str, start: int, end: int) -> str:
    before = WORD_RE.findall(text[:start])[-8:]
    after = WORD_RE.findall(text[end:])[:4]

    def norm(words: list[str]) -> str:
        return re.sub(r"(?<![\w<])\d[\d,.]*(?![\w>])", "<num>", normalize(" ".join(words)))

    return f"{norm(before)} <N> {norm(after)}".strip().replace("$ <", "$<")


# ---------------------------------------------------------------- mining


def mine_filing(fid: str, path: Path, text_block: str) -> tuple[list[Cell], list[Prose]]:
    root = etree.parse(str(path), etree.XMLParser(huge_tree=True)).getroot()
    contexts, units = read_contexts(root), read_units(root)
    cells: list[Cell] = []
    prose: list[Prose] = []
    captions: dict[etree._Element, str] = {}
    tables: dict[etree._Element, dict[etree._Element, tuple[str, str]]] = {}
    last_par = ""
    for note in note_roots(root, text_block):
        for el in note.iter():
            name = local(el.tag)
            if (
                name in ("div", "p")
                and not el.xpath(".//*[local-name()='table']")
                and not el.xpath("ancestor::*[local-name()='table']")
            ):
                t = text_of(el)
                if len(t.split()) >= 4:
                    last_par = t[:200]
            elif name == "table":
                captions[el] = last_par
            if not is_numeric_tag(el):
                continue
            ctx = contexts.get(el.get("contextRef", ""), Context("?", ""))
            unit = "duration" if name == "nonNumeric" else units.get(el.get("unitRef", ""), "?")
            concept = strip_prefix(el.get("name", ""))
            td = next(iter(el.xpath("ancestor::*[local-name()='td' or local-name()='th'][1]")), None)
            if td is not None:
                table = td.xpath("ancestor::*[local-name()='table'][1]")[0]
                if table not in tables:
                    tables[table] = table_cells(table)
                label, header = tables[table].get(td, ("", "<header row>"))
                cells.append(
                    Cell(fid, concept, ctx.award, label, header, captions.get(table, ""), ctx.kind, unit, text_of(el))
                )
            else:
                block = next(
                    iter(el.xpath("ancestor::*[local-name()='div' or local-name()='p' or local-name()='li'][1]")), note
                )
                full, s, e = block_text(block, el)
                prose.append(Prose(fid, concept, ctx.award, cue_words(full, s, e), full[max(0, s - 120) : e + 120]))
    return cells, prose


FAMILIES: list[tuple[str, str]] = [
    ("unrecognized cost", r"NotYetRecognized"),
    ("valuation assumptions", r"FairValueAssumptions|ExpectedDividend|ExpectedVolatility|RiskFreeInterest"),
    ("repurchase", r"Repurchase|TreasuryStock"),
    (
        "plan / authorization",
        r"Authorized|AvailableForGrant|ReservedForFutureIssuance|VestingPeriod|"
        r"PurchasePrice|MaximumEmployee|AwardRequisiteServicePeriod",
    ),
    ("other-than-options roll-forward", r"OtherThanOptions"),
    ("options roll-forward", r"Option"),
    ("expense", r"Expense|ShareBasedCompensation$|TaxBenefit|Compensation(Cost|Expense)"),
]


def family(concept: str) -> str:
    return next((f for f, rx in FAMILIES if re.search(rx, concept)), "other")


def joined(values: list[str]) -> str:
    return ",".join(sorted({v for v in values if v})) or "-"


def write_cells(cells: list[Cell], path: Path) -> int:
    groups: dict[tuple[str, str, str], list[Cell]] = defaultdict(list)
    for c in cells:
        groups[(c.concept, normalize(c.row_label), normalize_header(c.column_header))].append(c)
    order = sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]), kv[0][1], kv[0][2]))
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(
            [
                "concept",
                "award_member",
                "row_label",
                "column_header",
                "period_kind",
                "unit",
                "count",
                "filings",
                "example",
            ]
        )
        for (concept, label, header), cs in order:
            ex = cs[0]
            w.writerow(
                [
                    concept,
                    joined([c.award for c in cs]),
                    label,
                    header,
                    joined([c.period_kind for c in cs]),
                    joined([c.unit for c in cs]),
                    len(cs),
                    joined([c.filing for c in cs]),
                    f"{ex.filing}: {ex.row_label!r} / {ex.column_header!r} = {ex.printed}"
                    f" [caption: {ex.caption[:100]}]",
                ]
            )
    return len(order)


def write_prose(prose: list[Prose], path: Path) -> int:
    groups: dict[tuple[str, str], list[Prose]] = defaultdict(list)
    for p in prose:
        groups[(p.concept, p.cue)].append(p)
    order = sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]), kv[0][1]))
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(["concept", "award_member", "cue_words", "count", "filings", "example"])
        for (concept, cue), ps in order:
            w.writerow(
                [
                    concept,
                    joined([p.award for p in ps]),
                    cue,
                    len(ps),
                    joined([p.filing for p in ps]),
                    f"{ps[0].filing}: …{ps[0].sentence}…",
                ]
            )
    return len(order)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared/corpus/real")
    ap.add_argument(
        "--out",
        type=Path,
        default=REPO / "evals/lexicon/mined.tsv",
        help="base name: writes <stem>_cells.tsv and <stem>_prose.tsv",
    )
    args = ap.parse_args(argv)

    manifest = json.loads((args.corpus / "manifest.json").read_text())
    all_cells: list[Cell] = []
    all_prose: list[Prose] = []
    print(f"{'filing':18} {'cells':>6} {'prose':>6} {'in_note gold':>12}")
    for entry in manifest:
        if entry["source_kind"] != "ixbrl":
            continue
        fid = entry["id"]
        cells, prose = mine_filing(fid, args.corpus / fid / "filing.html", entry["text_block"])
        all_cells += cells
        all_prose += prose
        gold = json.loads((args.corpus / fid / "gold_facts.json").read_text())
        ext = json.loads((args.corpus / fid / "extension_facts.json").read_text())
        n_gold = sum(1 for f in gold if f["in_note"]) + len(ext)
        print(f"{fid:18} {len(cells):6} {len(prose):6} {n_gold:12}")

    out: Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    cells_path = out.with_name(f"{out.stem}_cells.tsv")
    prose_path = out.with_name(f"{out.stem}_prose.tsv")
    n_c = write_cells(all_cells, cells_path)
    n_p = write_prose(all_prose, prose_path)
    print(f"\n{len(all_cells)} table tags -> {n_c} rows in {cells_path}")
    print(f"{len(all_prose)} prose tags -> {n_p} rows in {prose_path}")

    by_family: dict[str, Counter[str]] = defaultdict(Counter)
    for c in all_cells:
        by_family[family(c.concept)][normalize(c.row_label) or "<no label>"] += 1
    for fam in [f for f, _ in FAMILIES] + ["other"]:
        if fam in by_family:
            print(f"\n== {fam}")
            for label, n in by_family[fam].most_common(10):
                print(f"  {n:4}  {label}")


if __name__ == "__main__":
    main()
