"""Refreshes racing with one refresh token, as real HTTP requests to a live server on PostgreSQL: at most one gets a
new pair, and a spent token that comes second is a reuse (RFC 9700 §4.14.2), so the login's tokens all end."""

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from partners.models import TokenFamily
from tests.conftest import PASSWORD, SANDBOX, url

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

RACERS = 4
ROUNDS = 5


def post(base: str, path: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_simultaneous_refreshes_with_one_token_give_at_most_one_pair(live_server, user, sandbox_key):
    base = live_server.url
    for _ in range(ROUNDS):
        status, login = post(base, url(SANDBOX, "login"), {"email": user.email, "password": PASSWORD})
        assert status == 200
        barrier = threading.Barrier(RACERS)

        def racer(_: int, token: str = login["refreshToken"], barrier: threading.Barrier = barrier) -> tuple[int, dict]:
            barrier.wait(timeout=10)
            return post(base, url(SANDBOX, "token-refresh"), {"refreshToken": token})

        with ThreadPoolExecutor(RACERS) as pool:
            answers = list(pool.map(racer, range(RACERS)))

        winners = [body for status, body in answers if status == 200]
        losers = [body for status, body in answers if status != 200]
        assert len(winners) <= 1, answers
        assert {(body["error"], body["code"]) for body in losers} <= {
            ("invalid_grant", "token_reused"),
            ("invalid_grant", "token_family_revoked"),
        }, answers
        if losers:  # the token was used again: the winner's pair ended with the login
            family = TokenFamily.objects.order_by("-pk").first()
            assert family.is_revoked
            for body in winners:
                status, refused = post(base, url(SANDBOX, "token-refresh"), {"refreshToken": body["refreshToken"]})
                assert (status, refused["code"]) == (401, "token_family_revoked")
