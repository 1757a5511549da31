"""Query parameters at the edges of what Python's datetime and int read: a 400 naming the parameter, never a 500."""

from http import HTTPStatus

import pytest

from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

LIST = url(SANDBOX, "project-list")


def assert_invalid(response, field: str, message: str) -> None:
    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == {
        "type": "about:blank",
        "title": "Bad Request",
        "status": 400,
        "detail": f"{field}: {message}",
        "code": "invalid",
        "errors": [{"field": field, "message": message}],
        "requestId": response["X-Request-ID"],
    }


@pytest.mark.parametrize("field", ["updatedDate", "submittedDate"])
@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("gt:0001-01-01T00:00:00+01:00", "'0001-01-01T00:00:00+01:00' is out of range."),
        ("lt:0001-01-01T00:59:59+01:00", "'0001-01-01T00:59:59+01:00' is out of range."),
        ("eq:0001-01-01T00:00:00+14:00", "'0001-01-01T00:00:00+14:00' is out of range."),
        ("lt:9999-12-31T23:59:59-01:00", "'9999-12-31T23:59:59-01:00' is out of range."),
        ("gt:9999-12-31T23:00:00-23:59", "'9999-12-31T23:00:00-23:59' is out of range."),
        ("gt:9999-12-31", "'9999-12-31' is out of range."),
        ("eq:9999-12-31", "'9999-12-31' is out of range."),
        ("btw:2026-01-01_9999-12-31", "'9999-12-31' is out of range."),
        ("btw:0001-01-01T00:00:00+01:00_2026-01-01", "'0001-01-01T00:00:00+01:00' is out of range."),
        ("btw:2026-01-01_9999-12-31T23:59:59-01:00", "'9999-12-31T23:59:59-01:00' is out of range."),
    ],
)
def test_dates_beyond_the_calendar_after_their_offset_are_400(sandbox_client, field, expression, message):
    assert_invalid(sandbox_client.get(LIST, {field: expression}), field, message)


@pytest.mark.parametrize(
    "expression",
    [
        "gt:0001-01-01",
        "lt:0001-01-01",
        "eq:0001-01-01",
        "gt:0001-01-01T00:00:00Z",
        "lt:0001-01-01T01:00:00+01:00",
        "gt:9999-12-31T23:59:59.999999Z",
        "lt:9999-12-31T23:59:59.999999Z",
        "lt:9999-12-30",
        "btw:0001-01-01_9999-12-30",
        "btw:0001-01-01T00:00:00Z_9999-12-31T23:59:59.999999Z",
    ],
)
def test_the_ends_of_the_calendar_are_answered(sandbox_client, expression):
    response = sandbox_client.get(LIST, {"updatedDate": expression})

    assert response.status_code == HTTPStatus.OK
    assert response.json()["items"] == []


DIGITS_ONLY = "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point)."


@pytest.mark.parametrize("field", ["page", "limit"])
@pytest.mark.parametrize(
    "value",
    ["1.0", "1.", "+5", "-5", " 5", "5 ", "٥", "５", "²", "1e1", "0x10", "1_0", "five", "", "9" * 5000],
    ids=["decimal", "trailing-dot", "plus", "minus", "leading-space", "trailing-space", "arabic-digit",
         "fullwidth-digit", "superscript", "exponent", "hex", "underscore", "word", "empty", "5000-digits"],
)  # fmt: skip
def test_page_and_limit_are_plain_digits(sandbox_client, field, value):
    message = {
        "": "A valid integer is required.",
        "-5": "Ensure this value is greater than or equal to 1.",
        "9" * 5000: "Must be a number of at most 1000 digits.",
    }.get(value, DIGITS_ONLY)

    assert_invalid(sandbox_client.get(LIST, {field: value}), field, message)


@pytest.mark.parametrize(("params", "page", "limit"), [({"page": "02", "limit": "007"}, 2, 7), ({}, 1, 20)])
def test_page_and_limit_in_digits_are_read(sandbox_client, params, page, limit):
    response = sandbox_client.get(LIST, params)

    assert response.status_code == HTTPStatus.OK
    assert (response.json()["page"], response.json()["limit"]) == (page, limit)


def test_a_page_far_past_the_end_is_empty(sandbox_client):
    response = sandbox_client.get(LIST, {"page": "9" * 30})

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {"items": [], "page": int("9" * 30), "limit": 20, "total": 0, "totalPages": 0}
