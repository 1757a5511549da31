"""Bodies Python's json reads but the database cannot store, and charsets and media types that are not JSON text.

Each is a 4xx problem naming what is wrong, and nothing is stored (before, PostgreSQL refused them mid-push: a 500
and a lost push).
"""

from decimal import Decimal
from http import HTTPStatus

import pytest

from ingest.models import RawPush
from projects.models import Project
from tests.conftest import SANDBOX, problem, url

pytestmark = pytest.mark.django_db

PUSH = url(SANDBOX, "push")


def push(client, text: str | bytes, content_type: str = "application/json"):
    return client.post(PUSH, text, content_type=content_type)


def assert_refused(response, status: int, detail: str, code: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == problem(status, detail, code)
    assert (RawPush.objects.count(), Project.objects.count()) == (0, 0)


def not_standard(literal: str) -> str:
    return f"The JSON contains {literal}, which is not standard JSON and cannot be stored; send null or a string."


TOO_LARGE = "The JSON contains a number too large to store (it overflows to infinity, like 1e400); send it as a string."


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('{"id": "1", "data": {"a": NaN}}', not_standard("NaN")),
        ('{"id": "1", "data": {"a": Infinity}}', not_standard("Infinity")),
        ('{"id": "1", "data": {"a": -Infinity}}', not_standard("-Infinity")),
        ('{"id": "1", "data": {"deep": [{"x": [1, NaN]}]}}', not_standard("NaN")),
        ('{"id": NaN, "data": {}}', not_standard("NaN")),
        ('{"id": "1", "data": {}, "extra": Infinity}', not_standard("Infinity")),
        ('{"id": "1", "data": {"a": 1e400}}', TOO_LARGE),
        ('{"id": "1", "data": {"a": -1e400}}', TOO_LARGE),
        ('{"id": "1", "data": {"a": [1.8e308]}}', TOO_LARGE),
        ('{"id": "1", "data": {"a": 1E99999999999999999999}}', TOO_LARGE),
        ('{"id": 1e400, "data": {}}', TOO_LARGE),
    ],
    ids=["nan", "infinity", "minus-infinity", "nan-nested", "nan-id", "infinity-ignored-key", "1e400", "-1e400",
         "1.8e308", "huge-exponent", "1e400-id"],
)  # fmt: skip
def test_non_standard_numbers_are_400_and_store_nothing(sandbox_client, text, detail):
    assert_refused(push(sandbox_client, text), HTTPStatus.BAD_REQUEST, detail, "parse_error")


def test_an_integer_over_4300_digits_is_400_naming_its_length(sandbox_client):
    text = '{"id": "1", "data": {"a": %s}}' % ("9" * 4301)

    assert_refused(
        push(sandbox_client, text),
        HTTPStatus.BAD_REQUEST,
        "The JSON contains an integer of 4301 digits; at most 4300 are read. Send it as a string.",
        "parse_error",
    )


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ('{"id": "1", "data": {"a": %s}}' % ("9" * 4300), {"a": int("9" * 4300)}),
        ('{"id": "1", "data": {"a": 1e308, "b": -1.7976931348623157e308}}', {"a": 1e308, "b": -1.7976931348623157e308}),
        ('{"id": "1", "data": {"a": 1e-400, "b": 5e-324, "c": -0.0}}', {"a": 0.0, "b": 5e-324, "c": 0.0}),
        ('{"id": "1", "data": {"a": "\\ud83d\\ude00", "\\uffff": "\\ufffe"}}', {"a": "😀", "\uffff": "\ufffe"}),
    ],
    ids=["4300-digits", "largest-floats", "tiny-floats", "surrogate-pair-and-noncharacters"],
)
def test_numbers_and_characters_at_the_edges_are_stored(sandbox_client, text, stored):
    response = push(sandbox_client, text)

    assert response.status_code == HTTPStatus.CREATED
    assert RawPush.objects.get().body == text
    # PostgreSQL keeps jsonb numbers as exact decimals: 1e308 comes back as the integer 10**308, the same number.
    assert same_numbers(Project.objects.get().source_data) == same_numbers(stored)


def same_numbers(data: dict) -> dict:
    return {key: Decimal(str(value)) if isinstance(value, int | float) else value for key, value in data.items()}


def lone_surrogate(escape: str) -> str:
    return f"The JSON contains a lone surrogate ({escape}), which is not a character and cannot be stored."


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ('{"id": "1", "data": {"a": "\\ud800"}}', lone_surrogate("\\ud800")),
        ('{"id": "1", "data": {"a": "x\\udfff"}}', lone_surrogate("\\udfff")),
        ('{"id": "1", "data": {"\\ud800": 1}}', lone_surrogate("\\ud800")),
        ('{"id": "\\udc00", "data": {}}', lone_surrogate("\\udc00")),
        ('{"id": "1", "data": {"a": ["\\ude00\\ud83d"]}}', lone_surrogate("\\ude00")),
        ('{"id": "1", "data": {"nested": {"\\udbff": {"k": 1}}}}', lone_surrogate("\\udbff")),
    ],
    ids=["value-high", "value-low", "key", "id", "reversed-pair", "nested-key"],
)
def test_lone_surrogates_are_400_and_store_nothing(sandbox_client, text, detail):
    assert_refused(push(sandbox_client, text), HTTPStatus.BAD_REQUEST, detail, "parse_error")


@pytest.mark.parametrize("charset", ["base64", "rot13", "zlib", "hex", "bz2", "uu", "quopri", "rot_13"])
def test_a_charset_that_is_not_a_text_encoding_is_415(sandbox_client, charset):
    response = push(sandbox_client, '{"id": "1", "data": {}}', f"application/json; charset={charset}")

    assert_refused(
        response,
        HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        f"The charset '{charset}' is not a character encoding; send UTF-8.",
        "unsupported_media_type",
    )


@pytest.mark.parametrize("charset", ["idna", "punycode", "undefined", "unicode_escape", "raw_unicode_escape"])
def test_a_text_codec_that_is_not_a_character_set_is_415(sandbox_client, charset):
    response = push(sandbox_client, '{"id": "1", "data": {}}', f"application/json; charset={charset}")

    assert_refused(
        response,
        HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        f"The charset '{charset}' is not a character encoding; send UTF-8.",
        "unsupported_media_type",
    )


@pytest.mark.parametrize("charset", ["klingon", "", "utf-9"])
def test_an_unknown_charset_is_415(sandbox_client, charset):
    response = push(sandbox_client, '{"id": "1", "data": {}}', f"application/json; charset={charset}")

    assert_refused(
        response,
        HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        f"Unknown charset '{charset}'; send UTF-8.",
        "unsupported_media_type",
    )


@pytest.mark.parametrize(
    ("charset", "encoded"),
    [
        ("utf-8", '{"id": "1", "data": {"a": "ü"}}'.encode()),
        ("UTF8", '{"id": "1", "data": {"a": "ü"}}'.encode()),
        ('"utf-8"', '{"id": "1", "data": {"a": "ü"}}'.encode()),
        ("iso-8859-1", '{"id": "1", "data": {"a": "ü"}}'.encode("latin-1")),
        ("utf-16", '{"id": "1", "data": {"a": "ü"}}'.encode("utf-16")),
        ("windows-1252", '{"id": "1", "data": {"a": "ü"}}'.encode("cp1252")),
    ],
)
def test_text_charsets_are_read(sandbox_client, charset, encoded):
    response = push(sandbox_client, encoded, f"application/json; charset={charset}")

    assert response.status_code == HTTPStatus.CREATED
    assert RawPush.objects.get().body == '{"id": "1", "data": {"a": "ü"}}'
    assert Project.objects.get().source_data == {"a": "ü"}


def test_a_lone_surrogate_decoded_from_utf7_is_400(sandbox_client):
    text = '{"id": "1", "data": {"a": "+2AA-"}}'

    response = push(sandbox_client, text.encode(), "application/json; charset=utf-7")

    assert_refused(response, HTTPStatus.BAD_REQUEST, lone_surrogate("\\ud800"), "parse_error")


@pytest.mark.parametrize("content_type", ["*/*", "application/*", "*/json", "*/*; charset=utf-8"])
def test_a_wildcard_media_type_is_415_not_read_as_json(sandbox_client, content_type):
    response = push(sandbox_client, '{"id": "1", "data": {}}', content_type)

    assert_refused(
        response,
        HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
        f'Unsupported media type "{content_type}" in request.',
        "unsupported_media_type",
    )


@pytest.mark.parametrize(
    ("text", "content_type", "status", "code"),
    [
        ('{"email": NaN, "password": "x"}', "application/json", HTTPStatus.BAD_REQUEST, "parse_error"),
        ('{"email": "a@b.c", "password": 1e400}', "application/json", HTTPStatus.BAD_REQUEST, "parse_error"),
        ('{"email": "\\ud800@b.c", "password": "x"}', "application/json", HTTPStatus.BAD_REQUEST, "parse_error"),
        ('{"email": "a\\u0000@b.c", "password": "x"}', "application/json", HTTPStatus.BAD_REQUEST, "parse_error"),
        ('{"email": "a@b.c", "password": "x"}', "application/json; charset=base64", 415, "unsupported_media_type"),
        ('{"email": "a@b.c", "password": "x"}', "application/json; charset=rot13", 415, "unsupported_media_type"),
        ('{"email": "a@b.c", "password": "x"}', "*/*", 415, "unsupported_media_type"),
    ],
    ids=["nan", "1e400", "lone-surrogate", "nul", "base64", "rot13", "wildcard"],
)
def test_login_bodies_are_checked_the_same_way(db, text, content_type, status, code):
    from rest_framework.test import APIClient

    response = APIClient().post(url(SANDBOX, "login"), text, content_type=content_type)

    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code


@pytest.mark.parametrize(
    ("text", "content_type", "status", "code"),
    [
        ('{"records": [{"id": "1", "data": {}}]}', "application/json; charset=base64", 415, "unsupported_media_type"),
        ('{"records": [{"id": "1", "data": {}}]}', "application/json; charset=klingon", 415, "unsupported_media_type"),
        ('{"records": [{"id": "1", "data": {}}]}', "*/*", 415, "unsupported_media_type"),
        ('{"records": [{"id": "1", "data": {"a": NaN}}]}', "application/json", 400, "parse_error"),
        ('{"records": [{"id": "1", "data": {"a": "+2AA-"}}], "x": NaN}', "application/json; charset=utf-7", 400,
         "parse_error"),
    ],
    ids=["base64", "unknown-charset", "wildcard", "nan", "utf7-surrogate-and-nan"],
)  # fmt: skip
def test_batch_bodies_are_read_the_same_way(sandbox_client, text, content_type, status, code):
    response = sandbox_client.post(url(SANDBOX, "push-batch"), text.encode(), content_type=content_type)

    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert (RawPush.objects.count(), Project.objects.count()) == (0, 0)
