from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction

from projects.change_clock import change_stamps_take
from projects.models import ChangeClock
from tests.conftest import PRODUCTION, SANDBOX

pytestmark = pytest.mark.django_db

MICROSECOND = timedelta(microseconds=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def microseconds(instant: datetime) -> int:
    return (instant - EPOCH) // MICROSECOND


def take(partner, environment=SANDBOX, count=1):
    with transaction.atomic():
        return change_stamps_take(partner_id=partner.pk, environment=environment, count=count)


def test_the_first_stamp_creates_the_clock_at_the_current_time(partner):
    before = datetime.now(UTC)

    (stamp,) = take(partner)

    assert before <= stamp <= datetime.now(UTC)
    assert ChangeClock.objects.get(partner=partner, environment=SANDBOX).last_stamp == microseconds(stamp)


def test_stamps_of_a_batch_are_consecutive_microseconds_after_the_last_one(partner):
    (first,) = take(partner)

    batch = take(partner, count=3)

    assert batch[0] > first
    assert [stamp - batch[0] for stamp in batch] == [0 * MICROSECOND, 1 * MICROSECOND, 2 * MICROSECOND]


def test_a_clock_ahead_of_the_time_still_moves_forward(partner):
    ahead = datetime.now(UTC) + timedelta(hours=1)
    ChangeClock.objects.create(partner=partner, environment=SANDBOX, last_stamp=microseconds(ahead))

    assert take(partner) == [ahead + MICROSECOND]
    assert take(partner, count=2) == [ahead + 2 * MICROSECOND, ahead + 3 * MICROSECOND]


def test_each_partner_environment_has_its_own_clock(partner, other_partner):
    ahead = datetime.now(UTC) + timedelta(hours=1)
    ChangeClock.objects.create(partner=partner, environment=SANDBOX, last_stamp=microseconds(ahead))

    assert take(partner, PRODUCTION)[0] < ahead
    assert take(other_partner)[0] < ahead
    assert ChangeClock.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_stamps_are_taken_only_inside_the_transaction_that_writes_them(partner):
    with pytest.raises(RuntimeError, match="in the transaction that writes them"):
        change_stamps_take(partner_id=partner.pk, environment=SANDBOX)
