"""One address's flood of slow connections against gunicorn served without a proxy (issue #33).

`--connections` (2,200) connections from 127.0.0.2, each sending a request head one header line every 2 s, against
the service under gunicorn.conf.py (2 workers of 1,000 connection slots), while a client on 127.0.0.1 asks
`/healthz` once a second. Run once with CONNECTIONS_PER_ADDRESS at its default and once at 0 (no limit), in one run.
Prints, for each: the flood's connections the server kept open and refused (429), and the probe's answers and
slowest time.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration .venv/bin/python bench/connection_flood.py
"""

import argparse
import contextlib
import os
import socket
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import service_start
from deploy.local_cluster import free_port

FLOODER = "127.0.0.2"
HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"


def flood(port: int, count: int, stop: threading.Event) -> dict[str, int]:
    counts = {"open": 0, "refused": 0, "failed": 0}
    sockets = []
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(FLOODER, 0))
            sock.sendall(HEAD)
            sockets.append(sock)
        except OSError:
            counts["failed"] += 1
    time.sleep(1)
    for sock in sockets:
        sock.setblocking(False)
        try:
            refused = sock.recv(64).startswith(b"HTTP/1.1 429")
        except BlockingIOError:
            refused = False
        except OSError:
            refused = True
        counts["refused" if refused else "open"] += 1

    def trickle() -> None:
        line = 0
        while not stop.wait(2):
            for sock in sockets:
                with contextlib.suppress(OSError):
                    sock.send(b"X-Line-%d: x\r\n" % line)
            line += 1

    threading.Thread(target=trickle, daemon=True).start()
    counts["sockets"] = sockets
    return counts


def probe(port: int, seconds: int) -> tuple[int, int, float]:
    answered, failed, slowest = 0, 0, 0.0
    for _ in range(seconds):
        started = time.monotonic()
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=8).read()
            answered += 1
        except OSError:
            failed += 1
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(max(0.0, 1 - (time.monotonic() - started)))
    return answered, failed, slowest


def run(limit: str, connections: int, seconds: int) -> dict:
    os.environ["CONNECTIONS_PER_ADDRESS"] = limit
    port = free_port()
    server = service_start(port)
    stop = threading.Event()
    try:
        counts = flood(port, connections, stop)
        answered, failed, slowest = probe(port, seconds)
    finally:
        stop.set()
        for sock in counts.pop("sockets", []):
            sock.close()
        server.terminate()
        server.wait()
    return {**counts, "probes answered": answered, "probes failed": failed, "slowest probe s": round(slowest, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=2200)
    parser.add_argument("--seconds", type=int, default=20, help="probes, one a second")
    args = parser.parse_args()
    for label, limit in (("CONNECTIONS_PER_ADDRESS=100 (default)", "100"), ("CONNECTIONS_PER_ADDRESS=0 (before)", "0")):
        print(label, run(limit, args.connections, args.seconds), flush=True)


if __name__ == "__main__":
    main()
