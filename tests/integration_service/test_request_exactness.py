"""Issue #33's exactness script: 49 requests whose every answer (status, headers, body) must stay what main answered
before any cut of a request's cost was made (tests/integration_service/exactness/<vendor>.json, recorded with
RECORD_EXACTNESS=1 from main at f7c7478: after issue #35's RFC 6750 challenges, before the cuts). Bad and expired
tokens, the other environment's ClientID and token, revocations, a password change, a deactivation and clearance
changes each effective on the very next request, 429s from counters another process raised in the shared Redis, GET
of known, unknown, deleted and other environments' projects, pushes and lists.

What differs from run to run (ids, dates, request ids, ETags, keys) is replaced by a placeholder numbered by its
first appearance, so that which answers share a value is still compared exactly.
"""

import json
import os
import re
import uuid
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db import connection
from django.test import override_settings
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from partners.models import IntegrationCredential
from partners.selectors import client_id_get
from partners.services import client_id_issue, client_id_revoke, credential_create, credential_revoke
from partners.tokens import CredentialAccessToken
from readiness.clearance import partner_clear_for_production, partner_revoke_production_clearance
from tests.conftest import PRODUCTION, SANDBOX, token_for, url

pytestmark = pytest.mark.django_db(transaction=False)

NOW = 1_800_000_030.0  # 30 s into a rate-limit window: RateLimit's t= is the same on every run
WINDOW = int(NOW // 60)
LIMIT = 1000
ANSWERS = Path(__file__).parent / "exactness"
VOLATILE_HEADERS = {"Date", "X-Request-ID"}
REQUEST_ID = re.compile(r'("requestId":\s?)"[^"]*"')
PATTERNS = {
    "uuid": re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    "date": re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?"),
    "etag": re.compile(r'"[0-9a-f]{16,}"'),
    "key": re.compile(r"\b(?:sbx|prd|live|test|cs)_[A-Za-z0-9_-]{8,}"),
}


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: real_redis cleans up its own keys instead of flushing a database others share."""
    yield


@pytest.fixture
def redis_cache(real_redis, monkeypatch, settings):
    monkeypatch.setattr("partners.throttling.time", SimpleNamespace(time=lambda: NOW))
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = LIMIT
    settings.CLIENT_ID_RECORD_LIMIT_PER_MINUTE = LIMIT
    with override_settings(CACHES={"default": real_redis.backend}):
        yield real_redis


class Normalizer:
    """Replaces each run's own values by placeholders numbered in order of first appearance."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        text = REQUEST_ID.sub(r'\1"<request-id>"', text)
        for kind, pattern in PATTERNS.items():
            text = pattern.sub(lambda match, kind=kind: self._placeholder(kind, match.group(0)), text)
        return text

    def _placeholder(self, kind: str, value: str) -> str:
        if value not in self.seen:
            count = sum(1 for name in self.seen.values() if name.startswith(f"<{kind}-"))
            self.seen[value] = f"<{kind}-{count + 1}>"
        return self.seen[value]


def answer_of(response, normalize: Normalizer) -> dict:
    headers = {name: value for name, value in response.items() if name not in VOLATILE_HEADERS}
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return {
        "status": response.status_code,
        "headers": {name: normalize(value) for name, value in sorted(headers.items())},
        "body": normalize(body.decode()),
    }


def client_with(*, token: str | None, key: str | None, scheme: str = "Bearer") -> APIClient:
    client = APIClient()
    headers = {}
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"{scheme} {token}"
    if key is not None:
        headers["HTTP_CLIENTID"] = key
    client.credentials(**headers)
    return client


def expired_token(user) -> str:
    token = AccessToken.for_user(user)
    token["env"] = SANDBOX
    token.set_exp(lifetime=-timedelta(seconds=1))
    return str(token)


def tampered(token: str) -> str:
    head, payload, signature = token.split(".")
    return ".".join([head, payload, ("A" if signature[0] != "A" else "B") + signature[1:]])


def push_body(external_id: str, amount: str) -> dict:
    return {"id": external_id, "data": {"properties": {"dealname": f"Residence {external_id}", "amount": amount}}}


def script(*, user, other_user, partner, sandbox_key: str, redis) -> list[tuple[str, object]]:
    """Runs the 49 requests in order (state changes between them) and returns (label, response) for each."""
    answers: list[tuple[str, object]] = []
    production_key = client_id_issue(partner=partner, environment=PRODUCTION)[1]
    other_key = client_id_issue(partner=other_user.partner, environment=SANDBOX)[1]
    sandbox = client_with(token=token_for(user, SANDBOX), key=sandbox_key)
    production = client_with(token=token_for(user, PRODUCTION), key=production_key)
    other = client_with(token=token_for(other_user, SANDBOX), key=other_key)

    def run(label: str, client: APIClient, method: str, path: str, body: object = None, **extra) -> object:
        if method == "GET":
            response = client.get(path, **extra)
        else:
            response = getattr(client, method.lower())(path, body, format="json", **extra)
        answers.append((label, response))
        return response

    def detail(environment: str, project_id: str) -> str:
        return url(environment, "project-detail", project_id=project_id)

    created = run("push creates", sandbox, "POST", url(SANDBOX, "push"), push_body("HS-1", "100.00")).json()
    known = created["id"]
    run("push updates", sandbox, "POST", url(SANDBOX, "push"), push_body("HS-1", "200.00"))
    run("push repeats", sandbox, "POST", url(SANDBOX, "push"), push_body("HS-1", "200.00"))
    run("push refused body", sandbox, "POST", url(SANDBOX, "push"), {"id": "", "data": []})
    gone = run("push to delete", sandbox, "POST", url(SANDBOX, "push"), push_body("HS-2", "1.00")).json()["id"]
    run("delete", sandbox, "DELETE", url(SANDBOX, "project-delete", external_id="HS-2"))
    theirs = run("other partner's push", other, "POST", url(SANDBOX, "push"), push_body("HS-1", "5.00")).json()["id"]

    known_get = run("GET known", sandbox, "GET", detail(SANDBOX, known))
    run("GET known, If-None-Match", sandbox, "GET", detail(SANDBOX, known), HTTP_IF_NONE_MATCH=known_get["ETag"])
    run("GET unknown", sandbox, "GET", detail(SANDBOX, str(uuid.UUID(int=1))))
    run("GET not a UUID", sandbox, "GET", detail(SANDBOX, "not-a-uuid"))
    run("GET deleted", sandbox, "GET", detail(SANDBOX, gone))
    run("GET another partner's", sandbox, "GET", detail(SANDBOX, theirs))
    run("list", sandbox, "GET", url(SANDBOX, "project-list"))
    run("list, follower page", sandbox, "GET", url(SANDBOX, "project-list") + "?ordering=updatedDate&limit=1")
    run("list, bad parameter", sandbox, "GET", url(SANDBOX, "project-list") + "?limit=0&colour=red")
    run("unknown path", sandbox, "GET", "/sandbox/api/v1/integration/nothing-here")
    run("method not allowed", sandbox, "POST", detail(SANDBOX, known), {})

    run("no token", client_with(token=None, key=sandbox_key), "GET", detail(SANDBOX, known))
    run("garbage token", client_with(token="not.a.token", key=sandbox_key), "GET", detail(SANDBOX, known))
    run("expired token", client_with(token=expired_token(user), key=sandbox_key), "GET", detail(SANDBOX, known))
    bad_signature = client_with(token=tampered(token_for(user, SANDBOX)), key=sandbox_key)
    run("tampered signature", bad_signature, "GET", detail(SANDBOX, known))
    wrong_root = client_with(token=token_for(user, PRODUCTION), key=sandbox_key)
    run("production token on the sandbox root", wrong_root, "GET", detail(SANDBOX, known))
    lower = client_with(token=token_for(user, SANDBOX), key=sandbox_key, scheme="bearer")
    run("scheme in lower case", lower, "GET", detail(SANDBOX, known))
    run("no ClientID", client_with(token=token_for(user, SANDBOX), key=None), "GET", detail(SANDBOX, known))
    unknown_key = client_with(token=token_for(user, SANDBOX), key="sbx_" + "x" * 40)
    run("unknown ClientID", unknown_key, "GET", detail(SANDBOX, known))
    crossed = client_with(token=token_for(user, SANDBOX), key=production_key)
    run("production ClientID on the sandbox root", crossed, "GET", detail(SANDBOX, known))
    run("push with the production ClientID", crossed, "POST", url(SANDBOX, "push"), push_body("HS-1", "1.00"))
    run(
        "another partner's ClientID",
        client_with(token=token_for(user, SANDBOX), key=other_key),
        "GET",
        detail(SANDBOX, known),
    )

    run("production before clearance", production, "GET", detail(PRODUCTION, known))
    partner_clear_for_production(partner=partner, performed_by=None)
    run("production push once cleared", production, "POST", url(PRODUCTION, "push"), push_body("HS-1", "7.00"))
    run("production GET of the sandbox project", production, "GET", detail(PRODUCTION, known))
    run(
        "sandbox ClientID on the production root",
        client_with(token=token_for(user, PRODUCTION), key=sandbox_key),
        "GET",
        url(PRODUCTION, "project-list"),
    )
    partner_revoke_production_clearance(partner=partner, performed_by=None)
    run("production list after the clearance is revoked", production, "GET", url(PRODUCTION, "project-list"))

    client_id_revoke(client_id=client_id_get(key=sandbox_key), revoked_by=None)
    run("GET with the revoked ClientID", sandbox, "GET", detail(SANDBOX, known))
    run("push with the revoked ClientID", sandbox, "POST", url(SANDBOX, "push"), push_body("HS-1", "3.00"))
    fresh_key = client_id_issue(partner=partner, environment=SANDBOX)[1]
    sandbox = client_with(token=token_for(user, SANDBOX), key=fresh_key)
    run("GET with a new ClientID", sandbox, "GET", detail(SANDBOX, known))
    user.is_active = False
    user.save()
    run("GET by a deactivated user", sandbox, "GET", detail(SANDBOX, known))
    user.is_active = True
    user.save()
    run("GET once reactivated", sandbox, "GET", detail(SANDBOX, known))
    user.set_password("a brand new passphrase")
    user.save()
    run("GET with a token from before a password change", sandbox, "GET", detail(SANDBOX, known))
    sandbox = client_with(token=token_for(user, SANDBOX), key=fresh_key)

    credential = credential_create(client_id=client_id_get(key=fresh_key), created_by=user)[0]
    machine_token = str(CredentialAccessToken.for_credential(credential, environment=SANDBOX))
    machine = client_with(token=machine_token, key=fresh_key)
    run("GET with a credential's token", machine, "GET", detail(SANDBOX, known))
    credential_revoke(credential=IntegrationCredential.objects.get(pk=credential.pk), revoked_by=None)
    run("GET with a revoked credential's token", machine, "GET", detail(SANDBOX, known))

    fresh_pk = client_id_get(key=fresh_key).pk
    requests_key = f"{redis.prefix}:1:rate:client-id:{fresh_pk}:{WINDOW}"
    records_key = f"{redis.prefix}:1:rate:records:{fresh_pk}:{WINDOW}"
    redis.server.set(records_key, LIMIT)  # another process took the whole record budget
    run("push over the record budget", sandbox, "POST", url(SANDBOX, "push"), push_body("HS-1", "9.00"))
    run("GET while the records are spent", sandbox, "GET", detail(SANDBOX, known))
    redis.server.set(requests_key, LIMIT - 1)  # another process counted the rest of this minute's requests
    run("the last request of the minute", sandbox, "GET", detail(SANDBOX, str(uuid.UUID(int=2))))
    run("GET over the limit", sandbox, "GET", detail(SANDBOX, known))
    run("GET unknown over the limit", sandbox, "GET", detail(SANDBOX, str(uuid.UUID(int=3))))
    run("push over the limit", sandbox, "POST", url(SANDBOX, "push"), push_body("HS-1", "9.00"))
    run("another partner, not limited", other, "GET", detail(SANDBOX, theirs))
    return answers


def test_every_answer_of_the_exactness_script_is_as_main_gave_it(redis_cache, user, other_user, partner, sandbox_key):
    responses = script(user=user, other_user=other_user, partner=partner, sandbox_key=sandbox_key, redis=redis_cache)
    normalize = Normalizer()
    answers = [{"request": label, **answer_of(response, normalize)} for label, response in responses]
    assert len(answers) == 49
    recorded = ANSWERS / f"{connection.vendor}.json"
    if os.environ.get("RECORD_EXACTNESS") == "1":
        ANSWERS.mkdir(exist_ok=True)
        recorded.write_text(json.dumps(answers, indent=1, ensure_ascii=False) + "\n")
    expected = json.loads(recorded.read_text())
    for answer, wanted in zip(answers, expected, strict=True):
        assert answer == wanted, answer["request"]
