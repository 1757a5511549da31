"""How many requests one endpoint gets in flight at once: additive increase, multiplicative decrease (AIMD), as TCP
does with its congestion window. Pure: no database, no clock of its own.

- It starts at one request (a probe) and grows by one with each quick answer, up to the endpoint's limit.
- A slow answer (above `slow_ms`) halves it, at most once per window's worth of answers (a round), so a burst of
  slow answers to requests sent together counts once.
- A failure (time-out, no connection, an error status) brings it back to one: the endpoint is paused anyway, and
  after the pause one request finds out whether it is back.
"""

from dataclasses import dataclass


@dataclass
class Window:
    limit: int
    slow_ms: int
    size: float = 1.0
    _answers_since_decrease: int = 0

    @property
    def slots(self) -> int:
        return max(1, min(self.limit, int(self.size)))

    def answered(self, *, latency_ms: int, succeeded: bool) -> None:
        self._answers_since_decrease += 1
        if not succeeded:
            self.size = 1.0
            self._answers_since_decrease = 0
        elif latency_ms > self.slow_ms:
            if self._answers_since_decrease >= self.slots:
                self.size = max(1.0, self.size / 2)
                self._answers_since_decrease = 0
        else:
            self.size = min(float(self.limit), self.size + 1)
