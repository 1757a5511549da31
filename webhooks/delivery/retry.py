"""When to try again after a failed delivery. Pure functions; the schedule's numbers are settings."""

import random


def retry_delay(*, failures: int, base: float, cap: float) -> float:
    """Seconds to wait after the n-th failure in a row: base, 2 base, 4 base, ... up to `cap`, plus up to 10% so
    many deliveries that failed together do not all come back at once."""
    delay = min(cap, base * 2 ** max(0, failures - 1))
    return delay * (1 + random.random() / 10)  # spreading retries, not security
