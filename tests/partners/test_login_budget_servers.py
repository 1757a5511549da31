"""One login budget across processes (CONTRACT §17), for real: two gunicorn servers on one database and one Redis
(DB 13, under a key prefix of this run's own), each behind the same proxy (TRUSTED_PROXY_COUNT=1). Failed logins
sent to either count against one budget, in order or all at once. Skipped when Redis is down."""

import json
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus

import pytest
import redis

from tests.gunicorn import gunicorn_serving, manage

pytestmark = pytest.mark.slow

REDIS_URL = "redis://127.0.0.1:6379/13"
EMAIL = "dev@sunrise.example"
PASSWORD = "a-long-partner-password-1"


def redis_server() -> redis.Redis:
    server = redis.Redis.from_url(REDIS_URL)
    try:
        server.ping()
    except redis.ConnectionError:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    return server


def provision(environment: dict[str, str]) -> None:
    manage(environment, "create_partner", "Sunrise Solar EPC", "--slug", "sunrise")
    manage(environment, "create_partner_user", "sunrise", EMAIL, "--password", PASSWORD)


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """Two gunicorn servers of one deployment, one worker each: (base URL, base URL)."""
    server = redis_server()
    prefix = f"login-budget-test-{uuid.uuid4().hex}"
    shared = {
        "DATABASE_URL": f"sqlite:///{tmp_path_factory.mktemp('deployment')}/db.sqlite3",
        "REDIS_URL": REDIS_URL,
        "CACHE_KEY_PREFIX": prefix,
        "LOCAL_CACHE_ALLOWED": "0",
        "TRUSTED_PROXY_COUNT": "1",
        "WORKERS": "1",
        "THREADS": "4",
    }
    try:
        with (
            gunicorn_serving(migrated=True, prepare=provision, **shared) as (host, first_port),
            gunicorn_serving(**shared) as (_, second_port),
        ):
            yield f"http://{host}:{first_port}", f"http://{host}:{second_port}"
    finally:
        for key in server.scan_iter(f"{prefix}:*"):
            server.delete(key)


def login(base: str, email: str, password: str, *, client: str) -> int:
    request = urllib.request.Request(
        f"{base}/sandbox/api/v1/auth/email/login",
        data=json.dumps({"email": email, "password": password}).encode(),
        headers={"Content-Type": "application/json", "X-Forwarded-For": client},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_twenty_wrong_passwords_across_two_servers_give_five_401s_then_429s(servers):
    answers = [login(servers[number % 2], EMAIL, "wrong", client="203.0.113.1") for number in range(20)]

    assert answers == [HTTPStatus.UNAUTHORIZED] * 5 + [HTTPStatus.TOO_MANY_REQUESTS] * 15
    assert [login(base, EMAIL, PASSWORD, client="203.0.113.1") for base in servers] == [429, 429]
    assert [login(base, EMAIL, PASSWORD, client="198.51.100.1") for base in servers] == [200, 200]


def test_twenty_wrong_passwords_at_once_across_two_servers_give_exactly_five_401s(servers):
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(
            pool.map(lambda number: login(servers[number % 2], EMAIL, "wrong", client="203.0.113.2"), range(20))
        )

    assert sorted(answers) == [HTTPStatus.UNAUTHORIZED] * 5 + [HTTPStatus.TOO_MANY_REQUESTS] * 15


def test_spraying_thirty_emails_across_two_servers_meets_the_address_limit(servers):
    answers = [
        login(servers[(number + attempt) % 2], f"person{number}@victims.example", "Summer2026!", client="203.0.113.3")
        for number in range(30)
        for attempt in range(3)
    ]

    assert answers == [HTTPStatus.UNAUTHORIZED] * 20 + [HTTPStatus.TOO_MANY_REQUESTS] * 70
