"""How long a push holds its partner environment's change clock, and what a push costs in-process.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_bench_clock .venv/bin/python bench/push_clock_hold.py

Calls push_receive directly, one push after another (500 projects, each pushed again with a changed amount per
round), and times from taking the stamp (projects/change_clock.py) to the end of the commit: while the clock is
held, every other changing write of that partner environment waits, so 1 / hold is the most changing pushes a
second one partner environment can take. The commit's WAL flush is most of it (pg_test_fsync shows the disk's).
"""

import argparse
import statistics
import time

import _setup
from django.core.management import call_command

from ingest import services
from ingest.demo import DEMO_MAPPING_DOCUMENT
from ingest.mapping_services import mapping_document_import
from partners.models import Partner, User
from partners.services import client_id_issue

PROJECTS = 500


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    partner, _ = Partner.objects.get_or_create(slug="bench-clock", defaults={"name": "Bench Clock"})
    mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT)
    user, _ = User.objects.get_or_create(email="bench-clock@example.com", defaults={"partner": partner})
    client_id, _ = client_id_issue(partner=partner, environment="sandbox", label="bench")

    stamped_at = _setup.stamp_times_recorded()

    def push(number: int, amount: int) -> float:
        """Seconds from the stamp to the end of the commit."""
        data = _setup.hubspot_like_record(number)
        data["properties"]["amount"] = f"{amount}.00"
        services.push_receive(
            client_id=client_id, user=user, environment="sandbox", external_id=f"C-{number}", data=data, body="{}"
        )
        return time.perf_counter() - stamped_at[-1]

    for number in range(PROJECTS):  # create them first
        push(number, 0)
    per_push, holds = [], []
    for round_number in range(1, args.rounds + 1):
        start = time.perf_counter()
        holds += [push(number, round_number) for number in range(PROJECTS)]
        per_push.append((time.perf_counter() - start) / PROJECTS * 1000)

    holds_ms = sorted(hold * 1000 for hold in holds)
    print(f"push_receive, ms a push per round: {' '.join(f'{ms:.2f}' for ms in per_push)}")
    print(
        f"clock held, ms: p50 {statistics.median(holds_ms):.2f}, p99 {_setup.percentile(holds_ms, 0.99):.2f}"
        f" (at most {1000 / statistics.median(holds_ms):.0f} changing pushes a second per partner environment)"
    )


if __name__ == "__main__":
    main()
