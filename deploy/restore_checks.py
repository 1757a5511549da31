"""What a point-in-time restore must hold, compared as plain data (deploy/restore_drill.py gathers it).

The pushers' acknowledged pushes are ordered against the target by tickets from one counter: a push answered 2xx
before the ticket taken just before the target was read from the database's clock committed before the target and
must be restored; a push sent after the ticket taken just after it committed after and must not be. A push in flight
while the target was read may be either, but then whole: its raw push and its project's state together."""

import itertools
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Push:
    """One acknowledged push: its token (unique, in its data), its record, the value it set, the tickets of its
    sending and of its 2xx, what the answer said (the project's id and updatedDate), and when the 2xx came (epoch
    seconds, for the report only: the tickets order it)."""

    token: str
    external_id: str
    value: int
    sent: int
    acknowledged: int
    project_id: str
    updated_date: str
    acknowledged_at: float = 0.0


@dataclass(frozen=True)
class Target:
    """The tickets taken just before and just after the target time was read."""

    before: int
    after: int

    def side(self, push: Push) -> str:
        if push.acknowledged < self.before:
            return "before"
        if push.sent > self.after:
            return "after"
        return "in flight"


@dataclass(frozen=True)
class ProjectState:
    """A project as the restored database or a follower reads it."""

    id: str
    external_id: str
    value: int | None
    updated_date: str


def pushes_by_side(pushes: Iterable[Push], target: Target) -> dict[str, list[Push]]:
    sides: dict[str, list[Push]] = {"before": [], "in flight": [], "after": []}
    for push in pushes:
        sides[target.side(push)].append(push)
    return sides


def raw_push_mismatches(pushes: Iterable[Push], target: Target, stored_tokens: set[str]) -> list[str]:
    """Every push acknowledged before the target is stored, none sent after it is, and nothing else is."""
    mismatches = []
    known = set()
    for push in pushes:
        known.add(push.token)
        side = target.side(push)
        if side == "before" and push.token not in stored_tokens:
            mismatches.append(f"push {push.token} ({push.external_id}) acknowledged before the target is missing")
        elif side == "after" and push.token in stored_tokens:
            mismatches.append(f"push {push.token} ({push.external_id}) sent after the target was restored")
    mismatches += [f"raw push {token} was never acknowledged" for token in sorted(stored_tokens - known)]
    return mismatches


def expected_projects(pushes: Iterable[Push], stored_tokens: set[str]) -> dict[str, ProjectState]:
    """Each record as its last stored push left it (a record's pushes come from one pusher, one at a time, so their
    order is the order they were sent); records none of whose pushes is stored are absent."""
    expected = {}
    for push in sorted(pushes, key=lambda push: push.sent):
        if push.token in stored_tokens:
            expected[push.external_id] = ProjectState(
                id=push.project_id, external_id=push.external_id, value=push.value, updated_date=push.updated_date
            )
    return expected


def project_mismatches(expected: dict[str, ProjectState], found: Iterable[ProjectState], source: str) -> list[str]:
    """The projects `source` holds are exactly the expected ones, each in its expected state."""
    mismatches = []
    seen = set()
    for project in found:
        seen.add(project.external_id)
        wanted = expected.get(project.external_id)
        if wanted is None:
            mismatches.append(f"{source}: {project.external_id} should not exist")
        elif project != wanted:
            mismatches.append(f"{source}: {project.external_id} is {project}, expected {wanted}")
    mismatches += [f"{source}: {external_id} is missing" for external_id in sorted(expected.keys() - seen)]
    return mismatches


def follower_mismatches(
    read: list[ProjectState], expected: dict[str, ProjectState], source: str, *, after: str = ""
) -> list[str]:
    """A follower that read `read` in order from the updatedDate `after` (the start by default) saw each expected
    project changed after it once, in the change order, at its expected state, and nothing else. (updatedDates are
    unique across partners, so a feed's cursor position past a project is past its updatedDate.)"""
    mismatches = [
        f"{source}: {later.external_id} read after {earlier.external_id} out of order"
        for earlier, later in itertools.pairwise(read)
        if (later.updated_date, later.id) <= (earlier.updated_date, earlier.id)
    ]
    counts: dict[str, int] = {}
    for project in read:
        counts[project.external_id] = counts.get(project.external_id, 0) + 1
    mismatches += [f"{source}: {external_id} read {n} times" for external_id, n in sorted(counts.items()) if n > 1]
    past = {key: state for key, state in expected.items() if state.updated_date > after}
    return mismatches + project_mismatches(past, {project.external_id: project for project in read}.values(), source)
