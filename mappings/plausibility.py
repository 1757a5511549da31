"""Hints for the obvious unit mistakes in a preview: a system of 9,600 kW that was 9,600 W, a scale applied twice.

Plain functions over normalized values. A value outside its field's plausible range is divided by the rule's scale
back to the source's number; the first other scale that makes it plausible is the likely fix.
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from mappings.evaluation import PushPool
from mappings.normalization import FieldRule, source_value
from mappings.source_alternatives import alternative_index, alternative_texts
from projects.canonical import CANONICAL_FIELDS_BY_NAME, format_decimal


@dataclass(frozen=True)
class PlausibleRange:
    unit: str
    low: Decimal | None
    high: Decimal | None
    scales: tuple[tuple[Decimal, str], ...]  # (scale, what the source would then be in), most likely first


PLAUSIBLE_RANGES = {
    "systemSizeKw": PlausibleRange(
        "kW", Decimal("0.5"), Decimal(10_000), ((Decimal("0.001"), "watts"), (Decimal(1000), "megawatts"))
    ),
    "batteryCapacityKwh": PlausibleRange("kWh", None, Decimal(1000), ((Decimal("0.001"), "watt-hours"),)),
    "contractAmount": PlausibleRange("", Decimal(100), None, ((Decimal(1000), "thousands"),)),
}


@dataclass(frozen=True)
class Reading:
    """A normalized value and how it was read: the scale, and for a source with `||` alternatives, which one gave
    the value and each alternative's scale."""

    value: Decimal | None
    scale: object = None
    alternatives: tuple[str, ...] = ()  # as written, when the source has more than one
    index: int = 0
    scales: tuple = ()


def field_readings(
    data: Any, values: dict, rules: dict[str, FieldRule], pool: PushPool | None = None
) -> dict[str, Reading]:
    """The values of `rules`' fields that have a plausible range, over one push's `data` (`values`: the normalized
    values by column), each with how it was read: evaluated again on `pool`, one for the push's readings."""
    pool = pool or PushPool(data)
    readings = {}
    for field in PLAUSIBLE_RANGES:
        rule = rules.get(field)
        if rule is None:
            continue
        value = values[CANONICAL_FIELDS_BY_NAME[field].attname]
        scales = rule.options.get("scale")
        try:
            scale = source_value(rule, data, pool)[1].get("scale")
            alternatives = alternative_texts(rule.source)
            index = alternative_index(rule.source, data, pool)
        except Exception:  # the field's issue says why the expression failed; its value is None
            readings[field] = Reading(value)
            continue
        if not isinstance(scales, list):
            scales = [scales] * len(alternatives)
        many = len(alternatives) > 1
        readings[field] = Reading(value, scale, alternatives if many else (), index, tuple(scales))
    return readings


def _plausible(value: Decimal, bounds: PlausibleRange) -> bool:
    return (bounds.low is None or value >= bounds.low) and (bounds.high is None or value <= bounds.high)


def _number(value: Decimal) -> str:
    return format(value.normalize(), ",f") if value else "0"


def _amount(value: Decimal, unit: str) -> str:
    return f"{_number(value)} {unit}".strip()


def _range(bounds: PlausibleRange) -> str:
    if bounds.low is None:
        return f"over {_amount(bounds.high, bounds.unit)}"
    if bounds.high is None:
        return f"under {_amount(bounds.low, bounds.unit)}"
    return f"outside {_amount(bounds.low, bounds.unit)} to {_amount(bounds.high, bounds.unit)}"


def _scale(scale: object) -> Decimal:
    usable = isinstance(scale, int | float) and not isinstance(scale, bool) and scale
    return Decimal(str(scale)) if usable else Decimal(1)


@dataclass(frozen=True)
class _Diagnosis:
    source: Decimal  # the value before the scale
    scale: Decimal  # the one it was read with
    fix: Decimal | None  # the scale that makes it plausible: 1 when the source is in the unit already
    unit: str  # what the source looks like it is in, when `fix` is another scale


def _diagnosis(bounds: PlausibleRange, value: Decimal, scale: object) -> _Diagnosis:
    scale = _scale(scale)
    source = value / scale
    if scale != 1 and _plausible(source, bounds):
        return _Diagnosis(source, scale, Decimal(1), bounds.unit)
    for candidate, source_unit in bounds.scales:
        if candidate != scale and _plausible(source * candidate, bounds):
            return _Diagnosis(source, scale, candidate, source_unit)
    return _Diagnosis(source, scale, None, "")


def _implausible(field: str, value: Any) -> PlausibleRange | None:
    bounds = PLAUSIBLE_RANGES.get(field)
    if bounds is None or not isinstance(value, Decimal) or _plausible(value, bounds):
        return None
    return bounds


def value_hint(*, field: str, value: Decimal | None, scale: object = None) -> str | None:
    """What looks wrong with one field's normalized value and the likely fix, or None when it is plausible.

    `scale`: the one the value was read with (with a scale per `||` alternative, the alternative's)."""
    bounds = _implausible(field, value)
    if bounds is None:
        return None
    found = _diagnosis(bounds, value, scale)
    wrong = f"{field} {_amount(value, bounds.unit)} is {_range(bounds)}"
    if found.fix == 1:
        return (
            f"{wrong}: the source ({_number(found.source)}) is in {bounds.unit or 'the currency'} already; remove the "
            f"scale {format_decimal(found.scale)} to get {_amount(found.source, bounds.unit)}."
        )
    if found.fix is not None:
        instead = "" if found.scale == 1 else f" instead of {format_decimal(found.scale)}"
        return (
            f"{wrong}: it looks like {found.unit}; scale {format_decimal(found.fix)}{instead} would give "
            f"{_amount(found.source * found.fix, bounds.unit)}."
        )
    return f"{wrong}: check the unit the source is in."


def _scale_list(scales: Iterable) -> str:
    return json.dumps({"scale": [float(s) if s % 1 else int(s) for s in scales]})


def _alternative_hint(field: str, reading: Reading, fixes: dict[int, Decimal]) -> str:
    """A hint for a source with `||` alternatives: removing or changing its one scale would break the others, so
    it names the alternative the value came from and gives a scale for each, fixed where a push showed how."""
    bounds = PLAUSIBLE_RANGES[field]
    found = _diagnosis(bounds, reading.value, reading.scale)
    wrong = f"{field} {_amount(reading.value, bounds.unit)} is {_range(bounds)}"
    came = f"it came from {reading.alternatives[reading.index]} ({_number(found.source)})"
    if found.fix is None:
        return f"{wrong}: {came}: check the unit it is in."
    scales = [fixes.get(index, _scale(scale)) for index, scale in enumerate(reading.scales)]
    unit = f"in {bounds.unit or 'the currency'} already" if found.fix == 1 else f"which looks like {found.unit}"
    return f"{wrong}: {came}, {unit}; give each || alternative its own scale: {_scale_list(scales)}."


def plausibility_hints(*, results: Iterable[tuple[str, dict[str, Reading]]], what: str = "push") -> list[str]:
    """One hint per field, for the first implausible value over the `results` (a push's or project's id, field →
    its reading), with how many of them hold one. `what`: "push" or "project", for the count."""
    first: dict[str, tuple[str, Reading]] = {}
    counts: dict[str, int] = {}
    fixes: dict[str, dict[int, Decimal]] = {}  # per field, the scale that fixes each || alternative seen wrong
    seen = 0
    for label, readings in results:
        seen += 1
        for field in PLAUSIBLE_RANGES:
            reading = readings.get(field, Reading(None))
            bounds = _implausible(field, reading.value)
            if bounds is None:
                continue
            first.setdefault(field, (label, reading))
            counts[field] = counts.get(field, 0) + 1
            fix = _diagnosis(bounds, reading.value, reading.scale).fix
            if reading.alternatives and fix is not None:
                fixes.setdefault(field, {}).setdefault(reading.index, fix)
    hints = []
    for field, (label, reading) in ((field, first[field]) for field in PLAUSIBLE_RANGES if field in first):
        if reading.alternatives:
            hint = _alternative_hint(field, reading, fixes.get(field, {}))
        else:
            hint = value_hint(field=field, value=reading.value, scale=reading.scale)
        plural = "push(es)" if what == "push" else f"{what}(s)"
        hints.append(f"{hint} ({what} {label}; {counts[field]} of {seen} {plural} like it)")
    return hints
