"""Export throughput at 1,000,000 projects, with and without the source data, and the worker's peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_exports .venv/bin/python bench/export_rate.py

Generates the projects once (INSERT ... SELECT generate_series, about a minute): one partner's sandbox, every
canonical field filled, HubSpot-shaped source data of 16 properties, distinct updatedDates. Then runs each export
as the worker does (`export_execute`: the snapshot's count, the server-side cursor, the NDJSON file, the storage),
each in a fresh process, and prints records a second, the file's size and the process's peak RSS. A smaller export
(--small projects of another partner) beside the large one shows whether memory grows with the export: constant
memory means the same peak at both sizes. In the same run, the baseline outside the service (one COPY of
PostgreSQL's own row_to_json streamed to a file), and with `--before PATH` the checkout at PATH (a worktree of main).
`--sizes small|large` runs only those exports (each run under the machine's exclusive lock stays short).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _setup  # Django, set up for the benchmark's database
import psycopg
from django.core.management import call_command
from django.db import connection

from exports.models import Export
from partners.models import Partner
from projects.models import Project

LARGE, SMALL = "bench-export-large", "bench-export-small"


def generate(slug: str, total: int) -> Partner:
    partner, _ = Partner.objects.get_or_create(slug=slug, defaults={"name": slug.replace("-", " ").title()})
    if Project.objects.filter(partner=partner).count() == total:
        return partner
    print(f"generating {total:,} projects for {slug} ...", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM projects_project WHERE partner_id = %s", [partner.pk])  # no raw pushes here
        cursor.execute(
            """
            INSERT INTO projects_project (id, partner_id, environment, external_id, submitted_date, updated_date,
                mapping_status, issues, source_data, change_xid, name, status, customer_first_name,
                customer_last_name, customer_email, customer_phone, address_line1, address_line2, city, state,
                postal_code, country, system_size_kw, module_count, module_model, inverter_model, battery_capacity_kwh,
                contract_amount, currency, contract_signed_date, install_date, sales_rep, notes)
            SELECT gen_random_uuid(), %(partner)s, 'sandbox', 'HS-' || g, submitted,
                   timestamptz '2026-01-01' + g * interval '1 millisecond', 'mapped', '[]',
                   jsonb_build_object('properties', jsonb_build_object(
                       'dealname', 'Residence ' || g || ' PV', 'dealstage', 'closedwon',
                       'firstname', 'First' || g, 'lastname', 'Last' || g, 'email', 'customer.' || g || '@example.com',
                       'phone', '(503) 421-' || lpad((g %% 10000)::text, 4, '0'), 'address', g || ' Main Street',
                       'city', 'Portland', 'state', 'OR', 'zip', '97201', 'system_size_w', (4000 + g %% 9000)::text,
                       'panel_count', (10 + g %% 30)::text, 'amount', (15000 + g %% 30000) || '.00',
                       'closedate', (1704067200000 + g::bigint * 86400)::text, 'hs_object_id', (900000 + g)::text,
                       'notes_last_contacted', '')),
                   0, 'Residence ' || g || ' PV', 'contracted', 'First' || g, 'Last' || g,
                   'customer.' || g || '@example.com', '+1503421' || lpad((g %% 10000)::text, 4, '0'),
                   g || ' Main Street', NULL, 'Portland', 'OR', '97201', 'US', (4 + g %% 9)::numeric + 0.2,
                   10 + g %% 30, 'REC Alpha 405', 'Enphase IQ8', 13.5, 15000 + g %% 30000, 'USD',
                   date '2024-01-01' + g %% 700, date '2024-03-01' + g %% 700, 'Sam Rivera', 'Roof faces south.'
            FROM (SELECT g, timestamptz '2024-01-01' + g * interval '30 seconds' AS submitted
                  FROM generate_series(1, %(total)s) AS g) AS generated
            """,
            {"partner": partner.pk, "total": total},
        )
        # As rows written before the change log began: below every horizon, which another database's transaction on
        # a shared cluster could otherwise hold back behind them (the trigger wrote this transaction's xid).
        cursor.execute("UPDATE projects_project SET change_xid = 0 WHERE partner_id = %s", [partner.pk])
        cursor.execute("VACUUM ANALYZE projects_project")
    return partner


def run_worker(export_id: str, exports_dir: str, root: Path = _setup.ROOT) -> dict:
    """One export, start to end, in a fresh process (as a db_worker would run it) of the checkout at `root`: its
    time and peak RSS."""
    output = subprocess.run(
        [sys.executable, str(root / "bench" / "export_rate.py"), "--worker", export_id],
        env={**os.environ, "EXPORTS_DIR": exports_dir},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.splitlines()[-1])


def worker(export_id: str) -> None:
    import resource

    from exports.runs import export_execute

    started = time.perf_counter()
    export_execute(export_id=export_id)
    seconds = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_rss_mib": peak_mib}))


def bare_export(partner_id: int, *, exclude_data: bool, path: str) -> dict:
    """The baseline, outside the service: one COPY of the partner's live projects as PostgreSQL's own row_to_json,
    in the follower's order, streamed to a file by psycopg in a fresh process. What the database alone costs."""
    command = [sys.executable, __file__, "--bare", str(partner_id), path, *(["--exclude-data"] if exclude_data else [])]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.splitlines()[-1])


def bare_copy(partner_id: int, path: str, *, exclude_data: bool) -> None:
    import resource

    columns = [f.column for f in Project._meta.concrete_fields if not (exclude_data and f.name == "source_data")]
    sql = (
        f"COPY (SELECT row_to_json(r) FROM (SELECT {', '.join(columns)} FROM projects_project WHERE partner_id = %s "
        "AND environment = 'sandbox' AND deleted_date IS NULL ORDER BY updated_date, id) r) TO STDOUT"
    )
    started = time.perf_counter()
    database = psycopg.connect(os.environ["DATABASE_URL"])
    with database, open(path, "wb") as out, database.cursor().copy(sql, [partner_id]) as copy:
        for block in copy:
            out.write(block)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": time.perf_counter() - started, "peak_rss_mib": peak_mib}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=2, help="per export shape; the best is kept")
    parser.add_argument("--sizes", choices=["small", "large", "both"], default="both", help="which exports to run")
    parser.add_argument("--before", type=Path, help="another checkout (a worktree of main) run as well, side by side")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--bare", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--exclude-data", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    if args.bare:
        bare_copy(int(args.bare[0]), args.bare[1], exclude_data=args.exclude_data)
        return

    call_command("migrate", verbosity=0)
    partners = {"large": generate(LARGE, args.projects), "small": generate(SMALL, args.small)}
    print(f"load average before the runs: {os.getloadavg()}", flush=True)
    print("\n| export | run | records | seconds | records/s | file MiB | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    trees = {**({f"before ({args.before})": args.before} if args.before else {}), "this tree": _setup.ROOT}
    with tempfile.TemporaryDirectory(prefix="bench-exports-") as exports_dir:
        for size, exclude_data in (("small", True), ("small", False), ("large", True), ("large", False)):
            if args.sizes not in (size, "both"):
                continue
            shape = f"{partners[size].projects.count():,}, {'exclude=data' if exclude_data else 'with data'}"
            path = f"{exports_dir}/bare.ndjson"
            bare = min(
                (bare_export(partners[size].pk, exclude_data=exclude_data, path=path) for _ in range(args.runs)),
                key=lambda result: result["seconds"],
            )
            with open(path, "rb") as lines:
                count = sum(1 for _ in lines)
            print(
                f"| {shape} | bare COPY (baseline) | {count:,} | {bare['seconds']:.1f} | "
                f"{count / bare['seconds']:,.0f} | {os.path.getsize(path) / 2**20:,.0f} | {bare['peak_rss_mib']:.0f} |",
                flush=True,
            )
            for name, root in trees.items():
                best = None
                for _ in range(args.runs):
                    export = Export.objects.create(
                        partner=partners[size], environment="sandbox", exclude_data=exclude_data
                    )
                    result = run_worker(str(export.pk), exports_dir, root)
                    export.refresh_from_db()
                    assert export.status == "done", export.error
                    if best is None or result["seconds"] < best[0]["seconds"]:
                        best = (result, export)
                    Export.objects.filter(pk=export.pk).delete()
                result, export = best
                print(
                    f"| {shape} | {name} | {export.count:,} | {result['seconds']:.1f} | "
                    f"{export.count / result['seconds']:,.0f} | {export.file_size / 2**20:,.0f} | "
                    f"{result['peak_rss_mib']:.0f} |",
                    flush=True,
                )
    print(f"load average after the runs: {os.getloadavg()}")


if __name__ == "__main__":
    main()
