"""A TCP proxy a test cuts and restores, in front of the test database or Redis: the outage tests of the web
servers (tests/ingest/, tests/observability/) and of the worker (tests/worker/), and bench/worker_faults_soak.py."""

import contextlib
import socket
import threading
import time
from collections.abc import Callable

from django.conf import settings


class CuttableProxy:
    """Forwards TCP to `target` (PostgreSQL, Redis) until cut(); while cut, open connections are dropped and new ones
    closed, as a restart or a network blip would."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut_off = threading.Event()
        self.sockets: set[socket.socket] = set()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut_off.is_set():
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.sockets.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        for sock in (source, sink):
            self._close(sock)

    def _close(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.discard(sock)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def cut(self) -> None:
        self.cut_off.set()
        with self.lock:
            open_sockets = list(self.sockets)
        for sock in open_sockets:
            self._close(sock)

    def restore(self) -> None:
        self.cut_off.clear()

    def close(self) -> None:
        self.cut()
        self.listener.close()


def database_proxy() -> CuttableProxy:
    """A proxy in front of the test database's PostgreSQL."""
    database = settings.DATABASES["default"]
    return CuttableProxy((database["HOST"] or "127.0.0.1", int(database["PORT"] or 5432)))


def database_url_through(proxy: CuttableProxy) -> str:
    """The test database's DATABASE_URL, reached through `proxy`."""
    database = settings.DATABASES["default"]
    return f"postgres://{database['USER']}@127.0.0.1:{proxy.port}/{database['NAME']}"


def send_through_an_outage(
    proxy: CuttableProxy, send: Callable[[int], None], stop: threading.Event, *, senders: int, back_for: float = 2.5
) -> None:
    """`senders` threads run `send(number)` for 1.5 s with `proxy` up, 2 s cut off and `back_for` s back; then `stop`
    is set and they are joined."""
    workers = [threading.Thread(target=send, args=(worker,)) for worker in range(senders)]
    for worker in workers:
        worker.start()
    time.sleep(1.5)
    proxy.cut()
    time.sleep(2)
    proxy.restore()
    time.sleep(back_for)
    stop.set()
    for worker in workers:
        worker.join(timeout=30)
