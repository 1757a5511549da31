"""The window of requests in flight to one endpoint (webhooks/delivery/window.py): AIMD, without a database."""

from webhooks.delivery.window import Window


def answers(window: Window, count: int, *, latency_ms: int = 10, succeeded: bool = True) -> list[int]:
    seen = []
    for _ in range(count):
        window.answered(latency_ms=latency_ms, succeeded=succeeded)
        seen.append(window.slots)
    return seen


def test_it_starts_with_one_request_and_grows_by_one_a_quick_answer_up_to_the_limit():
    window = Window(limit=8, slow_ms=1000)

    assert window.slots == 1
    assert answers(window, 9) == [2, 3, 4, 5, 6, 7, 8, 8, 8]


def test_slow_answers_halve_it_once_a_round():
    window = Window(limit=8, slow_ms=1000)
    answers(window, 7)

    assert answers(window, 8, latency_ms=1500) == [4] * 8  # the answers to one round's eight requests: halved once
    assert answers(window, 4, latency_ms=1500) == [2] * 4  # the next round, sent four at a time
    assert answers(window, 3, latency_ms=1500) == [1, 1, 1]


def test_a_failure_brings_it_back_to_one_request_and_quick_answers_grow_it_again():
    window = Window(limit=8, slow_ms=1000)
    answers(window, 7)

    assert answers(window, 1, succeeded=False) == [1]
    assert answers(window, 3) == [2, 3, 4]
