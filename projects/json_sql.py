"""A pulled project's JSON written by PostgreSQL, for the reads that write many projects out (a follower's page, the
platform's change feed, an export): the rows leave the database as the text the API sends, and Python hands it
through without building a value per column (most of such a read's time before; bench/README.md).

The text is byte for byte what `projects.api.serializers` writes with Python's json (compact separators, non-ASCII
kept, the same escapes, the same key order; tests/projects/test_json_sql.py stores arbitrary projects and compares
the two on PostgreSQL). The database writes every member but the two jsonb ones (`issues`, `data`), whose text
Python compacts (jsonb_compact). Both writers are built from the one field registry (projects.canonical,
projects.platform_fields), so a new field appears in both. SQLite keeps the Python path. Why: docs/decisions.md,
"Reads at scale".
"""

import functools
import json
from collections.abc import Sequence

from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from projects.canonical import CANONICAL_FIELDS
from projects.models import Project
from projects.platform_fields import PLATFORM_MILESTONES


def sql_literal(text: str) -> str:
    """`text` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def project_column(attname: str) -> str:
    """SQL of a column of the projects table, by the table's name (as the ORM's queries name it)."""
    quote = connection.ops.quote_name
    column = Project._meta.get_field(attname).column
    return f"{quote(Project._meta.db_table)}.{quote(column)}"


def _null_or(column: str, value: str) -> str:
    return f"CASE WHEN {column} IS NULL THEN 'null' ELSE {value} END"


def _instant(column: str) -> str:
    """An ISO 8601 UTC date-time as core.time.iso_datetime writes it: microseconds only when not zero."""
    text = f"""replace(to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '.000000', '')"""
    return _null_or(column, f"""'"' || {text} || 'Z"'""")


def _date(column: str) -> str:
    return _null_or(column, f"""'"' || to_char({column}, 'YYYY-MM-DD') || '"'""")


def _decimal(column: str) -> str:
    # trim_scale: no trailing zeros ("8.8", "25000", "0"), as projects.canonical.format_decimal
    return _null_or(column, f"""'"' || trim_scale({column})::text || '"'""")


def _integer(column: str) -> str:
    return _null_or(column, f"{column}::text")


def json_string_sql(column: str) -> str:
    """SQL of a text value's JSON: a string with Python's json's escapes, or null."""
    return _null_or(column, f"to_json({column})::text")


class _Jsonb(str):
    """SQL of a jsonb column: its text is re-encoded by Python (json_joined), as the Python path writes it."""


_Piece = str | _Jsonb
_RENDER = {"text": json_string_sql, "integer": _integer, "decimal": _decimal, "date": _date}


def _object(members: list[tuple[str, _Piece | list[_Piece]]]) -> list[_Piece]:
    """A JSON object's pieces from (name, value) pairs in that order; a value is SQL of its JSON text, a jsonb
    column, or the pieces of a nested object."""
    pieces: list[_Piece] = []
    for position, (name, value) in enumerate(members):
        pieces.append(sql_literal(("{" if position == 0 else ",") + f'"{name}":'))
        pieces.extend(value if isinstance(value, list) else [value])
    pieces.append("'}'")
    return pieces


def _platform() -> list[_Piece]:
    milestones = [(name, _date(project_column(attname))) for name, attname in PLATFORM_MILESTONES.items()]
    return _object(
        [
            ("stage", json_string_sql(project_column("platform_stage"))),
            ("milestones", _object(milestones)),
            ("note", json_string_sql(project_column("platform_note"))),
            ("updatedDate", _instant(project_column("platform_updated_date"))),
        ]
    )


def _envelope() -> list[tuple[str, _Piece]]:
    return [
        ("id", f"""'"' || {project_column("id")}::text || '"'"""),
        ("externalId", json_string_sql(project_column("external_id"))),
    ]


def _live(*, exclude_data: bool) -> list[tuple[str, _Piece | list[_Piece]]]:
    """projects.representation.project_representation's members, in its order."""
    members = [
        *_envelope(),
        ("deleted", "'false'"),
        ("submittedDate", _instant(project_column("submitted_date"))),
        ("updatedDate", _instant(project_column("updated_date"))),
        ("mappingStatus", json_string_sql(project_column("mapping_status"))),
        ("issues", _Jsonb(f"{project_column('issues')}::text")),
        *[(field.name, _RENDER[field.kind](project_column(field.attname))) for field in CANONICAL_FIELDS],
        ("platform", _platform()),
    ]
    if not exclude_data:
        members.append(("data", _Jsonb(f"{project_column('source_data')}::text")))
    return members


def _tombstone() -> list[tuple[str, _Piece | list[_Piece]]]:
    """projects.representation.project_tombstone_representation's members, in its order."""
    return [
        *_envelope(),
        ("deleted", "'true'"),
        ("deletedDate", _instant(project_column("deleted_date"))),
        ("submittedDate", _instant(project_column("submitted_date"))),
        ("updatedDate", _instant(project_column("updated_date"))),
    ]


def _erased() -> list[tuple[str, _Piece | list[_Piece]]]:
    """projects.representation.project_erased_representation's members, in its order."""
    return [
        *_envelope(),
        ("erased", "'true'"),
        ("erasedDate", _instant(project_column("erased_date"))),
        ("updatedDate", _instant(project_column("updated_date"))),
    ]


def _columns(pieces: list[_Piece]) -> list[str]:
    """The pieces as SQL columns: text, then jsonb and text in turn (the texts concatenated between jsonbs)."""
    columns: list[str] = []
    texts: list[str] = []
    for piece in pieces:
        if isinstance(piece, _Jsonb):
            columns += [" || ".join(f"({text})" for text in texts) or "''", piece]
            texts = []
        else:
            texts.append(piece)
    return [*columns, " || ".join(f"({text})" for text in texts) or "''"]


@functools.cache
def project_json_columns(
    *,
    exclude_data: bool,
    extra: tuple[tuple[str, str], ...] = (),
    prefix: tuple[str, ...] = (),
    suffix: tuple[str, ...] = (),
) -> tuple[str, ...]:
    """SQL columns over the projects table (by its name) that json_joined makes into the pulled project's JSON
    (projects.api.serializers.project_pulled_representation, `data` left out when `exclude_data`): with the `extra`
    members (name, SQL of the value's JSON) after its own, and the SQL texts of `prefix` before it and of `suffix`
    after it (a wrapper's members)."""
    live = _columns([*prefix, *_object([*_live(exclude_data=exclude_data), *extra]), *suffix])
    (tombstone,) = _columns([*prefix, *_object([*_tombstone(), *extra]), *suffix])
    (erased,) = _columns([*prefix, *_object([*_erased(), *extra]), *suffix])
    # An erased project is deleted too (projects/models.py): its record goes in the tombstone's place.
    tombstone = f"CASE WHEN {project_column('erased_date')} IS NOT NULL THEN {erased} ELSE {tombstone} END"
    deleted = f"{project_column('deleted_date')} IS NOT NULL"
    # A tombstone is all in the first column; its other columns are empty, its jsonb places NULL.
    in_tombstone = [tombstone, *["NULL" if place % 2 else "''" for place in range(1, len(live))]]
    return tuple(
        f"CASE WHEN {deleted} THEN {other} ELSE {column} END" for other, column in zip(in_tombstone, live, strict=True)
    )


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def jsonb_compact(text: str) -> str:
    """jsonb's text (`{"a": [1, 2]}`) as Python's json writes the value it holds (`{"a":[1,2]}`), as the Python
    path does after psycopg reads the column.

    jsonb writes `", "` between members and `": "` after keys, and nothing else outside strings. Without a
    backslash in the text, a `"` only ever opens or closes a string, so splitting on it leaves the text outside
    strings at the even places, where the separators lose their space. Otherwise (an escape in a string), or when
    a number has a fraction (a float, which Python may print otherwise: 1e-07 for jsonb's 0.0000001), the value is
    read and written again with Python's json.
    """
    if text == "[]":  # a project's issues, mostly
        return text
    if "\\" not in text:
        parts = text.split('"')
        outside = "\x00".join(parts[::2])  # jsonb's text holds no NUL
        if "." not in outside:
            parts[::2] = outside.replace(", ", ",").replace(": ", ":").split("\x00")
            return '"'.join(parts)
    return _dumps(json.loads(text))


def json_joined(row: Sequence[str | None]) -> str:
    """The JSON text of a row of project_json_columns: its jsonb texts (odd places; None in a tombstone) written as
    Python's json writes their values (jsonb_compact)."""
    parts = list(row)
    for place in range(1, len(parts), 2):
        parts[place] = jsonb_compact(parts[place]) if parts[place] is not None else ""
    return "".join(parts)


def json_sql_available() -> bool:
    """Whether the database writes the JSON (PostgreSQL); elsewhere the Python path writes it."""
    return connection.vendor == "postgresql"


def projects_json_rows(projects: QuerySet[Project], *, exclude_data: bool, **wrapper: tuple) -> QuerySet:
    """`projects` as rows for json_joined (a values_list, in the queryset's order), wrapped as project_json_columns
    says. PostgreSQL only."""
    columns = project_json_columns(exclude_data=exclude_data, **wrapper)
    names = [f"json_{place}" for place in range(len(columns))]
    return projects.annotate(
        **{name: RawSQL(column, []) for name, column in zip(names, columns, strict=True)}
    ).values_list(*names)


def projects_json(projects: QuerySet[Project], *, exclude_data: bool, **wrapper: tuple) -> list[str]:
    """The JSON text of each project, in the queryset's order, as project_pulled_representation writes it, wrapped
    as project_json_columns says. PostgreSQL only."""
    rows = projects_json_rows(projects, exclude_data=exclude_data, **wrapper)
    return [json_joined(row) for row in rows]
