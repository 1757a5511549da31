"""openid-client (Node, pinned in .ci/oauth-client/package-lock.json) against a live server: RFC 8414 discovery of
each root as an issuer, the client-credentials grant by client_secret_post and client_secret_basic, and each error
path raising openid-client's own error with the OAuth `error` it reads. Skipped only where node is missing."""

import json
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from partners.selectors import client_id_get
from partners.services import credential_create
from partners.tokens import CredentialAccessToken
from tests.conftest import SANDBOX, url

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".ci" / "oauth-client"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.slow,  # a live server and a node process
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(NODE is None, reason="node is missing (CI has it: .ci/lint-openapi runs on it)"),
]


@pytest.fixture(scope="module")
def openid_client() -> Path:
    """The script, its packages installed as the lock file pins them (once per checkout)."""
    if not (TOOLS / "node_modules" / "openid-client").is_dir():
        npm = ["npm", "ci", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]
        subprocess.run(npm, cwd=TOOLS, check=True, timeout=300)
    return TOOLS / "check.mjs"


def test_openid_client_discovers_gets_tokens_and_meets_each_error_as_its_own(
    openid_client, live_server, sandbox_key, user, settings
):
    settings.LOGIN_FAILURE_LIMIT = 3
    credential, secret = credential_create(client_id=client_id_get(key=sandbox_key), created_by=user)
    expired = CredentialAccessToken.for_credential(credential, environment=SANDBOX)
    expired.set_exp(lifetime=-timedelta(seconds=1))
    issuer = live_server.url + url(SANDBOX, "token").removesuffix("/auth/token")
    given = {
        "issuer": issuer,
        "clientId": sandbox_key,
        "clientSecret": secret,
        "resource": live_server.url + url(SANDBOX, "project-list"),
        "expiredToken": str(expired),
        "failuresToThrottle": 3,
    }

    run = subprocess.run([NODE, str(openid_client), json.dumps(given)], capture_output=True, text=True, timeout=120)

    assert run.returncode == 0, run.stderr
    results = {line["scenario"]: line for line in map(json.loads, run.stdout.splitlines())}
    for method in ("post", "basic"):
        assert results[f"success-{method}"] == {
            "scenario": f"success-{method}",
            "outcome": "token",
            "tokenType": "bearer",
            "expiresIn": 3600,
            "issuer": issuer,
            "tokenEndpoint": f"{issuer}/auth/token",
            "resourceStatus": 200,
        }
    wrong = "The ClientID or client secret is wrong."
    assert results["wrong-secret-post"] == {
        "scenario": "wrong-secret-post",
        "outcome": "error",
        "name": "ResponseBodyError",
        "code": "OAUTH_RESPONSE_BODY_ERROR",
        "status": 401,
        "error": "invalid_client",
        "description": wrong,
    }
    # HTTP Basic: the 401 challenges it (RFC 6749 §5.2), with the error in the challenge as in the body.
    assert results["wrong-secret-basic"] == {
        "scenario": "wrong-secret-basic",
        "outcome": "error",
        "name": "WWWAuthenticateChallengeError",
        "code": "OAUTH_WWW_AUTHENTICATE_CHALLENGE",
        "status": 401,
        "error": "invalid_client",
        "description": wrong,
        "scheme": "basic",
    }
    assert results["wrong-grant"] == {
        "scenario": "wrong-grant",
        "outcome": "error",
        "name": "ResponseBodyError",
        "code": "OAUTH_RESPONSE_BODY_ERROR",
        "status": 400,
        "error": "unsupported_grant_type",
        "description": "The only grant type here is 'client_credentials'.",
    }
    expired_answer = results["expired-token"]
    assert (expired_answer["name"], expired_answer["status"], expired_answer["scheme"]) == (
        "WWWAuthenticateChallengeError",
        401,
        "bearer",
    )
    assert expired_answer["error"] == "invalid_token"  # RFC 6750 §3: expiry told apart from other failures
    assert expired_answer["description"].startswith("The token has expired.")
    throttled = results["throttled"]
    assert (throttled["name"], throttled["status"], throttled["error"]) == (
        "ResponseBodyError",
        429,
        "temporarily_unavailable",
    )
    assert throttled["description"].startswith("Too many failed logins")
