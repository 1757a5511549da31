"""What a request costs (issue #33): CPU per request and throughput of the service's authenticated GET (a known
project and an unknown id's 404) and its push, beside the bare Django upsert (bench/baseline/) and the chosen stack
alone (bench/stack/: a DRF APIView behind simplejwt answering 404), all in one run, each under the same gunicorn
(gunicorn.conf.py, WORKERS x THREADS), on PostgreSQL with Redis, DEBUG off.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_perf \
        flock /tmp/bench.lock .venv/bin/python bench/request_cost.py --before 7efe6a4

CPU per request: the user and system CPU (/proc/PID/stat) that the gunicorn workers, the database's backends and a
redis-server of the benchmark's own (started here on a free port, so no other client's commands are counted) spent
during the row, divided by the answers wrk counted. This machine's throughput moves with whatever else runs on its
two cores; the CPU a request takes moves much less. Every answer is counted by status beside the figures.
`--before COMMIT` also serves that commit of the service (extracted with `git archive`, run with this tree's
packages) in the same run, so before and after share the machine's state; given several times, each commit is
served in the order given ("before" for one, "at COMMIT" for several), so that a series of cuts is measured cut by
cut in one run, against one baseline; `--rounds N` repeats the whole cycle
(the least CPU per request of the rounds is summed up at the end). `--py-spy DIR` then serves this tree once more
and samples its workers (py-spy, on PATH) through the GET rows, one folder each; bench/py_spy_summary.py splits
them (`--rounds 0 --py-spy DIR` profiles alone).
"""

import argparse
import functools
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:1/0")  # replaced below by the benchmark's own redis-server

import _setup
from _setup import free_port
from django.core.management import call_command
from django.db import connection
from push_load import partner_credentials, profiled, stop, wrk

ROOT = _setup.ROOT
CHANGING = str(ROOT / "bench" / "changing.lua")
GET = str(ROOT / "bench" / "get.lua")
TICKS = os.sysconf("SC_CLK_TCK")
LIMITS = {"CLIENT_ID_RATE_LIMIT_PER_MINUTE": "1000000000", "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "1000000000"}


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def backends() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'"
        )
        return [row[0] for row in cursor.fetchall()]


def workers(server: subprocess.Popen) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found]


def measured_row(
    server: subprocess.Popen, redis_pid: int, url: str, *, seconds: int, connections: int, env: dict, request: list[str]
) -> dict:
    """wrk on `url` for `seconds`, with the CPU the server's workers, its database backends and Redis spent."""
    wrk(url, seconds=3, connections=connections, env=env, request=request)  # warm: connections, statements
    processes = {"worker": workers(server), "postgres": backends(), "redis": [redis_pid]}
    before = {pid: cpu_seconds(pid) for pids in processes.values() for pid in pids}
    result = wrk(url, seconds=seconds, connections=connections, env=env, request=request)
    processes["postgres"] = sorted(set(processes["postgres"]) | set(backends()))  # new ones counted from their start
    answers = sum(int(count) for count in re.findall(r"http \d+=(\d+)", result["answers"]))
    for kind, pids in processes.items():
        spent = sum(cpu_seconds(pid) - before.get(pid, 0.0) for pid in pids)
        result[f"{kind} ms"] = spent * 1000 / max(answers, 1)
    result["cpu ms"] = sum(result[f"{kind} ms"] for kind in processes)
    result["count"] = answers
    return result


def gunicorn(*, root: Path, port: int, app: list[str], env: dict, workers_count: int, threads: int):
    """gunicorn.conf.py's server in `root` (this tree or the before's), returned once it answers."""
    environment = {**os.environ, "WORKERS": str(workers_count), "THREADS": str(threads), **LIMITS, **env}
    if root != ROOT:
        environment.pop("DJANGO_SETTINGS_MODULE", None)  # its own wsgi module chooses its settings
        environment["PYTHONPATH"] = str(root)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}", *app],
        cwd=root,
        env=environment,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(600):  # a loaded machine can take tens of seconds to import Django and the apps
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            break
        except urllib.error.HTTPError:
            break  # answering (the bare apps have no /healthz)
        except OSError:
            time.sleep(0.1)
    return server


def before_tree(commit: str) -> Path:
    """`commit` of this repository extracted into a temporary directory (read-only use of git: no worktree)."""
    directory = Path(tempfile.mkdtemp(prefix=f"request-cost-{commit[:12]}-"))
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    return directory


def redis_start(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    for _ in range(50):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.1)
    raise RuntimeError("redis-server did not start")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--ids", type=int, default=500, help="ids per wrk thread for the push and the upsert")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--before", metavar="COMMIT", action="append", default=[], help="also serve this commit, in the same run"
    )
    parser.add_argument("--py-spy", metavar="DIR", help="then profile this tree's GET rows with py-spy into DIR")
    args = parser.parse_args()

    redis_port = free_port()
    redis = redis_start(redis_port)
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
    trees = {"after": ROOT}
    if len(args.before) == 1:
        trees = {"before": before_tree(args.before[0]), **trees}
    elif args.before:
        trees = {**{f"at {commit}": before_tree(commit) for commit in args.before}, **trees}
    try:
        call_command("migrate", verbosity=0)
        _setup.baseline_rows_create(args.ids)
        token, key = partner_credentials("bench-request-cost")
        credentials = ["-H", f"Authorization: Bearer {token}", "-H", f"ClientID: {key}"]
        ids = {"BENCH_IDS": str(args.ids)}
        pushes = {**ids, "BENCH_CREDENTIALS": f"{token},{key}"}
        serving = dict(workers_count=args.workers, threads=args.threads)
        known = None
        rounds = []
        for _ in range(args.rounds):
            results: dict[str, dict] = {}
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            server = gunicorn(
                root=ROOT,
                port=port,
                app=["bench.baseline.wsgi:application"],
                env={"DJANGO_SETTINGS_MODULE": "bench.baseline.settings"},
                **serving,
            )
            try:
                results["bare upsert"] = measured_row(
                    server,
                    redis.pid,
                    base + "/bench/baseline-upsert",
                    seconds=args.seconds,
                    connections=args.connections,
                    env=ids,
                    request=["-s", CHANGING],
                )
            finally:
                stop(server)
            server = gunicorn(
                root=ROOT,
                port=port,
                app=["bench.stack.wsgi:application"],
                env={"DJANGO_SETTINGS_MODULE": "bench.stack.settings"},
                **serving,
            )
            try:
                results["stack alone (DRF + simplejwt 404)"] = measured_row(
                    server,
                    redis.pid,
                    base + f"/bench/stack/projects/{uuid.UUID(int=0)}",
                    seconds=args.seconds,
                    connections=args.connections,
                    env={},
                    request=["-s", GET, *credentials],
                )
            finally:
                stop(server)
            for name, root in trees.items():
                server = gunicorn(root=root, port=port, app=[], env={}, **serving)
                try:
                    push_url = base + "/sandbox/api/v1/externals/push"
                    known = known or known_project(push_url, token=token, key=key, ids=args.ids)
                    rows = {
                        **get_rows(base, known=known, credentials=credentials),
                        "push": (push_url, pushes, ["-s", CHANGING]),
                    }
                    for row, (url, env, request) in rows.items():
                        results[f"{row}, {name}"] = measured_row(
                            server,
                            redis.pid,
                            url,
                            seconds=args.seconds,
                            connections=args.connections,
                            env=env,
                            request=request,
                        )
                finally:
                    stop(server)
            rounds.append(results)
            report(results, args)
        if args.py_spy:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            server = gunicorn(root=ROOT, port=port, app=[], env={}, **serving)
            try:
                known = known or known_project(
                    base + "/sandbox/api/v1/externals/push", token=token, key=key, ids=args.ids
                )
                for row, (url, env, request) in get_rows(base, known=known, credentials=credentials).items():
                    load = dict(seconds=args.seconds, connections=args.connections, env=env, request=request)
                    wrk(url, **{**load, "seconds": 3})  # warm, as the measured rows are
                    directory = str(Path(args.py_spy) / row.split(" ")[-1].strip("()"))
                    profiled(server, directory, functools.partial(wrk, url, **load), args.seconds)
                    print(f"{row}: py-spy samples in {directory}")
            finally:
                stop(server)
        if args.rounds > 1:
            least = {row: min(results[row]["cpu ms"] for results in rounds) for row in rounds[0]}
            print(f"\nleast CPU ms a request over {args.rounds} rounds, and its ratio to the bare upsert's:")
            for row, cpu in least.items():
                print(f"{row:40s} {cpu:6.2f}  {least['bare upsert'] / cpu:5.2f}")
    finally:
        redis.terminate()
        redis.wait(timeout=10)
        for root in trees.values():
            if root != ROOT:
                shutil.rmtree(root, ignore_errors=True)


def known_project(push_url: str, *, token: str, key: str, ids: int) -> str:
    """The id of one of the benchmark partner's projects, pushed first (`ids` a wrk thread) through `push_url`."""
    _setup.projects_create(push_url + "/batch", [(token, key)], ids)
    # As autovacuum soon would (push_load.py does the same): a table never analyzed has the project's look-up by
    # its CRM id planned on the wrong index, a scan of the environment.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    from projects.models import Project

    return str(Project.objects.filter(partner__slug="bench-request-cost").values_list("pk", flat=True).first())


def get_rows(base: str, *, known: str, credentials: list[str]) -> dict:
    detail = base + "/sandbox/api/v1/integration/projects/"
    return {
        "GET known": (detail + known, {}, ["-s", GET, *credentials]),
        "GET unknown (404)": (detail + str(uuid.UUID(int=0)), {}, ["-s", GET, *credentials]),
    }


def report(results: dict, args: argparse.Namespace) -> None:
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"\n{args.connections} connections, {args.seconds} s a row, gunicorn -c gunicorn.conf.py {args.workers} x "
        f"{args.threads}, PostgreSQL, Redis, DEBUG off; load average now {load}"
    )
    base = results["bare upsert"]
    print(
        f"{'row':40s} {'req/s':>7s} {'CPU ms':>7s} {'worker':>7s} {'pg':>6s} {'redis':>6s} {'CPU ratio':>9s} "
        f"{'req/s ratio':>11s}  answers"
    )
    for row, result in results.items():
        print(
            f"{row:40s} {result['rps']:7.0f} {result['cpu ms']:7.2f} {result['worker ms']:7.2f} "
            f"{result['postgres ms']:6.2f} {result['redis ms']:6.2f} {base['cpu ms'] / result['cpu ms']:9.2f} "
            f"{result['rps'] / max(base['rps'], 1e-9):11.2f}  {result['answers']}"
        )


if __name__ == "__main__":
    main()
