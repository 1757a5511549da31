"""worker/periodic.py: a job run at once and then every `every` seconds until the worker stops; a failed round is
logged and the next one comes."""

import threading

from worker.periodic import PeriodicLoop


def test_the_job_runs_at_start_and_again_and_stops_when_told():
    rounds = []
    third = threading.Event()

    def job():
        rounds.append(1)
        if len(rounds) == 3:
            third.set()

    loop = PeriodicLoop(name="test-job", every=0.01, run=job).start()
    assert third.wait(5)
    loop.stop(timeout=5)
    count = len(rounds)

    assert not loop._thread.is_alive()
    assert count >= 3
    assert len(rounds) == count


def test_a_failed_round_is_logged_and_the_next_one_comes(caplog):
    rounds = []
    second = threading.Event()

    def job():
        rounds.append(1)
        if len(rounds) == 1:
            raise RuntimeError("database gone")
        second.set()

    loop = PeriodicLoop(name="test-failing-job", every=0.01, run=job).start()
    assert second.wait(5)
    loop.stop(timeout=5)

    assert "Periodic job test-failing-job failed; it runs again in 0.01 s" in caplog.text
    assert "database gone" in caplog.text


def test_a_loop_told_to_stop_claiming_starts_no_round_after_the_running_one():
    started = threading.Event()
    release = threading.Event()
    rounds = []

    def job():
        rounds.append(1)
        started.set()
        release.wait(5)

    loop = PeriodicLoop(name="test-slow-job", every=0.0, run=job).start()
    assert started.wait(5)
    loop.stop_claiming()
    release.set()
    loop.stop(timeout=5)

    assert rounds == [1]
