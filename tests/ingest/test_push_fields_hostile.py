"""A hostile partner's push bodies: the read without PushSerializer (ingest/api/serializers.py, push_fields) answers
each as PushSerializer's path answers it, status and body (the generated id, dates and requestId aside)."""

import re
from unittest import mock

import pytest
from django.db import transaction

from projects.models import Project
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

PUSH = url(SANDBOX, "push")

BODIES = [
    (b'{"id": 1, "data": {}}', "application/json"),
    (b'{"id": 0, "data": {}}', "application/json"),
    (b'{"id": -7, "data": {}}', "application/json"),
    (b'{"id": 1.0, "data": {}}', "application/json"),
    (b'{"id": 1e3, "data": {}}', "application/json"),
    (b'{"id": true, "data": {}}', "application/json"),
    (b'{"id": false, "data": {}}', "application/json"),
    (b'{"id": null, "data": {}}', "application/json"),
    (b'{"id": ' + b"9" * 300 + b', "data": {}}', "application/json"),
    (b'{"id": ' + b"9" * 5000 + b', "data": {}}', "application/json"),
    (b'{"id": "", "data": {}}', "application/json"),
    (b'{"id": " \\t\\n", "data": {}}', "application/json"),
    (b'{"id": "\\u2003", "data": {}}', "application/json"),
    (b'{"id": " A ", "data": {}}', "application/json"),
    (b'{"id": "' + b"x" * 255 + b'", "data": {}}', "application/json"),
    (b'{"id": "' + b"x" * 256 + b'", "data": {}}', "application/json"),
    (b'{"id": "\\u0000", "data": {}}', "application/json"),
    (b'{"id": "A\\u0000B", "data": {"a": "\\u0000"}}', "application/json"),
    (b'{"id": "\\ud800", "data": {}}', "application/json"),
    (b'{"id": "A", "data": {"a": "\\udc00"}}', "application/json"),
    (b'{"id": [], "data": {}}', "application/json"),
    (b'{"id": {}, "data": {}}', "application/json"),
    (b'{"id": "A", "data": []}', "application/json"),
    (b'{"id": "A", "data": null}', "application/json"),
    (b'{"id": "A", "data": "x"}', "application/json"),
    (b'{"id": "A", "data": 1}', "application/json"),
    (b'{"id": "A"}', "application/json"),
    (b'{"data": {}}', "application/json"),
    (b"{}", "application/json"),
    (b"[]", "application/json"),
    (b'[{"id": "A", "data": {}}]', "application/json"),
    (b"null", "application/json"),
    (b'"x"', "application/json"),
    (b"", "application/json"),
    (b'{"id": "A", "data": {}, "extra": 1}', "application/json"),
    (b'{"id": "A", "id": "B", "data": {}}', "application/json"),
    (b'{"id": "A", "data": {}, "data": []}', "application/json"),
    (b'{"id": "A", "data": [], "data": {}}', "application/json"),
    (b'{"id": "A", "data": ' + b'{"a": ' * 60 + b"1" + b"}" * 60 + b"}", "application/json"),
    (b'{"id": "A", "data": ' + b"[" * 5000 + b"]" * 5000 + b"}", "application/json"),
    (b'\xef\xbb\xbf{"id": "A", "data": {}}', "application/json"),
    (b'{"id": "\xff", "data": {}}', "application/json"),
    (b'{"id": "A", "data": {"b": "\xe9"}}', "application/json; charset=latin-1"),
    (b'{"id": "A", "data": {}}', "text/plain"),
    (b'{"id": "A", "data": {}}', "application/x-www-form-urlencoded"),
    (b"id=A&data=x", "application/x-www-form-urlencoded"),
    (b'{"id": "A", "data": {"a": NaN}}', "application/json"),
    (b'{"id": "A", "data": {"a": Infinity}}', "application/json"),
    (b'{"id": "A", "data": {"a": 1e999}}', "application/json"),
    (b'{"id": "A", "data": {}} x', "application/json"),
    (b' {"id": "A", "data": {}} ', "application/json"),
]

VARYING = [
    rb'"id":"[0-9a-f-]{36}"',
    rb'"(submittedDate|updatedDate)":"[^"]+"',
    rb'"requestId":"[0-9a-f]{32}"',
]


def answered(client, body: bytes, content_type: str) -> tuple[int, bytes, int]:
    with transaction.atomic():
        response = client.post(PUSH, body, content_type=content_type)
        stored = Project.objects.count()
        transaction.set_rollback(True)
    content = response.content
    for pattern in VARYING:
        content = re.sub(pattern, b"<varies>", content)
    return response.status_code, content, stored


@pytest.mark.parametrize(("body", "content_type"), BODIES, ids=range(len(BODIES)))
def test_a_hostile_push_body_is_answered_as_push_serializer_answers_it(sandbox_client, settings, body, content_type):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    now = answered(sandbox_client, body, content_type)
    with mock.patch("ingest.api.serializers.push_fields", return_value=None):
        before = answered(sandbox_client, body, content_type)
    assert now == before
