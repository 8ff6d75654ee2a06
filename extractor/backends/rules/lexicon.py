"""Words filings use for award types, roll-forward rows and table rows: data, not per-filing code."""

from __future__ import annotations

import re

# Most specific first: "stock-settled market stock units" is an MSU before it is a stock unit.
AWARD_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("other", re.compile(r"\bother share-based incentives\b", re.I)),
    ("psu", re.compile(r"\bperformance (?:stock|share) units?\b|\bPSUs?\b|\bperformance shares\b", re.I)),
    ("msu", re.compile(r"\bmarket stock units?\b|\bMSUs?\b", re.I)),
    ("dsu", re.compile(r"\bdeferred stock units?\b|\bDSUs?\b", re.I)),
    ("espp", re.compile(r"\bemployee stock purchase plan\b|\bESPP\b", re.I)),
    ("rsu", re.compile(r"\brestricted (?:stock|share) units?\b|\bRSUs?\b|\bstock units?\b", re.I)),
    ("restricted_stock", re.compile(r"\brestricted (?:stock|shares?)\b(?! units?)|\bRSAs?\b", re.I)),
    ("sar", re.compile(r"\bstock appreciation rights?\b|\bSARs?\b", re.I)),
    ("option", re.compile(r"\b(?:stock )?options?\b", re.I)),
]


def find_award(text: str | None) -> str | None:
    """The award type a phrase names, most specific pattern first."""
    if not text:
        return None
    for award, pattern in AWARD_PATTERNS:
        if pattern.search(text):
            return award
    return None


def first_award(text: str | None) -> str | None:
    """The award type named earliest in a longer text (a caption sentence)."""
    if not text:
        return None
    hits = [(m.start(), award) for award, p in AWARD_PATTERNS if award != "other" for m in [p.search(text)] if m]
    return min(hits)[1] if hits else None


ROW_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("vested_and_expected_to_vest", re.compile(r"vested and expected to vest|expected to vest", re.I)),
    ("exercisable", re.compile(r"\bexercisable\b", re.I)),
    ("balance", re.compile(r"^(?:outstanding|nonvested|unvested|balance)\b", re.I)),
    ("forfeited_or_expired", re.compile(r"forfeited (?:or|and) expired|cancell?ed (?:or|and) expired|forfeitures and expirations", re.I)),
    ("granted", re.compile(r"\bgranted\b|\bawarded\b", re.I)),
    ("exercised", re.compile(r"\bexercised\b", re.I)),
    ("vested", re.compile(r"\bvested\b|\bconverted\b|\breleased\b", re.I)),
    ("forfeited", re.compile(r"\bforfeit|\bcancell?ed\b", re.I)),
    ("expired", re.compile(r"\bexpired\b|\bexpirations?\b", re.I)),
]


def row_kind(label: str) -> str | None:
    for kind, pattern in ROW_KINDS:
        if pattern.search(label):
            return kind
    return None


# Per-year information rows -> AwardYearInfo field (checked in order).
YEAR_INFO_ROWS: list[tuple[str, re.Pattern[str]]] = [
    ("granted_fair_value", re.compile(r"grant[- ]date fair value", re.I)),
    ("cash_received_from_exercises", re.compile(r"cash received", re.I)),
    ("intrinsic_value_exercised", re.compile(r"intrinsic value of .*exercised", re.I)),
    ("tax_benefit_realized", re.compile(r"tax benefits?", re.I)),
    ("payments_upon_vesting", re.compile(r"payments? .*vesting", re.I)),
    ("vested_fair_value", re.compile(r"fair value of .*vested", re.I)),
    ("granted_count", re.compile(r"\bgranted$", re.I)),
    ("vested_count", re.compile(r"\bvested$", re.I)),
]

ASSUMPTION_ROWS: list[tuple[str, re.Pattern[str]]] = [
    ("dividend_yield", re.compile(r"dividend", re.I)),
    ("weighted_average_volatility", re.compile(r"weighted[- ]average (?:expected )?volatility", re.I)),
    ("volatility", re.compile(r"volatility", re.I)),
    ("risk_free_rate", re.compile(r"risk[- ]free", re.I)),
    ("expected_term", re.compile(r"expected (?:term|life)", re.I)),
]

REPURCHASE_ROWS: list[tuple[str, re.Pattern[str]]] = [
    ("shares_repurchased", re.compile(r"shares repurchased", re.I)),
    ("average_cost_per_share", re.compile(r"average (?:cost|price) per share", re.I)),
    ("remaining_authorization", re.compile(r"available for repurchase|remaining authoriz", re.I)),
]

VALUATION_MODELS = re.compile(r"\b(binomial|lattice-based|Black-Scholes(?:-Merton)?|Monte[- ]Carlo)\b", re.I)
TOTAL_ROW = re.compile(r"^total\b|compensation expense, before income taxes|^share-based compensation expense$", re.I)


def match_first(label: str, table: list[tuple[str, re.Pattern[str]]]) -> str | None:
    for name, pattern in table:
        if pattern.search(label):
            return name
    return None
