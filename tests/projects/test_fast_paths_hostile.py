"""A hostile partner's query strings and ids against the list's page of its own (projects/list_pages.py) and the
GET's caller+project statement (projects/selectors.py, project_caller_companion): each answer is the general path's,
byte for byte (the requestId aside)."""

import uuid
from unittest import mock

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from partners.selectors import client_id_get
from partners.services import client_id_issue, client_id_revoke, credential_create
from partners.tokens import CredentialAccessToken
from tests.conftest import SANDBOX, url
from tests.projects.test_list_pages import answer, general_path, seed, without_request_id

pytestmark = pytest.mark.django_db

HOSTILE = [
    "includeDeleted=TRUE",
    "includeDeleted=1",
    "includeDeleted=true&includeDeleted=false",
    "includeDeleted=false&includeDeleted=true",
    "exclude=data&exclude=data",
    "exclude=Data",
    "exclude=data%00",
    "page=1&page=",
    "page=&page=2",
    "&&page=2&",
    "page=%201",
    "page=1%20",
    "page=-1",
    "limit=-1",
    "limit=1e2",
    "page=999999999",
    "page=999999999&limit=100",
    "page=000000002&limit=2",
    "page=%EF%BC%91",
    "ordering=-submittedDate%20",
    "ordering=%20-submittedDate",
    "ordering=-SubmittedDate",
    "ordering=submittedDate,-submittedDate",
    "submittedDate=gt:2026-03-01T00:00:00%2B14:00",
    "submittedDate=gt:2026-03-01T00:00:00-23:59",
    "submittedDate=gt:2026-03-01T10:00:00+02:00",
    "submittedDate=gt:2026-03-01T10:00+0200",
    "submittedDate=eq:2026-03-02T10:00:00Z",
    "submittedDate=eq:2026-03-02T10:00:00.000001Z",
    "submittedDate=eq:2026-03-02T10:00:00.1234567Z",
    "submittedDate=btw:a_b",
    "submittedDate=btw:2026-03-02_2026-03-02",
    "submittedDate=btw:2026-03-02T10:00:00Z_2026-03-02T10:00:00Z",
    "submittedDate=btw:2026-03-02T10:00:00Z_2026-03-02",
    "submittedDate=btw:2026-03-02_2026-03-02T10:00:00Z",
    "submittedDate=btw:2026-03-02_2026-03-01T23:00:00Z",
    "submittedDate=btw:2026-03-01__2026-03-02",
    "submittedDate=btw:_2026-03-02",
    "submittedDate=gt:",
    "submittedDate=gt:%E2%80%832026-03-01",
    "submittedDate=%E2%80%83gt:2026-03-01",
    "submittedDate=gt:2026-03-01%0A",
    "submittedDate=gt:2026-03-01%00",
    "submittedDate=gt%00:2026-03-01",
    "submittedDate=gt:2026-03-01T00",
    "submittedDate=gt:20260301",
    "submittedDate=gt:2026-03-01T00:00:00,5Z",
    "submittedDate=lt:2026-03-01T24:00:00",
    "submittedDate=gt:2026-W09",
    "submittedDate=gt:%D9%A2%D9%A0%D9%A2%D9%A6-03-01",
    "submittedDate=eq:0001-01-01",
    "submittedDate=gt:0001-01-01T00:00:00%2B01:00",
    "submittedDate=eq:9999-12-31",
    "submittedDate=lt:9999-12-31T23:59:59.999999-01:00",
    "updatedDate=gt:2026-03-01&submittedDate=lt:2026-03-03&updatedDate=lt:2026-03-02",
    "updatedDate=btw:2026-03-01_2026-03-02&ordering=submittedDate&includeDeleted=true&exclude=data&page=2&limit=3",
    "submittedDate=&submittedDate=gt:2026-03-01",
    "page=2&limit=3&limit=100",
    "page=%FF",
    "limit=2%FF",
    "submittedDate=gt:2026-03-01%FF",
    "ordering=-submittedDate&%FF=1",
    "page=1;limit=2",
    "page=2&limit=3#fragment",
    "page[]=2",
    "Page=2",
    "page=2&page=2&page=2&limit=2&limit=2",
]


@pytest.mark.parametrize("cached", [False, True], ids=["counted", "cached"])
@pytest.mark.parametrize("query", HOSTILE)
def test_a_hostile_query_string_is_answered_as_the_general_path_answers_it(
    sandbox_client, partner, other_partner, settings, query, cached
):
    settings.PROJECT_TOTALS_CACHED = cached
    seed(partner, other_partner)

    served = without_request_id(answer(sandbox_client, SANDBOX, query))
    with general_path():
        general = without_request_id(answer(sandbox_client, SANDBOX, query))
    assert served == general


def old_detail():
    """The GET as it read its project before the caller's statement did (project_get on its own)."""
    return mock.patch("projects.api.views.project_caller_companion", return_value=None)


@pytest.fixture
def detail_projects(partner, other_partner, make_project) -> dict[str, str]:
    now = timezone.now()
    deleted = make_project(partner, external_id="D-1", deleted_date=now)
    erased = make_project(partner, external_id="E-1", deleted_date=now, erased_date=now, source_data={})
    return {
        "mine": str(make_project(partner, external_id="M-1").pk),
        "mine upper": str(make_project(partner, external_id="M-2").pk).upper(),
        "mine braces": "{" + str(make_project(partner, external_id="M-3").pk) + "}",
        "mine hex": uuid.UUID(str(make_project(partner, external_id="M-4").pk)).hex,
        "deleted": str(deleted.pk),
        "erased": str(erased.pk),
        "production's": str(make_project(partner, environment="production", external_id="P-1").pk),
        "other's": str(make_project(other_partner, external_id="M-1").pk),
        "malformed": "0000000-0000-0000-0000-000000000000",
        "nul": "%00",
    }


def bearer(token: str, key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=key)
    return client


def detail(client, project_id: str) -> tuple[int, bytes]:
    path = url(SANDBOX, "project-list") + "/" + project_id
    response = client.get(path)
    return without_request_id((response.status_code, response.content))


@pytest.mark.parametrize(
    "name",
    [
        "mine",
        "mine upper",
        "mine braces",
        "mine hex",
        "deleted",
        "erased",
        "production's",
        "other's",
        "malformed",
        "nul",
    ],
)
@pytest.mark.parametrize(
    "caller",
    [
        "own",
        "other partner's ClientID",
        "other partner's user",
        "own production ClientID",
        "production token",
        "no ClientID",
        "revoked ClientID",
        "credential, other partner's ClientID",
        "credential",
    ],
)
def test_a_project_of_anyone_is_answered_as_before(
    detail_projects, client_for, user, other_user, sandbox_key, production_key, other_partner, caller, name
):
    other_key = client_id_issue(partner=other_partner, environment=SANDBOX)[1]
    revoked_key = client_id_issue(partner=user.partner, environment=SANDBOX)[1]
    client_id_revoke(client_id=client_id_get(key=revoked_key), revoked_by=user)
    credential = credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)[0]
    credential_token = str(CredentialAccessToken.for_credential(credential, environment=SANDBOX))
    clients = {
        "own": lambda: client_for(user, SANDBOX, sandbox_key),
        "other partner's ClientID": lambda: client_for(user, SANDBOX, other_key),
        "other partner's user": lambda: client_for(other_user, SANDBOX, sandbox_key),
        "own production ClientID": lambda: client_for(user, SANDBOX, production_key),
        "production token": lambda: client_for(user, "production", sandbox_key),
        "no ClientID": lambda: client_for(user, SANDBOX, None),
        "revoked ClientID": lambda: client_for(user, SANDBOX, revoked_key),
        "credential, other partner's ClientID": lambda: bearer(credential_token, other_key),
        "credential": lambda: bearer(credential_token, sandbox_key),
    }
    client = clients[caller]()
    now = detail(client, detail_projects[name])
    with old_detail():
        assert now == detail(client, detail_projects[name])
