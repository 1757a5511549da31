"""GET integration/projects/{id} reads its caller and the project in one statement (projects/selectors.py,
project_caller_companion) where no replica is configured. Every answer is the one the look-up on its own gives,
which a service with replicas keeps (the project read on a replica, after the checks): compared here request by
request, the service with a replica configured and none healthy reading the primary in two statements."""

import uuid
from http import HTTPStatus

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from core.db.replicas import routing
from partners.selectors import client_id_get
from partners.services import client_id_issue, credential_create
from partners.tokens import CredentialAccessToken
from tests.conftest import PRODUCTION, SANDBOX, url

pytestmark = pytest.mark.django_db

VARYING = {"X-Request-ID"}  # differs on every request


@pytest.fixture(autouse=True)
def _no_rate_limit(settings):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0  # its RateLimit field counts down from one request to the next


@pytest.fixture
def projects(partner, other_partner, make_project) -> dict[str, str]:
    deleted = make_project(partner, external_id="HS-2", source_data={"a": 2})
    deleted.deleted_date = timezone.now()
    deleted.save()
    return {
        "known": str(make_project(partner, external_id="HS-1", source_data={"a": 1}, system_size_kw="7.2").pk),
        "deleted": str(deleted.pk),
        "production's": str(make_project(partner, environment=PRODUCTION, external_id="HS-3").pk),
        "another partner's": str(make_project(other_partner, external_id="HS-1").pk),
        "unknown": str(uuid.uuid4()),
        "not a uuid": "HS-1",
    }


@pytest.fixture
def answer(settings, monkeypatch):
    """The answer to a GET and the number of statements it took, without or with a replica configured (none healthy:
    the primary serves the look-up, on its own)."""
    monkeypatch.setattr(routing, "replica_choose", lambda: None)

    def answered(client: APIClient, path: str, *, replica_configured: bool, **headers) -> tuple[tuple, int]:
        settings.REPLICA_ALIASES = ["replica_1"] if replica_configured else []
        with CaptureQueriesContext(connection) as statements:
            response = client.get(path, **headers)
        fields = {name: value for name, value in response.headers.items() if name not in VARYING}
        body = response.content.replace(response["X-Request-ID"].encode(), b"<request id>")  # problems carry it
        return (response.status_code, fields, body), len(statements)

    return answered


@pytest.mark.parametrize("name", ["known", "deleted", "production's", "another partner's", "unknown", "not a uuid"])
def test_a_project_is_read_with_its_caller_and_answered_as_on_its_own(name, projects, sandbox_client, answer):
    path = url(SANDBOX, "project-detail", project_id=projects[name])
    sandbox_client.get(path)  # records the ClientID's use, a write made at most once a minute

    alone, statements_alone = answer(sandbox_client, path, replica_configured=True)
    together, statements = answer(sandbox_client, path, replica_configured=False)

    assert together == alone
    assert (statements, statements_alone) == ((1, 1) if name == "not a uuid" else (1, 2))


def test_a_credentials_token_reads_the_project_with_its_caller(projects, user, sandbox_key, answer):
    credential = credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[0]
    client = APIClient()
    token = CredentialAccessToken.for_credential(credential, environment=SANDBOX)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=sandbox_key)
    path = url(SANDBOX, "project-detail", project_id=projects["known"])
    client.get(path)

    alone, statements_alone = answer(client, path, replica_configured=True)
    together, statements = answer(client, path, replica_configured=False)

    assert together == alone
    assert together[0] == HTTPStatus.OK
    assert (statements, statements_alone) == (1, 2)


def test_an_unchanged_project_is_304_and_a_head_has_no_body(projects, sandbox_client, answer, settings):
    path = url(SANDBOX, "project-detail", project_id=projects["known"])
    etag = sandbox_client.get(path)["ETag"]

    for headers in ({"HTTP_IF_NONE_MATCH": etag}, {"HTTP_IF_NONE_MATCH": '"other"'}):
        alone, _ = answer(sandbox_client, path, replica_configured=True, **headers)
        together, _ = answer(sandbox_client, path, replica_configured=False, **headers)
        assert together == alone
    assert together[0] == HTTPStatus.OK
    settings.REPLICA_ALIASES = []
    assert sandbox_client.get(path, HTTP_IF_NONE_MATCH=etag).status_code == HTTPStatus.NOT_MODIFIED
    assert sandbox_client.head(path).content == b""


@pytest.mark.parametrize("refused", ["another partner's ClientID", "the production ClientID", "no ClientID"])
def test_a_refused_caller_is_answered_as_before_the_project_unread(
    refused, projects, client_for, user, other_partner, partner, answer
):
    keys = {
        "another partner's ClientID": client_id_issue(partner=other_partner, environment=SANDBOX, label="x")[1],
        "the production ClientID": client_id_issue(partner=partner, environment=PRODUCTION, label="x")[1],
        "no ClientID": None,
    }
    client = client_for(user, SANDBOX, keys[refused])
    path = url(SANDBOX, "project-detail", project_id=projects["known"])

    alone, _ = answer(client, path, replica_configured=True)
    together, statements = answer(client, path, replica_configured=False)

    assert together == alone
    assert together[0] == HTTPStatus.FORBIDDEN
    assert statements == 1
