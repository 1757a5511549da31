"""A point-in-time restore, proven (issue #34): backups are known to work only once restored.

1. A PostgreSQL primary archiving its WAL to a pgBackRest repository (deploy/pgbackrest.py; a temporary directory
   here), `stanza-create`, `check`.
2. The service (gunicorn, the real settings, migrated) on it, and pushers through the HTTP API, each recording every
   acknowledged push (its CRM id and token, the answer's project id and updatedDate, when the 2xx came). Under the
   pushes: a full backup; more pushes; the target time read from the database's clock; more pushes; `check` (every
   WAL segment up to now archived). Then the primary and the service are stopped: the cluster is lost.
3. `pgbackrest restore --type=time --target=<target> --target-action=promote` into a new directory, the cluster
   started on it (recovery replays the archive up to the target and promotes), the service started on it
   (its migrations must be none), and checked through SQL and the API: every push acknowledged before the target is
   there, raw push and project state; nothing sent after it is; followers reading from the start, and from a
   position they held before the target, read each project once at its restored state; new pushes work, and come
   after everything ever acknowledged, so a follower that read past the target still sees them; the restored
   cluster archives again (`check`, on its new timeline).
4. Prints the figures (backup size and time, restore time, records checked) as JSON; exits 1 on any mismatch.

    .venv/bin/python -m deploy.restore_drill --seconds 10      (needs PostgreSQL's binaries, pgbackrest, Redis)
"""

import argparse
import contextlib
import dataclasses
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from deploy import pgbackrest
from deploy.local_cluster import Cluster, binaries, free_port, primary_init, server_directory
from deploy.restore_checks import (
    ProjectState,
    Push,
    Target,
    expected_projects,
    follower_mismatches,
    project_mismatches,
    pushes_by_side,
    raw_push_mismatches,
)
from deploy.restore_traffic import PUSH_PATH, SEED_AND_PLATFORM_KEY, Pushers, api_headers, feed, instant, pull
from deploy.topology import _kill, _start, _wait_ready, call

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass
class Service:
    """The service's processes on one database: their environment and where their logs go."""

    environment: dict
    logs: Path

    def manage(self, *arguments: str) -> str:
        return subprocess.run(
            [sys.executable, "manage.py", *arguments],
            cwd=ROOT,
            env=self.environment,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    @contextlib.contextmanager
    def serving(self, name: str, meanwhile: Callable[[], str]) -> Iterator[tuple[str, str]]:
        """gunicorn serving the service (gunicorn.conf.py), `meanwhile` run as it boots; its base URL and what
        `meanwhile` printed."""
        port = free_port()
        server = _start(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
            self.environment,
            self.logs / f"{name}.log",
        )
        try:
            printed = meanwhile()
            _wait_ready(port)
            yield f"http://127.0.0.1:{port}", printed
        finally:
            _kill(server)


def service_environment(database_url: str, redis_url: str) -> dict:
    """The real settings (integration_service/settings.py) on this database; a cache key prefix of its own: a
    restored database starts with a new one (docs/deploy.md, "PostgreSQL backups")."""
    return {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "restore-drill-only-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"restore-drill-{uuid.uuid4().hex[:8]}",
        "CLIENT_ID_RATE_LIMIT_PER_MINUTE": "0",
        "CLIENT_ID_RECORD_LIMIT_PER_MINUTE": "0",
        "WORKERS": "2",
        "THREADS": "4",
    }


def _stored(cluster: Cluster) -> tuple[set[str], list[ProjectState]]:
    """The raw pushes' tokens and the projects, as the database holds them."""
    tokens = cluster.sql("SELECT coalesce(json_agg(data->>'push'), '[]') FROM ingest_rawpush", database="service")
    projects = cluster.sql(
        "SELECT coalesce(json_agg(json_build_array(id, external_id, (source_data->>'n')::int, "
        "to_char(updated_date AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))), '[]') FROM projects_project",
        database="service",
    )
    return set(json.loads(tokens)), [ProjectState(str(uuid.UUID(p[0])), *p[1:]) for p in json.loads(projects)]


def _wait_promoted(cluster: Cluster, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while cluster.sql("SELECT pg_is_in_recovery()") != "f":
        if time.monotonic() > deadline:
            raise TimeoutError("the restored cluster did not finish recovery")
        time.sleep(0.1)


def _backup_figures(stanza: pgbackrest.Stanza, seconds: float) -> dict:
    (backup,) = [backup for backup in stanza.info()["backup"] if backup["type"] == "full"]
    return {
        "label": backup["label"],
        "seconds": round(seconds, 2),
        "database bytes": backup["info"]["size"],
        "repository bytes (compressed)": backup["info"]["repository"]["size"],
        "WAL range": [backup["archive"]["start"], backup["archive"]["stop"]],
    }


class Phases:
    """How long each phase of the drill took, in order."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.seconds[name] = round(time.monotonic() - started, 2)


@dataclasses.dataclass
class LostTimeline:
    """What the service acknowledged on the cluster that was lost, and where the target fell among it."""

    target_time: str  # as the database's clock read it: pgbackrest's --target
    target: Target
    pushes: list[Push]
    unanswered: list[str]  # pushes never answered 2xx
    watermark: str  # a partner's follower's position before the target
    cursor: str  # the platform's feed follower's cursor before the target,
    cursor_position: str  # the updatedDate it points after
    last_version: str  # the latest updatedDate acknowledged


class Drill:
    """One run: the clusters, the repository and the logs, the figures and what did not match."""

    def __init__(self, *, seconds: float, pushers: int, logs: Path, redis_url: str) -> None:
        bin = binaries()
        if bin is None or not pgbackrest.installed():
            raise RuntimeError("needs Debian's PostgreSQL binaries and pgbackrest")
        self.seconds, self.pushers, self.logs, self.redis_url = seconds, pushers, logs, redis_url
        self.directory = server_directory("restore-drill-")
        self.primary = Cluster(bin, self.directory / "primary", free_port(), self.directory / "primary.log")
        self.restored = Cluster(bin, self.directory / "restored", free_port(), self.directory / "restored.log")
        self.stanza = pgbackrest.Stanza(
            name="service",
            config=self.directory / "pgbackrest.conf",
            repository=self.directory / "repository",
            data=self.primary.data,
            port=self.primary.port,
            sockets=self.directory,
            state=self.directory / "pgbackrest",
        )
        self.phases = Phases()
        self.report: dict = {}
        self.mismatches: list[str] = []

    def run(self) -> dict:
        """The drill, start to end; the report (its "mismatch count" 0 when the restore held everything)."""
        with self.phases.timed("primary archiving, stanza created and checked"):
            self.stanza.write_config()
            primary_init(self.primary, sockets=self.directory, settings=self.stanza.server_settings())
            self.primary.start()
            self.stanza.run("stanza-create")
            self.stanza.run("check")
            self.primary.sql("CREATE DATABASE service")
        service = Service(service_environment(self.primary.url("service"), self.redis_url), self.logs)
        with self.phases.timed("migrations"):
            service.manage("migrate", "--no-input", "-v0")
        with contextlib.ExitStack() as serving:
            with self.phases.timed("service started, partner made"):
                seed = functools.partial(service.manage, "shell", "-c", SEED_AND_PLATFORM_KEY)
                base, seeded = serving.enter_context(service.serving("web-primary", meanwhile=seed))
                headers = api_headers(base, seeded)
            lost = self._push_back_up_and_target(base, headers)
        archiver = self.primary.sql("SELECT archived_count, failed_count FROM pg_stat_archiver").split("|")
        self.report["archive"] = {"archived WAL segments": int(archiver[0]), "failed": int(archiver[1])}
        self.primary.stop("immediate")  # the cluster is lost; only the repository remains

        restored_stanza = self._restore(lost.target_time)
        with self.phases.timed("checks on the restored service"):
            service = Service(service_environment(self.restored.url("service"), self.redis_url), self.logs)
            migrate = functools.partial(service.manage, "migrate", "--no-input")
            with service.serving("web-restored", meanwhile=migrate) as (base, migrations):
                if "No migrations to apply." not in migrations:
                    self.mismatches.append(f"migrations ran on the restored database: {migrations}")
                self._check_restored(base, headers, lost)
        with self.phases.timed("check of the restored cluster's archiving"):
            restored_stanza.run("check")  # archiving goes on from the restored cluster, on its new timeline
        self.report["mismatches"] = self.mismatches[:50]
        self.report["mismatch count"] = len(self.mismatches)
        self.report["phase seconds"] = self.phases.seconds
        return self.report

    def close(self, *, keep: bool = False) -> None:
        self.restored.stop("immediate")
        self.primary.stop("immediate")
        if keep:
            print(f"kept: {self.directory}", file=sys.stderr)
        else:
            shutil.rmtree(self.directory, ignore_errors=True)

    def _push_back_up_and_target(self, base: str, headers: dict) -> LostTimeline:
        """Pushes throughout; a full backup under them; the target between acknowledged pushes; the WAL archived."""
        pushers = Pushers(base, headers["writer"], self.pushers)
        pushers.start()
        try:
            time.sleep(self.seconds)
            with self.phases.timed("full backup under pushes"):
                self.stanza.run("--type=full", "backup")
            time.sleep(max(self.seconds, 1.5))  # pgBackRest takes a backup that stopped before the target (to 1 s)
            watermark = pull(base, headers["reader"])[-1].updated_date  # followers' positions before the target
            fed, cursor = feed(base, headers["platform"])
            before = pushers.ticket()
            target_time, target_epoch = self.primary.sql(
                "SELECT at, extract(epoch FROM at) FROM (SELECT clock_timestamp() AS at) now"
            ).split("|")
            target = Target(before=before, after=pushers.ticket())
            time.sleep(self.seconds)
        finally:
            pushers.finish()
        with self.phases.timed("check: the last push's WAL archived"):
            self.stanza.run("check")  # switches WAL and waits until the segment holding the last push is archived
        self.report["backup"] = _backup_figures(self.stanza, self.phases.seconds["full backup under pushes"])
        sides = pushes_by_side(pushers.pushes, target)
        self.report["target"] = {
            "time": target_time,
            "pushes acknowledged before it": len(sides["before"]),
            "pushes in flight as it was read": len(sides["in flight"]),
            "pushes sent after it": len(sides["after"]),
            "non-2xx answers to pushes (each sent again)": dict(pushers.refused),
        }
        if sides["before"]:
            last_2xx = max(push.acknowledged_at for push in sides["before"])
            self.report["target"]["seconds since the last 2xx before it"] = round(float(target_epoch) - last_2xx, 3)
        return LostTimeline(
            target_time=target_time,
            target=target,
            pushes=pushers.pushes,
            unanswered=pushers.unanswered,
            watermark=watermark,
            cursor=cursor,
            cursor_position=fed[-1].updated_date,
            last_version=max(push.updated_date for push in pushers.pushes),
        )

    def _restore(self, target_time: str) -> pgbackrest.Stanza:
        """The repository restored to the target into a new directory, started, recovered and promoted; its
        stanza (the configuration follows the cluster: archiving goes on from it)."""
        stanza = dataclasses.replace(self.stanza, data=self.restored.data, port=self.restored.port)
        with self.phases.timed("restore"):
            stanza.write_config()
            stanza.run("--type=time", f"--target={target_time}", "--target-action=promote", "restore")
        with self.phases.timed("recovery to the target, promoted"):
            with open(self.restored.data / "postgresql.auto.conf", "a") as conf:
                conf.write(f"port = {self.restored.port}\n")
            try:
                self.restored.start()
            except subprocess.CalledProcessError as error:
                log = self.restored.log.read_text().splitlines()[-8:]
                raise RuntimeError("the restored cluster did not start:\n" + "\n".join(log)) from error
            _wait_promoted(self.restored)
        self.report["restore"] = {
            "restore seconds": self.phases.seconds["restore"],
            "recovery seconds (to promoted)": self.phases.seconds["recovery to the target, promoted"],
            "timeline": int(self.restored.sql("SELECT timeline_id FROM pg_control_checkpoint()")),
        }
        return stanza

    def _check_restored(self, base: str, headers: dict, lost: LostTimeline) -> None:
        """The restored database and the service on it against what the lost timeline acknowledged."""
        tokens, projects = _stored(self.restored)
        expected = expected_projects(lost.pushes, tokens)
        found = self.mismatches
        found += raw_push_mismatches(lost.pushes, lost.target, tokens) + project_mismatches(expected, projects, "SQL")
        found += [f"push {token} was never answered 2xx" for token in lost.unanswered]

        from_start = pull(base, headers["reader"])
        found += follower_mismatches(from_start, expected, "the partner's pull from the start")
        fed, end_cursor = feed(base, headers["platform"])
        found += follower_mismatches(fed, expected, "the platform's feed from the start")
        from_watermark = pull(base, headers["reader"], lost.watermark)
        found += follower_mismatches(from_watermark, expected, "a partner's follower", after=lost.watermark)
        from_cursor, _ = feed(base, headers["platform"], lost.cursor)
        found += follower_mismatches(from_cursor, expected, "the platform's follower", after=lost.cursor_position)
        status, _, body = call(base, "GET", "/sandbox/api/v1/integration/projects?limit=1", headers["reader"])
        if (status, body.get("total")) != (200, len(expected)):
            found.append(f"the list's total: {status} {body.get('total')}, expected {len(expected)}")

        new = self._push_after_restore(base, headers, sorted(expected)[:5], lost.last_version)
        end = from_start[-1].updated_date if from_start else ""
        found += follower_mismatches(pull(base, headers["reader"], end), new, "the pull of new pushes", after=end)
        found += follower_mismatches(feed(base, headers["platform"], end_cursor)[0], new, "the feed of new pushes")
        past = pull(base, headers["reader"], lost.last_version)
        found += follower_mismatches(past, new, "a follower past the target", after=lost.last_version)
        sides = pushes_by_side(lost.pushes, lost.target)
        self.report["checked"] = {
            "pushes acknowledged before the target, found": sum(push.token in tokens for push in sides["before"]),
            "pushes in flight at the target, found": sum(push.token in tokens for push in sides["in flight"]),
            "pushes sent after the target, found": sum(push.token in tokens for push in sides["after"]),
            "raw pushes stored": len(tokens),
            "projects restored": len(projects),
            "read by the partner's pull from the start": len(from_start),
            "read by the platform's feed from the start": len(fed),
            "read from followers' positions before the target": len(from_watermark) + len(from_cursor),
            "new pushes after the restore": len(new),
        }

    def _push_after_restore(self, base: str, headers: dict, restored_ids: list[str], last_version: str) -> dict:
        """New pushes on the restored service: updates of restored records (200) and new records (201), each later
        than every version the lost timeline acknowledged. Their expected states."""
        new = {}
        fresh = [f"after-restore-{n}" for n in range(5)]
        for n, external_id in enumerate(restored_ids + fresh):
            body = {"id": external_id, "data": {"n": -1 - n, "push": f"after-restore-{n}"}}
            status, _, answer = call(base, "POST", PUSH_PATH, headers["writer"], body)
            wanted = 201 if external_id in fresh else 200
            if status != wanted:
                self.mismatches.append(f"a push of {external_id} after the restore answered {status}, not {wanted}")
                continue
            updated_date = instant(answer["updatedDate"])
            if updated_date <= last_version:
                self.mismatches.append(f"{external_id} after the restore: {updated_date}, not after {last_version}")
            new[external_id] = ProjectState(answer["id"], external_id, -1 - n, updated_date)
        return new


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10, help="pushing before, during and after (default 10)")
    parser.add_argument("--pushers", type=int, default=4, help="concurrent pushers (default 4)")
    parser.add_argument("--logs", type=Path, default=None, help="where the servers' logs go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the clusters and the repository (printed)")
    arguments = parser.parse_args()
    logs = arguments.logs or Path(tempfile.mkdtemp(prefix="restore-drill-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    redis_url = os.environ.get("DRILL_REDIS_URL", "redis://127.0.0.1:6379/13")
    started = time.monotonic()
    drill = Drill(seconds=arguments.seconds, pushers=arguments.pushers, logs=logs, redis_url=redis_url)
    try:
        report = drill.run()
    finally:
        drill.close(keep=arguments.keep)
    report["drill seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(report, indent=1))
    print(f"server logs: {logs}")
    return 1 if report["mismatch count"] else 0


if __name__ == "__main__":
    sys.exit(main())
