"""How many requests one endpoint gets in flight at once: additive increase, multiplicative decrease (AIMD), as TCP
does with its congestion window. Pure: no database, no clock of its own.

- It starts at one request (a probe) and grows by one with each quick answer, up to the endpoint's limit.
- A slow answer (above `slow_ms`) halves it; the answers to the requests that were in flight then do not halve it
  again (a round: TCP's once per round trip), so a burst of slow answers to requests sent together counts once.
- A failure (time-out, no connection, an error status) brings it back to one: the endpoint is paused anyway, and
  after the pause one request finds out whether it is back.
"""

from dataclasses import dataclass


@dataclass
class Window:
    limit: int
    slow_ms: int
    size: float = 1.0
    _grace: int = 0  # answers still due from the round of the last decrease

    @property
    def slots(self) -> int:
        return max(1, min(self.limit, int(self.size)))

    def answered(self, *, latency_ms: int, succeeded: bool) -> None:
        in_round = self._grace > 0
        self._grace = max(0, self._grace - 1)
        if not succeeded:
            self.size = 1.0
        elif latency_ms > self.slow_ms:
            if not in_round:
                self._grace = self.slots - 1  # the others of this round are answered yet
                self.size = max(1.0, self.size / 2)
        else:
            self.size = min(float(self.limit), self.size + 1)
