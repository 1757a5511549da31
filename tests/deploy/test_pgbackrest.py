"""deploy/pgbackrest.py: the configuration a stanza is written with, and the settings a cluster or a Patroni node
takes from it (the restore drill, tests/deploy/test_restore_drill.py, runs them for real)."""

from pathlib import Path

import pytest

from deploy.pgbackrest import Stanza


@pytest.fixture
def stanza(tmp_path: Path) -> Stanza:
    return Stanza(
        name="service",
        config=tmp_path / "pgbackrest.conf",
        repository=tmp_path / "repository",
        data=Path("/var/lib/postgresql/15/main"),
        port=5433,
        sockets=Path("/var/run/postgresql"),
        state=tmp_path / "state",
    )


def test_the_configuration_names_the_repository_the_retention_and_the_cluster(stanza, tmp_path):
    stanza.write_config(retention_days=21)

    assert stanza.config.read_text() == (
        "[global]\n"
        f"repo1-path={tmp_path}/repository\n"
        "repo1-retention-full-type=time\n"
        "repo1-retention-full=21\n"
        "compress-type=zst\n"
        "process-max=2\n"
        "start-fast=y\n"
        f"lock-path={tmp_path}/state/lock\n"
        f"log-path={tmp_path}/state/log\n"
        "log-level-console=warn\n"
        "log-level-file=info\n"
        "\n"
        "[service]\n"
        "pg1-path=/var/lib/postgresql/15/main\n"
        "pg1-port=5433\n"
        "pg1-socket-path=/var/run/postgresql\n"
        "pg1-user=postgres\n"
    )
    assert all(path.is_dir() for path in (tmp_path / "repository", tmp_path / "state/lock", tmp_path / "state/log"))


def test_the_cluster_archives_every_segment_to_the_stanza_and_reads_it_back(stanza, tmp_path):
    config = f"--config={tmp_path}/pgbackrest.conf"

    assert stanza.server_settings() == {
        "archive_mode": "on",
        "archive_command": f"pgbackrest {config} --stanza=service archive-push %p",
        "archive_timeout": "60s",
        "wal_level": "replica",
    }
    assert stanza.restore_command() == f'pgbackrest {config} --stanza=service archive-get %f "%p"'


def test_a_patroni_node_takes_the_same_settings_and_builds_replicas_from_the_repository(stanza, tmp_path):
    config = f"--config={tmp_path}/pgbackrest.conf"

    assert stanza.patroni_postgresql() == {
        "parameters": stanza.server_settings(),
        "recovery_conf": {"restore_command": f'pgbackrest {config} --stanza=service archive-get %f "%p"'},
        "create_replica_methods": ["pgbackrest", "basebackup"],
        "pgbackrest": {
            "command": f"pgbackrest {config} --stanza=service --delta restore",
            "keep_data": True,
            "no_params": True,
        },
    }
