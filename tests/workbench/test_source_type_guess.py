from collections import Counter

import pytest

from projects.canonical import CANONICAL_FIELDS_BY_NAME
from readiness.discovery import discover_keys
from workbench.type_guess import TypeGuess, source_type_guess


def seen(*values, times: int = 1) -> Counter:
    return Counter({(type(value).__name__, value): times for value in values})


@pytest.mark.parametrize(
    ("values", "guess"),
    [
        (seen(8800, 6400), TypeGuess("integer")),
        (seen("8800", "6,400"), TypeGuess("integer")),  # the converters read "6,400" as 6400
        (seen("9,600.5", "12"), TypeGuess("decimal")),
        (seen(9.6, 12), TypeGuess("decimal")),
        (seen("18500.00", "24750.00"), TypeGuess("decimal")),  # written with cents: whole today, not next push
        (seen(12.0, 7), TypeGuess("decimal")),
        (seen("12.4", "", "  "), TypeGuess("decimal")),  # an empty value says nothing about the type
        (seen("9,600", ""), TypeGuess("integer")),
        (seen("", None), TypeGuess("string")),
        (seen("03/01/2024", "04/15/2024"), TypeGuess("date", {"formats": ["%m/%d/%Y"]})),
        (seen("03/01/2024", "04/01/2024"), TypeGuess("date", {"formats": ["%m/%d/%Y"]})),  # both read: US first
        (seen("03/01/2024", "15/04/2024"), TypeGuess("date", {"formats": ["%d/%m/%Y"]})),  # a day over 12 decides
        (seen("1.3.2024", "15.04.2024", ""), TypeGuess("date", {"formats": ["%d.%m.%Y"]})),
        (seen("03-01-2024", "04-15-2024"), TypeGuess("date", {"formats": ["%m-%d-%Y"]})),
        (seen("13/01/2024", "04/15/2024"), TypeGuess("phone")),  # neither order reads both: no date
        (seen("03/01/2024", "04-15-2024"), TypeGuess("phone")),
        (seen("9.6", "12"), TypeGuess("decimal")),
        (seen(True, False), TypeGuess("boolean")),
        (seen("2026-03-01", "2026-11-24"), TypeGuess("date")),
        (seen("2026-03-01T10:00:00Z", "2026-03-01"), TypeGuess("datetime")),
        (seen("a@example.com", "B@Example.org"), TypeGuess("email")),
        (seen("+1 (555) 123-4567", "555.123.4567"), TypeGuess("phone")),
        (seen("won", "lost", times=2), TypeGuess("enum", {"values": {"lost": "lost", "won": "won"}})),
        (seen("won", "lost"), TypeGuess("string")),  # seen once each: not yet a set of choices
        (seen("won", times=5), TypeGuess("string")),
        (seen(*"abcdefghi", times=3), TypeGuess("string")),  # nine values are not a small set
        (seen("8800", "lots"), TypeGuess("string")),
        (seen(8800, "lots"), TypeGuess("string")),
        (seen(None), TypeGuess("string")),
        (Counter(), TypeGuess("string")),
    ],
    ids=repr,
)
def test_a_type_is_guessed_from_the_values_a_key_held(values, guess):
    assert source_type_guess(values) == guess


def test_an_incomplete_set_of_values_is_no_enum():
    assert source_type_guess(seen("won", "lost", times=2), complete=False) == TypeGuess("string")


@pytest.mark.parametrize(
    ("field", "values", "guess"),
    [
        ("systemSizeKw", seen(8800, 6400), TypeGuess("decimal")),
        ("moduleCount", seen(24, 30), TypeGuess("integer")),
        ("postalCode", seen("02139", "10001"), TypeGuess("string")),  # a number as text keeps its zero
        ("customerPhone", seen("5551234567"), TypeGuess("phone")),
        ("installDate", seen("soon", "later"), TypeGuess("date")),  # what a date field takes: issues show why
        ("installDate", seen("03/01/2024", ""), TypeGuess("date", {"formats": ["%m/%d/%Y"]})),
        ("customerPhone", seen("03/01/2024"), TypeGuess("date", {"formats": ["%m/%d/%Y"]})),  # a date, not a phone
        ("contractAmount", seen("lots"), TypeGuess("decimal")),
        ("currency", seen("usd", "eur", times=3), TypeGuess("string")),
        ("status", seen("Contracted", "on-hold"), TypeGuess("string")),  # already project statuses
        (
            "status",
            seen("closedwon", "Contracted"),
            TypeGuess("enum", {"values": {"Contracted": "contracted", "closedwon": ""}}),
        ),
    ],
)
def test_the_guess_fits_the_field_it_fills(field, values, guess):
    assert source_type_guess(values, canonical=CANONICAL_FIELDS_BY_NAME[field]) == guess


def test_discovery_counts_each_keys_distinct_values_up_to_a_bound():
    documents = [{"stage": "won", "n": 1, "flag": True, "id": f"P-{i}"} for i in range(25)]

    keys = {key.path: key for key in discover_keys(documents, {}).keys}

    assert (keys["stage"].values, keys["stage"].more_values) == (Counter({("str", "won"): 25}), False)
    assert keys["n"].values == Counter({("int", 1): 25})  # True and 1 are told apart
    assert keys["flag"].values == Counter({("bool", True): 25})
    assert (len(keys["id"].values), keys["id"].more_values) == (20, True)
