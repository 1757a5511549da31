"""The normalization engine: a partner's field rules applied to a project's source data, in plain functions.

Nothing here fails a push. A value that cannot be read leaves its field null and becomes an issue
`{"field", "value", "reason"}`; the mapping status says whether everything mapped cleanly. That holds for
failures nobody foresaw too: whatever a rule raises on partner data becomes an issue on its field.
"""

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from typing import Any

import pycountry
from jmespath.exceptions import JMESPathTypeError

from core.sized_cache import sized_cache
from core.time import iso_datetime
from mappings.converters import CHOICE_MAX_CHARS, ConversionError, conversion_units, convert, quoted, stripped
from mappings.evaluation import (
    CHARACTER_UNITS,
    PIECE_UNITS,
    VISIT_UNITS,
    BoundedExpression,
    EvaluationBudget,
    EvaluationBudgetExceeded,
    PushPool,
)
from mappings.expressions import SOURCE_MAX_CHARS, parsed_tree
from mappings.issue_values import (
    ISSUE_VALUE_MAX_CHARS,
    ISSUE_VALUE_SHORT_CHARS,
    ISSUE_VALUES_FULL_CHARS,
    has_unstorable_characters,
    issue,
    issue_value_chars,
)
from mappings.source_alternatives import search_alternatives
from projects.canonical import (
    CANONICAL_FIELDS,
    CANONICAL_FIELDS_BY_NAME,
    DECIMAL_MAX_DIGITS,
    DECIMAL_PLACES,
    INTEGER_MAX,
    INTEGER_MIN,
    CanonicalField,
    format_decimal,
)
from projects.choices import MappingStatus, ProjectStatus

_QUANTUM = Decimal(1).scaleb(-DECIMAL_PLACES)
_STATUSES = frozenset(ProjectStatus.values)
_STATUS_LIST = ", ".join(ProjectStatus.values)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FieldRule:
    """One mapping: where a canonical field's value comes from in `data`, and how it is read."""

    field: str
    source: str
    type: str
    options: dict = field(default_factory=dict)
    default: Any = None
    required: bool = False


@dataclass(frozen=True)
class NormalizationResult:
    values: dict[str, Any]  # Project attname → value, for every canonical field
    issues: list[dict]
    mapping_status: str


class KeyPath:
    """A source expression that only names keys (`properties.amount`, the usual mapping): found by looking each key
    up in turn, which is what JMESPath does for it (None as soon as a step is not an object or lacks the key),
    without building an interpreter for every record and field."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys

    def search(self, data: Any, budget: EvaluationBudget | None = None) -> Any:
        """The value at the keys (a visit's price for each key, paid to `budget` when given)."""
        if budget is not None:
            budget.spend(VISIT_UNITS * len(self.keys))
        for key in self.keys:
            if not isinstance(data, dict):
                return None
            data = data.get(key)
        return data


def _key_chain(tree: dict) -> tuple[str, ...] | None:
    """The keys of a parsed expression made only of field names joined by dots; None for anything else.

    Walked without recursion: a version stored before the bounds may chain hundreds of keys.
    """
    keys: list[str] = []
    pending = [tree]
    while pending:  # depth first, left to right
        node = pending.pop()
        if node["type"] == "field":
            keys.append(node["value"])
        elif node["type"] == "subexpression":
            pending.extend(reversed(node["children"]))
        else:
            return None
    return tuple(keys)


@sized_cache(max_entries=2048, max_bytes=16 * 1024 * 1024, key_max_chars=SOURCE_MAX_CHARS)
def compile_source(source: str) -> BoundedExpression | KeyPath:
    """The source expression, compiled (JMESPath's errors raised as jmespath.compile raises them); evaluated within
    a budget (mappings/evaluation.py) unless it only names keys."""
    tree = parsed_tree(source)
    keys = _key_chain(tree)
    return KeyPath(keys) if keys is not None else BoundedExpression(tree)


@functools.cache
def currency_codes() -> frozenset[str]:
    return frozenset(currency.alpha_3 for currency in pycountry.currencies)


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format_decimal(value)
    if isinstance(value, datetime):
        return iso_datetime(value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def _fit_text(canonical: CanonicalField, value: Any) -> str:
    text = _as_text(value)
    if canonical.choices == "status":
        text = stripped(text)
        status = text.lower().replace(" ", "_").replace("-", "_") if len(text) <= CHOICE_MAX_CHARS else ""
        if status not in _STATUSES:
            raise ConversionError(f"not a project status ({_STATUS_LIST})")
        return status
    if canonical.choices == "currency":
        text = stripped(text)
        code = text.upper() if len(text) <= CHOICE_MAX_CHARS else ""
        if code not in currency_codes():
            raise ConversionError("not an ISO 4217 currency code")
        return code
    if canonical.max_length and len(text) > canonical.max_length:
        raise ConversionError(f"longer than {canonical.max_length} characters")
    if has_unstorable_characters(text):
        raise ConversionError("holds a character that cannot be stored (NUL or a lone surrogate)")
    return text


def _fit_integer(value: Any) -> int:
    if isinstance(value, Decimal):
        if value != value.to_integral_value():
            raise ConversionError("not a whole number")
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConversionError("expected a number")
    if not INTEGER_MIN <= value <= INTEGER_MAX:
        raise ConversionError("number out of range")
    return value


def _fit_decimal(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise ConversionError("expected a number")
    try:
        number = Decimal(value).quantize(_QUANTUM, rounding=ROUND_HALF_EVEN)
    except InvalidOperation as error:
        raise ConversionError("number out of range") from error
    if len(number.as_tuple().digits) > DECIMAL_MAX_DIGITS:
        raise ConversionError("number out of range")
    return number


def _fit_date(value: Any) -> date:
    if isinstance(value, datetime):
        return value.astimezone(UTC).date()
    if isinstance(value, date):
        return value
    raise ConversionError("expected a date")


def fit_to_field(canonical: CanonicalField, value: Any) -> Any:
    """A converted value in the form its canonical column holds. Raises ConversionError."""
    if canonical.kind == "text":
        return _fit_text(canonical, value)
    if canonical.kind == "integer":
        return _fit_integer(value)
    if canonical.kind == "decimal":
        return _fit_decimal(value)
    return _fit_date(value)


def source_value(rule: FieldRule, data: dict, pool: PushPool | None = None, *, later: int = 0) -> tuple[Any, dict]:
    """The rule's source value over `data` and the options to read it with: with a scale per `||` alternative,
    the scale of the alternative the value came from. Evaluated within a budget that draws on `pool`, the push's
    (mappings/evaluation.py; its own when not given), keeping what `later` rules are owed: EvaluationBudgetExceeded
    past it."""
    scales, budget = rule.options.get("scale"), EvaluationBudget(data, pool, later=later)
    if not isinstance(scales, list):
        return compile_source(rule.source).search(data, budget), rule.options
    raw, scale = search_alternatives(rule.source, scales, data, budget)
    return raw, {**rule.options, "scale": scale}


def _value_text(value: Any) -> str:
    """A value in a reason: a short one as it reads, a list or an object by its size (never written out whole)."""
    if isinstance(value, list):
        return f"an array of {len(value):,} elements"
    if isinstance(value, dict):
        return f"an object of {len(value):,} members"
    return quoted(str(value)) if not isinstance(value, int) or value.bit_length() < 200 else "a very large number"


def failure_text(error: Exception) -> str:
    """Why an expression failed, without writing out the value it failed on (JMESPath's type error would, whole)."""
    if isinstance(error, JMESPathTypeError):
        return (
            f"In function {error.function_name}(), invalid type for value: {_value_text(error.current_value)}, "
            f'expected one of: {error.expected_types}, received: "{error.actual_type}"'
        )
    return str(error)


def _converted(rule: FieldRule, raw: Any, options: dict, budget: EvaluationBudget) -> Any:
    """The rule's value from `raw` (its default when `raw` is empty), each conversion paid for before it runs."""
    budget.spend(conversion_units(raw, rule.type, options))
    value = convert(raw, rule.type, options)
    if value is None and rule.default is not None:
        budget.spend(conversion_units(rule.default, rule.type, options))
        value = convert(rule.default, rule.type, options)
    return value


def apply_rule(
    rule: FieldRule,
    data: dict,
    pool: PushPool | None = None,
    *,
    later: int = 0,
    value_chars: int = ISSUE_VALUE_MAX_CHARS,
) -> tuple[Any, dict | None]:
    """The canonical value of one rule over `data`, and the issue it raised (or None). `pool`: the evaluation pool
    the push's rules share (mappings/evaluation.py), its own when not given; `later`: how many rules follow it;
    `value_chars`: where the issue's value is cut (mappings/issue_values.py)."""
    canonical = CANONICAL_FIELDS_BY_NAME[rule.field]
    pool = pool or PushPool(data)
    try:
        raw, options = source_value(rule, data, pool, later=later)
    except EvaluationBudgetExceeded as error:  # an expression that costs more than the push: refused, not slow
        return None, issue(rule.field, None, f"the source expression {error}")
    except Exception as error:  # functions over partner data: type errors, avg() of huge integers overflowing...
        return None, issue(rule.field, None, f"the source expression failed: {failure_text(error)}")
    budget = EvaluationBudget(data, pool, later=later)  # converting the value, and the issue it may raise
    try:
        value = _converted(rule, raw, options, budget)
        if value is not None:
            return fit_to_field(canonical, value), None
    except EvaluationBudgetExceeded as error:
        return None, issue(rule.field, None, f"converting the value {error}")
    except ConversionError as error:
        return None, issue(rule.field, raw, str(error), budget.pays_for_pieces, value_chars)
    except Exception as error:  # a converter bug must not lose the push: an issue, and a log entry to fix it
        logger.exception("Converting a value for %s (%s) failed", rule.field, rule.type)
        reason = f"could not be read ({type(error).__name__})"
        return None, issue(rule.field, raw, reason, budget.pays_for_pieces, value_chars)
    if rule.required:
        reason = "required, but the source has no value"
        return None, issue(rule.field, raw, reason, budget.pays_for_pieces, value_chars)
    return None, None


def owed_units(rule: FieldRule, data: Any) -> int | None:
    """What `rule` will spend over `data` if it only names keys: the look-up, converting what it finds (or its
    default) and a short issue's value; None for any other rule (it is owed an equal share of the allowance)."""
    if isinstance(rule.options.get("scale"), list):
        return None
    try:
        compiled = compile_source(rule.source)
    except Exception:  # a version stored before the bounds: evaluated (and refused) as any other expression
        return None
    if not isinstance(compiled, KeyPath):
        return None
    raw = compiled.search(data)
    units = VISIT_UNITS * len(compiled.keys) + conversion_units(raw, rule.type, rule.options)
    if rule.default is not None:
        units += conversion_units(rule.default, rule.type, rule.options)
    return units + PIECE_UNITS + CHARACTER_UNITS * ISSUE_VALUE_SHORT_CHARS


def normalize(data: dict, rules: Sequence[FieldRule], *, size: int | None = None) -> NormalizationResult:
    """Every canonical field's value from `data` under the partner's rules; unmapped fields are None. `size`:
    the data's size in bytes of compact JSON, when the caller measured it (else measured if a rule needs it)."""
    values = {canonical.attname: None for canonical in CANONICAL_FIELDS}
    if not rules:
        return NormalizationResult(values=values, issues=[], mapping_status=MappingStatus.UNMAPPED)
    issues, shown = [], 0
    pool = PushPool(data, size=size, owed=[owed_units(rule, data) for rule in rules])
    for index, rule in enumerate(rules):
        value_chars = ISSUE_VALUE_MAX_CHARS if shown < ISSUE_VALUES_FULL_CHARS else ISSUE_VALUE_SHORT_CHARS
        value, issue = apply_rule(rule, data, pool, later=len(rules) - index - 1, value_chars=value_chars)
        values[CANONICAL_FIELDS_BY_NAME[rule.field].attname] = value
        if issue:
            issues.append(issue)
            shown += issue_value_chars(issue["value"])
    status = MappingStatus.PARTIAL if issues else MappingStatus.MAPPED
    return NormalizationResult(values=values, issues=issues, mapping_status=status)
