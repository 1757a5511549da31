"""The cache `make run` uses without Redis (CACHE_DIR, core/file_cache.py): the processes of one machine share it,
and its counts are exact however many of them count at once."""

import multiprocessing
import time

import pytest

from core.file_cache import SharedFileCache

PROCESSES = 4
INCREMENTS = 150


def cache_in(directory) -> SharedFileCache:
    return SharedFileCache(str(directory), {"KEY_PREFIX": "test"})


def _count(directory: str, start, results) -> None:
    cache = cache_in(directory)
    start.wait(10)
    added = cache.add("first", 1, timeout=60)
    for _ in range(INCREMENTS):
        cache.add("counter", 0, timeout=60)
        cache.incr("counter")
    results.put(added)


@pytest.mark.slow
def test_processes_counting_at_once_lose_no_count_and_one_adds(tmp_path):
    context = multiprocessing.get_context("spawn")  # fresh interpreters, as gunicorn's workers are separate processes
    start, results = context.Barrier(PROCESSES), context.Queue()
    workers = [context.Process(target=_count, args=(str(tmp_path), start, results)) for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)

    assert [worker.exitcode for worker in workers] == [0] * PROCESSES
    assert sorted(results.get(timeout=5) for _ in workers) == [False] * (PROCESSES - 1) + [True]
    assert cache_in(tmp_path).get("counter") == PROCESSES * INCREMENTS


def test_two_clients_share_one_budget_and_incr_keeps_the_expiry(tmp_path):
    first, second = cache_in(tmp_path), cache_in(tmp_path)
    first.add("budget", 0, timeout=1)
    assert [first.incr("budget"), second.incr("budget"), first.incr("budget", 3), second.decr("budget")] == [1, 2, 5, 4]

    time.sleep(1.1)  # Django's FileBasedCache.incr would have given it the default 300 s

    assert first.get("budget") is None and second.get("budget") is None
    with pytest.raises(ValueError):
        second.incr("budget")
    assert second.add("budget", 7, timeout=60) is True and first.get("budget") == 7


def test_touch_and_clear(tmp_path):
    first, second = cache_in(tmp_path), cache_in(tmp_path)
    first.set("window", 3, timeout=1)
    assert second.touch("window", timeout=60) is True
    time.sleep(1.1)
    assert first.get("window") == 3
    assert first.touch("missing") is False

    second.clear()

    assert first.get("window") is None


def test_nothing_is_culled_past_max_entries(tmp_path):
    cache = SharedFileCache(str(tmp_path), {"KEY_PREFIX": "test", "OPTIONS": {"MAX_ENTRIES": 5}})
    for number in range(20):
        cache.set(f"counter-{number}", number, timeout=60)

    assert [cache.get(f"counter-{number}") for number in range(20)] == list(range(20))
