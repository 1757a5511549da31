r"""The slowest mapping an operator can save within the bounds (CONTRACT §17), over the largest push and batch the
service accepts, beside the same push under a trivial mapping and bench/baseline's bare upsert, in one run (issue #33).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_cost .venv/bin/python bench/mapping_worst_case.py

First an attacker's search, in-process: every candidate mapping (CANDIDATES: every canonical field mapped to one
expression, or to a dear conversion) normalizes each payload's data, and the slowest two of each payload go on.
Then over HTTP: gunicorn (one worker, as production configures it) serves the service on PostgreSQL, and each
payload is sent under the trivial mapping (one key path) and under each chosen candidate, `--rounds` times,
alternated. A request's cost is CPU, not wall time (this machine is shared): the gunicorn worker's and its
PostgreSQL backends', read from /proc before and after. The least of the rounds is reported, the answers counted
beside it (status, and the issues the mapping raised).

`--before COMMIT` serves a `git worktree` of that commit too (removed afterwards; the database schema must be the
same), with the same payloads and mappings (`--before-rounds`, as its slowest pushes took seconds), and prints both
side by side: e.g. `--before 2a7ffd7`, the issue's main. Every payload's mappings also include `--also` (the issue's
`a[*].keys(\`{}\`)` by default) whatever the screening finds.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import _setup
from _setup import free_port
from django.core.management import call_command
from django.db import connection
from push_load import partner_credentials

from mappings.documents import parse_mapping_document
from mappings.normalization import normalize
from mappings.services import mapping_document_import
from partners.models import Partner
from projects.canonical import CANONICAL_FIELDS

MIB = 1024 * 1024
COPIES = "[" + ",".join(["@"] * 45) + "]"
# Every kind of step an expression can take, each as dear as the bounds allow (at most 4 projections, flattens
# and multi-selects, 200 nodes, 1,000 characters).
EXPRESSIONS = {
    "keys-each": "a[*].keys(`{}`)",
    "abs-each": "a[*].abs(@)",
    "to_string-each": "a[*].to_string(@)",
    "not_null-each": "a[*].not_null(@, @, @, @, @, @, @, @)",
    "multi-select-each": "a[*].[@, @, @, @, @, @, @, @, @, @, @, @, @, @, @, @]",
    "object-each": "a[*].{a: @, b: @, c: @, d: @, e: @, f: @, g: @, h: @}",
    "filter-each": "a[?@ == `0` || @ == `1` || @ == `2` || @ == `3` || @ == `4`]",
    "projection-of-projections": "a[*][*][*][*]",
    "map-to_string": "map(&to_string(@), a)",
    "sort_by": "sort_by(a, &to_string(@))",
    "max_by": "max_by(a, &to_string(@))",
    "sort": "sort(a)",
    "sum": "sum(a)",
    "join": "join(',', a[*].to_string(@))",
    "contains": "contains(a, `7`)",
    "to_string-whole": "to_string(@)",
    "copies-to_string": f"{COPIES}[] | {COPIES} | to_string(@)",
    "copies-equal": f"{COPIES} | [?@ == `[]`]",
    "values-each": "values(@)[*].keys(@)",
    "or-chain": " || ".join(f"a[{n}].x" for n in range(20)),
    "string-reverse": "reverse(s)",
    "string-to_number": "to_number(s)",
    "string-starts_with": "starts_with(s, s)",
    "string-copies-join": f"join('', {COPIES.replace('@', 's')})",
    "whole-keys": "keys(@)",
    # A wider attacker's search (issue #33): deep projections, sorts on strings, merges, joins of large arrays,
    # numbers read from long strings.
    "nested-projection": "a[*][*][*]",
    "sort_by-strings": "sort_by(a[*].{k: to_string(@)}, &k)",
    "sort-strings": "sort(a[*].to_string(@))",
    "merge-each": "a[*].merge({x: @}, {y: @}, {z: @})",
    "merge-whole": "merge(@, @, @, @, @, @, @, @, @, @, @, @, @, @, @, @)",
    "join-large": "join(s, a[*].to_string(@))",  # the separator a long string
    "to_number-each": "a[*].to_number(to_string(@))",
    "length-to_string-copies": f"length(to_string({COPIES}))",
}


def expression_document(source: str) -> dict:
    fields = {}
    for field in CANONICAL_FIELDS:
        kind = {"text": "string", "integer": "integer", "decimal": "decimal", "date": "date"}[field.kind]
        fields[field.name] = {"source": source, "type": kind}
    return {"fields": fields}


def conversion_document(mapping_type: str, **options) -> dict:
    """Every text field read as `mapping_type` (dear conversions: phone, e-mail, dates with 20 patterns)."""
    fields = {}
    for field in CANONICAL_FIELDS:
        if field.kind == "text" or (field.kind == "date" and mapping_type in ("date", "datetime")):
            fields[field.name] = {"source": "p", "type": mapping_type, **options}
            if mapping_type == "enum":  # 500 source values, each to a value the field takes
                target = "USD" if field.choices == "currency" else "lead"
                fields[field.name]["values"] = {f"v{n}": target for n in range(500)}
    return {"fields": fields}


def typed_document(source: str) -> dict:
    """Every canonical field read from `source` as its own kind: a long string or a list fails each conversion,
    each failure an issue showing the value."""
    return {
        "fields": {
            field.name: {"source": source, "type": {"text": "string"}.get(field.kind, field.kind)}
            for field in CANONICAL_FIELDS
        }
    }


FORMATS = [f"%d.%m.%Y {n}" for n in range(20)]
CANDIDATES = {name: expression_document(source) for name, source in EXPRESSIONS.items()} | {
    "phone-everywhere": conversion_document("phone", region="US"),
    "email-everywhere": conversion_document("email"),
    "date-20-formats-everywhere": conversion_document("date", formats=FORMATS),
    "enum-everywhere": conversion_document("enum"),
    # Enum values that read like regular expressions (matched as text, never compiled), 500 of them.
    "enum-regexp-like": {
        "fields": {
            field.name: {
                "source": "p",
                "type": "enum",
                "values": {f"^(a+)+$|.*{n}.*": "USD" if field.choices == "currency" else "lead" for n in range(500)},
            }
            for field in CANONICAL_FIELDS
            if field.kind == "text"
        }
    },
    "dates-on-the-long-string": {
        "fields": {
            field.name: {"source": "s", "type": "date", "formats": FORMATS}
            for field in CANONICAL_FIELDS
            if field.kind == "date"
        }
        | {field.name: {"source": "s", "type": "datetime"} for field in CANONICAL_FIELDS if field.kind == "text"}
    },
    "long-string-fails-everywhere": typed_document("s"),
    "list-fails-everywhere": typed_document("a"),
}
TRIVIAL = {"fields": {"name": {"source": "n", "type": "string"}}}


def zeros(count: int, n: int) -> dict:
    return {"n": str(n), "a": [0] * count, "p": f"(503) 421-{n % 10000:04d}", "s": "1" * 64}


def text(length: int, n: int) -> dict:
    return {"n": str(n), "s": "7" * length, "p": f"customer.{n}@example.com"}


def objects(count: int, n: int) -> dict:
    return {"n": str(n), "a": [{"x": i % 7, "s": "abc"} for i in range(count)], "p": "x"}


# Each payload: a path, its bodies for the n-th send (n makes every send a change), and the data normalized last.
def payloads() -> dict:
    body_max = MIB - 200  # JSON of the whole body within PUSH_MAX_BODY_BYTES
    return {
        "push 1 MiB of [0, 0, …]": ("push", lambda n: {"id": f"z-{n}", "data": zeros(body_max // 2, n)}),
        "push 1 MiB of one string": ("push", lambda n: {"id": f"s-{n}", "data": text(body_max - 200, n)}),
        "push 1 MiB of small objects": ("push", lambda n: {"id": f"o-{n}", "data": objects(body_max // 22, n)}),
        "later push {} onto 1 MiB of [0, 0, …]": (
            "later",
            lambda n: ({"id": f"lz-{n}", "data": zeros(body_max // 2, n)}, {"id": f"lz-{n}", "data": {"n": f"{n}+"}}),
        ),
        "later push {} onto 1 MiB of one string": (
            "later",
            lambda n: ({"id": f"ls-{n}", "data": text(body_max - 200, n)}, {"id": f"ls-{n}", "data": {"n": f"{n}+"}}),
        ),
        "batch 10 MiB, 500 records of [0, 0, …]": (
            "batch",
            lambda n: {"records": [{"id": f"bz-{n}-{i}", "data": zeros(10_000, n * 1000 + i)} for i in range(500)]},
        ),
        "batch 10 MiB, 500 records of a string": (
            "batch",
            lambda n: {"records": [{"id": f"bs-{n}-{i}", "data": text(20_500, n * 1000 + i)} for i in range(500)]},
        ),
        "batch 500 records of one project, 1 MiB": (
            "batch",
            lambda n: {
                "records": [{"id": f"b1-{n}", "data": text(body_max - 300, n)}]
                + [{"id": f"b1-{n}", "data": {"n": f"{n}-{i}"}} for i in range(499)]
            },
        ),
        "batch 500 tiny records": (
            "batch",
            lambda n: {
                "records": [
                    {"id": f"bt-{n}-{i}", "data": {"n": str(i), "a": [0], "s": "1", "p": f"(503) 42{n % 10}-{i:04d}"}}
                    for i in range(500)
                ]
            },
        ),
    }


def normalized_data(kind: str, make) -> list[dict]:
    """What the payload's pushes normalize (the source data of each record, merged as a push merges it)."""
    body = make(0)
    if kind == "push":
        return [body["data"]]
    if kind == "later":
        return [{**body[0]["data"], **body[1]["data"]}]
    merged: dict[str, dict] = {}
    for record in body["records"]:
        merged[record["id"]] = {**merged.get(record["id"], {}), **record["data"]}
    return list(merged.values())[:50]  # a sample: each record costs alike


def screen(only: str = "", rounds: int = 2) -> dict[str, list[tuple[float, str]]]:
    """The in-process cost of every candidate on each payload's data, slowest first."""
    chosen = {}
    for name, (kind, make) in payloads().items():
        if only not in name:
            continue
        data = normalized_data(kind, make)
        sizes = [len(json.dumps(item, separators=(",", ":"))) for item in data]
        costs = []
        for candidate, document in {"trivial": TRIVIAL, **CANDIDATES}.items():
            rules = parse_mapping_document(document)
            best = float("inf")
            for _ in range(rounds):
                started = time.process_time()
                for item, size in zip(data, sizes, strict=True):
                    normalize(item, rules, size=size)
                best = min(best, time.process_time() - started)
            costs.append((best * 1000 / len(data), candidate))
        costs.sort(reverse=True)
        chosen[name] = costs
        top = ", ".join(f"{candidate} {ms:.2f}" for ms, candidate in costs[:4])
        trivial = next(ms for ms, candidate in costs if candidate == "trivial")
        print(f"screen {name}: trivial {trivial:.2f} ms a record; slowest {top}", flush=True)
    return chosen


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def cpu_spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds between two readings, of the processes in both (one that ended or started between is left out:
    a backend's pid may be reused)."""
    return sum(after[pid] - before[pid] for pid in before if pid in after and after[pid] >= before[pid])


def cpu_seconds(pids: list[int]) -> float:
    return sum(cpu_by_pid(pids).values())


def service_pids(server: subprocess.Popen) -> list[int]:
    """The gunicorn workers and the PostgreSQL backends of this database (the bench's own connection aside)."""
    workers = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
    with connection.cursor() as cursor:
        cursor.execute(
            # Client backends only: an autovacuum worker of this database (analyzing the previous request's rows)
            # would be counted in whichever request ran beside it.
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
            "AND backend_type = 'client backend'"
        )
        backends = [row[0] for row in cursor.fetchall()]
    return [int(pid) for pid in workers] + backends


def post(base: str, path: str, body: dict, headers: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        base + path, data=json.dumps(body, separators=(",", ":")).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def measure(server, base: str, headers: dict, kind: str, make, n: int) -> tuple[float, str]:
    """CPU ms of one send of the payload (the measured request only), and its answers counted."""
    path = "/sandbox/api/v1/externals/push" + ("/batch" if kind == "batch" else "")
    body = make(n)
    if kind == "later":
        post(base, path, body[0], headers)
        body = body[1]
    pids = service_pids(server)
    workers = set(subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split())
    before = cpu_by_pid(pids)
    status, answer = post(base, path, body, headers)
    # The backends after it too: a thread of the worker that had not used the database yet connected during the
    # request, and that backend's CPU is the request's (left out, the trivial mapping's first sends counted no
    # PostgreSQL CPU at all: the 10 MiB batch's 2.2-2.5x of the last session).
    started = [pid for pid in service_pids(server) if pid not in before]
    after = cpu_by_pid(pids + started)
    spent = cpu_spent(before, after) + sum(after.get(pid, 0.0) for pid in started)
    worker = cpu_spent({pid: cpu for pid, cpu in before.items() if str(pid) in workers}, after)
    results = answer.get("results", [answer])
    issues = sum(len(result.get("issues") or []) for result in results)
    statuses = sorted({result.get("status", status) for result in results})
    split = f"worker {worker * 1000:.0f} + PostgreSQL {(spent - worker) * 1000:.0f} ms"
    return spent * 1000, f"HTTP {status}, records {statuses}, {issues} issues; {split}"


def measure_tree(root: Path, chosen: dict, args) -> dict[str, dict[str, tuple[float, str]]]:
    """Serve the checkout at `root` and send each payload under each of its chosen mappings, `args.rounds` times
    alternated: the least CPU ms of each, and its answers."""
    port = free_port()
    server = _setup.service_start(port, root=root)
    base = f"http://127.0.0.1:{port}"
    figures: dict[str, dict[str, tuple[float, str]]] = {}
    try:
        for name, (kind, make) in payloads().items():
            if name not in chosen:
                continue
            best: dict[str, tuple[float, str]] = {}
            for round_ in range(args.rounds):
                for mapping, headers in chosen[name].items():
                    ms, answers = measure(server, base, headers, kind, make, round_ * 1000 + int(time.time()) % 1000)
                    if mapping not in best or ms < best[mapping][0]:
                        best[mapping] = (ms, answers)
            figures[name] = best
            trivial = best["trivial"][0]
            measured = ", ".join(
                f"{mapping} {ms:.0f} ms ({ms / max(trivial, 1e-9):.2f}x; {answers})"
                for mapping, (ms, answers) in best.items()
            )
            print(f"  measured {name} on {root}: {measured}", flush=True)
    finally:
        server.terminate()
        server.wait(timeout=60)
    return figures


def baseline_ms(make, rounds: int) -> float:
    """bench/baseline's bare upsert of the push's body: the worker's CPU ms, least of `rounds`."""
    port = free_port()
    baseline = _setup.baseline_start(port)
    _setup.baseline_table_create()
    try:
        pids = [
            int(pid)
            for pid in subprocess.run(["pgrep", "-P", str(baseline.pid)], capture_output=True, text=True).stdout.split()
        ]
        costs = []
        for round_ in range(rounds):
            before = cpu_seconds(pids)
            post(
                f"http://127.0.0.1:{port}", "/bench/baseline-upsert", make(round_), {"Content-Type": "application/json"}
            )
            costs.append((cpu_seconds(pids) - before) * 1000)
        return min(costs)
    finally:
        baseline.terminate()
        baseline.wait(timeout=60)


@contextmanager
def checkout_of(commit: str | None) -> Iterator[Path | None]:
    """A `git worktree` of `commit` (removed afterwards), or None without one."""
    if not commit:
        yield None
        return
    path = Path(tempfile.mkdtemp(prefix="mapping-worst-case-before-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(path), commit], cwd=_setup.ROOT, check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=_setup.ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default="", help="a commit served as well, from a git worktree (before)")
    parser.add_argument("--before-rounds", type=int, default=1, help="rounds on --before (its pushes cost seconds)")
    parser.add_argument("--only", default="", help="payloads whose name holds this text")
    parser.add_argument("--top", type=int, default=2, help="candidates sent over HTTP per payload")
    parser.add_argument(
        "--also", default="keys-each", help="candidates sent over HTTP on every payload (comma-separated)"
    )
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    screened = screen(args.only)
    os.environ.update(WORKERS="1", THREADS="4")
    # Each payload's mappings: the trivial one, the slowest `--top` of the screening and the `--also` ones.
    chosen: dict[str, dict[str, dict]] = {}
    for name, costs in screened.items():
        slowest = [candidate for _, candidate in costs if candidate != "trivial"][: args.top]
        mappings = dict.fromkeys(["trivial", *slowest, *filter(None, args.also.split(","))])
        for mapping in mappings:
            token, key = partner_credentials(f"cost-{mapping}")
            document = TRIVIAL if mapping == "trivial" else CANDIDATES[mapping]
            mapping_document_import(partner=Partner.objects.get(slug=f"cost-{mapping}"), document=document)
            mappings[mapping] = {
                "Authorization": f"Bearer {token}",
                "ClientID": key,
                "Content-Type": "application/json",
            }
        chosen[name] = mappings
    with checkout_of(args.before) as before_root:
        after = measure_tree(_setup.ROOT, chosen, args)
        before = {}
        if before_root is not None:
            before = measure_tree(before_root, chosen, argparse.Namespace(rounds=args.before_rounds))
    for name, (kind, make) in payloads().items():
        if name not in after:
            continue
        upsert = ""
        if kind == "push":
            try:
                upsert = f" (bare upsert, worker CPU only: {baseline_ms(make, args.rounds):.0f} ms)"
            except OSError as error:  # the figures above must not be lost with it
                upsert = f" (bare upsert: {error})"
        print(f"\n{name}{upsert}")
        print(
            f"  {'mapping':30s} {'after ms':>9s} {'ratio':>6s}"
            + (f" {'before ms':>10s} {'ratio':>6s}" if before else "")
        )
        for mapping in chosen[name]:
            ms, answers = after[name][mapping]
            line = f"  {mapping:30s} {ms:9.0f} {ms / max(after[name]['trivial'][0], 1e-9):5.2f}x"
            if before:
                old, old_answers = before[name][mapping]
                line += f" {old:10.0f} {old / max(before[name]['trivial'][0], 1e-9):5.2f}x"
            print(line + f"  ({answers}" + (f"; before: {old_answers})" if before else ")"), flush=True)


if __name__ == "__main__":
    main()
