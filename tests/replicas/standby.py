"""A PostgreSQL primary and a streaming standby of it, built for a test on loopback ports from Debian's PostgreSQL
binaries (initdb, pg_basebackup -R), and torn down after it. As root, the servers run as the postgres user."""

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.gunicorn import free_port


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

    def sql(self, statement: str) -> str:
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
                "postgres",
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


@contextlib.contextmanager
def streaming_pair() -> Iterator[StreamingPair]:
    """A primary and its hot standby, replaying over streaming replication; both stopped and removed after."""
    bin = binaries()
    if bin is None:
        raise RuntimeError("no PostgreSQL binaries")
    directory = Path(tempfile.mkdtemp(prefix="replicas-"))
    os.chmod(directory, 0o755)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    primary = Cluster(bin, directory / "primary", free_port(), directory / "primary.log")
    standby = Cluster(bin, directory / "standby", free_port(), directory / "standby.log")
    try:
        subprocess.run(
            _as_server_user(
                [str(bin / "initdb"), "-D", str(primary.data), "-U", "postgres", "-A", "trust", "--no-sync"]
            ),
            check=True,
            capture_output=True,
        )
        with open(primary.data / "postgresql.conf", "a") as conf:
            conf.write(_SETTINGS.format(port=primary.port, sockets=directory))
        with open(primary.data / "pg_hba.conf", "a") as hba:
            hba.write("host replication all 127.0.0.1/32 trust\n")
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
