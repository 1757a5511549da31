"""pgBackRest (Debian's `pgbackrest`) for one PostgreSQL cluster: its `pgbackrest.conf`, the settings the cluster
needs to archive its WAL there (`archive_mode`, `archive_command`) and to read it back (`restore_command`), and the
commands run against it. Used by deploy/restore_drill.py on loopback; the same pieces go into a Patroni node's
configuration (`patroni_postgresql`). Production keeps the repository off the database's host: docs/deploy.md,
"PostgreSQL backups"."""

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from deploy.local_cluster import _as_server_user

_CONFIG = """[global]
repo1-path={repository}
repo1-retention-full-type=time
repo1-retention-full={retention_days}
compress-type=zst
process-max=2
start-fast=y
lock-path={state}/lock
log-path={state}/log
log-level-console=warn
log-level-file=info

[{stanza}]
pg1-path={data}
pg1-port={port}
pg1-socket-path={sockets}
pg1-user=postgres
"""


def installed() -> bool:
    return shutil.which("pgbackrest") is not None


@dataclass(frozen=True)
class Stanza:
    """One cluster's backups and archived WAL in one repository. `config` is where pgbackrest.conf is written;
    `state` holds pgBackRest's locks and logs (two stanzas on one machine need their own, or their locks collide)."""

    name: str
    config: Path
    repository: Path
    data: Path
    port: int
    sockets: Path
    state: Path

    def write_config(self, *, retention_days: int = 14) -> None:
        """pgbackrest.conf for this stanza: full backups (and the WAL and differentials that depend on them) kept
        `retention_days` days, so any moment of the last `retention_days` days can be restored."""
        for directory in (self.repository, self.state / "lock", self.state / "log"):
            directory.mkdir(parents=True, exist_ok=True)
            _give_to_server_user(directory)
        self.config.write_text(
            _CONFIG.format(
                stanza=self.name,
                repository=self.repository,
                retention_days=retention_days,
                state=self.state,
                data=self.data,
                port=self.port,
                sockets=self.sockets,
            )
        )
        _give_to_server_user(self.config)

    def command(self, *arguments: str) -> list[str]:
        """`pgbackrest` with this stanza's configuration and the arguments (options, then the command)."""
        return ["pgbackrest", f"--config={self.config}", f"--stanza={self.name}", *arguments]

    def server_settings(self) -> dict[str, str]:
        """What the cluster's postgresql.conf needs so that every WAL segment reaches the repository. A segment is
        archived when full or after archive_timeout (60 s): the most a lost primary can take with it from the
        archive is that minute (a standby, docs/deploy.md "High availability", keeps the rest)."""
        return {
            "archive_mode": "on",
            "archive_command": " ".join(self.command("archive-push", "%p")),
            "archive_timeout": "60s",
            "wal_level": "replica",
        }

    def restore_command(self) -> str:
        return " ".join(self.command("archive-get", "%f", '"%p"'))

    def patroni_postgresql(self) -> dict:
        """The `postgresql` section's part of a Patroni node's configuration for this stanza: archiving, the WAL a
        replica or a restored node fetches from the repository, and replicas built from the latest backup (then
        streaming) rather than a copy taken from the leader."""
        return {
            "parameters": self.server_settings(),
            "recovery_conf": {"restore_command": self.restore_command()},
            "create_replica_methods": ["pgbackrest", "basebackup"],
            "pgbackrest": {
                "command": " ".join(self.command("--delta", "restore")),
                "keep_data": True,
                "no_params": True,
            },
        }

    def run(self, *arguments: str) -> str:
        """Run a pgbackrest command as the database's owner (the repository and the data are the server user's);
        its standard output. CalledProcessError, with pgBackRest's message, when it fails."""
        return subprocess.run(
            _as_server_user(self.command(*arguments)), check=True, capture_output=True, text=True
        ).stdout

    def info(self) -> dict:
        """`pgbackrest info` of this stanza: its backups (sizes, times, WAL ranges) and archive."""
        (stanza,) = json.loads(self.run("--output=json", "info"))
        return stanza

    def archive_gaps(self) -> list[str]:
        """The WAL segments missing from the archive between the oldest backup's first segment and the newest one
        archived, along the newest timeline's history: each one a point-in-time restore from that backup could not
        replay. Empty when the archive is whole (docs/deploy.md, "High availability": a failover and archiving)."""
        (archive,) = self.info()["archive"]  # one PostgreSQL version, one system: one archive id
        listing = json.loads(self.run("--output=json", "--recurse", "repo-ls", f"archive/{self.name}/{archive['id']}"))
        histories = {
            int(match["timeline"], 16): self.run("repo-get", f"archive/{self.name}/{archive['id']}/{path}")
            for path in listing
            if (match := _HISTORY.fullmatch(path))
        }
        backups = self.info()["backup"]
        start = backups[0]["archive"]["start"] if backups else archive["min"]
        return missing_segments(
            [path.rsplit("/", 1)[-1] for path, entry in listing.items() if entry["type"] == "file"], histories, start
        )


_SEGMENT = re.compile(r"(?P<timeline>[0-9A-F]{8})(?P<log>[0-9A-F]{8})(?P<segment>[0-9A-F]{8})-[0-9a-f]{40}(\.\w+)?")
_HISTORY = re.compile(r"(.*/)?(?P<timeline>[0-9A-F]{8})\.history")
SEGMENTS_PER_LOG = 0x100  # 16 MiB segments, PostgreSQL's default (wal_segment_size)


def _number(name: str) -> tuple[int, int]:
    """(timeline, segment number) of a WAL file's name."""
    return int(name[:8], 16), int(name[8:16], 16) * SEGMENTS_PER_LOG + int(name[16:24], 16)


def _name(timeline: int, number: int) -> str:
    return f"{timeline:08X}{number // SEGMENTS_PER_LOG:08X}{number % SEGMENTS_PER_LOG:08X}"


def missing_segments(files: list[str], histories: dict[int, str], start: str) -> list[str]:
    """The names of the segments a recovery from `start` to the newest archived segment would need but the archive
    (`files`, as pgBackRest names them: segment, checksum, compression) lacks. It follows the newest timeline's
    history (its `.history` file: each ancestor timeline and the position where the next one branched off): an
    ancestor's segments up to the branch point (the branch's own segment is the next timeline's first, the
    ancestor's copy of it archived `.partial`), then the newest timeline's to its last."""
    archived: dict[int, set[int]] = {}
    for name in files:
        if _SEGMENT.fullmatch(name):  # not a `.partial`, a `.backup` label or a `.history`
            timeline, number = _number(name)
            archived.setdefault(timeline, set()).add(number)
    if not archived:
        return [start]
    newest = max(archived)
    branches = []  # (timeline, the segment where the next one begins)
    for line in histories.get(newest, "").splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].isdigit():
            high, low = (int(part, 16) for part in fields[1].split("/"))
            branches.append((int(fields[0]), ((high << 32) + low) // (16 * 1024 * 1024)))
    start_timeline, number = _number(start)
    missing = []
    for timeline, ends in [*branches, (newest, max(archived[newest]) + 1)]:
        if timeline < start_timeline:
            continue
        missing += [_name(timeline, n) for n in range(number, ends) if n not in archived.get(timeline, set())]
        number = max(number, ends)
    return missing


def _give_to_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")
