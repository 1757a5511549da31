"""Follower pages on the primary alone and beside a streaming replica, under a push load; the replica's lag under
batch pushes (issue #28 item 4).

    REDIS_URL=redis://127.0.0.1:6379/4 .venv/bin/python bench/replica_reads.py

Needs Debian's PostgreSQL binaries (as deploy/local_cluster.py does): the benchmark builds its own primary and
streaming hot standby on loopback ports in a temporary directory (`streaming_pair()`: fsync off, shared_buffers
32 MB, hot_standby_feedback on), so it takes no DATABASE_URL, and removes both when it ends.

1. Seeds one partner with the demo mappings and --projects sandbox projects through the batch push endpoint (500 a
   request), then ANALYZE, and waits until the standby has replayed it all.
2. Reference rows, read by --followers clients and nothing else: bench/baseline/'s bare page read on the primary
   (one statement, no authentication, Django's JSON encoder), then the service's follower page (below) served by
   the primary, then by the standby.
3. The comparison, with the same load: --pushers clients pushing single records steadily (each record a new value,
   so every push changes its project; answers counted by status and changed/unchanged) and --followers clients
   paging `ordering=updatedDate&updatedDate=gt:<watermark>&limit=100&exclude=data` with a ClientID that never
   writes (so read-your-writes never keeps them on the primary), each from its own place in the list and back to
   the start once caught up, so that pages are full. (A) with DATABASE_REPLICA_URLS empty, (B) with it naming the
   standby; --rounds repeats the pair A, B. Reported: follower pages/s and records/s, pushes/s, p50/p99 of each,
   the CPU seconds the primary's and the standby's PostgreSQL processes used in the measured window (from /proc:
   the postmaster's own and its reaped children's, plus its live children's utime + stime), and
   integration_routed_reads_total by database from the server's /metrics over the same window.
4. The replica's lag under batches: --batch-clients clients push batches of --batch-size records (each record a
   new value) as fast as they answer for --lag-seconds, while the standby's lag is sampled every 100 ms: in bytes,
   the primary's pg_current_wal_lsn() against the standby's pg_last_wal_replay_lsn(), and in seconds, /readyz's
   details.replicas.replica_1.lagSeconds (the server measures with REPLICA_CHECK_SECONDS=0.1 in this run, so
   each sample is at most 100 ms old).

Every server is gunicorn -c gunicorn.conf.py with --workers x --threads (2 x 8), rate limits off, on 127.0.0.1
--port (the service) and --port + 1 (the bare app). Load generator, servers and both databases share the machine:
the load average before and after each run is printed beside its figures.
"""

import argparse
import collections
import contextlib
import http.client
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deploy.local_cluster import Cluster, StreamingPair, streaming_pair  # noqa: E402

DATABASE = "integration_bench_replicas"
SLUG = "bench-replicas"
PAGE = "/sandbox/api/v1/integration/projects"
PUSH = "/sandbox/api/v1/externals/push"
BATCH = "/sandbox/api/v1/externals/push/batch"
IDS_PER_PUSHER = 1000


# --- the clients (run in processes of their own, one per kind of client, so that their GIL is not the server's)


def changed_record(deal: Callable[[int], dict], number: int, run: str, sent: int) -> dict:
    """Deal `number` as `deal` (bench/_setup.py's hubspot_like_record) shapes it, with an amount and a stamp that no
    push of this run or another has sent it: every push of it is a change."""
    data = deal(number)
    data["properties"]["amount"] = f"{15000 + sent % 30000}.00"
    data["properties"]["hs_lastmodifieddate"] = f"{run}-{sent}"
    return {"id": f"HS-{number}", "data": data}


class Connection:
    """One kept-alive HTTP connection, opened again once when the server closed it meanwhile."""

    def __init__(self, base: str) -> None:
        parts = urllib.parse.urlsplit(base)
        self.host, self.port = parts.hostname, parts.port
        self.connection: http.client.HTTPConnection | None = None

    def call(self, method: str, path: str, headers: dict, body: object = None) -> tuple[int, object]:
        """(status, the parsed JSON answer); status 0 when no answer came."""
        data = None if body is None else json.dumps(body).encode()
        headers = {**headers, "Content-Type": "application/json"} if data is not None else headers
        for attempt in (1, 2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
            try:
                self.connection.request(method, path, body=data, headers=headers)
                answer = self.connection.getresponse()
                text = answer.read()
                if answer.will_close:
                    self.close()
                break
            except (http.client.HTTPException, OSError):
                self.close()
                if attempt == 2:
                    return 0, None
        try:
            return answer.status, json.loads(text) if text else None
        except ValueError:
            return answer.status, None

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


class Tally:
    """One client's answers: latencies of the requests that ended inside the measured window, and counts."""

    def __init__(self, window: tuple[float, float]) -> None:
        self.window = window
        self.latencies: list[float] = []
        self.counts: collections.Counter = collections.Counter()

    def inside(self, ended: float) -> bool:
        return self.window[0] <= ended <= self.window[1]


def pusher(base: str, headers: dict, deal: Callable[[int], dict], first: int, run: str, tally: Tally) -> None:
    """Single pushes of projects first .. first + IDS_PER_PUSHER - 1 in turn, each a new amount and stamp."""
    client, sent = Connection(base), 0
    while time.time() < tally.window[1]:
        number = first + sent % IDS_PER_PUSHER
        sent += 1
        began = time.perf_counter()
        status, answer = client.call("POST", PUSH, headers, changed_record(deal, number, run, sent))
        if tally.inside(time.time()):
            tally.latencies.append(time.perf_counter() - began)
            tally.counts[f"http {status}"] += 1
            if isinstance(answer, dict) and "changed" in answer:
                tally.counts["changed" if answer["changed"] else "unchanged"] += 1
    client.close()


def batch_pusher(
    base: str, headers: dict, deal: Callable[[int], dict], numbers: list[int], size: int, run: str, tally: Tally
) -> None:
    """Batches of `size` records of `numbers` in turn, each record a new amount and stamp, one after another."""
    client, sent = Connection(base), 0
    while time.time() < tally.window[1]:
        records = []
        for _ in range(size):
            sent += 1
            records.append(changed_record(deal, numbers[sent % len(numbers)], run, sent))
        began = time.perf_counter()
        status, answer = client.call("POST", BATCH, headers, {"records": records})
        if tally.inside(time.time()):
            tally.latencies.append(time.perf_counter() - began)
            tally.counts[f"http {status}"] += 1
            for result in answer.get("results", []) if isinstance(answer, dict) else []:
                tally.counts[f"record {result.get('status')}"] += 1
                tally.counts["changed" if result.get("changed") else "unchanged"] += 1
    client.close()


def follower(base: str, headers: dict, page: Callable[[str | None], str], start: str | None, tally: Tally) -> None:
    """Pages from `start` on, each request after the last answer; back to the start of the list once caught up."""
    client, watermark = Connection(base), start
    while time.time() < tally.window[1]:
        began = time.perf_counter()
        status, answer = client.call("GET", page(watermark), headers)
        items = answer.get("items", []) if status == 200 and isinstance(answer, dict) else []
        if tally.inside(time.time()):
            tally.latencies.append(time.perf_counter() - began)
            tally.counts[f"http {status}"] += 1
            tally.counts["records"] += len(items)
        if status == 200 and len(items) == 100:
            watermark = answer.get("after") or items[-1]["updatedDate"]
        elif status == 200:
            watermark = None  # caught up: from the start again
    client.close()


def service_page(watermark: str | None) -> str:
    query = {"ordering": "updatedDate", "limit": 100, "exclude": "data"}
    if watermark:
        query["updatedDate"] = f"gt:{watermark}"
    return f"{PAGE}?{urllib.parse.urlencode(query)}"


def bare_page(partner_id: int) -> Callable[[str | None], str]:
    def page(watermark: str | None) -> str:
        query = {
            "partner": partner_id,
            "environment": "sandbox",
            "limit": 100,
            **({"after": watermark} if watermark else {}),
        }
        return f"/bench/baseline-page?{urllib.parse.urlencode(query)}"

    return page


def _clients(jobs: list[tuple[Callable, tuple]], window: tuple[float, float], results) -> None:
    """In a process of its own: each job a thread; puts the merged latencies and counts on `results`."""
    tallies = [Tally(window) for _ in jobs]
    threads = [
        threading.Thread(target=job, args=(*arguments, tally))
        for (job, arguments), tally in zip(jobs, tallies, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    latencies: list[float] = []
    counts: collections.Counter = collections.Counter()
    for tally in tallies:
        latencies += tally.latencies
        counts.update(tally.counts)
    results.put([latencies, dict(counts)])


@contextlib.contextmanager
def load(groups: dict[str, list[tuple[Callable, tuple]]], window: tuple[float, float]) -> Iterator[dict]:
    """Each group of client jobs in a process of its own, running until the window's end; yields a dict that holds
    each group's (latencies, counts) once the block's body has returned and the clients have ended."""
    context = multiprocessing.get_context("fork")
    queues = {name: context.Queue() for name in groups}
    processes = {
        name: context.Process(target=_clients, args=(jobs, window, queues[name]), daemon=True)
        for name, jobs in groups.items()
    }
    for process in processes.values():
        process.start()
    results: dict = {}
    try:
        yield results
    finally:
        for name, process in processes.items():
            results[name] = queues[name].get(timeout=window[1] - time.time() + 120)
            process.join(timeout=30)


# --- what the databases and the server say


def cpu_seconds(cluster: Cluster) -> float:
    """CPU seconds (user + system) of a PostgreSQL server's processes so far: the postmaster's own and its reaped
    children's, and its live children's (backends, walsender or startup/walreceiver, checkpointer, ...)."""
    postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, rest = stat.read_text().split(" ", 1)
        except OSError:  # ended meanwhile
            continue
        fields = rest.rsplit(")", 1)[1].split()  # after the command's name: state, ppid, ...
        if int(pid) == postmaster:
            ticks += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
        elif int(fields[1]) == postmaster:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def routed_reads(base: str) -> collections.Counter:
    """integration_routed_reads_total of the server (all its processes), summed by database."""
    with urllib.request.urlopen(f"{base}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    served: collections.Counter = collections.Counter()
    for line in text.splitlines():
        if line.startswith("integration_routed_reads_total{"):
            labels, value = line.split("{", 1)[1].rsplit("} ", 1)
            database = dict(pair.split("=", 1) for pair in labels.split(","))["database"].strip('"')
            served[database] += float(value)
    return served


def wal_lag_sampled(pair: StreamingPair, stop: threading.Event, samples: list[tuple[float, float]]) -> None:
    """Every 100 ms, (when, bytes): how much WAL the primary has written that the standby has not yet replayed."""

    def dsn(cluster: Cluster) -> str:
        return f"host=127.0.0.1 port={cluster.port} user=postgres dbname={DATABASE}"

    with (
        psycopg.connect(dsn(pair.primary), autocommit=True) as primary,
        psycopg.connect(dsn(pair.standby), autocommit=True) as standby,
    ):
        while not stop.wait(0.1):
            replayed = standby.execute("SELECT pg_last_wal_replay_lsn()").fetchone()[0]
            behind = primary.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", [replayed]).fetchone()
            samples.append((time.time(), max(0.0, float(behind[0]))))


def readyz_lag_sampled(base: str, stop: threading.Event, samples: list[tuple[float, float]]) -> None:
    """Every 100 ms, or as soon as the last answer came, (when, seconds): /readyz's
    details.replicas.replica_1.lagSeconds."""
    client = Connection(base)
    while not stop.wait(0.1):
        status, answer = client.call("GET", "/readyz", {})
        lag = (answer or {}).get("details", {}).get("replicas", {}).get("replica_1", {}).get("lagSeconds")
        if status == 200 and lag is not None:
            samples.append((time.time(), lag))
    client.close()


# --- the runs


def percentile(values: list, fraction: float) -> float:
    import _setup

    return _setup.percentile(values, fraction)


def percentile_ms(values: list[float], fraction: float) -> str:
    return f"{percentile(values, fraction) * 1000:,.1f}" if values else "-"


def counts_text(counts: dict) -> str:
    return ", ".join(f"{name}={number:,}" for name, number in sorted(counts.items()) if name != "records")


@contextlib.contextmanager
def served(port: int, *, bare: bool = False, **environment: str) -> Iterator[str]:
    """The service (or bench/baseline/'s bare app) under gunicorn -c gunicorn.conf.py on 127.0.0.1:`port`, with
    `environment` added to the bench's own and a metrics directory of its own; yields its base URL."""
    import _setup

    saved = dict(os.environ)
    metrics = tempfile.mkdtemp(prefix="bench-replicas-metrics-")
    os.environ.update({**environment, "PROMETHEUS_MULTIPROC_DIR": metrics})
    try:
        server = _setup.baseline_start(port) if bare else _setup.service_start(port)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=60)
        shutil.rmtree(metrics, ignore_errors=True)


def starts(pair: StreamingPair, partner_id: int, count: int) -> list[str | None]:
    """`count` places spread over the partner's list by updatedDate, for followers to start from (the first: the
    list's start), so that they do not read the same pages in step."""
    total = int(
        pair.primary.sql(f"SELECT count(*) FROM projects_project WHERE partner_id = {partner_id}", database=DATABASE)
    )
    places: list[str | None] = [None]
    for number in range(1, count):
        places.append(
            pair.primary.sql(
                "SELECT to_char(updated_date AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') "
                f"FROM projects_project WHERE partner_id = {partner_id} "
                f"ORDER BY updated_date, id OFFSET {number * total // count} LIMIT 1",
                database=DATABASE,
            )
        )
    return places


def measured(
    pair: StreamingPair,
    base: str,
    groups: dict[str, list[tuple[Callable, tuple]]],
    *,
    warmup: float,
    seconds: float,
    readyz: bool = False,
) -> dict:
    """The groups of clients run for warmup + seconds; what the databases and the server did in the last `seconds`,
    and the standby's lag sampled all along (bytes; with `readyz`, the server's lagSeconds too)."""
    began = time.time() + 0.5
    window = (began + warmup, began + warmup + seconds)
    load_before = os.getloadavg()
    samples: dict[str, list[tuple[float, float]]] = {"bytes": [], "seconds": []}
    stop = threading.Event()
    with load(groups, window) as results:  # the samplers' threads start after the clients' processes are forked
        samplers = [threading.Thread(target=wal_lag_sampled, args=(pair, stop, samples["bytes"]))]
        if readyz:
            samplers.append(threading.Thread(target=readyz_lag_sampled, args=(base, stop, samples["seconds"])))
        for sampler in samplers:
            sampler.start()
        try:
            time.sleep(max(0.0, window[0] - time.time()))
            cpu = (cpu_seconds(pair.primary), cpu_seconds(pair.standby))
            reads = routed_reads(base) if base else collections.Counter()
            time.sleep(max(0.0, window[1] - time.time()))
            cpu = (cpu_seconds(pair.primary) - cpu[0], cpu_seconds(pair.standby) - cpu[1])
            reads = (routed_reads(base) if base else collections.Counter()) - reads
            load_during = os.getloadavg()
        finally:
            stop.set()
            for sampler in samplers:
                sampler.join()
    return {
        **{name: {"latencies": latencies, "counts": counts} for name, (latencies, counts) in results.items()},
        "seconds": seconds,
        "cpu": cpu,
        "reads": dict(reads),
        "load": (load_before[0], load_during[0]),
        "lag": {
            kind: {
                "warm-up": [value for when, value in values if when < window[0]],
                "window": [value for when, value in values if window[0] <= when <= window[1]],
            }
            for kind, values in samples.items()
        },
    }


def lag_text(values: list[float], unit: str) -> str:
    if not values:
        return "no samples"
    scale, digits = (1024, 0) if unit == "KiB" else (1, 3)
    figures = (statistics.median(values), percentile(values, 0.99), max(values))
    shown = " / ".join(f"{value / scale:,.{digits}f}" for value in figures)
    return f"p50 / p99 / max {shown} {unit} ({len(values)} samples)"


def row(name: str, result: dict) -> str:
    seconds = result["seconds"]
    pages = result["followers"]
    pushes = result.get("pushers", {"latencies": [], "counts": {}})
    page_count, push_count = len(pages["latencies"]), len(pushes["latencies"])
    primary_cpu, standby_cpu = result["cpu"]
    per_page = f"{primary_cpu / page_count * 1000:.2f}" if page_count else "-"
    reads = ", ".join(f"{database} {number:,.0f}" for database, number in sorted(result["reads"].items()))
    reads = reads or "- (counted only where replicas are configured)"
    return (
        f"| {name} | {page_count / seconds:,.1f} | {pages['counts'].get('records', 0) / seconds:,.0f} | "
        f"{percentile_ms(pages['latencies'], 0.5)} / {percentile_ms(pages['latencies'], 0.99)} | "
        + (
            f"{push_count / seconds:,.1f} | {percentile_ms(pushes['latencies'], 0.5)} / "
            f"{percentile_ms(pushes['latencies'], 0.99)} | "
            if push_count
            else "- | - | "
        )
        + f"{primary_cpu:.1f} | {standby_cpu:.1f} | {per_page} | {reads} | "
        f"{result['load'][0]:.1f} / {result['load'][1]:.1f} |"
    )


def answers(name: str, result: dict) -> str:
    parts = [f"followers {counts_text(result['followers']['counts'])}"]
    if "pushers" in result:
        parts.append(f"pushes {counts_text(result['pushers']['counts'])}")
    parts.append(f"WAL the standby had not replayed: {lag_text(result['lag']['bytes']['window'], 'KiB')}")
    return f"- {name}: " + "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=50_000, help="projects seeded (default 50,000)")
    parser.add_argument("--pushers", type=int, default=4, help="clients pushing single records (default 4)")
    parser.add_argument("--followers", type=int, default=4, help="clients paging (default 4)")
    parser.add_argument("--seconds", type=float, default=45, help="measured seconds of each run A and B (45)")
    parser.add_argument("--reference-seconds", type=float, default=20, help="of each reference row (20)")
    parser.add_argument("--warmup", type=float, default=5, help="seconds of load before each window (5)")
    parser.add_argument("--rounds", type=int, default=1, help="runs A, B repeated (1)")
    parser.add_argument("--batch-clients", type=int, default=4, help="clients pushing batches in the lag run (4)")
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--lag-seconds", type=float, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--port", type=int, default=18901, help="the service's; the bare app's is the next one")
    args = parser.parse_args()
    if args.projects < args.pushers * IDS_PER_PUSHER or args.projects < args.batch_clients * args.batch_size:
        parser.error("--projects must hold every pusher's and batch client's projects")

    with streaming_pair() as pair:
        pair.primary.sql(f"CREATE DATABASE {DATABASE}")
        os.environ["DATABASE_URL"] = pair.primary.url(DATABASE)
        os.environ.setdefault("CACHE_KEY_PREFIX", f"bench-replicas-{uuid.uuid4().hex[:8]}")
        os.environ.update({"WORKERS": str(args.workers), "THREADS": str(args.threads)})
        benchmark(pair, args)


def benchmark(pair: StreamingPair, args: argparse.Namespace) -> None:
    import _setup  # Django, on the primary this process just built
    from django.core.management import call_command
    from push_load import partner_credentials

    from partners.models import Partner
    from partners.services import client_id_issue

    call_command("migrate", verbosity=0)
    token, writer_key = partner_credentials(SLUG)
    partner = Partner.objects.get(slug=SLUG)
    _, reader_key = client_id_issue(partner=partner, environment="sandbox", label="bench follower, never writes")
    writer = {"Authorization": f"Bearer {token}", "ClientID": writer_key}
    reader = {"Authorization": f"Bearer {token}", "ClientID": reader_key}
    replica = {"DATABASE_REPLICA_URLS": pair.standby.url(DATABASE)}
    print(
        f"primary :{pair.primary.port}, standby :{pair.standby.port}; gunicorn {args.workers} x {args.threads}; "
        f"REDIS_URL={os.environ.get('REDIS_URL') or '(none: each worker its own cache)'}",
        flush=True,
    )

    began = time.perf_counter()
    with served(args.port) as base:
        _setup.projects_create(base + BATCH, [(token, writer_key)], (args.projects + 1) // 2)
    pair.primary.sql("ANALYZE", database=DATABASE)
    pair.caught_up(timeout=120)
    print(f"seeded {args.projects:,} projects through the batch endpoint in {time.perf_counter() - began:.0f} s")

    def followers(base: str, page: Callable[[str | None], str], headers: dict) -> list:
        return [(follower, (base, headers, page, start)) for start in starts(pair, partner.pk, args.followers)]

    def pushers(base: str, run: str) -> list:
        return [
            (pusher, (base, writer, _setup.hubspot_like_record, n * IDS_PER_PUSHER + 1, run))
            for n in range(args.pushers)
        ]

    results: dict[str, dict] = {}
    timing = {"warmup": args.warmup, "seconds": args.reference_seconds}
    with served(args.port + 1, bare=True) as base:
        groups = {"followers": followers(base, bare_page(partner.pk), {})}
        results["bare Django page (bench/baseline/), primary, followers only"] = measured(pair, "", groups, **timing)
    for name, environment in (("primary", {}), ("replica", replica)):
        with served(args.port, **environment) as base:
            groups = {"followers": followers(base, service_page, reader)}
            results[f"service, {name}, followers only"] = measured(pair, base, groups, **timing)
    timing["seconds"] = args.seconds
    for round_number in range(1, args.rounds + 1):
        for name, environment in (("A: primary alone", {}), ("B: primary + replica", replica)):
            pair.caught_up(timeout=120)
            with served(args.port, **environment) as base:
                run = f"{name[0]}{round_number}-{uuid.uuid4().hex[:6]}"
                groups = {"followers": followers(base, service_page, reader), "pushers": pushers(base, run)}
                label = f"{name}, under pushes" + (f" (round {round_number})" if args.rounds > 1 else "")
                results[label] = measured(pair, base, groups, **timing)
            print(f"{label}: done", flush=True)

    print(
        f"\n{args.projects:,} projects; {args.followers} followers (pages of 100, exclude=data), {args.pushers} "
        f"pushers (single records, each a change); {args.warmup:.0f} s warm-up, then {args.reference_seconds:.0f} s "
        f"(references) / {args.seconds:.0f} s (A, B) measured"
    )
    print(
        "| run | follower pages/s | records/s | page p50 / p99 ms | pushes/s | push p50 / p99 ms | primary CPU s | "
        "standby CPU s | primary CPU ms / page | reads served (routed_reads_total) | load avg before / end |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, result in results.items():
        print(row(name, result))
    print("\nAnswers in the measured windows:")
    for name, result in results.items():
        print(answers(name, result))

    lag(pair, args, writer, replica, _setup.hubspot_like_record)


def lag(pair: StreamingPair, args: argparse.Namespace, writer: dict, replica: dict, deal: Callable) -> None:
    pair.caught_up(timeout=120)
    run = f"L-{uuid.uuid4().hex[:6]}"
    each = args.projects // args.batch_clients
    with served(args.port, REPLICA_CHECK_SECONDS="0.1", **replica) as base:
        jobs = [
            (batch_pusher, (base, writer, deal, list(range(n * each + 1, (n + 1) * each + 1)), args.batch_size, run))
            for n in range(args.batch_clients)
        ]
        result = measured(pair, base, {"batches": jobs}, warmup=args.warmup, seconds=args.lag_seconds, readyz=True)
    batches, lags = result["batches"], result["lag"]
    counts = batches["counts"]
    records = sum(number for name, number in counts.items() if name.startswith("record 2"))
    print(
        f"\nThe replica's lag under batches: {args.batch_clients} clients, {args.batch_size} records a batch, "
        f"{args.warmup:.0f} s warm-up then {args.lag_seconds:.0f} s measured; load average {result['load'][0]:.1f} "
        f"before, {result['load'][1]:.1f} at the end"
    )
    print(
        f"- pushed: {len(batches['latencies']) / args.lag_seconds:.1f} batches/s, {records / args.lag_seconds:,.0f} "
        f"records/s; batch p50 / p99 {percentile_ms(batches['latencies'], 0.5)} / "
        f"{percentile_ms(batches['latencies'], 0.99)} ms; primary CPU {result['cpu'][0]:.1f} s, standby "
        f"{result['cpu'][1]:.1f} s; answers {counts_text(counts)}"
    )
    print(f"- WAL the standby had not replayed: {lag_text(lags['bytes']['window'], 'KiB')}")
    print(f"- /readyz lagSeconds: {lag_text(lags['seconds']['window'], 's')}")
    print(
        "- during the warm-up (the first batches after an idle primary): "
        f"WAL {lag_text(lags['bytes']['warm-up'], 'KiB')}; lagSeconds {lag_text(lags['seconds']['warm-up'], 's')}"
    )


if __name__ == "__main__":
    main()
