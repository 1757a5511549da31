"""deploy/restore_checks.py: what the restore drill counts as a mismatch. The drill passes only when these find
nothing, so each is shown finding what it must."""

from deploy.restore_checks import (
    ProjectState,
    Push,
    Target,
    expected_projects,
    follower_mismatches,
    project_mismatches,
    pushes_by_side,
    raw_push_mismatches,
)
from deploy.restore_traffic import instant

TARGET = Target(before=10, after=13)


def push(token: str, sent: int, acknowledged: int, external_id: str = "R1", value: int = 1, stamp: str = "01") -> Push:
    return Push(token, external_id, value, sent, acknowledged, f"id-{external_id}", f"2026-03-10T12:00:00.0000{stamp}Z")


def state(external_id: str, value: int, stamp: str) -> ProjectState:
    return ProjectState(f"id-{external_id}", external_id, value, f"2026-03-10T12:00:00.0000{stamp}Z")


def test_pushes_are_ordered_against_the_target_by_their_tickets():
    before, straddling, sent_inside, after = push("a", 1, 9), push("b", 9, 11), push("c", 12, 14), push("d", 14, 15)

    assert pushes_by_side([before, straddling, sent_inside, after], TARGET) == {
        "before": [before],
        "in flight": [straddling, sent_inside],
        "after": [after],
    }


def test_a_push_acknowledged_before_the_target_must_be_restored():
    pushes = [push("a", 1, 2), push("b", 3, 4, external_id="R2")]

    assert raw_push_mismatches(pushes, TARGET, {"a", "b"}) == []
    assert raw_push_mismatches(pushes, TARGET, {"a"}) == ["push b (R2) acknowledged before the target is missing"]


def test_a_push_sent_after_the_target_must_not_be_restored():
    pushes = [push("a", 1, 2), push("z", 14, 15)]

    assert raw_push_mismatches(pushes, TARGET, {"a"}) == []
    assert raw_push_mismatches(pushes, TARGET, {"a", "z"}) == ["push z (R1) sent after the target was restored"]


def test_a_push_in_flight_at_the_target_may_be_restored_or_not():
    pushes = [push("a", 1, 2), push("m", 9, 14)]

    assert raw_push_mismatches(pushes, TARGET, {"a"}) == []
    assert raw_push_mismatches(pushes, TARGET, {"a", "m"}) == []


def test_a_raw_push_no_one_acknowledged_is_a_mismatch():
    assert raw_push_mismatches([push("a", 1, 2)], TARGET, {"a", "ghost"}) == ["raw push ghost was never acknowledged"]


def test_each_record_is_expected_as_its_last_stored_push_left_it():
    pushes = [
        push("m", 9, 14, value=3, stamp="03"),  # in flight, stored
        push("a", 1, 2, value=1, stamp="01"),
        push("b", 3, 4, value=2, stamp="02"),
        push("z", 14, 15, value=4, stamp="04"),  # after: not stored
        push("n", 15, 16, external_id="R2", value=5, stamp="05"),  # a record created after the target
    ]

    assert expected_projects(pushes, {"a", "b", "m"}) == {"R1": state("R1", 3, "03")}
    assert expected_projects(pushes, {"a", "b"}) == {"R1": state("R1", 2, "02")}


def test_a_project_in_another_state_missing_or_unexpected_is_a_mismatch():
    expected = {"R1": state("R1", 2, "02"), "R2": state("R2", 1, "01")}

    assert project_mismatches(expected, [state("R2", 1, "01"), state("R1", 2, "02")], "SQL") == []
    assert project_mismatches(expected, [state("R1", 3, "03"), state("R3", 1, "09")], "SQL") == [
        f"SQL: R1 is {state('R1', 3, '03')}, expected {state('R1', 2, '02')}",
        "SQL: R3 should not exist",
        "SQL: R2 is missing",
    ]


def test_a_follower_reads_each_project_past_its_position_once_in_order():
    expected = {"R1": state("R1", 1, "01"), "R2": state("R2", 1, "02"), "R3": state("R3", 1, "03")}
    read = [state("R2", 1, "02"), state("R3", 1, "03")]

    assert follower_mismatches(read, expected, "pull", after=expected["R1"].updated_date) == []
    assert follower_mismatches(read, expected, "pull") == ["pull: R1 is missing"]


def test_a_follower_reading_twice_or_out_of_order_is_a_mismatch():
    expected = {"R1": state("R1", 1, "01"), "R2": state("R2", 1, "02")}

    assert follower_mismatches([state("R2", 1, "02"), state("R1", 1, "01")], expected, "feed") == [
        "feed: R1 read after R2 out of order"
    ]
    assert follower_mismatches(
        [state("R1", 1, "01"), state("R2", 1, "02"), state("R2", 1, "02")], expected, "feed"
    ) == [
        "feed: R2 read after R2 out of order",
        "feed: R2 read 2 times",
    ]


def test_updated_dates_are_compared_with_all_six_digits():
    assert instant("2026-03-10T12:00:00Z") == "2026-03-10T12:00:00.000000Z"
    assert instant("2026-03-10T12:00:00.000001Z") == "2026-03-10T12:00:00.000001Z"
    assert instant("2026-03-10T14:00:00.5+02:00") == "2026-03-10T12:00:00.500000Z"
    assert instant("2026-03-10T12:00:00Z") < instant("2026-03-10T12:00:00.000001Z")
