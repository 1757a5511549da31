"""Hints for the obvious unit mistakes in a preview: a system of 9,600 kW that was 9,600 W, a scale applied twice.

Plain functions over normalized values. A value outside its field's plausible range is divided by the rule's scale
back to the source's number; the first other scale that makes it plausible is the likely fix.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from projects.canonical import format_decimal


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


def value_hint(*, field: str, value: Decimal | None, scale: object = None) -> str | None:
    """What looks wrong with one field's normalized value and the likely fix, or None when it is plausible.

    `scale`: the one the value was read with (with a scale per `||` alternative, the alternative's)."""
    bounds = PLAUSIBLE_RANGES.get(field)
    if bounds is None or not isinstance(value, Decimal) or _plausible(value, bounds):
        return None
    scale = _scale(scale)
    source = value / scale
    shown = _amount(value, bounds.unit)
    if scale != 1 and _plausible(source, bounds):
        return (
            f"{field} {shown} is {_range(bounds)}: the source ({_number(source)}) is in "
            f"{bounds.unit or 'the currency'} already; remove the scale {format_decimal(scale)} "
            f"to get {_amount(source, bounds.unit)}."
        )
    for candidate, source_unit in bounds.scales:
        fixed = source * candidate
        if candidate != scale and _plausible(fixed, bounds):
            instead = "" if scale == 1 else f" instead of {format_decimal(scale)}"
            return (
                f"{field} {shown} is {_range(bounds)}: it looks like {source_unit}; "
                f"scale {format_decimal(candidate)}{instead} would give {_amount(fixed, bounds.unit)}."
            )
    return f"{field} {shown} is {_range(bounds)}: check the unit the source is in."


def plausibility_hints(*, results: Iterable[tuple[str, dict[str, tuple[Decimal | None, object]]]]) -> list[str]:
    """One hint per field, for the first implausible value over the pushes' `results` (push id, field → (value,
    the scale it was read with)), with how many pushes hold one."""
    first: dict[str, tuple[str, str]] = {}
    counts: dict[str, int] = {}
    pushes = 0
    for push, values in results:
        pushes += 1
        for field in PLAUSIBLE_RANGES:
            value, scale = values.get(field, (None, None))
            hint = value_hint(field=field, value=value, scale=scale)
            if hint:
                first.setdefault(field, (push, hint))
                counts[field] = counts.get(field, 0) + 1
    return [
        f"{hint} (push {push}; {counts[field]} of {pushes} push(es) like it)"
        for field in PLAUSIBLE_RANGES
        if field in first
        for push, hint in [first[field]]
    ]
