from decimal import Decimal

import pytest

from ingest.plausibility import plausibility_hints, value_hint


@pytest.mark.parametrize(
    ("field", "value", "scale", "hint"),
    [
        (
            "systemSizeKw",
            "0.0096",
            0.001,
            "systemSizeKw 0.0096 kW is outside 0.5 kW to 10,000 kW: the source (9.6) is in kW already; "
            "remove the scale 0.001 to get 9.6 kW.",
        ),
        (
            "systemSizeKw",
            "12000",
            None,
            "systemSizeKw 12,000 kW is outside 0.5 kW to 10,000 kW: it looks like watts; scale 0.001 would give 12 kW.",
        ),
        (
            "systemSizeKw",
            "0.0096",
            None,
            "systemSizeKw 0.0096 kW is outside 0.5 kW to 10,000 kW: it looks like megawatts; "
            "scale 1000 would give 9.6 kW.",
        ),
        (
            "systemSizeKw",
            "12000000",
            1000,
            "systemSizeKw 12,000,000 kW is outside 0.5 kW to 10,000 kW: it looks like watts; "
            "scale 0.001 instead of 1000 would give 12 kW.",
        ),
        (
            "batteryCapacityKwh",
            "13500",
            None,
            "batteryCapacityKwh 13,500 kWh is over 1,000 kWh: it looks like watt-hours; "
            "scale 0.001 would give 13.5 kWh.",
        ),
        (
            "contractAmount",
            "25",
            None,
            "contractAmount 25 is under 100: it looks like thousands; scale 1000 would give 25,000.",
        ),
        (
            "contractAmount",
            "25",
            0.001,
            "contractAmount 25 is under 100: the source (25,000) is in the currency already; "
            "remove the scale 0.001 to get 25,000.",
        ),
        (
            "systemSizeKw",
            "0.0000001",
            None,
            "systemSizeKw 0.0000001 kW is outside 0.5 kW to 10,000 kW: check the unit the source is in.",
        ),
        ("systemSizeKw", "0.5", None, None),
        ("systemSizeKw", "10000", None, None),
        ("batteryCapacityKwh", "1000", None, None),
        ("contractAmount", "100", None, None),
        ("moduleCount", "100000", None, None),  # no plausible range known
    ],
)
def test_an_implausible_value_names_the_field_the_value_and_the_likely_fix(field, value, scale, hint):
    assert value_hint(field=field, value=Decimal(value), scale=scale) == hint


def test_hints_come_once_per_field_with_the_first_push_and_how_many_are_alike():
    results = [
        ("P-1", {"systemSizeKw": (Decimal("12000"), None), "contractAmount": (Decimal("25000"), None)}),
        ("P-2", {"systemSizeKw": (Decimal("18800"), 1), "contractAmount": (None, None)}),
        ("P-3", {"systemSizeKw": (Decimal("6.4"), None)}),
    ]

    hints = plausibility_hints(results=results)

    assert hints == [
        "systemSizeKw 12,000 kW is outside 0.5 kW to 10,000 kW: it looks like watts; scale 0.001 would give 12 kW. "
        "(push P-1; 2 of 3 push(es) like it)"
    ]
    assert plausibility_hints(results=[]) == []
