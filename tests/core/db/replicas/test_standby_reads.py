"""Reads on a real streaming standby (CONTRACT §21), served by gunicorn as production runs it: the standby serves
the pulls and the feed, a caller's own writes read back from the primary, a lagging or stopped standby is skipped
without a 5xx, and followers paging across the standby and the primary, with its replay paused and resumed under
concurrent pushes and PATCHes, miss no change and see none twice."""

import json
import random
import threading
import time
import urllib.error
import urllib.request
import uuid
from urllib.parse import quote

import pytest
import redis
from django.conf import settings

from deploy.local_cluster import binaries, streaming_pair
from tests.gunicorn import gunicorn_serving, manage

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(binaries() is None, reason="needs Debian's PostgreSQL binaries (initdb, pg_basebackup)"),
    pytest.mark.skipif(
        settings.DATABASES["default"]["ENGINE"] != "core.db.postgresql",
        reason="runs once, in the PostgreSQL pass (it builds its own primary and standby)",
    ),
]

REDIS_URL = "redis://127.0.0.1:6379/14"
PASSWORD = "correct horse battery staple"
SEED = f"""
import json
from partners.choices import Environment
from partners.services import client_id_issue, partner_create, partner_user_create
partner = partner_create(name="Replica Partner")
partner_user_create(partner=partner, email="replica@example.com", password={PASSWORD!r})
print(json.dumps([client_id_issue(partner=partner, environment=Environment.SANDBOX)[1] for _ in range(2)]))
"""


class Server:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def text(self, path: str, headers: dict) -> str:
        request = urllib.request.Request(self.base + path, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.read().decode()

    def call(self, method: str, path: str, headers: dict, body: object = None) -> tuple[int, dict, dict]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        if data is not None:
            request.add_header(
                "Content-Type", "application/merge-patch+json" if method == "PATCH" else "application/json"
            )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, dict(answer.headers), json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), json.loads(error.read() or b"null")


@pytest.fixture(scope="module")
def topology():
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    with streaming_pair() as pair:
        pair.primary.sql("CREATE DATABASE service")
        primary_url = pair.primary.url("service")
        replica_url = pair.standby.url("service")
        prefix = f"replicas-{uuid.uuid4().hex[:8]}"
        common = {
            "DATABASE_URL": primary_url,
            "REDIS_URL": REDIS_URL,
            "CACHE_KEY_PREFIX": prefix,
            "REPLICA_CHECK_SECONDS": "0.2",
            "REPLICA_DOWN_RECHECK_SECONDS": "0.5",
            "WEBHOOK_ALLOW_PRIVATE_URLS": "1",  # an endpoint on loopback (no worker runs: nothing is sent)
            "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "100000",
            "WORKERS": "1",
            "THREADS": "8",
        }
        keys = {}

        def prepare(environment: dict[str, str]) -> None:
            manage(environment, "migrate", "--no-input", "-v0")
            keys["client_ids"] = json.loads(manage(environment, "shell", "-c", SEED).splitlines()[-1])
            keys["platform_writer"] = manage(environment, "issue_platform_key", "writer")
            keys["platform_reader"] = manage(environment, "issue_platform_key", "reader", "--read-only")
            keys["environment"] = environment  # the patient server's: what a worker beside it runs with

        with (
            gunicorn_serving(
                prepare=prepare, **common, DATABASE_REPLICA_URLS=replica_url, REPLICA_MAX_LAG_SECONDS="60"
            ) as patient,
            gunicorn_serving(**common, DATABASE_REPLICA_URLS=replica_url, REPLICA_MAX_LAG_SECONDS="2") as strict,
            gunicorn_serving(**common) as primary_only,
        ):
            servers = {
                name: Server(port)
                for name, (_, port) in {"patient": patient, "strict": strict, "primary": primary_only}.items()
            }
            status, _, body = servers["primary"].call(
                "POST", "/sandbox/api/v1/auth/email/login", {}, {"email": "replica@example.com", "password": PASSWORD}
            )
            assert status == 200, body
            token = body["token"]
            writer, reader = keys["client_ids"]
            hook = {"Authorization": f"Bearer {token}", "ClientID": writer}
            status, _, body = servers["primary"].call(
                "POST", "/sandbox/api/v1/integration/webhooks", hook, {"url": "http://127.0.0.1:9/hooks/replicas"}
            )
            assert status == 201, body  # events are recorded (and replayed) while the partner has an endpoint
            yield {
                "pair": pair,
                "servers": servers,
                "writer": {"Authorization": f"Bearer {token}", "ClientID": writer},
                "reader": {"Authorization": f"Bearer {token}", "ClientID": reader},
                "platform_writer": {"Authorization": f"Bearer {keys['platform_writer']}"},
                "platform_reader": {"Authorization": f"Bearer {keys['platform_reader']}"},
                "environment": keys["environment"],
            }


def push(server: Server, headers: dict, external_id: str, **data) -> dict:
    status, _, body = server.call("POST", "/sandbox/api/v1/externals/push", headers, {"id": external_id, "data": data})
    assert status in (200, 201), body
    return body


def routed_reads(server: Server) -> dict[tuple[str, str], float]:
    """integration_routed_reads_total by (route, database), from the server's /metrics."""
    with urllib.request.urlopen(server.base + "/metrics", timeout=10) as answer:
        text = answer.read().decode()
    counts = {}
    for line in text.splitlines():
        if line.startswith("integration_routed_reads_total{"):
            labels, value = line[len("integration_routed_reads_total{") :].split("} ")
            pairs = dict(pair.split("=", 1) for pair in labels.split(","))
            counts[(pairs["route"].strip('"'), pairs["database"].strip('"'))] = float(value)
    return counts


def replica_detail(server: Server) -> dict:
    status, _, body = server.call("GET", "/readyz", {})
    assert status == 200, body
    return body["details"]["replicas"]["replica_1"]


def wait_for(condition, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_the_standby_serves_reads_and_a_caller_reads_its_own_writes(topology):
    pair, patient = topology["pair"], topology["servers"]["patient"]
    push(patient, topology["writer"], "before-pause", n=1)
    pair.caught_up()
    wait_for(lambda: replica_detail(patient)["state"] == "up")

    pair.replay_pause()
    try:
        created = push(patient, topology["writer"], "while-paused", n=1)
        project = f"/sandbox/api/v1/integration/projects/{created['id']}"

        before = routed_reads(patient)
        own, _, _ = patient.call("GET", project, topology["writer"])
        other, _, _ = patient.call("GET", project, topology["reader"])
        platform, _, _ = patient.call("GET", f"/platform/api/v1/projects/{created['id']}", topology["platform_reader"])
        assert (own, other, platform) == (200, 404, 404)  # the writer from the primary; the others from the standby
        after = routed_reads(patient)
        served = {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)}
        assert served == {("project-detail", "default"): 1, ("project-detail", "replica_1"): 2}  # partner and platform
    finally:
        pair.replay_resume()
    pair.caught_up()
    wait_for(lambda: patient.call("GET", project, topology["reader"])[0] == 200)


def test_a_lagging_standby_is_skipped_and_shown(topology):
    pair, strict = topology["pair"], topology["servers"]["strict"]
    pair.replay_pause()
    try:
        created = push(strict, topology["writer"], "lagging", n=1)
        project = f"/platform/api/v1/projects/{created['id']}"

        wait_for(lambda: replica_detail(strict)["state"] == "lagging")  # past REPLICA_MAX_LAG_SECONDS=2
        status, _, _ = strict.call("GET", project, topology["platform_reader"])
        assert status == 200  # the primary serves
        assert replica_detail(strict)["lagSeconds"] > 2
    finally:
        pair.replay_resume()
    pair.caught_up()
    wait_for(lambda: replica_detail(strict) == {"state": "up", "lagSeconds": 0.0})


def follow_projects(servers: list[Server], headers: dict, seen: list, state: dict) -> bool:
    """One follower page from a random server; True when it was empty."""
    watermark = state.get("watermark")
    query = "ordering=updatedDate&limit=20&includeDeleted=true&exclude=data"
    if watermark:
        query += f"&updatedDate=gt:{watermark}"
    status, _, body = random.choice(servers).call("GET", f"/sandbox/api/v1/integration/projects?{query}", headers)
    assert status == 200, body
    for item in body["items"]:
        seen.append((item["id"], item["updatedDate"]))
    if body["items"]:
        state["watermark"] = body["items"][-1]["updatedDate"]
    return not body["items"]


def follow_feed(servers: list[Server], headers: dict, seen: list, state: dict) -> bool:
    after = f"&after={state['cursor']}" if state.get("cursor") else ""
    status, _, body = random.choice(servers).call(
        "GET", f"/platform/api/v1/changes?environment=sandbox&limit=50{after}", headers
    )
    assert status == 200, body
    for item in body["items"]:
        seen.append((item["project"]["id"], item["project"]["updatedDate"]))
    state["cursor"] = body["nextCursor"]
    return not body["items"]


def follow_events(servers: list[Server], headers: dict, seen: list, state: dict) -> bool:
    after = f"&after={quote(state['cursor'])}" if state.get("cursor") else ""
    status, _, body = random.choice(servers).call(
        "GET", f"/sandbox/api/v1/integration/events?limit=100{after}", headers
    )
    assert status == 200, body
    seen += [event["id"] for event in body["items"]]
    if body["nextCursor"]:
        state["cursor"] = body["nextCursor"]
    return not body["items"]


def test_followers_across_the_standby_and_the_primary_miss_nothing_and_see_nothing_twice(topology):
    pair, servers = topology["pair"], topology["servers"]
    mixed = [servers["patient"], servers["strict"], servers["primary"]]
    stop = threading.Event()
    failures: list[str] = []
    counts = {"pushes": 0, "patches": 0, "patch_conflicts": 0, "pauses": 0}

    def pusher(number: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                push(random.choice(mixed), topology["writer"], f"soak-{number}-{random.randrange(15)}", n=n)
                counts["pushes"] += 1
            except AssertionError as error:
                failures.append(f"push: {error}")

    def patcher() -> None:
        while not stop.is_set():
            status, _, body = servers["primary"].call(
                "GET", "/sandbox/api/v1/integration/projects?limit=20&exclude=data", topology["reader"]
            )
            if status != 200 or not body["items"]:
                continue
            project_id = random.choice(body["items"])["id"]
            path = f"/platform/api/v1/projects/{project_id}"
            status, headers, _ = servers["primary"].call("GET", path, topology["platform_writer"])
            if status != 200:
                continue
            status, _, body = servers["primary"].call(
                "PATCH", path, {**topology["platform_writer"], "If-Match": headers["ETag"]}, {"note": uuid.uuid4().hex}
            )
            counts["patches" if status == 200 else "patch_conflicts"] += 1
            if status not in (200, 412):
                failures.append(f"patch: {status} {body}")

    def replay_toggler() -> None:
        while not stop.is_set():
            pair.replay_pause()
            counts["pauses"] += 1
            stop.wait(random.uniform(0.3, 1.5))
            pair.replay_resume()
            stop.wait(random.uniform(0.1, 0.5))

    projects_seen: list = []
    feed_seen: list = []
    events_seen: list = []
    projects_state: dict = {}
    feed_state: dict = {}
    events_state: dict = {}

    def follower() -> None:
        while not stop.is_set():
            try:
                follow_projects(mixed, topology["reader"], projects_seen, projects_state)
                follow_feed(mixed, topology["platform_reader"], feed_seen, feed_state)
                follow_events(mixed, topology["reader"], events_seen, events_state)
            except AssertionError as error:
                failures.append(f"follow: {error}")

    threads = [threading.Thread(target=pusher, args=(n,)) for n in range(3)]
    threads += [threading.Thread(target=target) for target in (patcher, replay_toggler, follower)]
    for thread in threads:
        thread.start()
    time.sleep(12)
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    pair.replay_resume()
    pair.caught_up()
    time.sleep(0.5)  # past REPLICA_CHECK_SECONDS: every server measures the standby afresh
    while not (
        follow_projects(mixed, topology["reader"], projects_seen, projects_state)
        and follow_feed(mixed, topology["platform_reader"], feed_seen, feed_state)
        and follow_events(mixed, topology["reader"], events_seen, events_state)
    ):
        pass

    assert failures == []
    assert counts["pushes"] > 50 and counts["patches"] > 5 and counts["pauses"] > 3, counts
    final = {}
    page = 1
    while True:  # every project's final version, read on the primary
        status, _, body = servers["primary"].call(
            "GET",
            f"/sandbox/api/v1/integration/projects?limit=100&page={page}&includeDeleted=true&exclude=data",
            topology["reader"],
        )
        assert status == 200
        final.update({item["id"]: item["updatedDate"] for item in body["items"]})
        if page >= body["totalPages"]:
            break
        page += 1
    every_event, replay = [], {}
    while not follow_events([servers["primary"]], topology["reader"], every_event, replay):
        pass  # every event of the partner environment, replayed from the start on the primary
    assert len(events_seen) == len(set(events_seen)), "an event seen twice"
    assert len(every_event) > counts["pushes"]
    assert events_seen == every_event  # from the same start: none missed, none twice, in the same order
    for seen in (projects_seen, feed_seen):
        assert len(seen) == len(set(seen)), "a version seen twice"
        assert [stamp for _, stamp in seen] == sorted(stamp for _, stamp in seen), "out of order"
        last_seen = {}
        for project_id, stamp in seen:
            last_seen[project_id] = stamp
        assert {project_id: last_seen.get(project_id) for project_id in final} == final, "a final version missed"


def test_a_stopped_standby_is_skipped_without_an_error(topology):
    pair, patient = topology["pair"], topology["servers"]["patient"]
    pair.standby.stop("immediate")
    try:
        for path, headers in [
            ("/sandbox/api/v1/integration/projects?ordering=updatedDate&limit=5", topology["reader"]),
            ("/sandbox/api/v1/integration/projects?limit=5", topology["reader"]),
            ("/platform/api/v1/changes?environment=sandbox&limit=5", topology["platform_reader"]),
            ("/sandbox/api/v1/integration/pushes?limit=5", topology["reader"]),
            ("/sandbox/api/v1/integration/events?limit=5", topology["reader"]),
        ]:
            status, _, body = patient.call("GET", path, headers)
            assert status == 200, (path, body)
        assert replica_detail(patient) == {"state": "down", "lagSeconds": None}
    finally:
        pair.standby.start()
    wait_for(lambda: replica_detail(patient)["state"] == "up")


def test_an_export_taken_on_the_standby_continues_from_its_watermark_without_a_gap(topology):
    pair, servers = topology["pair"], topology["servers"]
    primary, reader = servers["primary"], topology["reader"]
    replayed = {push(primary, topology["writer"], f"export-before-{n}", n=n)["id"] for n in range(3)}
    pair.caught_up()
    pair.replay_pause()
    try:
        unreplayed = {push(primary, topology["writer"], f"export-{n}", n=n)["id"] for n in range(5)}
        status, _, export = primary.call("POST", "/sandbox/api/v1/integration/exports", reader, {})
        assert status == 202, export
        # A worker beside the patient server (replicas configured) carries it out, on the paused standby.
        manage(
            topology["environment"],
            "shell",
            "-c",
            f"from exports.runs import export_execute; export_execute(export_id={export['id']!r})",
        )
        status, _, done = primary.call("GET", f"/sandbox/api/v1/integration/exports/{export['id']}", reader)
    finally:
        pair.replay_resume()
    assert (status, done["status"]) == (200, "done"), done
    download = done["downloadUrl"].split("://", 1)[1].split("/", 1)[1]
    exported = [json.loads(line) for line in primary.text(f"/{download}", reader).splitlines()]
    assert len(exported) == done["count"]
    assert replayed <= {item["id"] for item in exported}
    assert not unreplayed & {item["id"] for item in exported}  # read where replay stood still

    pair.caught_up()
    followed, watermark = [], done["watermark"]
    while True:  # a follower on from the export's watermark, on the primary
        status, _, page = primary.call(
            "GET",
            f"/sandbox/api/v1/integration/projects?ordering=updatedDate&limit=100&updatedDate=gt:{quote(watermark)}",
            reader,
        )
        assert status == 200, page
        if not page["items"]:
            break
        followed += page["items"]
        watermark = page["items"][-1]["updatedDate"]

    live = set()
    page_number = 1
    while True:
        status, _, page = primary.call(
            "GET", f"/sandbox/api/v1/integration/projects?limit=100&page={page_number}", reader
        )
        live |= {item["id"] for item in page["items"]}
        if page_number >= page["totalPages"]:
            break
        page_number += 1
    together = [item["id"] for item in exported] + [item["id"] for item in followed]
    assert unreplayed <= {item["id"] for item in followed}
    assert live <= set(together)  # no gap between the export and the pull after it
