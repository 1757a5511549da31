from decimal import Decimal

import pytest

from mappings.normalization import FieldRule
from mappings.plausibility import Reading, field_readings, plausibility_hints, value_hint


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
        ("P-1", {"systemSizeKw": Reading(Decimal("12000")), "contractAmount": Reading(Decimal("25000"))}),
        ("P-2", {"systemSizeKw": Reading(Decimal("18800"), 1), "contractAmount": Reading(None)}),
        ("P-3", {"systemSizeKw": Reading(Decimal("6.4"))}),
    ]

    hints = plausibility_hints(results=results)

    assert hints == [
        "systemSizeKw 12,000 kW is outside 0.5 kW to 10,000 kW: it looks like watts; scale 0.001 would give 12 kW. "
        "(push P-1; 2 of 3 push(es) like it)"
    ]
    assert plausibility_hints(results=[]) == []


SIZE_SOURCE = "properties.system_size_w || System_Size_kW__c || Size_W || Size_kW"


def size_reading(value: str, index: int, scales: tuple = (0.001,) * 4) -> Reading:
    return Reading(
        value=Decimal(value),
        scale=scales[index],
        alternatives=("properties.system_size_w", "System_Size_kW__c", "Size_W", "Size_kW"),
        index=index,
        scales=scales,
    )


def test_a_hint_on_a_mixed_unit_source_names_the_alternative_and_gives_a_scale_for_each():
    results = [
        ("ZC-78", {"systemSizeKw": size_reading("0.0124", 3)}),
        ("ZC-77", {"systemSizeKw": size_reading("9.6", 2)}),
        ("ZC-76", {"systemSizeKw": size_reading("0.0072", 1)}),
    ]

    hints = plausibility_hints(results=results)

    assert hints == [
        "systemSizeKw 0.0124 kW is outside 0.5 kW to 10,000 kW: it came from Size_kW (12.4), in kW already; give "
        'each || alternative its own scale: {"scale": [0.001, 1, 0.001, 1]}. (push ZC-78; 2 of 3 push(es) like it)'
    ]


def test_a_mixed_unit_hint_keeps_the_scales_that_read_plausible_values():
    scales = (1, 0.001)
    results = [
        ("P-1", {"systemSizeKw": Reading(Decimal("9600"), 1, ("size_w", "size_kw"), 0, scales)}),
        ("P-2", {"systemSizeKw": Reading(Decimal("12000"), 1, ("size_w", "size_kw"), 0, scales)}),
    ]

    assert plausibility_hints(results=results) == [
        "systemSizeKw 12,000 kW is outside 0.5 kW to 10,000 kW: it came from size_w (12,000), which looks like "
        'watts; give each || alternative its own scale: {"scale": [0.001, 0.001]}. (push P-2; 1 of 2 push(es) like '
        "it)"
    ]


def test_readings_say_which_alternative_each_value_came_from_and_its_scale():
    rules = {
        "systemSizeKw": FieldRule("systemSizeKw", "size_w || size_kw", "decimal", {"scale": [0.001, 1]}),
        "contractAmount": FieldRule("contractAmount", "amount", "decimal", {"scale": 0.01}),
    }
    values = {"system_size_kw": Decimal("9.6"), "contract_amount": Decimal("185"), "battery_capacity_kwh": None}

    readings = field_readings({"size_kw": "9.6", "amount": 18500}, values, rules)

    assert readings == {
        "systemSizeKw": Reading(Decimal("9.6"), 1, ("size_w", "size_kw"), 1, (0.001, 1)),
        "contractAmount": Reading(Decimal("185"), 0.01, (), 0, (0.01,)),
    }
