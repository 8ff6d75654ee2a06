"""Which facts must agree with which: roll-forwards, totals, subsets and bounds, by concept.

The validator checks these relations and nothing else it invents; a new disclosure type adds
its relations here, next to its concepts. Roll-forwards derive from the same row tables
(`OPTION_ROWS`, `OTHER_ROWS`) that map the schema to concepts, so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from extractor.schemas.concepts import (
    ASSUMPTIONS,
    CASH_SETTLEMENT,
    EXPENSE,
    OPTION_ROWS,
    OTHER_ROWS,
    PL,
    PLAN,
    UNRECOGNIZED,
    UNRECOGNIZED_PERIOD,
    YEAR_INFO,
)
from extractor.schemas.values import OPTION_LIKE

# How each flow row moves the balance. An "adjustment" row (performance adjustment, transfers,
# any other row a table shows) carries its own sign in its value.
FLOW_SIGNS: dict[str, int] = {
    "granted": 1,
    "exercised": -1,
    "vested": -1,
    "forfeited": -1,
    "expired": -1,
    "forfeited_or_expired": -1,
    "adjustment": 1,
}


@dataclass(frozen=True)
class Flow:
    kind: str
    sign: int
    count: str
    price: str | None


@dataclass(frozen=True)
class RollForward:
    """beginning + inflows - outflows = ending, for counts and count-weighted prices."""

    name: str
    awards: frozenset[str]
    balance: str
    balance_price: str | None
    flows: tuple[Flow, ...]


def _rollforward(name: str, rows: dict[tuple[str, str, str], str], basis: str, awards: frozenset[str]) -> RollForward:
    flows = tuple(
        Flow(kind, sign, rows[(basis, kind, "count")], rows.get((basis, kind, "weighted_average_price")))
        for kind, sign in FLOW_SIGNS.items()
        if (basis, kind, "count") in rows
    )
    return RollForward(
        name, awards, rows[(basis, "ending", "count")], rows.get((basis, "ending", "weighted_average_price")), flows
    )


OTHER_AWARDS: frozenset[str] = frozenset({"rsu", "psu", "msu", "dsu", "restricted_stock", "other"})
# Outstanding non-option units (vested but deferred) share their flow concepts with the
# nonvested roll-forward, so a fact cannot say which of the two it moves: not checked.
ROLLFORWARDS: tuple[RollForward, ...] = (
    _rollforward("outstanding", OPTION_ROWS, "outstanding", OPTION_LIKE),
    _rollforward("nonvested", OPTION_ROWS, "nonvested", OPTION_LIKE),
    _rollforward("nonvested", OTHER_ROWS, "nonvested", OTHER_AWARDS),
)

# Totals: concept -> the dims keys that split it into parts (parts carry the key, the total not).
SUMMABLE: dict[str, tuple[str, ...]] = {
    EXPENSE: ("line_item", "award"),
    UNRECOGNIZED: ("award", "year"),
    CASH_SETTLEMENT: ("year",),
    "EmployeeServiceShareBasedCompensationTaxBenefitFromExerciseOfStockOptions": ("award",),
}
SUBTOTAL_AWARD = "other"  # "Total other share-based incentives" may sum some of its siblings


def _row(kind: str, measure: str) -> str:
    return OPTION_ROWS[("outstanding", kind, measure)]


# Balances at one instant that are subsets of each other (smaller, larger): options exercisable
# today are among those vested or expected to vest, which are among those outstanding.
SUBSETS: tuple[tuple[str, str], ...] = tuple(
    (_row(small, measure), _row(large, measure))
    for measure in ("count", "intrinsic_value")
    for small, large in (
        ("exercisable", "vested_and_expected_to_vest"),
        ("vested_and_expected_to_vest", "ending"),
        ("exercisable", "ending"),
    )
)

# Outstanding options = exercisable (vested) + nonvested, at one instant. A warning only:
# a vested option may be unexercisable (blackout, performance hurdle).
OUTSTANDING_SPLIT: tuple[str, str, str] = (
    _row("ending", "count"),
    _row("exercisable", "count"),
    OPTION_ROWS[("nonvested", "ending", "count")],
)

# Cash received from exercises = options exercised x their weighted-average exercise price.
# A warning only: net-share and cashless exercises bring in less cash.
EXERCISE_PROCEEDS: tuple[str, str, str] = (
    YEAR_INFO["cash_received_from_exercises"][0],
    _row("exercised", "count"),
    _row("exercised", "weighted_average_price"),
)

# Range ends: (minimum concept, maximum concept); a concept with dims.bound pairs with itself.
RANGES: tuple[tuple[str, str], ...] = (
    (ASSUMPTIONS["volatility_min"][0], ASSUMPTIONS["volatility_max"][0]),
    (ASSUMPTIONS["risk_free_rate_min"][0], ASSUMPTIONS["risk_free_rate_max"][0]),
)
WITHIN_RANGE: dict[str, tuple[str, str]] = {  # a weighted average lies between the range's ends
    ASSUMPTIONS["weighted_average_volatility"][0]: RANGES[0],
}

# Plausible bounds by unit, then by concept (inclusive, base units: 0.25 is 25 %).
UNIT_BOUNDS: dict[str, tuple[Decimal, Decimal | None]] = {
    "shares": (Decimal(0), None),
    "USD/share": (Decimal(0), None),
    "USD": (Decimal(0), None),
    "pure": (Decimal(0), Decimal(1)),
    "years": (Decimal(0), Decimal(15)),
}
CONCEPT_BOUNDS: dict[str, tuple[Decimal, Decimal | None]] = {
    **{
        ASSUMPTIONS[name][0]: (Decimal(0), Decimal(2))
        for name in ("volatility", "volatility_min", "volatility_max", "weighted_average_volatility")
    },
    **{
        ASSUMPTIONS[name][0]: (Decimal(0), Decimal("0.25"))
        for name in ("risk_free_rate", "risk_free_rate_min", "risk_free_rate_max")
    },
    ASSUMPTIONS["dividend_yield"][0]: (Decimal(0), Decimal("0.2")),
    PLAN["expiration_period"]: (Decimal(0), Decimal(15)),
    UNRECOGNIZED_PERIOD: (Decimal(0), Decimal(15)),
}
# Terms a plan sets when it is adopted or amended, which differ by plan and by grant cohort ("RSUs granted
# before 2022 vest over four years"): filers tag them on plan or cohort axes this schema does not carry, and
# date them at adoption, years before the ones reported. Two values, or an early date, are worth a look,
# not proof of a misread.
PLAN_TERMS: frozenset[str] = frozenset(
    {
        *PLAN.values(),
        f"{PL}PurchasePriceOfCommonStockPercent",
        f"{PL}AwardVestingRightsPercentage",
        "CommonStockSharesAuthorized",
        "PreferredStockSharesAuthorized",
    }
)

# Concepts whose negative value is possible (an expense reversal), so a negative is a warning.
MAY_BE_NEGATIVE: frozenset[str] = frozenset({EXPENSE, "ShareBasedCompensation"})
# Concepts whose value carries its sign: roll-forward adjustment counts.
SIGNED: frozenset[str] = frozenset(
    rows[(basis, "adjustment", "count")] for rows in (OPTION_ROWS, OTHER_ROWS) for basis in ("outstanding", "nonvested")
)
