import pytest
from django.test import Client

from tests.conftest import PASSWORD


@pytest.fixture
def portal(client, user) -> Client:
    """A browser session of the partner's user, logged in through the console's own login page."""
    response = client.post("/portal/login/", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 302
    return client


@pytest.fixture
def other_portal(other_user) -> Client:
    client = Client()
    client.post("/portal/login/", {"email": other_user.email, "password": PASSWORD})
    return client


@pytest.fixture
def webhook_settings(settings):
    """Queued tasks wait for run_worker; loopback receivers are allowed; retries are quick."""
    from tests.webhooks.conftest import DUMMY_TASKS

    settings.TASKS = DUMMY_TASKS
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    settings.WEBHOOK_RETRY_BASE_SECONDS = 0.05
    settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS = 0.4
    settings.WEBHOOK_RETRY_FOR_SECONDS = 60
