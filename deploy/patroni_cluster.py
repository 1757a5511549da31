"""A Patroni cluster on loopback ports: etcd, N PostgreSQL nodes each run by Patroni (one leader, the others streaming
standbys, synchronous by default), HAProxy routing to the leader and to the replicas through Patroni's REST health
checks (`GET /primary`, `GET /replica`), and PgBouncer in transaction pooling in front of HAProxy. Every node
archives its WAL to one pgBackRest repository (DIR/pgbackrest, the stanza `service`) while it leads; `up` takes the
first full backup and builds the replicas from it. The configuration files it writes (nodeN.yml,
nodeN.pgbackrest.conf, haproxy.cfg, pgbouncer.ini) are the production templates docs/deploy.md ("High
availability") explains.

    .venv/bin/python -m deploy.patroni_cluster up [--nodes 3] [--synchronous on|strict|off] [--dir DIR]
    .venv/bin/python -m deploy.patroni_cluster status --dir DIR      (patronictl list, and the routes)
    .venv/bin/python -m deploy.patroni_cluster fail --dir DIR [--pause-walsender 5]
    .venv/bin/python -m deploy.patroni_cluster switchover --dir DIR
    .venv/bin/python -m deploy.patroni_cluster down --dir DIR

`up` prints the routes (and writes them to DIR/cluster.json and DIR/env): `DATABASE_URL` for the web servers
(PgBouncer → HAProxy's leader route), `DATABASE_REPLICA_URLS` (PgBouncer → HAProxy's replica route), and the
workers' `DATABASE_URL` (HAProxy's leader route directly: they LISTEN and hold snapshots, which need a session).
The web servers log in as their own role, `integration_web`, which carries their timeouts (PgBouncer drops the
startup options): create it in the service's database with `local_cluster.web_role_sql()` and set them with
`manage.py database_role_timeouts --role integration_web`, as deploy/failover_soak.py does.
`fail` is a machine lost: the leader's walsenders paused (SIGSTOP) for the given seconds, then its Patroni and its
PostgreSQL (postmaster and every child) killed -9; nobody else acts. `switchover` is deploy/switchover.py's: PgBouncer
holds the queries while Patroni switches over to the synchronous standby. As root, etcd and HAProxy run as root and
Patroni (with its PostgreSQL) and PgBouncer as the postgres user.

HA_SYNCHRONOUS_MODE (`on`, the default; `strict`; `off`) sets the cluster's synchronous mode when `--synchronous` is
not given: what each can lose is in docs/deploy.md.
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from deploy import pgbackrest
from deploy.local_cluster import USERLIST, WEB_ROLE, _wait_for_port, binaries, free_port
from deploy.switchover import Address, held_switchover

SCOPE = "integration"
STANZA = "service"  # the cluster's pgBackRest stanza (docs/deploy.md, "PostgreSQL backups")
SYNCHRONOUS_MODES = {"on": (True, False), "strict": (True, True), "off": (False, False)}
# Failure detection: the leader key lives TTL seconds; Patroni loops every LOOP_WAIT; a DCS or PostgreSQL call is
# retried for RETRY_TIMEOUT (Patroni requires loop_wait + 2 * retry_timeout ≤ ttl). A lost leader is replaced
# within about TTL + LOOP_WAIT (docs/deploy.md).
TTL, LOOP_WAIT, RETRY_TIMEOUT = 10, 2, 4
REPLICATION_USER, REPLICATION_PASSWORD = "replicator", "replicator-local-only"


@dataclass
class Node:
    name: str
    pg_port: int
    rest_port: int
    data: str
    config: str
    log: str
    pid: int | None = None  # Patroni's


@dataclass
class PatroniCluster:
    directory: str
    synchronous: str
    etcd_port: int
    etcd_peer_port: int
    primary_port: int  # HAProxy: the leader
    replica_port: int  # HAProxy: the running replicas
    stats_port: int  # HAProxy's statistics page
    pgbouncer_port: int
    nodes: list[Node]
    pids: dict[str, int] = field(default_factory=dict)  # etcd, haproxy, pgbouncer

    # The routes the service is given.
    def leader_url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.primary_port}/{database}"

    def stanza(self, node: Node) -> pgbackrest.Stanza:
        """The node's pgBackRest stanza: one repository for the cluster, a configuration (the node's data
        directory and port) and lock and log directories for each node, as each production host has its own."""
        return pgbackrest.Stanza(
            name=STANZA,
            config=Path(self.directory, f"{node.name}.pgbackrest.conf"),
            repository=Path(self.directory, "pgbackrest", "repository"),
            data=Path(node.data),
            port=node.pg_port,
            sockets=Path(self.directory),
            state=Path(self.directory, "pgbackrest", node.name),
        )

    def web_urls(self, database: str = "service") -> dict[str, str]:
        return {
            "DATABASE_URL": f"postgres://{WEB_ROLE}@127.0.0.1:{self.pgbouncer_port}/{database}",
            "DATABASE_REPLICA_URLS": f"postgres://{WEB_ROLE}@127.0.0.1:{self.pgbouncer_port}/{database}_replica",
            "DATABASE_PREPARE_THRESHOLD": "-1",
        }

    def worker_urls(self, database: str = "service") -> dict[str, str]:
        return {"DATABASE_URL": self.leader_url(database)}

    # Who leads, as Patroni's REST API says.
    def members(self) -> list[dict]:
        for node in self.nodes:
            with contextlib.suppress(OSError, ValueError):
                return _rest(node.rest_port, "/cluster")["members"]
        return []

    def leader(self) -> Node | None:
        for member in self.members():
            if member.get("role") == "leader" and member.get("state") == "running":
                return self.node(member["name"])
        return None

    def node(self, name: str) -> Node:
        return next(node for node in self.nodes if node.name == name)

    def wait_leader(self, timeout: float = 90, *, other_than: str | None = None) -> Node:
        """The leader once one runs (and, with `other_than`, once it is another node) and HAProxy routes to it."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            leader = self.leader()
            if leader is not None and leader.name != other_than and self._routed_to(leader):
                return leader
            time.sleep(0.2)
        raise TimeoutError(f"no leader after {timeout} s: {self.members()}")

    def wait_streaming(self, count: int, timeout: float = 90) -> None:
        """Until `count` replicas stream from the leader (and, in synchronous mode, one of them is synchronous)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            members = self.members()
            streaming = [m for m in members if m.get("role") in ("replica", "sync_standby") and m.get("state") in (
                "running", "streaming")]  # fmt: skip
            synchronous = any(m.get("role") == "sync_standby" for m in members)
            if len(streaming) >= count and (synchronous or self.synchronous == "off"):
                return
            time.sleep(0.3)
        raise TimeoutError(f"replicas not streaming after {timeout} s: {self.members()}")

    def _routed_to(self, leader: Node) -> bool:
        try:
            return sql(self.primary_port, "SELECT current_setting('port')") == str(leader.pg_port)
        except subprocess.CalledProcessError:
            return False

    def patronictl(self, *arguments: str, input: str | None = None) -> str:
        return subprocess.run(
            ["patronictl", "-c", self.nodes[0].config, *arguments],
            input=input, capture_output=True, text=True, check=True, timeout=120,
        ).stdout  # fmt: skip

    def switchover(self, candidate: str | None = None, *, hold: bool = True) -> dict:
        """A planned switchover (`patronictl switchover`) to `candidate` or the synchronous standby, PgBouncer
        holding the web's queries meanwhile (deploy/switchover.py; not `hold`: refusing them, as without it).
        Returns deploy.switchover's report once HAProxy routes to the new leader."""
        leader = self.wait_leader()
        self.wait_streaming(1)  # Patroni switches over only to a synchronous standby
        report = held_switchover(
            patroni_url=f"http://127.0.0.1:{leader.rest_port}",
            leader_route=Address("127.0.0.1", self.primary_port),
            poolers=[Address("127.0.0.1", self.pgbouncer_port)] if hold else [], candidate=candidate,
        )  # fmt: skip
        self.wait_leader(other_than=leader.name)
        return report

    def walsenders(self, node: Node) -> list[int]:
        pids = sql(node.pg_port, "SELECT string_agg(pid::text, ' ') FROM pg_stat_replication")
        return [int(pid) for pid in pids.split()]

    def fail(self, *, pause_walsender: float = 0.0) -> dict:
        """The leader's machine lost: its walsenders stopped (SIGSTOP) for `pause_walsender` seconds first (commits
        wait for the synchronous standby meanwhile), then Patroni and PostgreSQL, every process, killed -9."""
        leader = self.wait_leader()
        paused = self.walsenders(leader) if pause_walsender > 0 else []
        for pid in paused:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(pause_walsender)
        postmaster = int((Path(leader.data) / "postmaster.pid").read_text().split()[0])
        victims = [leader.pid, postmaster, *_children(postmaster)]
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, TypeError):
                os.kill(pid, signal.SIGKILL)
        leader.pid = None
        return {"node": leader.name, "walsenders paused": len(paused), "processes killed": len(victims)}

    def replicas_begin(self) -> None:
        """On the leader: the stanza created (the repository initialised for this cluster) and its first full
        backup; then every other node started, built from that backup (`create_replica_methods`)."""
        leader = self.wait_leader()
        stanza = self.stanza(leader)
        stanza.run("stanza-create")
        stanza.run("--type=full", "backup")
        for node in self.nodes:
            if node.name != leader.name and node.pid is None:
                self.start_node(node)
        self.save()

    def replicas_built(self) -> dict[str, str]:
        """How each replica's data directory was made (`pgbackrest` or `basebackup`; the latest time), as its
        Patroni logged it."""
        built = {}
        for node in self.nodes:
            with contextlib.suppress(OSError):
                for line in Path(node.log).read_text(errors="replace").splitlines():
                    if "replica has been created using " in line:
                        built[node.name] = line.rsplit(" ", 1)[-1]
        return built

    def start_node(self, node: Node) -> None:
        """(Re)start a node's Patroni: a lost node back joins as a replica (rewound if it had diverged)."""
        node.pid = _daemon(["patroni", node.config], Path(node.log), server_user=True)

    def save(self) -> None:
        Path(self.directory, "cluster.json").write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, directory: Path) -> "PatroniCluster":
        state = json.loads((directory / "cluster.json").read_text())
        state["nodes"] = [Node(**node) for node in state["nodes"]]
        return cls(**state)


def _rest(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as answer:
        return json.loads(answer.read())


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(child) for child in found.split()]


def sql(port: int, statement: str, database: str = "postgres") -> str:
    bin = binaries()
    return subprocess.run(
        [str(bin / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", database, "-Atq",
         "-v", "ON_ERROR_STOP=1", "-c", statement],
        check=True, capture_output=True, text=True, timeout=30,
    ).stdout.strip()  # fmt: skip


def patroni_yml(cluster: PatroniCluster, node: Node, *, bin_dir: Path, parameters: dict[str, str] | None = None) -> str:
    """One node's patroni.yml. The `bootstrap.dcs` part is written to etcd once, when the cluster is first made;
    change it afterwards with `patronictl edit-config`. `parameters` adds PostgreSQL settings to every node.
    Archiving to pgBackRest is the node's own (`postgresql.parameters`: its archive_command names its
    pgbackrest.conf), with `restore_command` for a standby that falls behind what the leader keeps, and replicas
    built from the repository's latest backup (basebackup from the leader when there is none)."""
    synchronous_mode, strict = SYNCHRONOUS_MODES[cluster.synchronous]
    backups = cluster.stanza(node).patroni_postgresql()
    config = {
        "scope": SCOPE,
        "name": node.name,
        "log": {"level": "INFO"},
        "restapi": {"listen": f"127.0.0.1:{node.rest_port}", "connect_address": f"127.0.0.1:{node.rest_port}"},
        "etcd3": {"hosts": [f"127.0.0.1:{cluster.etcd_port}"]},
        "bootstrap": {
            "dcs": {
                "ttl": TTL,
                "loop_wait": LOOP_WAIT,
                "retry_timeout": RETRY_TIMEOUT,
                # A crashed leader's PostgreSQL is not restarted in place: the synchronous standby, which holds
                # every acknowledged commit, takes over at once (a restart in place could wait on a hung disk).
                "primary_start_timeout": 0,
                # Asynchronous mode only: a standby further behind than this is never promoted.
                "maximum_lag_on_failover": 1048576,
                "synchronous_mode": synchronous_mode,
                "synchronous_mode_strict": strict,
                "postgresql": {
                    "use_pg_rewind": True,
                    "use_slots": True,
                    "parameters": {
                        "wal_level": "replica",
                        "hot_standby": "on",
                        "hot_standby_feedback": "on",
                        "wal_log_hints": "on",
                        "max_wal_senders": 10,
                        "max_replication_slots": 10,
                        "max_connections": 100,
                        "wal_keep_size": "256MB",
                        **(parameters or {}),
                    },
                },
            },
            "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}],
        },
        "postgresql": {
            "listen": f"127.0.0.1:{node.pg_port}",
            "connect_address": f"127.0.0.1:{node.pg_port}",
            "data_dir": node.data,
            "bin_dir": str(bin_dir),
            "pgpass": f"{cluster.directory}/{node.name}.pgpass",
            "authentication": {
                "superuser": {"username": "postgres"},
                "replication": {"username": REPLICATION_USER, "password": REPLICATION_PASSWORD},
                "rewind": {"username": "postgres"},
            },
            # Loopback only, on one machine: trust. Production: scram-sha-256 and the nodes' and clients' networks.
            "pg_hba": [
                "local all all trust",
                "host replication all 127.0.0.1/32 trust",
                "host all all 127.0.0.1/32 trust",
            ],
            "parameters": {
                "unix_socket_directories": cluster.directory,
                # A throwaway cluster on a shared machine: no fsync. Never in production.
                "fsync": "off",
                "shared_buffers": "32MB",
                # archive_mode `on`, not `always` (which pgBackRest refuses): only the leader archives; a standby
                # promoted starts archiving on its new timeline.
                **backups["parameters"],
            },
            "recovery_conf": backups["recovery_conf"],
            "create_replica_methods": backups["create_replica_methods"],
            "pgbackrest": backups["pgbackrest"],
        },
        # No watchdog on a developer's machine; production uses one (docs/deploy.md).
        "watchdog": {"mode": "off"},
        "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False, "nosync": False},
    }
    return json.dumps(config, indent=2)  # JSON is YAML


def haproxy_cfg(cluster: PatroniCluster) -> str:
    """HAProxy in TCP mode: port `primary_port` reaches the node whose Patroni answers 200 on GET /primary (the
    leader), `replica_port` the nodes answering 200 on GET /replica. A node marked down has its sessions cut, so no
    client stays connected to a former leader."""

    def servers(check: str) -> str:
        return "\n".join(
            f"    server {node.name} 127.0.0.1:{node.pg_port} maxconn 200 check port {node.rest_port}"
            for node in cluster.nodes
        )

    return f"""global
    maxconn 2000

defaults
    mode tcp
    retries 2
    timeout connect 2s
    timeout check 2s
    timeout client 30m
    timeout server 30m

listen stats
    mode http
    bind 127.0.0.1:{cluster.stats_port}
    stats enable
    stats uri /

listen primary
    bind 127.0.0.1:{cluster.primary_port}
    option httpchk GET /primary
    http-check expect status 200
    default-server inter 1s fastinter 500ms downinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
{servers("/primary")}

listen replicas
    bind 127.0.0.1:{cluster.replica_port}
    balance roundrobin
    option httpchk GET /replica
    http-check expect status 200
    default-server inter 1s fastinter 500ms downinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
{servers("/replica")}
"""


def pgbouncer_ini(cluster: PatroniCluster, *, database: str = "service") -> str:
    """PgBouncer in transaction pooling, its two databases through HAProxy's routes (never a node's own port).
    `admin_users` may PAUSE and RESUME the leader's database around a planned switchover (deploy/switchover.py)."""
    return f"""[databases]
{database} = host=127.0.0.1 port={cluster.primary_port} dbname={database}
{database}_replica = host=127.0.0.1 port={cluster.replica_port} dbname={database}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {cluster.pgbouncer_port}
unix_socket_dir =
auth_type = trust
auth_file = {cluster.directory}/userlist.txt
admin_users = postgres
pool_mode = transaction
max_client_conn = 400
default_pool_size = 20
ignore_startup_parameters = extra_float_digits, options
server_login_retry = 1
server_connect_timeout = 3
logfile = {cluster.directory}/pgbouncer.log
pidfile = {cluster.directory}/pgbouncer.pid
"""


def etcd_command(cluster: PatroniCluster) -> list[str]:
    client, peer = f"http://127.0.0.1:{cluster.etcd_port}", f"http://127.0.0.1:{cluster.etcd_peer_port}"
    return [
        "etcd", "--name", "etcd1", "--data-dir", f"{cluster.directory}/etcd",
        "--listen-client-urls", client, "--advertise-client-urls", client,
        "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
        "--initial-cluster", f"etcd1={peer}", "--initial-cluster-state", "new",
    ]  # fmt: skip


def up(
    *, nodes: int = 3, synchronous: str | None = None, directory: Path | None = None,
    parameters: dict[str, str] | None = None, leader_only: bool = False,
) -> PatroniCluster:  # fmt: skip
    """Build and start the cluster in `directory` (a new temporary one by default): the first node bootstraps and
    leads, its stanza is created and a full backup taken, the other nodes are built from that backup and stream;
    returns then. `leader_only`: returns once HAProxy routes to the leader and PgBouncer listens, the caller going
    on with `replicas_begin()` and `wait_streaming()` (work of its own meanwhile)."""
    synchronous = synchronous or os.environ.get("HA_SYNCHRONOUS_MODE") or "on"
    if synchronous not in SYNCHRONOUS_MODES:  # a wrong setting is named first, on any machine
        raise ValueError(f"HA_SYNCHRONOUS_MODE is one of {', '.join(SYNCHRONOUS_MODES)}")
    bin_dir = binaries()
    if bin_dir is None or not pgbackrest.installed():
        raise RuntimeError("needs Debian's PostgreSQL binaries and pgbackrest")
    directory = Path(directory or tempfile.mkdtemp(prefix="patroni-")).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o755)
    cluster = PatroniCluster(
        directory=str(directory), synchronous=synchronous,
        etcd_port=free_port(), etcd_peer_port=free_port(), primary_port=free_port(), replica_port=free_port(),
        stats_port=free_port(), pgbouncer_port=free_port(),
        nodes=[
            Node(name=f"node{n}", pg_port=free_port(), rest_port=free_port(), data=f"{directory}/node{n}",
                 config=f"{directory}/node{n}.yml", log=f"{directory}/node{n}.log")
            for n in range(1, nodes + 1)
        ],
    )  # fmt: skip
    for node in cluster.nodes:
        Path(node.config).write_text(patroni_yml(cluster, node, bin_dir=bin_dir, parameters=parameters))
        cluster.stanza(node).write_config()
    (directory / "haproxy.cfg").write_text(haproxy_cfg(cluster))
    (directory / "pgbouncer.ini").write_text(pgbouncer_ini(cluster))
    (directory / "userlist.txt").write_text(USERLIST)
    if os.geteuid() == 0:
        for path in [directory, *directory.iterdir()]:
            shutil.chown(path, "postgres", "postgres")
    try:
        cluster.pids["etcd"] = _daemon(etcd_command(cluster), directory / "etcd.log")
        _wait_for_port(cluster.etcd_port)
        cluster.start_node(cluster.nodes[0])  # it takes the initialize key and bootstraps the cluster (initdb)
        cluster.save()
        cluster.pids["haproxy"] = _daemon(["haproxy", "-f", str(directory / "haproxy.cfg")], directory / "haproxy.log")
        cluster.pids["pgbouncer"] = _daemon(
            ["pgbouncer", str(directory / "pgbouncer.ini")], directory / "pgbouncer.out", server_user=True
        )
        cluster.wait_leader(timeout=120)
        _wait_for_port(cluster.pgbouncer_port)
        cluster.save()
        if not leader_only:
            cluster.replicas_begin()
            cluster.wait_streaming(nodes - 1, timeout=180)
    except BaseException as error:
        down(cluster, remove=False)
        error.add_note(f"the cluster's files and logs are kept in {directory}")
        raise
    env = {**cluster.web_urls(), "WORKER_DATABASE_URL": cluster.leader_url("service")}
    (directory / "env").write_text("".join(f"{key}={value}\n" for key, value in env.items()))
    return cluster


def _daemon(command: list[str], log: Path, *, server_user: bool = False) -> int:
    """Start `command` in a session of its own, its output to `log`; as the postgres user when root and
    `server_user` (Patroni's PostgreSQL and PgBouncer refuse root). Its pid is the command's own."""
    options: dict = {}
    if server_user and os.geteuid() == 0:
        options = {
            "user": "postgres",
            "group": "postgres",
            "extra_groups": [],
            "env": {**os.environ, "HOME": str(log.parent)},
        }
    with log.open("ab") as output:
        return subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True, **options).pid


def _stop(*pids: int | None, timeout: float = 30) -> None:
    """SIGTERM to each process's group at once, then SIGKILL to those still running after `timeout`."""
    pids = tuple(pid for pid in pids if pid)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def down(cluster: PatroniCluster, *, graceful: bool = True, remove: bool = True) -> None:
    """Stop everything (Patroni stops its PostgreSQL), kill what is left of a node's PostgreSQL, remove the files.
    Not `graceful`: everything killed at once (a throwaway cluster's teardown, seconds sooner)."""
    _stop(cluster.pids.get("pgbouncer"), *(node.pid for node in cluster.nodes), timeout=30 if graceful else 0)
    for node in cluster.nodes:
        pid_file = Path(node.data) / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError, IndexError):
            postmaster = int(pid_file.read_text().split()[0])
            for pid in [postmaster, *_children(postmaster)]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
    _stop(cluster.pids.get("haproxy"), cluster.pids.get("etcd"), timeout=10 if graceful else 0)
    if remove:
        shutil.rmtree(cluster.directory, ignore_errors=True)


@contextlib.contextmanager
def patroni_cluster(**options) -> Iterator[PatroniCluster]:
    """`up`, then `down` (files removed) whatever happens."""
    cluster = up(**options)
    try:
        yield cluster
    finally:
        down(cluster, graceful=False)


def _status(cluster: PatroniCluster) -> str:
    routes = {
        "web (PgBouncer)": cluster.web_urls(),
        "workers (HAProxy, the leader)": cluster.worker_urls(),
        "HAProxy statistics": f"http://127.0.0.1:{cluster.stats_port}/",
    }
    return cluster.patronictl("list", SCOPE) + json.dumps(routes, indent=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["up", "status", "fail", "switchover", "down"])
    parser.add_argument("--dir", type=Path, help="the cluster's directory (up: default a new temporary one)")
    parser.add_argument("--nodes", type=int, default=3, help="up: PostgreSQL nodes (default 3)")
    parser.add_argument("--synchronous", choices=list(SYNCHRONOUS_MODES), help="up: default $HA_SYNCHRONOUS_MODE or on")
    parser.add_argument("--pause-walsender", type=float, default=5.0, help="fail: seconds (default 5)")
    parser.add_argument("--candidate", help="switchover: the new leader (default the synchronous standby)")
    arguments = parser.parse_args(argv)
    if arguments.command == "up":
        cluster = up(nodes=arguments.nodes, synchronous=arguments.synchronous, directory=arguments.dir)
        cluster.patronictl("list", SCOPE)
        print(_status(cluster))
        print(
            f"directory: {cluster.directory} (stop it: python -m deploy.patroni_cluster down --dir {cluster.directory})"
        )
        return 0
    if arguments.dir is None:
        parser.error(f"{arguments.command} needs --dir")
    cluster = PatroniCluster.load(arguments.dir)
    if arguments.command == "status":
        print(_status(cluster))
    elif arguments.command == "fail":
        print(json.dumps(cluster.fail(pause_walsender=arguments.pause_walsender)))
        cluster.save()
    elif arguments.command == "switchover":
        print(json.dumps(cluster.switchover(arguments.candidate)))
    else:
        down(cluster)
    return 0


if __name__ == "__main__":
    sys.exit(main())
