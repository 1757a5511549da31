"""Webhook delivery to one endpoint: events per second from two `db_worker` processes, and push answered → event
received, each beside the same run's before (the workers of another checkout, e.g. today's main) and the bare
receiver's own ceiling.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/delivery_bench .venv/bin/python bench/webhook_throughput.py \
        --before /work/main

- The receiver is bench/webhook_receiver.py, a process of its own: asyncio, kept-alive connections, `204` at once.
  Its ceiling is measured first: two processes of eight kept-alive connections each POST event bodies at it, with
  no database and no signing (the most any sender on this machine could get through it).
- Throughput: a backlog of `--events` events (project.updated bodies of a typical size) is written for one
  endpoint, then two workers start; the rate is the receiver's: distinct events over the time from the first
  to the last arrival. The receiver's counts (requests, distinct, duplicates, statuses) and the deliveries'
  statuses are printed beside it.
- Takeover (this checkout only): two workers on a backlog, one killed with SIGKILL 3 s in; the time until every
  delivery it held has been delivered by the other (its sweep, once the leases ran out).
- Latency: the service under gunicorn, two workers, and `--push-rate` pushes a second (each a new project, so each
  one event) for `--push-seconds`; for each event, its arrival at the receiver minus the moment its push was
  answered.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import _setup
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from push_load import partner_credentials

from partners.models import Partner
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import _record, webhook_endpoint_create

SLUG = "bench-webhook-throughput"
EVENT_BODY_BYTES = 1200  # about a pushed project's event


def receiver_start(port: int) -> subprocess.Popen:
    receiver = subprocess.Popen([sys.executable, str(_setup.ROOT / "bench" / "webhook_receiver.py"), str(port)])
    for _ in range(100):
        try:
            receiver_stats(port)
            return receiver
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the receiver did not start")


def _request(port: int, method: str, path: str) -> bytes:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path)
        return connection.getresponse().read()
    finally:
        connection.close()


def receiver_stats(port: int, *, arrivals: bool = False) -> dict:
    return json.loads(_request(port, "GET", "/stats?arrivals=1" if arrivals else "/stats"))


def receiver_reset(port: int) -> None:
    _request(port, "POST", "/reset")


def _drive(port: int, seconds: float, threads: int, counts: multiprocessing.Queue) -> None:
    body = json.dumps({"type": "project.updated", "data": {"x": "a" * EVENT_BODY_BYTES}}).encode()
    done = [0] * threads

    def run(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            headers = {"Content-Type": "application/json", "webhook-id": f"load-{os.getpid()}-{index}-{done[index]}"}
            connection.request("POST", "/hooks", body=body, headers=headers)
            connection.getresponse().read()
            done[index] += 1

    workers = [threading.Thread(target=run, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    counts.put(sum(done))


def receiver_ceiling(port: int, *, seconds: float = 5, processes: int = 2, threads: int = 8) -> float:
    receiver_reset(port)
    counts: multiprocessing.Queue = multiprocessing.Queue()
    drivers = [multiprocessing.Process(target=_drive, args=(port, seconds, threads, counts)) for _ in range(processes)]
    for driver in drivers:
        driver.start()
    sent = sum(counts.get() for _ in drivers)
    for driver in drivers:
        driver.join()
    stats = receiver_stats(port)
    assert stats["requests"] == sent, (stats, sent)
    receiver_reset(port)
    return stats["distinct"] / (stats["last"] - stats["first"])


def endpoint_ready(receiver_port: int) -> WebhookEndpoint:
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    partner = Partner.objects.get(slug=SLUG)
    url = f"http://127.0.0.1:{receiver_port}/hooks"
    endpoint = WebhookEndpoint.objects.filter(partner=partner, environment="sandbox").first()
    if endpoint is None or endpoint.url != url:
        WebhookEndpoint.objects.filter(partner=partner).delete()
        endpoint, _ = webhook_endpoint_create(partner=partner, environment="sandbox", url=url)
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failures_in_a_row=0, paused_until=None)
    return endpoint


def backlog_write(endpoint: WebhookEndpoint, events: int) -> None:
    """`events` project.updated events for the endpoint, in chunks of a thousand (as a batch push writes them)."""
    WebhookDelivery.objects.filter(endpoint=endpoint).delete()
    WebhookEvent.objects.filter(partner_id=endpoint.partner_id).delete()
    DBTaskResult.objects.all().delete()
    subscribed = [{"id": endpoint.pk, "event_types": endpoint.event_types, "paused_until": None}]
    now = timezone.now().isoformat()
    for start in range(0, events, 1000):
        items = [
            (now, {"externalId": f"B-{number}", "data": {"note": "x" * EVENT_BODY_BYTES}}, {"changedFields": ["data"]})
            for number in range(start, min(events, start + 1000))
        ]
        _record(
            partner_id=endpoint.partner_id,
            environment="sandbox",
            event_type="project.updated",
            endpoints=subscribed,
            items=items,
        )


def _environment() -> dict:
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": os.environ["SECRET_KEY"],
        "TASKS_BACKEND": "django_tasks_db.DatabaseBackend",
        "WEBHOOK_ALLOW_PRIVATE_URLS": "1",
        "LOG_LEVEL": "WARNING",
    }


def workers_start(tree: Path, count: int) -> list[subprocess.Popen]:
    command = [str(tree / ".venv" / "bin" / "python"), "manage.py", "db_worker", "--no-reload", "--verbosity", "0"]
    return [
        subprocess.Popen(command, cwd=tree, env=_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count)
    ]


def processes_stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def statuses(endpoint: WebhookEndpoint) -> dict:
    rows = WebhookDelivery.objects.filter(endpoint=endpoint).values_list("status", flat=True)
    counts: dict[str, int] = {}
    for status in rows:
        counts[status] = counts.get(status, 0) + 1
    return counts


def throughput(*, tree: Path, endpoint: WebhookEndpoint, events: int, workers: int, port: int, limit: float) -> dict:
    backlog_write(endpoint, events)
    receiver_reset(port)
    started = time.monotonic()
    processes = workers_start(tree, workers)
    try:
        while time.monotonic() - started < limit:
            stats = receiver_stats(port)
            if stats["distinct"] >= events:
                break
            time.sleep(0.25)
        time.sleep(0.5)  # outcomes written after the last answer
    finally:
        processes_stop(processes)
    stats = receiver_stats(port)
    span = (stats["last"] - stats["first"]) if stats["requests"] > 1 else 0
    return {
        "events/s": stats["distinct"] / span if span else 0,
        "seconds": round(span, 1),
        "receiver": {key: stats[key] for key in ("requests", "distinct", "duplicates", "statuses")},
        "deliveries": statuses(endpoint),
    }


def takeover(*, tree: Path, endpoint: WebhookEndpoint, events: int, port: int) -> dict:
    """Two workers on a backlog; one is killed with SIGKILL 3 s in. How long until every delivery it held (leased,
    pending) has been delivered by the other, with no new event, task or cron."""
    backlog_write(endpoint, events)
    receiver_reset(port)
    processes = workers_start(tree, 2)
    try:
        time.sleep(3)
        processes[0].kill()
        killed_at = time.monotonic()
        processes[0].wait()
        held = list(
            WebhookDelivery.objects.filter(
                endpoint=endpoint, status="pending", attempts__gte=1, next_attempt_at__gt=timezone.now()
            ).values_list("id", flat=True)
        )
        DBTaskResult.objects.all().delete()  # no queued drain left to wake anyone: only the sweep
        while WebhookDelivery.objects.filter(id__in=held).exclude(status="succeeded").exists():
            if time.monotonic() - killed_at > 120:
                break
            time.sleep(0.1)
        taken_up = time.monotonic() - killed_at
        while receiver_stats(port)["distinct"] < events and time.monotonic() - killed_at < 120:
            time.sleep(0.25)
    finally:
        processes_stop(processes)
    stats = receiver_stats(port)
    return {
        "held by the killed worker": len(held),
        "all of them delivered after, s": round(taken_up, 1),
        "receiver": {key: stats[key] for key in ("requests", "distinct", "duplicates", "statuses")},
        "deliveries": statuses(endpoint),
    }


def service_start(tree: Path, port: int) -> subprocess.Popen:
    python = str(tree / ".venv" / "bin" / "python")
    environment = {**_environment(), "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0", "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "0"}
    server = subprocess.Popen(
        [python, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
        cwd=tree,
        env=environment,
        stderr=subprocess.DEVNULL,
    )
    _setup.wait_until_serving(f"http://127.0.0.1:{port}")
    return server


def latency(*, tree: Path, endpoint: WebhookEndpoint, port: int, web_port: int, rate: float, seconds: float) -> dict:
    WebhookDelivery.objects.filter(endpoint=endpoint).delete()
    DBTaskResult.objects.all().delete()
    token, key = partner_credentials(SLUG)
    receiver_reset(port)
    server = service_start(tree, web_port)
    processes = workers_start(tree, 2)
    answered: dict[str, float] = {}
    answers: dict[int, int] = {}
    run = f"{int(time.time())}"
    try:
        time.sleep(2)  # the workers are up and idle, as they would be between pushes
        connection = http.client.HTTPConnection("127.0.0.1", web_port, timeout=10)
        headers = {"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"}
        count = int(rate * seconds)
        start = time.monotonic()
        for number in range(count):
            time.sleep(max(0.0, start + number / rate - time.monotonic()))
            external_id = f"L-{run}-{number}"
            body = json.dumps({"id": external_id, "data": {"n": number}})
            connection.request("POST", "/sandbox/api/v1/externals/push", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            answered[external_id] = time.time()
            answers[response.status] = answers.get(response.status, 0) + 1
        deadline = time.monotonic() + 30
        while receiver_stats(port)["distinct"] < count and time.monotonic() < deadline:
            time.sleep(0.25)
    finally:
        processes_stop([*processes, server])
    stats = receiver_stats(port, arrivals=True)
    bodies = dict(WebhookEvent.objects.filter(partner_id=endpoint.partner_id).values_list("id", "body"))
    first_arrival: dict[str, float] = {}
    for webhook_id, arrival in stats["arrivals"]:
        first_arrival.setdefault(webhook_id, arrival)
    delays = []
    for webhook_id, arrival in first_arrival.items():
        external_id = json.loads(bodies[webhook_id])["data"]["externalId"]
        if external_id in answered:
            delays.append(max(0.0, arrival - answered[external_id]) * 1000)
    return {
        "pushes": answers,
        "events received": len(delays),
        "p50 ms": round(_setup.percentile(delays, 0.5), 1) if delays else None,
        "p95 ms": round(_setup.percentile(delays, 0.95), 1) if delays else None,
        "max ms": round(max(delays), 1) if delays else None,
        "receiver": {key: stats[key] for key in ("requests", "distinct", "duplicates", "statuses")},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", type=Path, help="a checkout whose workers (its .venv) are the before")
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--before-events", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8390, help="the receiver's")
    parser.add_argument("--web-port", type=int, default=8391, help="the service's, for the latency rows")
    parser.add_argument("--push-rate", type=float, default=50)
    parser.add_argument("--push-seconds", type=float, default=20)
    parser.add_argument("--only", choices=["throughput", "latency", "takeover"])
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    partner_credentials(SLUG)
    receiver = receiver_start(args.port)
    try:
        endpoint = endpoint_ready(args.port)
        trees = [("after", _setup.ROOT, args.events)]
        if args.before:
            trees.insert(0, ("before", args.before.resolve(), args.before_events))
        results = {}
        if args.only in (None, "throughput"):
            results["bare receiver's ceiling, events/s"] = round(receiver_ceiling(args.port))
            for name, tree, events in trees:
                result = throughput(
                    tree=tree, endpoint=endpoint, events=events, workers=args.workers, port=args.port, limit=300
                )
                results[f"throughput {name}"] = result
                print(name, json.dumps(result), flush=True)
        if args.only in (None, "takeover"):
            result = takeover(tree=_setup.ROOT, endpoint=endpoint, events=args.events, port=args.port)
            results["takeover after a kill -9"] = result
            print("takeover", json.dumps(result), flush=True)
        if args.only in (None, "latency"):
            for name, tree, _ in trees:
                result = latency(
                    tree=tree,
                    endpoint=endpoint,
                    port=args.port,
                    web_port=args.web_port,
                    rate=args.push_rate,
                    seconds=args.push_seconds,
                )
                results[f"latency {name}"] = result
                print(name, json.dumps(result), flush=True)
        print(json.dumps(results, indent=2))
    finally:
        receiver.terminate()
        receiver.wait()


if __name__ == "__main__":
    main()
