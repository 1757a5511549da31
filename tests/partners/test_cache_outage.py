"""With REDIS_URL set, the rate limits and login counters live in Redis. A Redis that cannot be reached is an
outage like the database's: every API call answers a 503 problem with Retry-After, and a push stores nothing."""

import pytest
from django.conf import settings

from ingest.models import RawPush
from projects.models import Project
from tests.conftest import PASSWORD, SANDBOX, problem, url

DETAIL = "The rate-limit store is briefly unreachable. Send the request again shortly; a push is safe to repeat."


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: clearing an unreachable cache would fail the setup."""
    yield


def assert_unavailable(response) -> None:
    assert response.status_code == 503
    assert response["Content-Type"] == "application/problem+json"
    assert response["Retry-After"] == str(settings.UNAVAILABLE_RETRY_AFTER_SECONDS)
    assert response.json() == problem(503, DETAIL, "unavailable")


@pytest.mark.django_db
def test_a_push_answers_503_and_stores_nothing(sandbox_client, redis_unreachable):
    response = sandbox_client.post(url(SANDBOX, "push"), {"id": "CRM-1", "data": {"name": "Lee"}}, format="json")

    assert_unavailable(response)
    assert Project.objects.count() == 0
    assert RawPush.objects.count() == 0


@pytest.mark.django_db
def test_a_batch_push_answers_503_and_stores_nothing(sandbox_client, redis_unreachable):
    response = sandbox_client.post(
        url(SANDBOX, "push-batch"), {"records": [{"id": "CRM-1", "data": {"name": "Lee"}}]}, format="json"
    )

    assert_unavailable(response)
    assert Project.objects.count() == 0


@pytest.mark.django_db
def test_a_pull_answers_503(sandbox_client, redis_unreachable):
    assert_unavailable(sandbox_client.get(url(SANDBOX, "project-list")))


@pytest.mark.django_db
def test_a_login_answers_503(client, user, redis_unreachable):
    response = client.post(
        url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD}, content_type="application/json"
    )

    assert_unavailable(response)
