"""deploy/on_leader.sh: the pgBackRest cron lines every database host carries run on the Patroni leader alone. A
Patroni stand-in on loopback answers GET /primary as the leader (200), a replica (503) or something broken."""

import http.server
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.local_cluster import free_port

pytestmark = pytest.mark.slow  # runs a script

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "on_leader.sh"


@pytest.fixture
def patroni() -> Iterator[dict]:
    """A Patroni REST API stand-in: `state["status"]` is what GET /primary answers; `state["paths"]` what was asked."""
    state: dict = {"status": 200, "paths": []}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state["paths"].append(self.path)
            self.send_response(state["status"])
            self.end_headers()
            self.wfile.write(b'{"role": "primary"}')

        def log_message(self, *arguments) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()


def on_leader(url: str, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SCRIPT), *command], env={"PATH": "/usr/bin:/bin", "PATRONI_URL": url}, capture_output=True, text=True,
        timeout=30,
    )  # fmt: skip


def test_on_the_leader_the_command_runs_and_its_exit_status_is_the_script_s(patroni):
    ran = on_leader(patroni["url"], "sh", "-c", "echo backing up; exit 3")

    assert (ran.returncode, ran.stdout, ran.stderr) == (3, "backing up\n", "")
    assert patroni["paths"] == ["/primary"]


def test_on_a_replica_nothing_runs_and_the_script_exits_quietly(patroni, tmp_path):
    patroni["status"] = 503

    ran = on_leader(patroni["url"], "touch", str(tmp_path / "ran"))

    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", "")
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("status", [404, 500])
def test_an_answer_that_is_neither_leader_nor_replica_runs_nothing_and_says_so(patroni, tmp_path, status):
    patroni["status"] = status

    ran = on_leader(patroni["url"], "touch", str(tmp_path / "ran"))

    assert ran.returncode == 1
    assert ran.stderr == (
        f"on_leader.sh: Patroni at {patroni['url']} answered {status} to GET /primary: 'touch {tmp_path}/ran' not run\n"
    )
    assert not (tmp_path / "ran").exists()


def test_a_patroni_that_does_not_answer_runs_nothing_and_says_so(tmp_path):
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there

    ran = on_leader(closed, "touch", str(tmp_path / "ran"))

    assert ran.returncode == 1
    assert (
        ran.stderr
        == f"on_leader.sh: Patroni at {closed} answered 000 to GET /primary: 'touch {tmp_path}/ran' not run\n"
    )
    assert not (tmp_path / "ran").exists()
