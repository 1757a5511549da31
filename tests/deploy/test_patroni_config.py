"""The Patroni cluster's configuration templates (deploy/patroni_cluster.py, docs/deploy.md "High availability") and the
failover soak's verdict (deploy/failover_soak.py). The cluster itself is built and failed over by the soak, which CI
runs in short form (.ci/run); these check, without starting a cluster, what each file routes to, what the soak
calls a failure, and that a soak stopped by an error ends."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deploy import pgbackrest
from deploy.failover_soak import failures
from deploy.local_cluster import free_port
from deploy.patroni_cluster import Node, PatroniCluster, haproxy_cfg, patroni_yml, pgbouncer_ini, up

ROOT = Path(__file__).resolve().parents[2]


def cluster(synchronous: str = "on") -> PatroniCluster:
    nodes = [
        Node(name=f"node{n}", pg_port=6000 + n, rest_port=8000 + n, data=f"/srv/node{n}", config=f"/srv/node{n}.yml",
             log=f"/srv/node{n}.log")
        for n in (1, 2, 3)
    ]  # fmt: skip
    return PatroniCluster(
        directory="/srv", synchronous=synchronous, etcd_port=2379, etcd_peer_port=2380, primary_port=5000,
        replica_port=5001, stats_port=7000, pgbouncer_port=6432, nodes=nodes,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("mode", "synchronous", "strict"), [("on", True, False), ("strict", True, True), ("off", False, False)]
)
def test_the_synchronous_setting_is_patroni_s_synchronous_mode(mode, synchronous, strict):
    config = json.loads(patroni_yml(cluster(mode), cluster(mode).nodes[0], bin_dir=Path("/usr/lib/postgresql/15/bin")))

    dcs = config["bootstrap"]["dcs"]
    assert (dcs["synchronous_mode"], dcs["synchronous_mode_strict"]) == (synchronous, strict)
    assert dcs["primary_start_timeout"] == 0
    assert dcs["loop_wait"] + 2 * dcs["retry_timeout"] <= dcs["ttl"]  # Patroni's own rule
    assert dcs["postgresql"]["use_pg_rewind"] is True
    assert dcs["postgresql"]["parameters"]["wal_log_hints"] == "on"  # pg_rewind needs it
    assert config["restapi"]["listen"] == "127.0.0.1:8001"
    assert config["postgresql"]["listen"] == "127.0.0.1:6001"
    assert config["etcd3"]["hosts"] == ["127.0.0.1:2379"]


def test_every_node_archives_to_the_one_repository_through_its_own_configuration_and_is_built_from_it():
    built = cluster()

    for node in built.nodes:
        postgresql = json.loads(patroni_yml(built, node, bin_dir=Path("/bin")))["postgresql"]
        config = f"--config=/srv/{node.name}.pgbackrest.conf --stanza=service"
        assert postgresql["parameters"]["archive_mode"] == "on"  # not `always`: the leader alone archives
        assert postgresql["parameters"]["archive_command"] == f"pgbackrest {config} archive-push %p"
        assert postgresql["recovery_conf"] == {"restore_command": f'pgbackrest {config} archive-get %f "%p"'}
        assert postgresql["create_replica_methods"] == ["pgbackrest", "basebackup"]
        assert postgresql["pgbackrest"]["command"] == f"pgbackrest {config} --delta restore"
        stanza = built.stanza(node)
        assert (stanza.repository, stanza.data, stanza.port) == (Path("/srv/pgbackrest/repository"), Path(node.data),
                                                                 node.pg_port)  # fmt: skip
        assert stanza.state == Path(f"/srv/pgbackrest/{node.name}")


def test_archiving_parameters_reach_every_node():
    archiving = {"archive_mode": "on", "archive_command": "pgbackrest --stanza=integration archive-push %p"}
    built = cluster()

    for node in built.nodes:
        parameters = json.loads(patroni_yml(built, node, bin_dir=Path("/bin"), parameters=archiving))["bootstrap"][
            "dcs"
        ]["postgresql"]["parameters"]
        assert parameters["archive_mode"] == "on"
        assert parameters["archive_command"] == archiving["archive_command"]


def test_haproxy_routes_the_leader_on_primary_and_the_replicas_on_replica_and_cuts_a_demoted_node_s_sessions():
    config = haproxy_cfg(cluster())
    primary = config.split("listen primary")[1].split("listen replicas")[0]
    replicas = config.split("listen replicas")[1]

    assert "bind 127.0.0.1:5000" in primary and "option httpchk GET /primary" in primary
    assert "bind 127.0.0.1:5001" in replicas and "option httpchk GET /replica" in replicas
    for section in (primary, replicas):
        assert "http-check expect status 200" in section
        assert "on-marked-down shutdown-sessions" in section
        for n in (1, 2, 3):
            assert f"server node{n} 127.0.0.1:600{n} maxconn 200 check port 800{n}" in section
    assert "mode tcp" in config.split("listen stats")[0]


def test_pgbouncer_reaches_the_cluster_only_through_haproxy():
    config = pgbouncer_ini(cluster())

    assert "service = host=127.0.0.1 port=5000 dbname=service" in config
    assert "service_replica = host=127.0.0.1 port=5001 dbname=service" in config
    assert "pool_mode = transaction" in config
    assert "admin_users = postgres" in config  # deploy/switchover.py pauses and resumes `service`
    assert not any(f"port=600{n}" in config for n in (1, 2, 3))


def test_the_service_s_routes_never_name_a_node():
    built = cluster()

    assert built.web_urls()["DATABASE_URL"] == "postgres://integration_web@127.0.0.1:6432/service"
    assert built.web_urls()["DATABASE_REPLICA_URLS"] == "postgres://integration_web@127.0.0.1:6432/service_replica"
    assert built.worker_urls() == {"DATABASE_URL": "postgres://postgres@127.0.0.1:5000/service"}


def test_an_unknown_synchronous_mode_is_refused_before_anything_starts(monkeypatch, tmp_path):
    monkeypatch.setenv("HA_SYNCHRONOUS_MODE", "sometimes")

    with pytest.raises(ValueError, match="HA_SYNCHRONOUS_MODE is one of on, strict, off"):
        up(directory=tmp_path / "cluster")
    assert not (tmp_path / "cluster").exists()


def test_a_machine_without_pgbackrest_is_refused_before_anything_starts(monkeypatch, tmp_path):
    monkeypatch.setattr(pgbackrest, "installed", lambda: False)

    with pytest.raises(RuntimeError, match="needs Debian's PostgreSQL binaries and pgbackrest"):
        up(directory=tmp_path / "cluster")
    assert not (tmp_path / "cluster").exists()


def test_a_clean_soak_with_a_rebuilt_node_has_no_failure():
    report = clean_report()
    report["events"]["rejoin"] = {"node": "node1", "how": "rebuild", "built by": "pgbackrest"}

    assert failures(report) == []


def test_a_switchover_not_held_needs_only_fewer_503s_than_the_failover():
    report = clean_report()
    report["events"]["failover"]["push 503s"] = 242
    report["events"]["switchover"].update({"push 503s": 124, "queries held by PgBouncer": False})

    assert failures(report) == []


def clean_report() -> dict:
    follower = {"versions seen": 10, "seen twice": 0, "out of order": 0, "final versions missed": 0}
    return {
        "acknowledged pushes without their raw push": 0,
        "acknowledged pushes whose project does not hold the last value": 0,
        "acknowledged patches lost": 0,
        "partner follower": dict(follower),
        "platform follower": dict(follower),
        "webhooks": {"events not delivered": 0, "delivered for an event the leader does not hold": 0},
        "5xx answers": {"503": 40, "502": 1},
        "events": {
            "failover": {"first push acknowledged after (s)": 11.2, "push 503s": 4},
            "switchover": {"first push acknowledged after (s)": 0.3, "push 503s": 0, "queries held by PgBouncer": True},
        },
        "replicas built": {"node2": "pgbackrest", "node3": "pgbackrest"},
        "archive": {
            "after the failover": {"leader": "node2", "ran on": ["node2"], "failed": {}},
            "at the end": {
                "check": {"leader": "node3", "ran on": ["node3"], "failed": {}},
                "segments missing": [],
            },
        },
    }


def test_a_clean_soak_has_no_failure():
    assert failures(clean_report()) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r.update({"acknowledged pushes without their raw push": 3}),
         "acknowledged pushes without their raw push"),
        (lambda r: r["platform follower"].update({"seen twice": 1}), "platform follower: seen twice"),
        (lambda r: r["partner follower"].update({"final versions missed": 2}),
         "partner follower: final versions missed"),
        (lambda r: r["webhooks"].update({"delivered for an event the leader does not hold": 1}),
         "delivered for an event the leader does not hold"),
        (lambda r: r["5xx answers"].update({"500": 1}), "1 answers 500"),
        (lambda r: r["events"]["failover"].update({"first push acknowledged after (s)": 30.5}),
         "failover: writes not back within 30 s (30.5)"),
        (lambda r: r["events"]["switchover"].update({"first push acknowledged after (s)": None}),
         "switchover: writes not back within 30 s (None)"),
        (lambda r: r["events"]["switchover"].update({"push 503s": 4}),
         "switchover: 4 push 503s, not fewer than the failover's 4"),
        (lambda r: r["events"]["switchover"].update({"push 503s": 97}),
         "switchover: 97 push 503s, not fewer than the failover's 4"),
        (lambda r: r["events"]["switchover"].update({"push 503s": 1}),
         "switchover: 1 push 503s while PgBouncer held the queries"),
        (lambda r: r["replicas built"].update({"node3": "basebackup"}),
         "node3: built by basebackup, not from the repository"),
        (lambda r: r.update({"replicas built": {}}), "no replica was built from the repository"),
        (lambda r: r["archive"]["after the failover"].update({"failed": {"node2": "ERROR: [082]: WAL segment ..."}}),
         "pgbackrest check after the failover: ran on ['node2'], leader node2, "
         "failed {'node2': 'ERROR: [082]: WAL segment ...'}"),
        (lambda r: r["archive"]["at the end"]["check"].update({"ran on": ["node1", "node3"]}),
         "pgbackrest check at the end: ran on ['node1', 'node3'], leader node3, failed {}"),
        (lambda r: r["archive"]["at the end"]["check"].update({"ran on": []}),
         "pgbackrest check at the end: ran on [], leader node3, failed {}"),
        (lambda r: r["archive"]["at the end"].update({"segments missing": ["000000010000000000000003"]}),
         "archive: 1 WAL segments missing (000000010000000000000003)"),
        (lambda r: r["events"].update({"rejoin": {"node": "node1", "how": "rebuild", "built by": "basebackup"}}),
         "node1: rebuilt by basebackup, not from the repository"),
    ],
    ids=["lost push", "doubled", "missed", "phantom webhook", "500", "slow failover", "no write after switchover",
         "switchover refused as many", "switchover refused more", "held switchover refused one",
         "replica by basebackup", "no replica built", "check failed after the failover",
         "check not on the leader alone", "check ran nowhere", "archive gap", "lost node rebuilt by basebackup"],
)  # fmt: skip
def test_each_kind_of_failure_is_reported(change, expected):
    report = clean_report()
    change(report)

    assert failures(report) == [expected]


@pytest.mark.slow
def test_a_soak_stopped_by_an_error_exits_instead_of_pushing_on():
    # The leader never found: _soak raises while its pushers resend to a server that is not there.
    program = f"""
from deploy.failover_soak import _soak

class NoLeader:
    def wait_leader(self, **options):
        raise TimeoutError("no leader")

_soak("http://127.0.0.1:{free_port()}", {{"writer": {{}}, "reader": {{}}, "platform_writer": {{}},
      "platform_reader": {{}}}}, 0.4, 0, NoLeader(), 1, rejoin="none", hold=True)
"""
    ended = subprocess.run(
        [sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=30,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "integration_service.settings"},
    )  # fmt: skip

    assert ended.returncode == 1
    assert ended.stderr.strip().endswith("TimeoutError: no leader")
