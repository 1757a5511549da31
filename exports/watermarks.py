"""The watermark of an export that wrote no project: where a follower continues from instead (no database)."""

from datetime import datetime, timedelta

from projects.date_filters import parse_date_filter

_MICROSECOND = timedelta(microseconds=1)


def watermark_of_empty_export(updated_date_filter: str) -> datetime | None:
    """The largest instant `updatedDate=gt:` can take while passing over nothing the filter let in: the filter's
    lower bound (an inclusive one less a microsecond, updatedDates being whole microseconds). None when the filter
    has no lower bound: the follower starts from the beginning."""
    if not updated_date_filter:
        return None
    bounds = parse_date_filter(updated_date_filter)
    if bounds.lower is None:
        return None
    if not bounds.lower_inclusive:
        return bounds.lower
    try:
        return bounds.lower - _MICROSECOND
    except OverflowError:  # from the first instant datetime holds: nothing lies before it
        return None
