from datetime import UTC, datetime

import pytest

from projects.date_filters import DateFilterError, InstantRange, parse_date_filter


def at(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        pytest.param("gt:2026-03-10", InstantRange(lower=at(2026, 3, 11), lower_inclusive=True), id="gt-day"),
        pytest.param("lt:2026-03-10", InstantRange(upper=at(2026, 3, 10), upper_inclusive=False), id="lt-day"),
        pytest.param("eq:2026-03-10", InstantRange(at(2026, 3, 10), True, at(2026, 3, 11), False), id="eq-day"),
        pytest.param(
            "btw:2026-03-01_2026-03-10", InstantRange(at(2026, 3, 1), True, at(2026, 3, 11), False), id="btw-days"
        ),
        pytest.param(
            "btw:2026-03-10_2026-03-10", InstantRange(at(2026, 3, 10), True, at(2026, 3, 11), False), id="btw-same-day"
        ),
        pytest.param(
            "gt:2026-03-10T12:30:00", InstantRange(lower=at(2026, 3, 10, 12, 30), lower_inclusive=False), id="gt-dt"
        ),
        pytest.param(
            "lt:2026-03-10T12:30:00Z", InstantRange(upper=at(2026, 3, 10, 12, 30), upper_inclusive=False), id="lt-dt-z"
        ),
        pytest.param(
            "eq:2026-03-10T12:30:00.250+02:00",
            InstantRange(at(2026, 3, 10, 10, 30, 0, 250000), True, at(2026, 3, 10, 10, 30, 0, 250000), True),
            id="eq-dt-offset",
        ),
        pytest.param(
            "gt:2026-03-10T12:30:00 02:00",
            InstantRange(lower=at(2026, 3, 10, 10, 30), lower_inclusive=False),
            id="offset-plus-sent-as-space",
        ),
        pytest.param(
            "btw:2026-03-10T08:00:00_2026-03-10T09:00:00",
            InstantRange(at(2026, 3, 10, 8), True, at(2026, 3, 10, 9), True),
            id="btw-dts",
        ),
        pytest.param(
            "btw:2026-03-10T08:00:00_2026-03-10",
            InstantRange(at(2026, 3, 10, 8), True, at(2026, 3, 11), False),
            id="btw-dt-and-day",
        ),
        pytest.param("GT:2026-03-10", InstantRange(lower=at(2026, 3, 11), lower_inclusive=True), id="operator-case"),
        pytest.param(
            "eq:2026-03-10 12:30",
            InstantRange(at(2026, 3, 10, 12, 30), True, at(2026, 3, 10, 12, 30), True),
            id="space-for-T",
        ),
    ],
)
def test_expressions_select_the_documented_instants(expression, expected):
    assert parse_date_filter(expression) == expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("2026-03-10", "Use one of gt:, lt:, eq:, btw: followed by a date."),
        ("ge:2026-03-10", "Use one of gt:, lt:, eq:, btw: followed by a date."),
        ("gt:", "'gt:' needs a date after the colon."),
        ("gt:2026-13-01", "'2026-13-01' is not a valid date."),
        ("gt:2026-02-30", "'2026-02-30' is not a valid date."),
        ("gt:10/03/2026", "'10/03/2026' is not a date (YYYY-MM-DD) or an ISO 8601 date-time."),
        ("gt:yesterday", "'yesterday' is not a date (YYYY-MM-DD) or an ISO 8601 date-time."),
        ("gt:2026-03-10T25:00", "'2026-03-10T25:00' is not a date (YYYY-MM-DD) or an ISO 8601 date-time."),
        ("eq:9999-12-31", "'9999-12-31' is out of range."),
        ("btw:2026-03-10", "'btw:' takes two dates joined by an underscore: btw:2026-01-01_2026-01-31."),
        ("btw:2026-03-10_", "'btw:' takes two dates joined by an underscore: btw:2026-01-01_2026-01-31."),
        ("btw:2026-03-11_2026-03-10", "The first date of 'btw:' is after the second."),
        ("btw:2026-03-10T10:00_2026-03-10T09:59", "The first date of 'btw:' is after the second."),
    ],
)
def test_bad_expressions_say_what_is_wrong(expression, message):
    with pytest.raises(DateFilterError) as error:
        parse_date_filter(expression)

    assert str(error.value) == message
