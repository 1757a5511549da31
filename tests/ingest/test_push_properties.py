"""Generated push bodies, written as raw JSON text with what careless and hostile CRMs send, through the API.

Whatever the body: never a 5xx, every request answered within a (generous) bound, every 2xx push stored (its
raw push holds the text verbatim, its project exists) and every 4xx stores nothing.
"""

import json
import time
from http import HTTPStatus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.models import RawPush
from mappings.services import mapping_document_import
from projects.models import Project
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

PUSH = url(SANDBOX, "push")
SECONDS_PER_REQUEST = 5  # generous: a request takes milliseconds; a stalled worker takes seconds

LITERALS = [
    "null", "true", "false", "NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1E999999999", "1e-400", "-0",
    "0.0", "5e-324", "1.7976931348623157e308", "1.8e308", "0.1", "1e2000000",
]  # fmt: skip
ESCAPED_STRINGS = [
    '"\\ud800"', '"\\udfff"', '"x\\udbff"', '"\\ude00\\ud83d"', '"\\ud83d\\ude00"', '"\\u0000"', '"a\\u0000b"',
    '"\\uffff"', '"\\ufffe"', '"\\u2028\\u2029"', '"\\u001f"', '"1e2000000"', '"NaN"', '""', '"   "',
]  # fmt: skip


def json_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


strings = st.one_of(st.text(max_size=40).map(json_string), st.sampled_from(ESCAPED_STRINGS))
numbers = st.one_of(
    st.integers().map(str),
    st.integers(min_value=4290, max_value=4310).map(lambda digits: "9" * digits),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(-99, 99), st.integers(-500, 500)),
)
scalars = st.one_of(st.sampled_from(LITERALS), numbers, strings)
keys = st.one_of(st.sampled_from(['"name"', '"size"', '"count"', '"signed"', '"n"']), strings)


def containers(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    arrays = st.lists(children, max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
    objects = st.lists(st.tuples(keys, children), max_size=4).map(
        lambda pairs: "{" + ", ".join(f"{key}: {value}" for key, value in pairs) + "}"
    )
    return st.one_of(arrays, objects)


values = st.recursive(scalars, containers, max_leaves=12)


@st.composite
def deep_objects(draw) -> str:
    """An object nested to around the depth limit (32 for the whole body), with a value at the bottom."""
    depth = draw(st.integers(min_value=25, max_value=40))
    return '{"n": ' * depth + draw(scalars) + "}" * depth


data = st.one_of(
    st.lists(st.tuples(keys, values), max_size=6).map(
        lambda pairs: "{" + ", ".join(f"{key}: {value}" for key, value in pairs) + "}"
    ),
    deep_objects(),
    values,  # not an object, mostly: a 400
)
ids = st.one_of(
    st.text(min_size=1, max_size=20).map(json_string),
    st.integers(min_value=-(10**20), max_value=10**20).map(str),
    st.sampled_from([*ESCAPED_STRINGS, "null", "true", "1.5", "1e400", "NaN", '"' + "x" * 256 + '"', "{}", "[]"]),
)


@st.composite
def bodies(draw) -> str:
    parts = [f'"id": {draw(ids)}', f'"data": {draw(data)}']
    if draw(st.booleans()):
        parts.append(f'"extra": {draw(values)}')
    return "{" + ", ".join(draw(st.permutations(parts))) + "}"


@pytest.fixture
def mapped(partner):
    """Mappings of every kind of canonical field, so normalization runs on what the bodies hold."""
    mapping_document_import(
        partner=partner,
        document={
            "fields": {
                "name": {"source": "name", "type": "string"},
                "systemSizeKw": {"source": "size", "type": "decimal", "scale": 0.001},
                "moduleCount": {"source": "count", "type": "integer"},
                "contractSignedDate": {"source": "signed", "type": "date"},
                "notes": {"source": "n", "type": "string"},
            }
        },
    )


@settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies())
def test_any_body_is_stored_whole_or_refused_whole(sandbox_client, mapped, body):
    counts = (RawPush.objects.count(), Project.objects.count())

    started = time.monotonic()
    response = sandbox_client.post(PUSH, body.encode("utf-8", "surrogatepass"), content_type="application/json")
    elapsed = time.monotonic() - started

    assert response.status_code < HTTPStatus.INTERNAL_SERVER_ERROR, (body, response.content)
    assert elapsed < SECONDS_PER_REQUEST, (body, elapsed)
    if response.status_code < HTTPStatus.MULTIPLE_CHOICES:
        raw_push = RawPush.objects.latest("id")
        assert RawPush.objects.count() == counts[0] + 1
        assert raw_push.body == body
        assert str(raw_push.project_id) == response.json()["id"]
        assert Project.objects.filter(pk=raw_push.project_id).exists()
    else:
        assert response["Content-Type"] == "application/problem+json", (body, response.content)
        assert (RawPush.objects.count(), Project.objects.count()) == counts, body
