"""Schema fields to US GAAP concepts (shared/spec/concepts.md), and the facts conversion both ways.

Every concept name the project writes is spelled here and nowhere else.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from datetime import date
from decimal import MAX_PREC, Context, Decimal
from typing import Generic, TypeVar

from extractor.schemas.facts import Fact, printed_exponent, values_agree
from extractor.schemas.stock_compensation import (
    AwardRollForward,
    AwardYearInfo,
    CashSettlementRange,
    ExpenseItem,
    LineItem,
    PlanTerms,
    PreferredStock,
    RollForwardRow,
    ShareRepurchases,
    ShareRepurchaseYear,
    StockCompensationNote,
    UnrecognizedCost,
    ValuationAssumptions,
)
from extractor.schemas.values import OPTION_LIKE, Amount

P = "ShareBasedCompensationArrangementByShareBasedPaymentAward"
PL = "SharebasedCompensationArrangementBySharebasedPaymentAward"  # lower-case b
PP = "ShareBasedCompensationArrangementsByShareBasedPaymentAward"  # plural

# (basis, row kind, measure) -> concept, for options and SARs.
OPTION_ROWS: dict[tuple[str, str, str], str] = {}
for _kind in ("beginning", "ending"):
    OPTION_ROWS.update(
        {
            ("outstanding", _kind, "count"): f"{P}OptionsOutstandingNumber",
            ("outstanding", _kind, "weighted_average_price"): f"{P}OptionsOutstandingWeightedAverageExercisePrice",
            ("outstanding", _kind, "remaining_term"): f"{PL}OptionsOutstandingWeightedAverageRemainingContractualTerm2",
            ("outstanding", _kind, "intrinsic_value"): f"{P}OptionsOutstandingIntrinsicValue",
            ("nonvested", _kind, "count"): f"{P}OptionsNonvestedNumber",
            ("nonvested", _kind, "weighted_average_price"): f"{PL}OptionsNonvestedWeightedAverageGrantDateFairValue",
        }
    )
OPTION_ROWS.update(
    {
        ("outstanding", "granted", "count"): f"{P}OptionsGrantsInPeriodGross",
        ("outstanding", "granted", "weighted_average_price"): f"{PP}OptionsGrantsInPeriodWeightedAverageExercisePrice",
        ("outstanding", "exercised", "count"): f"{P}OptionsExercisesInPeriod",
        (
            "outstanding",
            "exercised",
            "weighted_average_price",
        ): f"{PP}OptionsExercisesInPeriodWeightedAverageExercisePrice",
        ("outstanding", "forfeited", "count"): f"{P}OptionsForfeituresInPeriod",
        (
            "outstanding",
            "forfeited",
            "weighted_average_price",
        ): f"{PP}OptionsForfeituresInPeriodWeightedAverageExercisePrice",
        ("outstanding", "expired", "count"): f"{P}OptionsExpirationsInPeriod",
        (
            "outstanding",
            "expired",
            "weighted_average_price",
        ): f"{PP}OptionsExpirationsInPeriodWeightedAverageExercisePrice",
        ("outstanding", "forfeited_or_expired", "count"): f"{P}OptionsForfeituresAndExpirationsInPeriod",
        (
            "outstanding",
            "forfeited_or_expired",
            "weighted_average_price",
        ): f"{P}OptionsForfeituresAndExpirationsInPeriodWeightedAverageExercisePrice",
        ("outstanding", "exercisable", "count"): f"{P}OptionsExercisableNumber",
        ("outstanding", "exercisable", "weighted_average_price"): f"{P}OptionsExercisableWeightedAverageExercisePrice",
        (
            "outstanding",
            "exercisable",
            "remaining_term",
        ): f"{PL}OptionsExercisableWeightedAverageRemainingContractualTerm1",
        ("outstanding", "exercisable", "intrinsic_value"): f"{PL}OptionsExercisableIntrinsicValue1",
        ("outstanding", "vested_and_expected_to_vest", "count"): f"{P}OptionsVestedAndExpectedToVestOutstandingNumber",
        (
            "outstanding",
            "vested_and_expected_to_vest",
            "weighted_average_price",
        ): f"{P}OptionsVestedAndExpectedToVestOutstandingWeightedAverageExercisePrice",
        (
            "outstanding",
            "vested_and_expected_to_vest",
            "remaining_term",
        ): f"{PL}OptionsVestedAndExpectedToVestOutstandingWeightedAverageRemainingContractualTerm1",
        (
            "outstanding",
            "vested_and_expected_to_vest",
            "intrinsic_value",
        ): f"{P}OptionsVestedAndExpectedToVestOutstandingAggregateIntrinsicValue",
        ("outstanding", "adjustment", "count"): "ext:OptionsAdjustmentsInPeriod",
        (
            "outstanding",
            "adjustment",
            "weighted_average_price",
        ): "ext:OptionsAdjustmentsInPeriodWeightedAverageExercisePrice",
        ("nonvested", "adjustment", "count"): "ext:OptionsNonvestedAdjustmentsInPeriod",
        (
            "nonvested",
            "adjustment",
            "weighted_average_price",
        ): "ext:OptionsNonvestedAdjustmentsInPeriodWeightedAverageGrantDateFairValue",
        ("nonvested", "granted", "count"): f"{P}OptionsGrantsInPeriodGross",
        (
            "nonvested",
            "granted",
            "weighted_average_price",
        ): f"{P}OptionsGrantsInPeriodWeightedAverageGrantDateFairValue",
        ("nonvested", "vested", "count"): "ext:OptionsVestedInPeriodNumber",
        ("nonvested", "vested", "weighted_average_price"): "ext:OptionsVestedInPeriodWeightedAverageGrantDateFairValue",
        ("nonvested", "forfeited", "count"): "ext:OptionsNonvestedForfeitedNumber",
        (
            "nonvested",
            "forfeited",
            "weighted_average_price",
        ): "ext:OptionsNonvestedForfeitedWeightedAverageGrantDateFairValue",
    }
)

# (basis, row kind, measure) -> concept, for RSUs, PSUs, MSUs, DSUs and restricted stock.
_OTHER = f"{P}EquityInstrumentsOtherThanOptions"
OTHER_ROWS: dict[tuple[str, str, str], str] = {}
for _kind in ("beginning", "ending"):
    OTHER_ROWS.update(
        {
            ("nonvested", _kind, "count"): f"{_OTHER}NonvestedNumber",
            ("nonvested", _kind, "weighted_average_price"): f"{_OTHER}NonvestedWeightedAverageGrantDateFairValue",
            ("outstanding", _kind, "count"): f"{P}NonOptionEquityInstrumentsOutstandingNumber",
            (
                "outstanding",
                _kind,
                "weighted_average_price",
            ): "ext:NonOptionEquityInstrumentsOutstandingWeightedAverageGrantDateFairValue",
        }
    )
    for _basis in ("nonvested", "outstanding"):  # the intrinsic value and remaining term of units at a balance date
        OTHER_ROWS.update(
            {
                (
                    _basis,
                    _kind,
                    "intrinsic_value",
                ): f"{PL}EquityInstrumentsOtherThanOptionsAggregateIntrinsicValueOutstanding",
                (
                    _basis,
                    _kind,
                    "remaining_term",
                ): f"{P}EquityInstrumentsOtherThanOptionsOutstandingWeightedAverageRemainingContractualTerms",
            }
        )
for _basis in ("nonvested", "outstanding"):
    OTHER_ROWS.update(
        {
            (_basis, "granted", "count"): f"{_OTHER}GrantsInPeriod",
            (_basis, "granted", "weighted_average_price"): f"{_OTHER}GrantsInPeriodWeightedAverageGrantDateFairValue",
            (_basis, "vested", "count"): f"{_OTHER}VestedInPeriod",
            (_basis, "vested", "weighted_average_price"): f"{_OTHER}VestedInPeriodWeightedAverageGrantDateFairValue",
            (_basis, "forfeited", "count"): f"{_OTHER}ForfeitedInPeriod",
            (_basis, "forfeited", "weighted_average_price"): f"{_OTHER}ForfeituresWeightedAverageGrantDateFairValue",
            (_basis, "adjustment", "count"): "ext:EquityInstrumentsOtherThanOptionsAdjustmentsInPeriod",
            (
                _basis,
                "adjustment",
                "weighted_average_price",
            ): "ext:EquityInstrumentsOtherThanOptionsAdjustmentsInPeriodWeightedAverageGrantDateFairValue",
        }
    )

# AwardYearInfo field -> (concept for options/SARs, concept for other awards)
YEAR_INFO: dict[str, tuple[str, str]] = {
    "granted_count": (f"{P}OptionsGrantsInPeriodGross", f"{_OTHER}GrantsInPeriod"),
    "granted_fair_value": (
        f"{P}OptionsGrantsInPeriodWeightedAverageGrantDateFairValue",
        f"{_OTHER}GrantsInPeriodWeightedAverageGrantDateFairValue",
    ),
    "cash_received_from_exercises": ("ProceedsFromStockOptionsExercised", "ProceedsFromStockOptionsExercised"),
    "intrinsic_value_exercised": (
        f"{P}OptionsExercisesInPeriodTotalIntrinsicValue",
        f"{P}OptionsExercisesInPeriodTotalIntrinsicValue",
    ),
    "tax_benefit_realized": ("EmployeeServiceShareBasedCompensationTaxBenefitFromExerciseOfStockOptions",) * 2,
    "vested_count": ("ext:OptionsVestedInPeriodNumber", f"{_OTHER}VestedInPeriod"),
    "vested_fair_value": (f"{PL}OptionsVestedInPeriodFairValue1", f"{_OTHER}VestedInPeriodTotalFairValue"),
    "payments_upon_vesting": ("ext:CashSettledRestrictedStockUnitsPaymentsUponVesting",) * 2,
    "shares_purchased": ("StockIssuedDuringPeriodSharesEmployeeStockPurchasePlans",) * 2,
    "average_purchase_price": (f"{P}PerShareWeightedAveragePriceOfSharesPurchased",) * 2,
}

# ValuationAssumptions field -> (concept, bound)
ASSUMPTIONS: dict[str, tuple[str, str | None]] = {
    "dividend_yield": (f"{P}FairValueAssumptionsExpectedDividendRate", None),
    "dividend_yield_min": (f"{P}FairValueAssumptionsExpectedDividendRate", "min"),
    "dividend_yield_max": (f"{P}FairValueAssumptionsExpectedDividendRate", "max"),
    "volatility": (f"{P}FairValueAssumptionsExpectedVolatilityRate", None),
    "volatility_min": (f"{P}FairValueAssumptionsExpectedVolatilityRateMinimum", None),
    "volatility_max": (f"{P}FairValueAssumptionsExpectedVolatilityRateMaximum", None),
    "weighted_average_volatility": (f"{P}FairValueAssumptionsWeightedAverageVolatilityRate", None),
    "risk_free_rate": (f"{P}FairValueAssumptionsRiskFreeInterestRate", None),
    "risk_free_rate_min": (f"{P}FairValueAssumptionsRiskFreeInterestRateMinimum", None),
    "risk_free_rate_max": (f"{P}FairValueAssumptionsRiskFreeInterestRateMaximum", None),
    "expected_term": (f"{PL}FairValueAssumptionsExpectedTerm1", None),
    "expected_term_min": (f"{PL}FairValueAssumptionsExpectedTerm1", "min"),
    "expected_term_max": (f"{PL}FairValueAssumptionsExpectedTerm1", "max"),
}

PLAN: dict[str, str] = {
    "shares_authorized": f"{P}NumberOfSharesAuthorized",
    "shares_available": f"{P}NumberOfSharesAvailableForGrant",
    "vesting_period": f"{P}AwardVestingPeriod1",
    "expiration_period": f"{PL}ExpirationPeriod",
    "max_subscription_rate": f"{P}MaximumEmployeeSubscriptionRate",
}
REPURCHASE_YEAR: dict[str, str] = {
    "shares_repurchased": "StockRepurchasedDuringPeriodShares",
    "average_cost_per_share": "TreasuryStockAcquiredAverageCostPerShare",
    "amount_paid": "PaymentsForRepurchaseOfCommonStock",
    "remaining_authorization": "StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1",
}
REPURCHASES: dict[str, str] = {
    "authorized_amount": "StockRepurchaseProgramAuthorizedAmount1",
    "remaining_authorization": "StockRepurchaseProgramRemainingAuthorizedRepurchaseAmount1",
}
PREFERRED: dict[str, str] = {
    "shares_authorized": "PreferredStockSharesAuthorized",
    "par_value": "PreferredStockParOrStatedValuePerShare",
    "shares_outstanding": "PreferredStockSharesOutstanding",
}
EXPENSE = "AllocatedShareBasedCompensationExpense"
UNRECOGNIZED = "EmployeeServiceShareBasedCompensationNonvestedAwardsTotalCompensationCostNotYetRecognized"
UNRECOGNIZED_PERIOD = f"{UNRECOGNIZED}PeriodForRecognition1"
CASH_SETTLEMENT = "ext:CashSettledRestrictedStockUnitsExpectedSettlement"
CONCEPT_PREFIXES = (P, PL, PP, "EmployeeServiceShareBasedCompensation")  # long shared heads, shortened for readers
ROW_MEASURES = ("count", "weighted_average_price", "remaining_term", "intrinsic_value")


def concept_words(concept: str) -> str:
    """A concept a reviewer can read: its distinguishing tail in words ('options exercises in period')."""
    tail = concept.removeprefix("ext:")
    for prefix in CONCEPT_PREFIXES:
        tail = tail.removeprefix(prefix)
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", tail).lower()


def rollforward_concept(award: str, basis: str, kind: str, measure: str) -> str | None:
    table = OPTION_ROWS if award in OPTION_LIKE else OTHER_ROWS
    return table.get((basis, kind, measure))


Printing = tuple[str, Amount, dict[str, str]]  # a concept, the amount printed for it and its dimensions


def _printing(concept: str, amount: Amount, **dims: str | None) -> Printing:
    return concept, amount, {k: v for k, v in dims.items() if v is not None}


def _fields(model, mapping: dict[str, str]) -> Iterator[tuple[str, str, Amount]]:
    for name, concept in mapping.items():
        amount = getattr(model, name)
        if amount is not None:
            yield name, concept, amount


def iter_located_amounts(note: StockCompensationNote) -> Iterator[tuple[str, Printing]]:
    """Every number of the note as (schema path, (concept, amount, dims)), in schema order, duplicates included:
    what iter_located_facts makes facts of, for a caller that only asks where the numbers stand.

    The path ("award_activity[0].rows[3].count") names the field a reviewer would correct.
    """
    for i, plan in enumerate(note.plans):
        for name, concept, amount in _fields(plan, PLAN):
            yield f"plans[{i}].{name}", _printing(concept, amount, award=plan.award)
    for i, table in enumerate(note.award_activity):
        for j, row in enumerate(table.rows):
            for measure in ROW_MEASURES:
                amount = getattr(row, measure)
                row_concept = rollforward_concept(table.award, table.basis, row.kind, measure)
                if amount is not None and row_concept:
                    yield (
                        f"award_activity[{i}].rows[{j}].{measure}",
                        _printing(row_concept, amount, award=table.award, plan=table.plan),
                    )
    for i, info in enumerate(note.award_years):
        for name, (option_concept, other_concept) in YEAR_INFO.items():
            amount = getattr(info, name)
            if amount is not None:
                concept = option_concept if (info.award in OPTION_LIKE or info.award is None) else other_concept
                yield f"award_years[{i}].{name}", _printing(concept, amount, award=info.award)
    for i, assumptions in enumerate(note.valuation_assumptions):
        for name, (concept, bound) in ASSUMPTIONS.items():
            amount = getattr(assumptions, name)
            if amount is not None:
                yield (
                    f"valuation_assumptions[{i}].{name}",
                    _printing(concept, amount, award=assumptions.award, bound=bound),
                )
    for i, item in enumerate(note.expense):
        yield f"expense[{i}].amount", _printing(EXPENSE, item.amount, award=item.award, line_item=item.line_item)
    for i, cost in enumerate(note.unrecognized_cost):
        year = cost.year.isoformat() if cost.year else None
        if cost.amount is not None:
            yield f"unrecognized_cost[{i}].amount", _printing(UNRECOGNIZED, cost.amount, award=cost.award, year=year)
        if cost.recognition_period is not None:
            yield (
                f"unrecognized_cost[{i}].recognition_period",
                _printing(UNRECOGNIZED_PERIOD, cost.recognition_period, award=cost.award, year=year),
            )
    for i, settlement in enumerate(note.cash_settlement_ranges):
        year = settlement.year.isoformat() if settlement.year else None
        for bound, name in (("min", "minimum"), ("max", "maximum")):
            amount = getattr(settlement, name)
            if amount is not None:
                yield (
                    f"cash_settlement_ranges[{i}].{name}",
                    _printing(CASH_SETTLEMENT, amount, award=settlement.award, bound=bound, year=year),
                )
    if note.share_repurchases:
        for name, concept, amount in _fields(note.share_repurchases, REPURCHASES):
            yield f"share_repurchases.{name}", _printing(concept, amount)
        for i, year_info in enumerate(note.share_repurchases.years):
            for name, concept, amount in _fields(year_info, REPURCHASE_YEAR):
                yield f"share_repurchases.years[{i}].{name}", _printing(concept, amount)
    if note.preferred_stock:
        for name, concept, amount in _fields(note.preferred_stock, PREFERRED):
            yield f"preferred_stock.{name}", _printing(concept, amount)
    for i, line in enumerate(note.line_items):
        yield (
            f"line_items[{i}].amount",
            _printing(
                line.concept,
                line.amount,
                award=line.award,
                line_item=line.line_item,
                bound=line.bound,
                price_range=line.price_range,
                plan=line.plan,
            ),
        )


def iter_located_facts(note: StockCompensationNote) -> Iterator[tuple[str, Fact]]:
    """Every number of the note as (schema path, fact), in schema order, duplicates included."""
    for path, (concept, amount, dims) in iter_located_amounts(note):
        fact = Fact(
            concept=concept, value=amount.value, unit=amount.unit, period=amount.period, dims=dims, source=amount.source
        )
        yield path, fact


def iter_facts(note: StockCompensationNote) -> Iterator[Fact]:
    """Every number of the note as a fact, in schema order (duplicates included)."""
    return (fact for _, fact in iter_located_facts(note))


def to_facts(note: StockCompensationNote) -> list[Fact]:
    """The note as the spec's flat facts list: one fact per (concept, period end, dims) and short-period length."""
    return [fact for _, fact in merge_printings(iter_located_facts(note))]


SchemaPath = TypeVar("SchemaPath", bound=str | None)  # a printing's schema path; None where facts came without one


def merge_printings(printings: Iterable[tuple[SchemaPath, Fact]]) -> list[tuple[SchemaPath, Fact]]:
    """One fact per (concept, period end, dims) and length of a short period, in document order, each with its path.

    A number printed twice for the same fact (a count in thousands in one table and in units
    in another) becomes one fact: the most precise printing, else the first in the document.
    Disagreeing duplicates are all kept, for the validator to report.
    """
    chosen: dict[tuple, Printings[SchemaPath]] = {}
    for path, fact in printings:
        group = chosen.setdefault((*fact.key(), fact.period.short_months), Printings())
        index = group.first_agreeing(fact)
        if index is None:
            group.add((path, fact))
            continue
        twin = group.pairs[index][1]
        if _more_precise(fact, twin) or (not _more_precise(twin, fact) and _position(fact) < _position(twin)):
            group.replace(index, (path, fact))
    merged = [pair for group in chosen.values() for pair in group.pairs]
    return sorted(merged, key=lambda pair: _position(pair[1]))


_EXACT = Context(prec=MAX_PREC)  # for window bounds: no rounding


class Printings(Generic[SchemaPath]):
    """Printings of one fact in the order they came, to find the first a new printing agrees with among its
    neighbours in value instead of all of them: two printings agree only when their values lie within half
    a unit of the coarser one's last digit. A long table whose rows all print one fact stays linear to check.
    """

    def __init__(self) -> None:
        self.pairs: list[tuple[SchemaPath, Fact]] = []
        self._by_value: list[tuple[Decimal, int]] | None = None  # (value, index in pairs), sorted; built when asked
        self._coarsest = 0  # the largest printed exponent among them, once built

    def first_agreeing(self, fact: Fact) -> int | None:
        """The index of the first printing whose value agrees with the fact's (values_agree), if any."""
        if not self.pairs:
            return None
        if self._by_value is None:  # most facts are printed once: never built for them
            self._by_value = sorted((f.value, i) for i, (_, f) in enumerate(self.pairs))
            self._coarsest = max(printed_exponent(f) for _, f in self.pairs)
        exponent = max(printed_exponent(fact), self._coarsest)
        # a whole unit, plus a hair for values longer than the decimal context, which values_agree rounds
        reach = _EXACT.add(Decimal(1).scaleb(exponent), abs(fact.value).scaleb(-20))
        low = bisect_left(self._by_value, _EXACT.subtract(fact.value, reach), key=_value)
        high = bisect_right(self._by_value, _EXACT.add(fact.value, reach), key=_value)
        near = sorted(index for _, index in self._by_value[low:high])
        return next((i for i in near if values_agree(self.pairs[i][1], fact)), None)

    def add(self, pair: tuple[SchemaPath, Fact]) -> None:
        self.pairs.append(pair)
        self._index(len(self.pairs) - 1)

    def replace(self, index: int, pair: tuple[SchemaPath, Fact]) -> None:
        """Put a printing in another's place (a more precise twin), keeping its place in document order."""
        if self._by_value is not None:
            position = bisect_left(self._by_value, self.pairs[index][1].value, key=_value)
            while self._by_value[position][1] != index:
                position += 1
            del self._by_value[position]
        self.pairs[index] = pair
        self._index(index)

    def _index(self, index: int) -> None:
        if self._by_value is not None:
            fact = self.pairs[index][1]
            insort(self._by_value, (fact.value, index))
            self._coarsest = max(self._coarsest, printed_exponent(fact))


def _value(entry: tuple[Decimal, int]) -> Decimal:
    return entry[0]


def _position(fact: Fact) -> int:
    return fact.source.start if fact.source else 1 << 62


def _more_precise(a: Fact, b: Fact) -> bool:
    return printed_exponent(a) < printed_exponent(b)


def from_facts(facts: list[Fact]) -> StockCompensationNote:
    """Rebuild a note from facts where the concept says where a number belongs.

    Roll-forward rows come back one per fact (balances as beginning/ending by date); facts whose
    concept maps nowhere in the schema (foreign ext: names) are returned unplaced by the caller.
    Dims are plain strings: the parts that take them are parsed (model_validate), which checks an award,
    bound, basis or row kind against the schema's names.
    """
    note = StockCompensationNote()
    rollforwards: dict[tuple[str, str, str | None], AwardRollForward] = {}
    year_infos: dict[tuple, AwardYearInfo] = {}
    assumptions: dict[tuple, ValuationAssumptions] = {}
    reverse_rows = {
        (c, award_class): key
        for award_class, table in (("option", OPTION_ROWS), ("other", OTHER_ROWS))
        for key, c in table.items()
    }
    balance_dates: dict[tuple[str, str, str | None], list[date]] = {}
    for fact in facts:
        award = fact.dims.get("award")
        end = fact.period.end_date
        award_class = "option" if award in OPTION_LIKE else "other"
        key = reverse_rows.get((fact.concept, award_class))
        if key and award and fact.period.instant:
            balance_dates.setdefault((award, key[0], fact.dims.get("plan")), []).append(end)
    for fact in facts:
        amount = Amount(value=fact.value, unit=fact.unit, period=fact.period, source=fact.source)
        award = fact.dims.get("award")
        end = fact.period.end_date
        award_class = "option" if award in OPTION_LIKE else "other"
        row_key = reverse_rows.get((fact.concept, award_class))
        year_field = next((n for n, pair in YEAR_INFO.items() if fact.concept in pair), None)
        plan = fact.dims.get("plan")
        if plan and not (row_key and award):  # a number of one plan's column that is no roll-forward row
            note.line_items.append(
                LineItem.model_validate(
                    {
                        "concept": fact.concept,
                        "award": award,
                        "bound": fact.dims.get("bound"),
                        "plan": plan,
                        "amount": amount,
                    }
                )
            )
        elif fact.concept == EXPENSE:
            note.expense.append(
                ExpenseItem.model_validate({"line_item": fact.dims.get("line_item"), "award": award, "amount": amount})
            )
        elif fact.concept in (UNRECOGNIZED, UNRECOGNIZED_PERIOD):
            year = date.fromisoformat(fact.dims["year"]) if "year" in fact.dims else None
            field = "amount" if fact.concept == UNRECOGNIZED else "recognition_period"
            note.unrecognized_cost.append(
                UnrecognizedCost.model_validate({"award": award, "year": year, field: amount})
            )
        elif fact.concept == CASH_SETTLEMENT:
            year = date.fromisoformat(fact.dims["year"]) if "year" in fact.dims else None
            field = "minimum" if fact.dims.get("bound") == "min" else "maximum"
            note.cash_settlement_ranges.append(
                CashSettlementRange.model_validate({"award": award or "rsu", "year": year, field: amount})
            )
        elif fact.concept in PLAN.values():
            name = next(n for n, c in PLAN.items() if c == fact.concept)
            note.plans.append(PlanTerms.model_validate({"award": award, name: amount}))
        elif fact.concept in PREFERRED.values():
            name = next(n for n, c in PREFERRED.items() if c == fact.concept)
            note.preferred_stock = (note.preferred_stock or PreferredStock()).model_copy(update={name: amount})
        elif fact.concept in REPURCHASE_YEAR.values() and not (
            fact.concept in REPURCHASES.values() and fact.period.instant is None
        ):
            name = next(n for n, c in REPURCHASE_YEAR.items() if c == fact.concept)
            note.share_repurchases = note.share_repurchases or ShareRepurchases()
            note.share_repurchases.years.append(ShareRepurchaseYear(fiscal_year_end=end, **{name: amount}))
        elif fact.concept in REPURCHASES.values():
            name = next(n for n, c in REPURCHASES.items() if c == fact.concept)
            note.share_repurchases = note.share_repurchases or ShareRepurchases()
            setattr(note.share_repurchases, name, amount)
        elif any(fact.concept == c for c, _ in ASSUMPTIONS.values()):
            name = next(n for n, (c, b) in ASSUMPTIONS.items() if c == fact.concept and b == fact.dims.get("bound"))
            assumed = assumptions.setdefault(
                (award, end), ValuationAssumptions.model_validate({"award": award, "fiscal_year_end": end})
            )
            setattr(assumed, name, amount)
        elif row_key and award and not (year_field and fact.period.instant is None and row_key[1] == "granted"):
            basis, kind, measure = row_key
            if fact.period.instant and kind in ("beginning", "ending"):
                kind = "beginning" if end == min(balance_dates[(award, basis, plan)]) else "ending"
            table = rollforwards.setdefault(
                (award, basis, plan), AwardRollForward.model_validate({"award": award, "basis": basis, "plan": plan})
            )
            table.rows.append(RollForwardRow.model_validate({"kind": kind, measure: amount}))
        elif year_field:
            info = year_infos.setdefault(
                (award, end), AwardYearInfo.model_validate({"award": award, "fiscal_year_end": end})
            )
            setattr(info, year_field, amount)
        else:  # a concept no typed field holds: kept as a line item, never dropped
            note.line_items.append(
                LineItem.model_validate(
                    {
                        "concept": fact.concept,
                        "award": award,
                        "line_item": fact.dims.get("line_item"),
                        "bound": fact.dims.get("bound"),
                        "price_range": fact.dims.get("price_range"),
                        "amount": amount,
                    }
                )
            )
    note.award_activity = list(rollforwards.values())
    note.award_years = list(year_infos.values())
    note.valuation_assumptions = list(assumptions.values())
    note.fiscal_year_ends = sorted({f.period.end_date for f in facts if f.period.end}, reverse=True)
    return note


# The parts of a note, for scores per part. Every concept lands in exactly one.
GROUPS = ("options roll-forward", "other awards", "assumptions", "expense", "unrecognized cost", "plan", "repurchase")
_GROUP_OF: dict[str, str] = {
    **{concept: "assumptions" for concept, _ in ASSUMPTIONS.values()},
    **dict.fromkeys((UNRECOGNIZED, UNRECOGNIZED_PERIOD), "unrecognized cost"),
    **dict.fromkeys(
        (
            EXPENSE,
            "ShareBasedCompensation",
            "AllocatedShareBasedCompensationExpenseNetOfTax",
            "EmployeeServiceShareBasedCompensationTaxBenefitFromCompensationExpense",
        ),
        "expense",
    ),
    **dict.fromkeys(
        (
            *REPURCHASES.values(),
            *REPURCHASE_YEAR.values(),
            *PREFERRED.values(),
            "TreasuryStockSharesAcquired",
        ),
        "repurchase",
    ),
    **dict.fromkeys(
        (
            *PLAN.values(),
            "StockIssuedDuringPeriodSharesEmployeeStockPurchasePlans",
            f"{P}PerShareWeightedAveragePriceOfSharesPurchased",
            f"{PL}PurchasePriceOfCommonStockPercent",
        ),
        "plan",
    ),
    CASH_SETTLEMENT: "other awards",
}


def concept_group(fact: Fact) -> str:
    """Which part of the note a fact belongs to; award facts split by options/SARs vs other awards."""
    group = _GROUP_OF.get(fact.concept)
    if group:
        return group
    award = fact.dims.get("award")
    if award in OPTION_LIKE or (award is None and "Option" in fact.concept):
        return "options roll-forward"
    return "other awards"
