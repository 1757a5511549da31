"""A real full disk (issue #34 item 6): a PostgreSQL cluster of the test's own whose raw pushes live in a tablespace
on a small tmpfs (as root; skipped where mounting is not allowed), gunicorn serving it. Pushes fill the disk: each
answer is a 201 (stored) or a 503 `database_full` that says so, /readyz reports the database not writable and
/metrics counts the refusals; once the volume is grown, pushes are stored again and every 201 is in the database."""

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from deploy.local_cluster import Cluster, binaries
from tests.conftest import SANDBOX, api_headers, url
from tests.gunicorn import free_port, gunicorn_serving

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="it serves a dump of the PostgreSQL test database"),
]

CLUSTER_SETTINGS = "listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{sockets}'\nfsync = off\n"


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command]


@contextlib.contextmanager
def small_volume(path: Path, size: str) -> Iterator[Path]:
    path.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here: {mounted.stderr.decode().strip()}")
    try:
        shutil.chown(path, "postgres", "postgres")
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@contextlib.contextmanager
def cluster_with_small_volume() -> Iterator[tuple[Cluster, Path]]:
    """A cluster of its own (its data on the ordinary disk, WAL included) and a 256 KiB tablespace `small`."""
    if os.geteuid() != 0 or binaries() is None or shutil.which("runuser") is None:
        pytest.skip("needs root (a mount) and Debian's PostgreSQL binaries")
    directory = Path(tempfile.mkdtemp(prefix="full-disk-"))
    os.chmod(directory, 0o755)
    shutil.chown(directory, "postgres", "postgres")
    cluster = Cluster(binaries(), directory / "data", free_port(), directory / "postgresql.log")
    try:
        subprocess.run(
            _as_postgres([str(cluster.bin / "initdb"), "-D", str(cluster.data), "-U", "postgres", "-A", "trust", "-N"]),
            check=True,
            capture_output=True,
        )
        with open(cluster.data / "postgresql.conf", "a") as conf:
            conf.write(CLUSTER_SETTINGS.format(port=cluster.port, sockets=directory))
        cluster.start()
        with small_volume(directory / "small", "256k") as volume:
            cluster.sql(f"CREATE TABLESPACE small LOCATION '{volume}'")
            yield cluster, volume
            cluster.stop("immediate")
    finally:
        cluster.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


def copy_test_database(cluster: Cluster) -> None:
    """The test database (its schema and the test's rows) into the cluster's `service` database."""
    test_database = settings.DATABASES["default"]
    cluster.sql("CREATE DATABASE service")
    dump = subprocess.run(
        [
            str(cluster.bin / "pg_dump"),
            "-h",
            test_database["HOST"] or "127.0.0.1",
            "-p",
            str(test_database["PORT"] or 5432),
            "-U",
            test_database["USER"] or "postgres",
            "--no-owner",
            test_database["NAME"],
        ],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(
        [
            str(cluster.bin / "psql"),
            "-h",
            "127.0.0.1",
            "-p",
            str(cluster.port),
            "-U",
            "postgres",
            "-d",
            "service",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
        ],
        input=dump,
        check=True,
        capture_output=True,
    )


def send(request: urllib.request.Request) -> tuple[int, dict, dict]:
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


# Raw pushes are partitioned by day (ingest/partitions.py): the parent's tablespace is only where new partitions go,
# so every partition (the legacy one, the days ahead, the default) moves too.
RAW_PUSHES_ON_SMALL_VOLUME = """
DO $$
DECLARE part regclass;
BEGIN
    FOR part IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'ingest_rawpush'::regclass LOOP
        EXECUTE format('ALTER TABLE %s SET TABLESPACE small', part);
    END LOOP;
    ALTER TABLE ingest_rawpush SET TABLESPACE small;
END $$;
"""


def test_a_full_disk_answers_503_database_full_until_it_has_room(user, sandbox_key):
    with cluster_with_small_volume() as (cluster, volume):
        copy_test_database(cluster)
        cluster.sql(RAW_PUSHES_ON_SMALL_VOLUME, database="service")
        with gunicorn_serving(
            DATABASE_URL=cluster.url("service"),
            SECRET_KEY=settings.SECRET_KEY,
            JWT_SIGNING_KEY=settings.SIMPLE_JWT["SIGNING_KEY"],
            WORKERS="1",  # one process's registry for /metrics, one cache for /readyz
            DATABASE_NOT_WRITABLE_SECONDS="1",
        ) as (host, port):
            server = f"http://{host}:{port}"
            headers = api_headers(user, sandbox_key)

            def push(number: int) -> tuple[int, dict, dict]:
                # Random hex compresses little: each push takes a few KiB of the volume.
                body = json.dumps({"id": f"CRM-{number}", "data": {"notes": os.urandom(12000).hex()}}).encode()
                return send(urllib.request.Request(server + url(SANDBOX, "push"), body, headers, method="POST"))

            answers = []
            while len(answers) < 400 and not (answers and answers[-1][0] == 503):
                answers.append(push(len(answers)))
            readiness = send(urllib.request.Request(server + "/readyz"))
            metrics = urllib.request.urlopen(server + "/metrics", timeout=10).read().decode()

            status, refused_headers, refused = answers[-1]
            assert {answer[0] for answer in answers[:-1]} == {201}
            assert (status, refused_headers["Retry-After"], refused["code"]) == (503, "2", "database_full")
            assert refused["detail"] == (
                "The database cannot write: its disk is full. Reads still work. Send the request again shortly; a "
                "push is safe to repeat."
            )
            assert readiness[0] == 200
            assert (readiness[2]["status"], readiness[2]["checks"]["database"]) == ("degraded", "not_writable")
            assert 'integration_faults_total{fault="database_full"} 1.0' in metrics

            subprocess.run(["mount", "-o", "remount,size=64m", str(volume)], check=True)  # the volume grown
            again = [push(number) for number in range(len(answers) - 1, len(answers) + 4)]

            assert [answer[0] for answer in again] == [201] * 5
            stored = cluster.sql("SELECT count(*) FROM ingest_rawpush", database="service")
            assert int(stored) == len(answers) - 1 + len(again)
