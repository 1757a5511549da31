"""Raw pushes kept for a window (issue #36 item 6): pruning a month of raw pushes by dropping partitions against the
same by DELETE, and the raw-push table's size per project over simulated months with the window.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_retention .venv/bin/python bench/raw_push_retention.py

PostgreSQL only, on a scratch database: it rewrites the raw-push table's calendar (the days it simulates are days
ahead of today, so that the service's own maintenance, ingest/retention.py, creates and drops their partitions) and
puts the table back as the migrations leave it at the end (`migrate ingest 0013`, then `migrate ingest`).

1. **A month pruned.** `--days` days (60) of `--rows-per-day` pushes (5,000, bodies of about 700 bytes) go into the
   partitioned table and, the same rows, into a plain copy with the same indexes (`bench_rawpush_plain`). First, a
   push looked up by its id alone in each (the push detail's query, every partition's key probed). Then the
   oldest 30 days go: from the partitioned table by `raw_pushes_prune` (DROP TABLE of each day's partition), from
   the plain one by one `DELETE ... WHERE received_at < cutoff`. For each: the time, the WAL it wrote (the DELETE's
   own by `EXPLAIN (ANALYZE, WAL)`, the drops' by pg_current_wal_lsn before and after: the cluster is shared, so
   other databases' WAL of the same seconds counts too), the table's size before and after, and the dead tuples
   left behind (pgstattuple); then the VACUUM the DELETE leaves owed, with its time and WAL.
2. **Storage flat over months.** `--projects` projects (200) each pushed `--pushes-per-project-day` times a day (20)
   for `--months` months (4) of simulated days, the maintenance run once a day with the window of 30 days: the
   table's size at the end of each month, per project, beside the plain copy that keeps everything.

Scaled down for a shared 2-core machine: the issue's 1,000 pushes a second make 86 M rows a day; a day here is
5,000 (part 1) and 4,000 (part 2) rows. What scales is the shape: a DELETE's time and WAL grow with the rows it
removes, a dropped partition's do not.
"""

import argparse
import time
from datetime import timedelta

import _setup  # noqa: F401
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from ingest import partitions
from ingest.retention import raw_pushes_prune
from partners.models import Partner
from projects.models import Project

PLAIN = "bench_rawpush_plain"
RETENTION_DAYS = 30


def sql(statement: str, params=None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


def wal_lsn() -> str:
    return sql("SELECT pg_current_wal_lsn()::text")[0][0]


def wal_since(lsn: str) -> int:
    return int(sql("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)", [lsn])[0][0])


def size_partitioned() -> int:
    return int(
        sql(
            "SELECT coalesce(sum(pg_total_relation_size(inhrelid)), 0) FROM pg_inherits "
            "WHERE inhparent = 'ingest_rawpush'::regclass"
        )[0][0]
    )


def size_plain() -> int:
    return int(sql(f"SELECT pg_total_relation_size('{PLAIN}')")[0][0])


def mb(size: int) -> str:
    return f"{size / 1024 / 1024:,.1f} MB"


def projects_create(count: int) -> tuple[Partner, list[str]]:
    partner, _ = Partner.objects.get_or_create(slug="bench-retention", defaults={"name": "Bench Retention"})
    sql("TRUNCATE ingest_rawpush")
    Project.objects.filter(partner=partner).delete()
    sql(
        """
        INSERT INTO projects_project (id, partner_id, environment, external_id, submitted_date, updated_date,
            mapping_status, issues, source_data)
        SELECT md5('bench-retention-' || n)::uuid, %s, 'production', 'HS-' || n, now(), now(), 'mapped', '[]', '{}'
        FROM generate_series(0, %s - 1) AS n
        """,
        [partner.pk, count],
    )
    return partner, [str(pk) for pk in Project.objects.filter(partner=partner).values_list("pk", flat=True)]


def day_insert(*, table: str, partner: Partner, projects: int, rows: int, day_offset: int) -> None:
    """`rows` pushes spread over the day `day_offset` days after today (UTC), round robin over the projects."""
    sql(
        f"""
        INSERT INTO {table} (partner_id, environment, external_id, project_id, body, data, received_at,
            created_project, changed_project, mapping_status, issues)
        SELECT %(partner)s, 'production', 'HS-' || (g %% %(projects)s),
               md5('bench-retention-' || (g %% %(projects)s))::uuid,
               '{{"id": "HS-' || (g %% %(projects)s) || '", "data": {{"properties": {{"dealname": "Residence '
                   || g || '", "email": "owner' || g || '@example.com", "phone": "+1 555 0100", "address": "'
                   || repeat('1 Solar Road, Springfield ', 20) || '"}}}}}}',
               jsonb_build_object('properties', jsonb_build_object('dealname', 'Residence ' || g,
                   'address', repeat('1 Solar Road, Springfield ', 20))),
               date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                   + %(offset)s * interval '1 day' + (g * 86399.0 / %(rows)s) * interval '1 second',
               false, true, 'mapped', '[]'::jsonb
        FROM generate_series(0, %(rows)s - 1) AS g
        """,
        {"partner": partner.pk, "projects": projects, "rows": rows, "offset": day_offset},
    )


def plain_create() -> None:
    sql(f"DROP TABLE IF EXISTS {PLAIN}")
    sql(f"CREATE TABLE {PLAIN} (LIKE ingest_rawpush INCLUDING DEFAULTS INCLUDING INDEXES)")


def lookups_by_id(count: int = 500) -> None:
    """A push found by its id alone (the push detail's query) in the partitioned table, every day's partition probed
    by its (id, received_at) key, beside the plain copy's one (id, received_at) index."""
    ids = [row[0] for row in sql("SELECT id FROM ingest_rawpush ORDER BY random() LIMIT %s", [count])]
    count_partitions = sql("SELECT count(*) FROM pg_inherits WHERE inhparent = 'ingest_rawpush'::regclass")[0][0]
    print(f"A push by its id, {len(ids)} random ids (the detail's query: id, partner, environment):\n")
    print("| table | p50 | p95 | found |")
    print("|---|---|---|---|")
    for label, table in ((f"partitioned ({count_partitions} partitions)", "ingest_rawpush"), ("plain", PLAIN)):
        timings, found = [], 0
        for push_id in ids:
            started = time.perf_counter()
            found += len(sql(f"SELECT id, body FROM {table} WHERE id = %s AND environment = 'production'", [push_id]))
            timings.append((time.perf_counter() - started) * 1000)
        timings.sort()
        p50, p95 = timings[len(timings) // 2], timings[int(len(timings) * 0.95)]
        print(f"| {label} | {p50:.2f} ms | {p95:.2f} ms | {found} of {len(ids)} |")
    print()


def month_pruned(*, days: int, rows_per_day: int) -> None:
    print(f"\n## 1. A month pruned: {days} days of {rows_per_day:,} pushes, the oldest {days - RETENTION_DAYS} go")
    partner, _ = projects_create(200)
    raw_pushes_prune(ahead_days=days + 1)  # the days simulated have their partitions
    plain_create()
    for offset in range(1, days + 1):
        day_insert(table="ingest_rawpush", partner=partner, projects=200, rows=rows_per_day, day_offset=offset)
    sql(f"INSERT INTO {PLAIN} SELECT * FROM ingest_rawpush")
    sql("VACUUM ANALYZE ingest_rawpush")
    sql(f"VACUUM ANALYZE {PLAIN}")
    lookups_by_id()
    later = timezone.now() + timedelta(days=days + 1)
    cutoff = later - timedelta(days=RETENTION_DAYS)
    removed = sql(f"SELECT count(*) FROM {PLAIN} WHERE received_at < %s", [cutoff])[0][0]
    print(f"{removed:,} of {days * rows_per_day:,} rows are older than the window's cutoff\n")

    before = size_partitioned()
    lsn, started = wal_lsn(), time.perf_counter()
    result = raw_pushes_prune(now=later, retention_days=RETENTION_DAYS, ahead_days=0)
    drop_seconds, drop_wal = time.perf_counter() - started, wal_since(lsn)
    after = size_partitioned()

    plain_before = size_plain()
    started = time.perf_counter()
    plan = sql(f"EXPLAIN (ANALYZE, WAL, FORMAT JSON) DELETE FROM {PLAIN} WHERE received_at < %s", [cutoff])[0][0]
    delete_seconds = time.perf_counter() - started
    delete_wal = plan[0]["Plan"].get("WAL Bytes", 0)
    plain_after = size_plain()
    dead = sql(f"SELECT dead_tuple_count, round(dead_tuple_percent::numeric, 1) FROM pgstattuple('{PLAIN}')")[0]
    lsn, started = wal_lsn(), time.perf_counter()
    sql(f"VACUUM {PLAIN}")
    vacuum_seconds, vacuum_wal = time.perf_counter() - started, wal_since(lsn)
    plain_vacuumed = size_plain()

    print("| way | time | WAL | table + indexes before → after | dead tuples left |")
    print("|---|---|---|---|---|")
    print(
        f"| drop {len(result.dropped)} partitions (`raw_pushes_prune`) | {drop_seconds:.2f} s | "
        f"{drop_wal / 1024:,.0f} kB (cluster-wide) | {mb(before)} → {mb(after)} | 0 |"
    )
    print(
        f"| one `DELETE` | {delete_seconds:.2f} s | {delete_wal / 1024 / 1024:,.1f} MB | "
        f"{mb(plain_before)} → {mb(plain_after)} | {dead[0]:,} ({dead[1]} % of the table) |"
    )
    print(
        f"| its `VACUUM`, owed | {vacuum_seconds:.2f} s | {vacuum_wal / 1024 / 1024:,.1f} MB (cluster-wide) | "
        f"→ {mb(plain_vacuumed)} (space reused, not returned) | 0 |"
    )
    sql(f"DROP TABLE {PLAIN}")


def storage_over_months(*, projects: int, per_project_day: int, months: int) -> None:
    rows = projects * per_project_day
    print(
        f"\n## 2. Storage over {months} simulated months: {projects} projects, {per_project_day} pushes each a day "
        f"({rows:,} rows a day), window {RETENTION_DAYS} days"
    )
    partner, _ = projects_create(projects)
    plain_create()
    print("\n| end of month | rows kept | kept with the window | per project | kept forever | per project |")
    print("|---|---|---|---|---|---|")
    for day in range(1, months * 30 + 1):
        now = timezone.now() + timedelta(days=day)
        raw_pushes_prune(now=now, retention_days=RETENTION_DAYS, ahead_days=1)
        day_insert(table="ingest_rawpush", partner=partner, projects=projects, rows=rows, day_offset=day)
        day_insert(table=PLAIN, partner=partner, projects=projects, rows=rows, day_offset=day)
        if day % 30 == 0:
            kept = sql("SELECT count(*) FROM ingest_rawpush")[0][0]
            windowed, forever = size_partitioned(), size_plain()
            print(
                f"| {day // 30} | {kept:,} | {mb(windowed)} | {windowed / projects / 1024:,.0f} kB | {mb(forever)} "
                f"| {forever / projects / 1024:,.0f} kB |"
            )
    sql(f"DROP TABLE {PLAIN}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=60)
    parser.add_argument("--rows-per-day", type=int, default=5000)
    parser.add_argument("--projects", type=int, default=200)
    parser.add_argument("--pushes-per-project-day", type=int, default=20)
    parser.add_argument("--months", type=int, default=4)
    parser.add_argument("--only", choices=["month", "storage"])
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("PostgreSQL only: set DATABASE_URL to a scratch PostgreSQL database.")
    sql("CREATE EXTENSION IF NOT EXISTS pgstattuple")
    sql("TRUNCATE ingest_rawpush")
    try:
        if args.only in (None, "month"):
            month_pruned(days=args.days, rows_per_day=args.rows_per_day)
            sql("TRUNCATE ingest_rawpush")
            call_command("migrate", "ingest", "0013", verbosity=0)  # the calendar as the migrations leave it
            call_command("migrate", "ingest", verbosity=0)
        if args.only in (None, "storage"):
            storage_over_months(projects=args.projects, per_project_day=args.pushes_per_project_day, months=args.months)
    finally:
        sql(f"DROP TABLE IF EXISTS {PLAIN}")
        sql("TRUNCATE ingest_rawpush")
        call_command("migrate", "ingest", "0013", verbosity=0)
        call_command("migrate", "ingest", verbosity=0)
        with connection.cursor() as cursor:
            print(f"\nthe table's partitions again: {len(partitions.partitions(cursor))}")


if __name__ == "__main__":
    main()
