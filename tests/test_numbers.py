"""extractor.numbers: printed numbers parse back exactly, with their printed precision."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.numbers import apply_scale, parse_number, parse_word_number, scale_exponent, tolerance

# --------------------------------------------------------------------------- table-driven


@pytest.mark.parametrize(
    "text, magnitude, negative, percent, currency, decimals, digits",
    [
        # cells as the seeds print them
        ("(2,413", "2413", True, False, False, 0, "2,413"),  # R page: ")" is the next cell
        ("(169)", "169", True, False, False, 0, "169"),
        ("40.0%", "40.0", False, True, False, 1, "40.0"),
        ("$ 57.96", "57.96", False, False, True, 2, "57.96"),
        ("$80.56", "80.56", False, False, True, 2, "80.56"),
        (".5", "0.5", False, False, False, 1, ".5"),
        ("1,552.3", "1552.3", False, False, False, 1, "1,552.3"),
        ("6,971.1", "6971.1", False, False, False, 1, "6,971.1"),
        ("1,601,489", "1601489", False, False, False, 0, "1,601,489"),
        ("0.0", "0.0", False, False, False, 1, "0.0"),
        ("2018", "2018", False, False, False, 0, "2018"),
        ("(1.5%)", "1.5", True, True, False, 1, "1.5"),
        ("($ 2,413)", "2413", True, False, True, 0, "2,413"),
        ("-5", "5", True, False, False, 0, "5"),
        ("\u22125", "5", True, False, False, 0, "5"),
        ("  246,198 ", "246198", False, False, False, 0, "246,198"),
        (" \u00a0$\u00a057.96 ", "57.96", False, False, True, 2, "57.96"),
    ],
)
def test_parse_number_cases(text, magnitude, negative, percent, currency, decimals, digits):
    parsed = parse_number(text)
    assert parsed is not None
    assert parsed.magnitude == Decimal(magnitude)
    assert str(parsed.magnitude) == magnitude  # printed precision kept ("40.0", not "40")
    assert (parsed.negative, parsed.percent, parsed.currency) == (negative, percent, currency)
    assert parsed.decimals == decimals
    assert text[parsed.digits_start : parsed.digits_end] == digits
    assert parsed.signed == (-Decimal(magnitude) if negative else Decimal(magnitude))


@pytest.mark.parametrize(
    "text",
    ["", "   ", "$", "%", ")", "—", "-", "n/a", "1,23", "1234,567", "1 234", "12a", "Granted", "5.3 years", "5.8-6.4"],
)
def test_parse_number_rejects_non_numbers(text):
    assert parse_number(text) is None


@pytest.mark.parametrize(
    "text, magnitude, currency, percent",
    [("$(1.23)", "1.23", True, False), ("$ (0.15)", "0.15", True, False), ("(0.3)%", "0.3", False, True)],
)
def test_parse_number_sign_inside_currency_or_percent(text, magnitude, currency, percent):
    """Negative amounts and rates printed '$(1.23)' / '(0.3)%' (was a bug: parsed as None)."""
    parsed = parse_number(text)
    assert parsed is not None
    assert parsed.magnitude == Decimal(magnitude) and parsed.negative
    assert (parsed.currency, parsed.percent) == (currency, percent)
    assert text[parsed.digits_start : parsed.digits_end] == magnitude


@pytest.mark.parametrize(
    "word, value",
    [("ten", 10), ("Ten ", 10), ("seven", 7), ("no", 0), ("none", 0), ("twenty", 20), ("1,000", 1000), ("4.5", "4.5")],
)
def test_parse_word_number(word, value):
    assert parse_word_number(word) == Decimal(value)


@pytest.mark.parametrize("word", ["several", "", "years", "ten years"])
def test_parse_word_number_rejects(word):
    assert parse_word_number(word) is None


@pytest.mark.parametrize(
    "note, exponent",
    [
        ("(In thousands)", 3),
        ("(Costs in millions)", 6),
        ("(Shares and intrinsic value in thousands)", 3),
        ("(Units in thousands)", 3),
        ("in thousands, except exercise price and contractual term", 3),
        ("$1.55 billion", 9),
        ("In Millions, except Per Share data", 6),
        ("Years Ended February 29 or 28", None),
        ("millionaire", None),
        ("", None),
    ],
)
def test_scale_exponent(note, exponent):
    assert scale_exponent(note) == exponent


@pytest.mark.parametrize(
    "value, exponent, expected",
    [
        ("6971.1", 3, "6971100"),
        ("1552.3", 6, "1552300000"),
        ("40.4", 6, "40400000"),
        ("2413", 3, "2413000"),
        ("0.0005", 3, "0.5"),
        ("12.345", 1, "123.45"),
        ("57.96", 0, "57.96"),
    ],
)
def test_apply_scale_cases(value, exponent, expected):
    scaled = apply_scale(Decimal(value), exponent)
    assert scaled == Decimal(expected)
    assert str(scaled) == expected  # no exponent notation, no trailing zeros after scaling


@pytest.mark.parametrize(
    "decimals, exponent, expected",
    [(1, 3, "50"), (0, 0, "0.5"), (2, 0, "0.005"), (0, 3, "500"), (1, 6, "50000")],
)
def test_tolerance(decimals, exponent, expected):
    assert tolerance(decimals, exponent) == Decimal(expected)


# --------------------------------------------------------------------------- properties

_decimals = st.integers(min_value=0, max_value=4)
_integer_part = st.integers(min_value=0, max_value=10**12)


@st.composite
def printed_numbers(draw):
    """A random value printed as a filing would: separators, parentheses, '$', '%'."""
    whole = draw(_integer_part)
    places = draw(_decimals)
    frac = draw(st.integers(min_value=0, max_value=10**places - 1)) if places else 0
    value = Decimal(whole) + Decimal(frac).scaleb(-places)
    value = value.quantize(Decimal(1).scaleb(-places))
    separators = draw(st.booleans())
    digits = f"{value:,.{places}f}" if separators else f"{value:.{places}f}"
    negative = draw(st.booleans())
    currency = draw(st.booleans())
    percent = draw(st.booleans()) and not currency
    closed = draw(st.booleans())
    space = draw(st.sampled_from(["", " "]))
    body = digits + ("%" if percent else "")
    if currency:
        body = "$" + space + body
    if negative:
        body = "(" + body + (")" if closed else "")
    lead = draw(st.sampled_from(["", " ", "  "]))
    trail = draw(st.sampled_from(["", " ", "\u00a0"]))
    return lead + body + trail, value, places, digits, negative, currency, percent


@settings(max_examples=300, deadline=None)
@given(printed_numbers())
def test_parse_number_roundtrip(case):
    text, value, places, digits, negative, currency, percent = case
    parsed = parse_number(text)
    assert parsed is not None, text
    assert parsed.magnitude == value
    assert parsed.decimals == places
    assert parsed.negative is negative
    assert parsed.currency is currency
    assert parsed.percent is percent
    assert text[parsed.digits_start : parsed.digits_end] == digits
    assert parsed.signed == (-value if negative else value)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=10**15), st.integers(min_value=0, max_value=6), st.sampled_from([0, 3, 6, 9]))
def test_apply_scale_is_exact(units, places, exponent):
    value = Decimal(units).scaleb(-places)  # e.g. 69711, 1 -> 6971.1
    scaled = apply_scale(value, exponent)
    assert scaled == value * Decimal(10) ** exponent
    assert "E" not in str(scaled)  # plain digits, as the JSON output needs
    if scaled == scaled.to_integral_value():
        assert scaled.as_tuple().exponent == 0  # 6,971.1 thousand -> 6971100, not 6.9711E+6
    else:
        assert str(scaled)[-1] != "0"  # fractions are normalized


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["thousand", "thousands", "million", "millions", "billion", "billions"]),
    st.sampled_from(["(In {})", "(Costs in {})", "in {}, except per share", "{}"]),
    st.sampled_from([str.lower, str.upper, str.title]),
)
def test_scale_words(word, template, case):
    expected = {"thousand": 3, "million": 6, "billion": 9}[word.rstrip("s")]
    assert scale_exponent(template.format(case(word))) == expected


@settings(max_examples=200, deadline=None)
@given(printed_numbers(), st.sampled_from([0, 3, 6]))
def test_tolerance_is_half_the_last_printed_unit(case, exponent):
    text, value, places, *_ = case
    parsed = parse_number(text)
    tol = tolerance(parsed.decimals, exponent)
    base = apply_scale(parsed.magnitude, exponent)
    quantum = Decimal(1).scaleb(-places)
    assert tol * 2 == Decimal(1).scaleb(exponent - places)
    # a true value just inside the tolerance still prints as these digits; just outside does not
    tiny = tol / 1000
    assert ((base + tol - tiny).scaleb(-exponent)).quantize(quantum) == parsed.magnitude
    assert ((base + tol + tiny).scaleb(-exponent)).quantize(quantum) != parsed.magnitude
