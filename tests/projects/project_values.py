"""Hypothesis strategies for projects with arbitrary stored values: every column the API writes, within what the
database and a push can hold (no NUL, no lone surrogates, finite numbers), hostile text included."""

from datetime import UTC

from hypothesis import strategies as st

from projects.canonical import CANONICAL_FIELDS, DECIMAL_MAX_DIGITS, DECIMAL_PLACES, INTEGER_MAX, INTEGER_MIN
from projects.choices import MappingStatus, PlatformStage
from projects.platform_fields import PLATFORM_MILESTONES

_STORABLE = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
# What JSON escapes and what DRF escapes after it, beside any other character.
_SPECIAL = st.sampled_from(['"', "\\", "\n", "\t", "\x01", "\x1f", "\x7f", "\u2028", "\u2029", "é", "😀", "/", ". "])
texts = st.lists(st.one_of(_STORABLE, _SPECIAL), max_size=12).map("".join)
instants = st.datetimes(timezones=st.just(UTC))
numbers = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1e-07, 1.5e-05, 1e16, 1.5e16, 123.456, 5e-324, 1.7976931348623157e308]),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), numbers, texts),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)),
    max_leaves=12,
)
_BOUND = 10 ** (DECIMAL_MAX_DIGITS - DECIMAL_PLACES) - 1
_KINDS = {
    "text": texts,
    "integer": st.integers(min_value=INTEGER_MIN, max_value=INTEGER_MAX),
    "decimal": st.decimals(min_value=-_BOUND, max_value=_BOUND, places=DECIMAL_PLACES, allow_nan=False),
    "date": st.dates(),
}
issues = st.lists(st.fixed_dictionaries({"field": texts, "value": json_values, "reason": texts}), max_size=3)


def _not_none(value: object) -> bool:
    return value is not None


def _text_of_at_most(max_length: int | None) -> st.SearchStrategy[str]:
    return texts if max_length is None else texts.map(lambda text: text[:max_length])


@st.composite
def project_fields(draw: st.DrawFn) -> dict:
    """Keyword arguments of a Project (partner, environment and external id aside)."""
    submitted = draw(instants)
    fields = {
        "submitted_date": submitted,
        "updated_date": draw(st.one_of(st.just(submitted), instants)),  # equal: a creation, for the feed's type
        "mapping_status": draw(st.sampled_from(MappingStatus.values)),
        "issues": draw(issues),
        # None would be SQL's NULL, which the column refuses (and a push cannot make)
        "source_data": draw(st.one_of(st.dictionaries(texts, json_values, max_size=5), json_values.filter(_not_none))),
        "deleted_date": draw(st.one_of(st.none(), st.none(), instants)),
        "platform_stage": draw(st.one_of(st.none(), st.sampled_from(PlatformStage.values))),
        "platform_note": draw(st.one_of(st.none(), texts)),
        "platform_updated_date": draw(st.one_of(st.none(), instants)),
    }
    for attname in PLATFORM_MILESTONES.values():
        fields[attname] = draw(st.one_of(st.none(), st.dates()))
    for field in CANONICAL_FIELDS:
        kind = _text_of_at_most(field.max_length) if field.kind == "text" else _KINDS[field.kind]
        fields[field.attname] = draw(st.one_of(st.none(), kind))
    return fields
