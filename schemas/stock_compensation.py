"""Stock-based compensation note: everything a 10-K note on share-based payments discloses.

Field descriptions are written for an LLM reader as much as for people: the JSON schema of
`StockCompensationNote` is what the LLM backend is asked to fill.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from extractor.schemas.values import Amount, AwardType

RowKind = Literal[
    "beginning",
    "granted",
    "exercised",
    "vested",
    "forfeited",
    "expired",
    "forfeited_or_expired",
    "adjustment",
    "ending",
    "exercisable",
    "vested_and_expected_to_vest",
]
Basis = Literal["outstanding", "nonvested"]
Bound = Literal["min", "max"]  # one end of a printed range


class RollForwardRow(BaseModel):
    kind: RowKind = Field(
        description="What the row is: a balance (beginning, ending, exercisable, ...) or a flow. 'adjustment' is any "
        "other row that moves the balance (performance adjustment, transfers): its count is signed, negative when it "
        "reduces the balance; all other flows are positive numbers."
    )
    label: str = Field(default="", description="The row label as printed.")
    count: Amount | None = Field(default=None, description="Number of awards (shares or units).")
    weighted_average_price: Amount | None = Field(
        default=None,
        description="Weighted-average exercise price (options/SARs activity) or grant-date fair value (others).",
    )
    remaining_term: Amount | None = Field(default=None, description="Weighted-average remaining contractual term.")
    intrinsic_value: Amount | None = Field(default=None, description="Aggregate intrinsic value.")


class AwardRollForward(BaseModel):
    """One award activity table (or a balance stated in prose), in printed order."""

    award: AwardType
    basis: Basis = Field(
        description="'outstanding' for option/SAR activity and vested-but-deferred units; 'nonvested' for "
        "tables of unvested awards (RSU/PSU/MSU activity, nonvested option tables)."
    )
    title: str | None = None
    plan: str | None = Field(default=None, description="The plan or program a column of a table by plan stands for.")
    rows: list[RollForwardRow] = Field(default_factory=list)


class AwardYearInfo(BaseModel):
    """Per-fiscal-year information about one award type (information tables and sentences)."""

    award: AwardType | None = None
    fiscal_year_end: date
    granted_count: Amount | None = None
    granted_fair_value: Amount | None = Field(
        default=None, description="Weighted-average grant-date fair value per award granted."
    )
    cash_received_from_exercises: Amount | None = None
    intrinsic_value_exercised: Amount | None = None
    tax_benefit_realized: Amount | None = None
    vested_count: Amount | None = None
    vested_fair_value: Amount | None = Field(default=None, description="Total fair value of awards vested.")
    payments_upon_vesting: Amount | None = Field(
        default=None, description="Cash paid to settle vested cash-settled units."
    )
    shares_purchased: Amount | None = Field(default=None, description="ESPP shares purchased during the year.")
    average_purchase_price: Amount | None = Field(default=None, description="ESPP average price per share purchased.")


class ValuationAssumptions(BaseModel):
    award: AwardType | None = None
    fiscal_year_end: date
    model: str | None = Field(
        default=None, description="Valuation model: binomial, lattice-based, Black-Scholes, Monte-Carlo."
    )
    dividend_yield: Amount | None = None
    dividend_yield_min: Amount | None = None
    dividend_yield_max: Amount | None = None
    volatility: Amount | None = None
    volatility_min: Amount | None = None
    volatility_max: Amount | None = None
    weighted_average_volatility: Amount | None = None
    risk_free_rate: Amount | None = None
    risk_free_rate_min: Amount | None = None
    risk_free_rate_max: Amount | None = None
    expected_term: Amount | None = None
    expected_term_min: Amount | None = None
    expected_term_max: Amount | None = None


class ExpenseItem(BaseModel):
    """Share-based compensation expense: by income-statement line, by award type, or the total (neither)."""

    line_item: str | None = Field(default=None, description="Income-statement caption, lower-cased.")
    award: AwardType | None = None
    amount: Amount


class UnrecognizedCost(BaseModel):
    """Cost not yet recognized: total (no award, no year), by award type, or by future fiscal year."""

    award: AwardType | None = None
    year: date | None = Field(default=None, description="Fiscal year end of a future-year schedule entry.")
    amount: Amount | None = None
    recognition_period: Amount | None = Field(default=None, description="Weighted-average period of recognition.")


class CashSettlementRange(BaseModel):
    award: AwardType = "rsu"
    year: date | None = Field(default=None, description="Fiscal year end of the settlement; None for the total.")
    minimum: Amount | None = None
    maximum: Amount | None = None


class PlanTerms(BaseModel):
    """Plan-wide terms (award None) or terms of one award type (award set), including the ESPP."""

    award: AwardType | None = None
    shares_authorized: Amount | None = None
    shares_available: Amount | None = None
    vesting_period: Amount | None = None
    expiration_period: Amount | None = None
    max_subscription_rate: Amount | None = Field(
        default=None, description="ESPP: most of pay an employee may contribute."
    )


class ShareRepurchaseYear(BaseModel):
    fiscal_year_end: date
    shares_repurchased: Amount | None = None
    average_cost_per_share: Amount | None = None
    amount_paid: Amount | None = None
    remaining_authorization: Amount | None = None


class ShareRepurchases(BaseModel):
    authorized_amount: Amount | None = None
    remaining_authorization: Amount | None = None
    years: list[ShareRepurchaseYear] = Field(default_factory=list)


class PreferredStock(BaseModel):
    shares_authorized: Amount | None = None
    par_value: Amount | None = None
    shares_outstanding: Amount | None = None


class LineItem(BaseModel):
    """A number the note prints that no typed field above holds (deferred compensation, shares withheld for
    taxes, dividend equivalents, awards assumed, common shares authorized, ...): kept with its concept, never dropped.

    `concept` is a us-gaap local name where the taxonomy has one, else `ext:DescriptiveCamelCaseName`."""

    concept: str = Field(description="us-gaap local name, or ext:CamelCaseName when the taxonomy has none.")
    label: str = Field(default="", description="The row label or cue phrase as printed.")
    award: AwardType | None = None
    line_item: str | None = Field(
        default=None, description="Income-statement caption, lower-cased, when split by line."
    )
    bound: Bound | None = Field(default=None, description="One end of a printed range.")
    price_range: str | None = Field(
        default=None, description="The exercise-price range a row of options stands for ('3.75-92.23')."
    )
    plan: str | None = Field(default=None, description="The plan or program a column of a table by plan stands for.")
    amount: Amount


class StockCompensationNote(BaseModel):
    """A stock-based compensation note. Leave out what the filing does not state; never invent numbers."""

    fiscal_year_ends: list[date] = Field(default_factory=list, description="Fiscal year ends reported, latest first.")
    plans: list[PlanTerms] = Field(default_factory=list)
    award_activity: list[AwardRollForward] = Field(default_factory=list)
    award_years: list[AwardYearInfo] = Field(default_factory=list)
    valuation_assumptions: list[ValuationAssumptions] = Field(default_factory=list)
    expense: list[ExpenseItem] = Field(default_factory=list)
    unrecognized_cost: list[UnrecognizedCost] = Field(default_factory=list)
    cash_settlement_ranges: list[CashSettlementRange] = Field(default_factory=list)
    share_repurchases: ShareRepurchases | None = None
    preferred_stock: PreferredStock | None = None
    line_items: list[LineItem] = Field(
        default_factory=list, description="Every other number the note prints, by concept."
    )

    def years_reported(self, latest: date) -> list[date]:
        """The fiscal year ends the note covers, latest first: those of its per-year facts and `latest`."""
        return sorted({info.fiscal_year_end for info in self.award_years} | {latest}, reverse=True)


# Words that announce each part of the note in a filing. The hybrid backend asks the LLM for a part
# rules left empty only when the filing says these words: no call for preferred stock a note never mentions.
PART_SIGNALS: dict[str, str] = {
    "plans": r"authori[sz]ed|available for (?:future )?grant|reserved for",
    "award_activity": r"outstanding|nonvested|unvested|granted",
    "award_years": r"granted during|intrinsic value|fair value of",
    "valuation_assumptions": r"volatility|risk-free|dividend yield|expected (?:term|life)",
    "expense": r"expense|compensation cost",
    "unrecognized_cost": r"unrecognized|not yet recognized|expected to be recognized",
    "cash_settlement_ranges": r"cash[- ]settled",
    "share_repurchases": r"repurchase",
    "preferred_stock": r"preferred stock",
}
