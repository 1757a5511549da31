"""Projects read as light rows rather than model instances, for the reads that write many projects out in Python (an
export, a page of the platform's feed, on SQLite: PostgreSQL writes their JSON itself, projects/json_sql.py): a row
reads as a Project does for project_representation, at a fraction of the cost of building a model instance."""

from collections import namedtuple
from collections.abc import Iterator

from django.db.models import QuerySet

from projects.models import Project

# Every column under its attribute name, the source data after them (left out when not asked for), and the
# partner's slug last (read only when asked for).
_COLUMNS = [field.attname for field in Project._meta.concrete_fields if field.attname != "source_data"]
ProjectRow = namedtuple("ProjectRow", [*_COLUMNS, "source_data", "partner_slug"], defaults=[None, None])


def project_rows(
    projects: QuerySet[Project],
    *,
    exclude_data: bool = False,
    partner_slug: bool = False,
    chunk_size: int | None = None,
) -> Iterator[ProjectRow]:
    """The projects as light rows; with `chunk_size`, through a server-side cursor that many rows a fetch."""
    columns = [*_COLUMNS, "source_data" if not exclude_data else None, "partner__slug" if partner_slug else None]
    values = projects.values_list(*[column for column in columns if column])
    rows = values.iterator(chunk_size=chunk_size) if chunk_size else values
    for row in rows:
        if exclude_data:
            row = (*row[: len(_COLUMNS)], None, *row[len(_COLUMNS) :])
        yield ProjectRow(*row)
