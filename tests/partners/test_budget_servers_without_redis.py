"""`make run` serves two processes without Redis (CACHE_DIR, core/file_cache.py): the failed-login budget of the
e-mail login and of the token endpoint is one budget across them (CONTRACT §17), in order or all at once. Two gunicorn
servers of one worker each share the cache directory, so that every other request is another process's."""

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus

import pytest

from tests.gunicorn import gunicorn_serving, manage

pytestmark = pytest.mark.slow

EMAIL = "dev@sunrise.example"
PASSWORD = "a-long-partner-password-1"
ISSUE_SECRET = """
from partners.models import ClientId
from partners.services import credential_create
print(credential_create(client_id=ClientId.objects.get(), created_by=None)[1])
"""


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """(base URL, base URL, ClientID, client secret): two servers of one deployment without REDIS_URL."""
    keys = {}

    def provision(environment: dict[str, str]) -> None:
        manage(environment, "create_partner", "Sunrise Solar EPC", "--slug", "sunrise")
        manage(environment, "create_partner_user", "sunrise", EMAIL, "--password", PASSWORD)
        keys["client_id"] = manage(environment, "issue_client_id", "sunrise", "--env", "sandbox")
        keys["secret"] = manage(environment, "shell", "--no-imports", "-c", ISSUE_SECRET)

    shared = {
        "DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('deployment')}/db.sqlite3",
        "DEBUG": "1",  # as `make run`
        "REDIS_URL": "",
        "CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
        "LOCAL_CACHE_ALLOWED": "0",
        "TRUSTED_PROXY_COUNT": "1",
        "WORKERS": "1",
        "THREADS": "4",
    }
    with (
        gunicorn_serving(migrated=True, prepare=provision, **shared) as (host, first_port),
        gunicorn_serving(**shared) as (_, second_port),
    ):
        yield f"http://{host}:{first_port}", f"http://{host}:{second_port}", keys["client_id"], keys["secret"]


def answer(request: urllib.request.Request) -> int:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def login(base: str, password: str, *, client: str) -> int:
    return answer(
        urllib.request.Request(
            f"{base}/sandbox/api/v1/auth/email/login",
            data=json.dumps({"email": EMAIL, "password": password}).encode(),
            headers={"Content-Type": "application/json", "X-Forwarded-For": client},
            method="POST",
        )
    )


def token(base: str, client_id: str, secret: str, *, client: str) -> int:
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    return answer(
        urllib.request.Request(
            f"{base}/sandbox/api/v1/auth/token",
            data=urllib.parse.urlencode({"grant_type": "client_credentials"}).encode(),
            headers={"Authorization": f"Basic {basic}", "X-Forwarded-For": client},
            method="POST",
        )
    )


def test_wrong_passwords_across_both_processes_give_five_401s_then_429s(servers):
    first, second, _, _ = servers
    answers = [login((first, second)[number % 2], "wrong", client="203.0.113.1") for number in range(12)]

    assert answers == [HTTPStatus.UNAUTHORIZED] * 5 + [HTTPStatus.TOO_MANY_REQUESTS] * 7
    assert [login(base, PASSWORD, client="203.0.113.1") for base in (first, second)] == [429, 429]
    assert [login(base, PASSWORD, client="198.51.100.1") for base in (first, second)] == [200, 200]


def test_wrong_client_secrets_across_both_processes_give_five_401s_then_429s_even_for_the_right_one(servers):
    first, second, client_id, secret = servers
    answers = [token((first, second)[n % 2], client_id, secret + "x", client="203.0.113.2") for n in range(12)]

    assert answers == [HTTPStatus.UNAUTHORIZED] * 5 + [HTTPStatus.TOO_MANY_REQUESTS] * 7
    assert [token(base, client_id, secret, client="203.0.113.2") for base in (first, second)] == [429, 429]
    assert [token(base, client_id, secret, client="198.51.100.2") for base in (first, second)] == [200, 200]


def test_wrong_secrets_at_once_across_both_processes_give_exactly_five_401s(servers):
    first, second, client_id, secret = servers
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(
            pool.map(lambda n: token((first, second)[n % 2], client_id, secret + "y", client="203.0.113.3"), range(16))
        )

    assert sorted(answers) == [HTTPStatus.UNAUTHORIZED] * 5 + [HTTPStatus.TOO_MANY_REQUESTS] * 11
