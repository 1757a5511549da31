"""Projects at the source data limit (PROJECT_MAX_SOURCE_BYTES, 1 MiB): push, pull and the admin page, timed.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_large .venv/bin/python bench/large_projects.py

Builds 100 projects of about 1 MiB each through the push API (10 pushes of ~100 KB of new keys per project), then
times a small push to one of them (merge, size check, write), a GET of one, list pages of 20 and 100, and the
admin project page, beside the same calls on a project of 1 KB.
"""

import json
import statistics
import time

import _setup  # noqa: F401  (sets up Django)
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from ingest.limits import json_size
from partners.models import Partner, User
from partners.services import client_id_issue, partner_create, partner_user_create
from projects.models import Project

PROJECTS = 100
PUSHES_PER_PROJECT = 10
ROUNDS = 15


def timed(call, rounds: int = ROUNDS) -> tuple[float, int]:
    durations, size = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        response = call()
        durations.append((time.perf_counter() - start) * 1000)
        assert response.status_code < 300, (response.status_code, response.content[:300])
        size = len(response.content)
    return statistics.median(durations), size


def main() -> None:
    call_command("migrate", verbosity=0)
    settings.ALLOWED_HOSTS = ["*"]
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    Partner.objects.filter(slug="bench-large").delete()
    partner = partner_create(name="Bench Large", slug="bench-large")
    user = partner_user_create(partner=partner, email="bench-large@example.com", password="bench-large-password")
    _, key = client_id_issue(partner=partner, environment="sandbox")
    token = AccessToken.for_user(user)
    token["env"] = "sandbox"
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=key)

    def push(external_id: str, data: dict):
        body = json.dumps({"id": external_id, "data": data})
        return api.post("/sandbox/api/v1/externals/push", body, content_type="application/json")

    print(f"building {PROJECTS} projects of ~1 MiB ...", flush=True)
    chunk = "x" * 100_000
    for number in range(PROJECTS):
        for part in range(PUSHES_PER_PROJECT):
            assert push(f"L-{number}", {f"part{part}": chunk, "n": number}).status_code < 300
    push("small", {"name": "small", "n": 1})
    large = Project.objects.get(partner=partner, external_id="L-0")
    small = Project.objects.get(partner=partner, external_id="small")
    limit = settings.PROJECT_MAX_SOURCE_BYTES
    print(f"a large project holds {json_size(large.source_data):,} bytes of JSON (limit {limit:,})")

    start = time.perf_counter()
    for _ in range(100):
        json_size(large.source_data)
    print(f"measuring its size: {(time.perf_counter() - start) * 10:.2f} ms")

    operator, _ = User.objects.get_or_create(
        email="bench-large-admin@example.com", defaults={"is_staff": True, "is_superuser": True}
    )
    admin = Client()
    admin.force_login(operator)
    counter = iter(range(10**9))
    calls = {
        "push a change to the 1 KB project": lambda: push("small", {"n": next(counter)}),
        "push a change to a 1 MiB project": lambda: push("L-0", {"n": next(counter)}),
        "GET the 1 KB project": lambda: api.get(f"/sandbox/api/v1/integration/projects/{small.pk}"),
        "GET a 1 MiB project": lambda: api.get(f"/sandbox/api/v1/integration/projects/{large.pk}"),
        "list, 20 projects of 1 MiB": lambda: api.get("/sandbox/api/v1/integration/projects?limit=20&page=2"),
        "list, 100 projects of 1 MiB": lambda: api.get("/sandbox/api/v1/integration/projects?limit=100"),
        "admin page of the 1 KB project": lambda: admin.get(f"/admin/projects/project/{small.pk}/change/"),
        "admin page of a 1 MiB project": lambda: admin.get(f"/admin/projects/project/{large.pk}/change/"),
        "admin projects list": lambda: admin.get("/admin/projects/project/"),
    }
    print(f"| call | median ms ({ROUNDS} rounds) | response bytes |\n|---|---|---|")
    for name, call in calls.items():
        median, size = timed(call)
        print(f"| {name} | {median:.1f} | {size:,} |", flush=True)


if __name__ == "__main__":
    main()
