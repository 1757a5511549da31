"""deploy/pgbackrest.py: the configuration a stanza is written with, and the settings a cluster or a Patroni node
takes from it (the restore drill, tests/deploy/test_restore_drill.py, runs them for real)."""

from pathlib import Path

import pytest

from deploy.pgbackrest import Stanza, missing_segments


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


def archived(*names: str) -> list[str]:
    """WAL file names as pgBackRest keeps them: the segment, its SHA-1, the compression."""
    return [f"{name}-{'ab' * 20}.zst" for name in names]


def test_a_whole_archive_on_one_timeline_misses_nothing():
    files = archived("000000010000000000000002", "000000010000000000000003", "000000010000000000000004")

    assert missing_segments(files, {}, start="000000010000000000000002") == []


def test_a_segment_never_archived_before_the_newest_is_missing():
    files = archived("000000010000000000000002", "000000010000000000000004")

    assert missing_segments(files, {}, start="000000010000000000000002") == ["000000010000000000000003"]


def test_the_count_runs_across_a_log_boundary():
    files = archived("0000000100000000000000FE", "000000010000000100000000")

    assert missing_segments(files, {}, start="0000000100000000000000FE") == ["0000000100000000000000FF"]


def test_after_a_failover_the_old_timeline_is_needed_up_to_the_branch_and_the_new_one_from_there():
    # Timeline 1 branched in its segment 4 (0/4275D08): timeline 1's 2 and 3, then timeline 2's 4 onwards. The
    # old leader's copy of 4 is archived `.partial` by the promoted standby and is not needed.
    files = [
        *archived("000000010000000000000002", "000000010000000000000003"),
        *archived("000000020000000000000004", "000000020000000000000005"),
        "000000010000000000000004.partial-" + "cd" * 20 + ".zst",
        "000000010000000000000002.00000028.backup",
        "00000002.history",
    ]
    history = {2: "1\t0/4275D08\tno recovery target specified\n"}

    assert missing_segments(files, history, start="000000010000000000000002") == []


def test_a_segment_the_lost_leader_never_archived_is_a_gap_after_the_failover():
    files = archived("000000010000000000000002", "000000020000000000000004", "000000020000000000000005")
    history = {2: "1\t0/4275D08\tno recovery target specified\n"}

    assert missing_segments(files, history, start="000000010000000000000002") == ["000000010000000000000003"]


def test_two_leader_changes_follow_the_newest_timeline_s_history():
    # Timeline 2 branched from 1 at a segment's start (0/5000000: timeline 1 up to 4), timeline 3 from 2 in 6.
    files = archived("000000010000000000000004", "000000020000000000000005", "000000020000000000000006",
                     "000000030000000000000007")  # fmt: skip
    history = {3: "1\t0/5000000\tno recovery target specified\n\n2\t0/6A00000\tno recovery target specified\n"}

    assert missing_segments(files, history, start="000000010000000000000004") == ["000000030000000000000006"]


def test_an_archive_without_a_segment_misses_the_start():
    assert missing_segments([], {}, start="000000010000000000000002") == ["000000010000000000000002"]
