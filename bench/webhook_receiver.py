"""A bare webhook receiver for the benchmarks: asyncio on one core, HTTP/1.1 kept alive, every POST answered
`204 No Content` at once, nothing parsed but the request's length and its `webhook-id`. So it takes little of the
machine's CPU from the workers it measures (bench/webhook_throughput.py measures its own ceiling).

    .venv/bin/python bench/webhook_receiver.py PORT

`GET /stats` answers what it received as JSON: requests, distinct webhook ids, duplicates, statuses answered, the
first and last arrival (time.time()); `GET /stats?arrivals=1` adds [webhook-id, arrival] for every request.
`POST /reset` forgets everything.
"""

import asyncio
import json
import sys
import time

NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"


class Stats:
    def __init__(self) -> None:
        self.arrivals: list[tuple[str, float]] = []
        self.ids: set[str] = set()
        self.statuses: dict[int, int] = {}

    def as_json(self, arrivals: bool) -> bytes:
        times = [arrival for _, arrival in self.arrivals]
        body = {
            "requests": len(self.arrivals),
            "distinct": len(self.ids),
            "duplicates": len(self.arrivals) - len(self.ids),
            "statuses": self.statuses,
            "first": min(times, default=None),
            "last": max(times, default=None),
        }
        if arrivals:
            body["arrivals"] = self.arrivals
        return json.dumps(body).encode()


stats = Stats()


def _header(head: bytes, name: bytes) -> bytes | None:
    start = head.find(b"\r\n" + name + b":")
    if start < 0:
        return None
    start += len(name) + 3
    end = head.find(b"\r\n", start)
    return head[start : end if end >= 0 else None].strip()


class Receiving(asyncio.Protocol):
    def connection_made(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer + data
        while True:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            head = buffer[:end].lower()
            length = int(_header(head, b"content-length") or 0)
            if len(buffer) < end + 4 + length:
                break
            buffer = buffer[end + 4 + length :]
            self.transport.write(self._answer(head))
        self.buffer = buffer

    def _answer(self, head: bytes) -> bytes:
        global stats
        if head.startswith(b"get /stats"):
            body = stats.as_json(arrivals=b"arrivals=1" in head.split(b"\r\n", 1)[0])
            return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
                len(body),
                body,
            )
        if head.startswith(b"post /reset"):
            stats = Stats()
            return NO_CONTENT
        webhook_id = (_header(head, b"webhook-id") or b"").decode()
        stats.arrivals.append((webhook_id, time.time()))
        stats.ids.add(webhook_id)
        stats.statuses[204] = stats.statuses.get(204, 0) + 1
        return NO_CONTENT


async def serve(port: int) -> None:
    server = await asyncio.get_running_loop().create_server(Receiving, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1])))
