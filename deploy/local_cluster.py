"""Production's database tier on loopback ports, for the replica tests and deploy/topology.py: a PostgreSQL primary
and a streaming standby of it (Debian's initdb, pg_basebackup -R), PgBouncer in transaction pooling in front of both,
and HAProxy in front of web servers, health-checked on /readyz. Everything is built in a temporary directory and torn
down after; as root, the database servers and PgBouncer run as the postgres user (they refuse root)."""

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def binaries() -> Path | None:
    """Debian's PostgreSQL binaries (the newest installed), or None when this machine has none."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_basebackup"))
    return Path(found[-1]).parent if found else None


def _as_server_user(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@dataclass
class Cluster:
    bin: Path
    data: Path
    port: int
    log: Path

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        subprocess.run(
            _as_server_user(
                [str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start"]
            ),
            check=True,
            capture_output=True,
        )
        deadline = time.monotonic() + 60
        while True:  # a standby answers once it has reached a consistent state
            try:
                self.sql("SELECT 1")
                return
            except subprocess.CalledProcessError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self, mode: str = "fast") -> None:
        subprocess.run(
            _as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop"]),
            capture_output=True,
        )

    def sql(self, statement: str, database: str = "postgres") -> str:
        return subprocess.run(
            [
                str(self.bin / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                database,
                "-Atq",
                "-v",
                "ON_ERROR_STOP=1",
                "-c",
                statement,
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()


@dataclass
class StreamingPair:
    primary: Cluster
    standby: Cluster

    def replay_pause(self) -> None:
        self.standby.sql("SELECT pg_wal_replay_pause()")

    def replay_resume(self) -> None:
        self.standby.sql("SELECT pg_wal_replay_resume()")

    def caught_up(self, timeout: float = 30) -> None:
        """Wait until the standby has replayed everything the primary has written so far."""
        target = self.primary.sql("SELECT pg_current_wal_insert_lsn()")
        deadline = time.monotonic() + timeout
        while self.standby.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn") != "t":
            if time.monotonic() > deadline:
                raise TimeoutError("the standby did not catch up")
            time.sleep(0.05)


_SETTINGS = """
listen_addresses = '127.0.0.1'
port = {port}
unix_socket_directories = '{sockets}'
wal_level = replica
max_wal_senders = 5
hot_standby = on
hot_standby_feedback = on
fsync = off
full_page_writes = off
shared_buffers = 32MB
max_connections = 60
"""


def server_directory(prefix: str) -> Path:
    """A new temporary directory the database server's user owns, for clusters, their sockets and their logs."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(directory, 0o755)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    return directory


def primary_init(cluster: Cluster, *, sockets: Path, settings: dict[str, str] | None = None) -> None:
    """initdb a primary into cluster.data, listening on its port and in `sockets`, with these settings added."""
    subprocess.run(
        _as_server_user(
            [str(cluster.bin / "initdb"), "-D", str(cluster.data), "-U", "postgres", "-A", "trust", "--no-sync"]
        ),
        check=True,
        capture_output=True,
    )
    with open(cluster.data / "postgresql.conf", "a") as conf:
        conf.write(_SETTINGS.format(port=cluster.port, sockets=sockets))
        conf.writelines(_setting_line(name, value) for name, value in (settings or {}).items())
    with open(cluster.data / "pg_hba.conf", "a") as hba:
        hba.write("host replication all 127.0.0.1/32 trust\n")


def _setting_line(name: str, value: str) -> str:
    quoted = value.replace("'", "''")
    return f"{name} = '{quoted}'\n"


@contextlib.contextmanager
def streaming_pair() -> Iterator[StreamingPair]:
    """A primary and its hot standby, replaying over streaming replication; both stopped and removed after."""
    bin = binaries()
    if bin is None:
        raise RuntimeError("no PostgreSQL binaries")
    directory = server_directory("replicas-")
    primary = Cluster(bin, directory / "primary", free_port(), directory / "primary.log")
    standby = Cluster(bin, directory / "standby", free_port(), directory / "standby.log")
    try:
        primary_init(primary, sockets=directory)
        primary.start()
        subprocess.run(
            _as_server_user(
                [
                    str(bin / "pg_basebackup"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(primary.port),
                    "-U",
                    "postgres",
                    "-D",
                    str(standby.data),
                    "-R",
                    "-X",
                    "stream",
                    "--no-sync",
                ]
            ),
            check=True,
            capture_output=True,
        )
        with open(standby.data / "postgresql.auto.conf", "a") as conf:
            conf.write(f"port = {standby.port}\n")
        standby.start()
        yield StreamingPair(primary, standby)
    finally:
        standby.stop("immediate")
        primary.stop("immediate")
        shutil.rmtree(directory, ignore_errors=True)


# The web servers' own PostgreSQL role behind PgBouncer (docs/deploy.md, "The service bounds its own
# transactions"): PgBouncer drops the startup options that carry their timeouts, so the role carries them
# (`manage.py database_role_timeouts --role integration_web`). Migrations and the workers stay `postgres`.
WEB_ROLE = "integration_web"
WEB_ROLE_COMMAND = ["manage.py", "database_role_timeouts", "--role", WEB_ROLE]
# PgBouncer's users (auth_type trust: the names only).
USERLIST = f'"postgres" ""\n"{WEB_ROLE}" ""\n'


def web_role_sql() -> str:
    """The web servers' role, run in the service's database as the role that migrates (postgres) before it does:
    it may log in, read and write the tables that role creates (default privileges: the next release's too), and
    see other roles' sessions in pg_stat_activity (the change log's horizon)."""
    grants = "SELECT, INSERT, UPDATE, DELETE ON TABLES", "USAGE, SELECT, UPDATE ON SEQUENCES"
    return " ".join(
        [
            f"DO $$ BEGIN CREATE ROLE {WEB_ROLE} LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$;",
            f"GRANT pg_read_all_stats TO {WEB_ROLE};",
            *(f"ALTER DEFAULT PRIVILEGES FOR ROLE postgres GRANT {grant} TO {WEB_ROLE};" for grant in grants),
            *(f"GRANT {grant.replace(' ON ', ' ON ALL ')} IN SCHEMA public TO {WEB_ROLE};" for grant in grants),
        ]
    )


_PGBOUNCER = """
[databases]
service = host=127.0.0.1 port={primary} dbname=service
service_replica = host=127.0.0.1 port={standby} dbname=service

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {directory}/userlist.txt
admin_users = postgres
pool_mode = transaction
max_client_conn = 400
default_pool_size = 20
ignore_startup_parameters = extra_float_digits, options
server_login_retry = 1
logfile = {directory}/pgbouncer.log
pidfile = {directory}/pgbouncer.pid
"""


@contextlib.contextmanager
def pgbouncer(pair: StreamingPair) -> Iterator[int]:
    """PgBouncer in transaction pooling in front of the primary's and the standby's `service` database (named
    `service` and `service_replica`), for `postgres` and WEB_ROLE; yields its port. The `options` startup parameter
    (the service's jit=off, the web servers' timeouts) is dropped by it: the database carries jit=off (ALTER
    DATABASE) and WEB_ROLE the timeouts (WEB_ROLE_COMMAND), as docs/deploy.md says."""
    directory = Path(tempfile.mkdtemp(prefix="pgbouncer-"))
    port = free_port()
    (directory / "userlist.txt").write_text(USERLIST)
    config = directory / "pgbouncer.ini"
    config.write_text(
        _PGBOUNCER.format(primary=pair.primary.port, standby=pair.standby.port, port=port, directory=directory)
    )
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
        for path in directory.iterdir():
            shutil.chown(path, "postgres", "postgres")
    process = subprocess.Popen(
        _as_server_user(["pgbouncer", str(config)]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        _wait_for_port(port)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(directory, ignore_errors=True)


_HAPROXY = """
global
    maxconn 2000

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    retries 3
    option redispatch
    retry-on conn-failure empty-response

frontend service
    bind 127.0.0.1:{port}
    default_backend web

backend web
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server inter 500ms fall 2 rise 2
{servers}
"""


@contextlib.contextmanager
def haproxy(web_ports: list[int]) -> Iterator[int]:
    """HAProxy in front of the web servers: round robin, a server taken out when /readyz fails twice, a request whose
    connection failed or got no answer sent to another (safe: the service's writes are idempotent). Yields its port."""
    directory = Path(tempfile.mkdtemp(prefix="haproxy-"))
    port = free_port()
    servers = "\n".join(f"    server web{n} 127.0.0.1:{web} check" for n, web in enumerate(web_ports, start=1))
    config = directory / "haproxy.cfg"
    config.write_text(_HAPROXY.format(port=port, servers=servers))
    process = subprocess.Popen(["haproxy", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port)
        yield port
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(directory, ignore_errors=True)


def _wait_for_port(port: int, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
