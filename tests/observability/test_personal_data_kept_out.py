"""No personal data in the request log or the metrics (issue #36, docs/data-map.md): a known marker value pushed
through the single push, a batch and failing pushes of every kind is found in neither. The database keeps it (the
project, its raw pushes: the data map says how long); the logs and /metrics never see it."""

import logging
from http import HTTPStatus

import pytest
from django.test import Client

from mappings.services import mapping_document_import
from tests.conftest import SANDBOX, url

pytestmark = pytest.mark.django_db

MARKER = "zq-marker-8d1f"  # lower case: matched case-insensitively below
PERSON = {
    "name": f"Ada {MARKER} Lovelace",
    "email": f"{MARKER}@example.com",
    "phone": f"+1 555 {MARKER}",
    "street": f"1 {MARKER} Road",
    "size_w": f"{MARKER} watts",  # refused by the mapping: an issue carries the value
}
DOCUMENT = {
    "fields": {
        "name": {"source": "name", "type": "string"},
        "systemSizeKw": {"source": "size_w", "type": "decimal", "scale": 0.001},
    }
}


def post(client, name: str, body: str):
    return client.post(url(SANDBOX, name), body, content_type="application/json")


def test_a_marker_pushed_every_way_reaches_neither_the_request_log_nor_the_metrics(
    sandbox_client, partner, caplog, capsys
):
    mapping_document_import(partner=partner, document=DOCUMENT)
    caplog.set_level(logging.INFO)
    data = str(PERSON).replace("'", '"')

    answers = [
        post(sandbox_client, "push", f'{{"id": "P-1", "data": {data}}}').status_code,
        post(sandbox_client, "push", f'{{"id": "P-1", "data": {{"email": "{MARKER}2@example.com"}}}}').status_code,
        post(
            sandbox_client,
            "push-batch",
            f'{{"records": [{{"id": "B-1", "data": {data}}}, {{"data": {data}}}, '
            f'{{"id": "B-3", "data": "{MARKER}"}}]}}',
        ).status_code,
        post(sandbox_client, "push", f'{{"id": "P-2", "data": {{"name": "{MARKER}"').status_code,  # cut short
        post(sandbox_client, "push", f'{{"id": "P-3", "data": "{MARKER}"}}').status_code,  # data not an object
        post(sandbox_client, "push", f'{{"data": {data}}}').status_code,  # no id
        post(sandbox_client, "push", f'{{"id": "P-4", "data": {data}, "{MARKER}": 1}}').status_code,
        post(sandbox_client, "push-batch", f'{{"records": "{MARKER}"}}').status_code,
    ]
    metrics = Client().get("/metrics", REMOTE_ADDR="127.0.0.1")
    captured = capsys.readouterr()

    assert answers[:2] == [HTTPStatus.CREATED, HTTPStatus.OK]
    assert all(status < 500 for status in answers), answers
    assert any(status >= 400 for status in answers[2:]), answers
    assert metrics.status_code == HTTPStatus.OK
    assert caplog.records  # the request log did log these requests
    logged = [record.getMessage() for record in caplog.records] + [str(vars(record)) for record in caplog.records]
    assert [line for line in logged if MARKER in line.lower()] == []
    assert MARKER not in (captured.out + captured.err).lower()
    assert MARKER not in metrics.content.decode().lower()
