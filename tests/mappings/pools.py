"""The evaluation pools a piece of code makes, to count the units it spent (mappings/evaluation.py)."""

from mappings.evaluation import PushPool


def recorded_pools(monkeypatch) -> list[PushPool]:
    """Every PushPool made from now on, in order; `units_spent(pools)` adds up what they gave."""
    pools: list[PushPool] = []
    init = PushPool.__init__

    def recording(pool, *args, **kwargs):
        init(pool, *args, **kwargs)
        pools.append(pool)

    monkeypatch.setattr(PushPool, "__init__", recording)
    return pools


def units_spent(pools: list[PushPool]) -> int:
    return sum(pool.allowance - pool.left for pool in pools)
