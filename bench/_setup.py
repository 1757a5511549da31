"""Shared set-up for the benchmarks: Django on the database of DATABASE_URL (a PostgreSQL one, see README)."""

import http.client
import importlib
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "integration_service.settings")
os.environ.setdefault("DEBUG", "0")  # DEBUG would keep every query in memory
os.environ.setdefault("SECRET_KEY", "benchmarks-only")
# Without REDIS_URL the servers started here count rate limits in each worker's memory, as the figures without it
# were measured; with DEBUG off the service refuses that unless told (partners/checks.py).
os.environ.setdefault("LOCAL_CACHE_ALLOWED", "1")

import django  # noqa: E402

django.setup()


def free_port() -> int:
    """A free port in 20000-29999, at random (the range this shared machine's benchmarks use)."""
    while True:
        port = random.randint(20_000, 29_999)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def baseline_start(port: int) -> subprocess.Popen:
    """bench/baseline/'s bare Django app under the same gunicorn (gunicorn.conf.py) on 127.0.0.1:`port`."""
    bind = ["--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", *bind, "bench.baseline.wsgi:application"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "bench.baseline.settings"},
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/bench/baseline-page?limit=1", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    return server


def wait_until_serving(base: str) -> None:
    """Wait (10 s at most) until the server at `base` answers its schema page."""
    for _ in range(100):
        try:
            urllib.request.urlopen(base + "/api/v1/schema/", timeout=1)
            return
        except OSError:
            time.sleep(0.1)


def service_start(port: int, root: Path = ROOT) -> subprocess.Popen:
    """The service under gunicorn (gunicorn.conf.py, as production runs it) on 127.0.0.1:`port`, rate limits off;
    returns once it answers. Stop it with terminate() and wait(). `root`: another checkout of the service to serve
    (e.g. a worktree of main, for figures before and after a change in one run), with this one's packages."""
    env = {**os.environ, "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0", "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "0"}
    if Path(root).resolve() != ROOT:
        # Its own settings: the wsgi module its gunicorn.conf.py names chooses them (this tree's module name may not
        # exist there, or, found through this tree's packages, would mix the two trees' code).
        env.pop("DJANGO_SETTINGS_MODULE", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
        cwd=root,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    wait_until_serving(f"http://127.0.0.1:{port}")
    return server


class Follower:
    """A follower's HTTP client: one kept-alive connection (http.client) for every request, as a follower that
    pages all day holds it, or a new connection a request (`keep_alive=False`, urllib's way). It adds up the client's
    own time: waiting for and reading the answer (`read`), and json.loads (`parse`); and counts chunked answers."""

    def __init__(self, *, keep_alive: bool = True, timeout: float = 60) -> None:
        self.keep_alive, self.timeout = keep_alive, timeout
        self.connection: http.client.HTTPConnection | None = None
        self.read = self.parse = 0.0
        self.chunked = self.requests = 0

    def get(self, url: str, headers: dict) -> tuple[int, object]:
        """(status, the parsed JSON body) of GET `url`."""
        parts = urllib.parse.urlsplit(url)
        began = time.perf_counter()
        for attempt in (1, 2):  # a kept-alive connection the server closed meanwhile is opened again, once
            if self.connection is None:
                self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.timeout)
            try:
                self.connection.request("GET", f"{parts.path}?{parts.query}", headers=headers)
                answer = self.connection.getresponse()
                body = answer.read()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 2:
                    raise
        read = time.perf_counter()
        self.requests += 1
        self.chunked += answer.getheader("Transfer-Encoding", "") == "chunked"
        if not self.keep_alive or answer.will_close:
            self.close()
        page = json.loads(body) if body else None
        self.read += read - began
        self.parse += time.perf_counter() - read
        return answer.status, page

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def summary(self) -> str:
        mode = "kept-alive connection" if self.keep_alive else "a connection a request"
        requests = max(1, self.requests)
        return (
            f"{mode}: {self.requests:,} requests, {self.chunked:,} chunked; client ms a page: request and read "
            f"{self.read / requests * 1000:.2f}, json.loads {self.parse / requests * 1000:.2f}"
        )


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def hubspot_like_record(number: int) -> dict:
    """A HubSpot-shaped deal, the shape the demo mapping document reads."""
    return {
        "properties": {
            "dealname": f"Residence {number} PV",
            "dealstage": ("closedwon", "presentationscheduled", "appointmentscheduled")[number % 3],
            "firstname": f"First{number}",
            "lastname": f"Last{number}",
            "email": f"Customer.{number}@Example.com",
            "phone": f"(503) 421-{number % 10000:04d}",
            "city": "Portland",
            "state": "OR",
            "system_size_w": str(4000 + number % 9000),
            "panel_count": str(10 + number % 30),
            "amount": f"{15000 + number % 30000}.00",
            "closedate": str(1704067200000 + number * 86400),
            "hs_object_id": str(900000 + number),
            "notes_last_contacted": "",
        }
    }


def lua_record(number: int, counter: int) -> dict:
    """The record bench/push.lua and bench/batch.lua send: deal `number`, the `counter`-th request's amount."""
    return {
        "id": f"HS-{number}",
        "data": {
            "properties": {
                "dealname": f"Residence {number}",
                "dealstage": "closedwon",
                "firstname": "Ana",
                "lastname": f"Smith{number}",
                "email": f"Customer.{number}@Example.com",
                "phone": f"(503) 421-{number % 10000:04d}",
                "city": "Portland",
                "state": "OR",
                "system_size_w": str(4000 + number % 9000),
                "panel_count": str(10 + number % 30),
                "amount": f"{15000 + counter % 30000}.00",
                "closedate": "1767225600000",
                "hs_object_id": str(900000 + number),
            }
        },
    }


def baseline_table_create() -> None:
    """The table bench/urls.py's bare upsert writes."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_baseline "
            "(external_id text PRIMARY KEY, data jsonb, updated_at timestamptz)"
        )


def projects_create(url: str, credentials: list[tuple[str, str]], ids: int) -> None:
    """Every id bench/changing.lua's two wrk threads send (BENCH_IDS=`ids` each), for every partner, through the
    batch endpoint at `url`, so that the measured pushes all update."""
    for token, key in credentials:
        for start in range(1, 2 * ids + 1, 500):
            numbers = range(start, min(start + 500, 2 * ids + 1))
            records = [{"id": f"HS-{number}", "data": hubspot_like_record(number)} for number in numbers]
            request = urllib.request.Request(
                url,
                data=json.dumps({"records": records}).encode(),
                headers={"Authorization": f"Bearer {token}", "ClientID": key, "Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=60) as answer:
                assert answer.status == 200


def baseline_rows_create(ids: int) -> None:
    """The baseline's rows for the same ids, so that its measured upserts all update too."""
    from django.db import connection

    baseline_table_create()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_baseline (external_id, data, updated_at) "
            "SELECT 'HS-' || number, '{}'::jsonb, now() FROM generate_series(1, %s) AS number "
            "ON CONFLICT (external_id) DO NOTHING",
            [2 * ids],
        )


@contextmanager
def timers(entries: list[tuple[str, str | None, str, str]]) -> Iterator[dict[str, list[float]]]:
    """While the block runs, each (module, class or None, function, label) of `entries` is wrapped in a timer of
    CPU and wall seconds (a microsecond's overhead, unlike cProfile): yields {label: [cpu, wall]}, filled as they
    run. An entry this tree does not have (main's, before a change) is left out."""
    spent: dict[str, list[float]] = {}
    originals = []
    for module_name, class_name, function_name, label in entries:
        owner = importlib.import_module(module_name)
        owner = getattr(owner, class_name) if class_name else owner
        if not hasattr(owner, function_name):
            continue
        original = owner.__dict__.get(function_name)  # None: inherited, the wrapper then shadows it
        function = original.__func__ if isinstance(original, staticmethod) else getattr(owner, function_name)

        def timed(*args, _function=function, _label=label, **kwargs):
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return _function(*args, **kwargs)
            finally:
                times = spent.setdefault(_label, [0.0, 0.0])
                times[0] += time.process_time() - cpu
                times[1] += time.perf_counter() - wall

        setattr(owner, function_name, staticmethod(timed) if isinstance(original, staticmethod) else timed)
        originals.append((owner, function_name, original))
    try:
        yield spent
    finally:
        for owner, function_name, original in originals:
            if original is None:
                delattr(owner, function_name)
            else:
                setattr(owner, function_name, original)
