"""A changes feed item: written by Python (change_item, on SQLite) or, on PostgreSQL, by the database around the
project's JSON of projects.json_sql (the SQL below), with the same members in the same order."""

from django.db import connection

from partners.models import Partner
from platform_api.cursors import change_cursor
from projects.json_sql import json_string_sql, project_column, sql_literal
from projects.light_rows import ProjectRow
from projects.representation import project_pulled_representation


def change_type(project: ProjectRow) -> str:
    """Read from the row: erased, deleted, created (a creation takes both dates from one stamp), else updated."""
    if project.erased_date is not None:
        return "project.erased"
    if project.deleted_date is not None:
        return "project.deleted"
    return "project.created" if project.submitted_date == project.updated_date else "project.updated"


def change_item(project: ProjectRow) -> dict:
    """A feed item of a light row read with its partner's slug."""
    return {
        "cursor": change_cursor(updated_date=project.updated_date, project_id=project.id),
        "partner": project.partner_slug,
        "environment": project.environment,
        "type": change_type(project),
        "project": {**project_pulled_representation(project), "partner": project.partner_slug},
    }


def _partner_slug() -> str:
    quote = connection.ops.quote_name
    partners = quote(Partner._meta.db_table)
    return (
        f"(SELECT {partners}.{quote('slug')} FROM {partners} "
        f"WHERE {partners}.{quote('id')} = {project_column('partner')})"
    )


def _cursor() -> str:
    """platform_api.cursors.change_cursor: `1.<updatedDate in µs since the epoch>.<id hex>`, URL-safe base64, no
    padding (PostgreSQL's base64 also breaks lines every 76 characters: none are kept)."""
    updated = project_column("updated_date")
    text = (
        f"'1.' || (extract(epoch FROM {updated}) * 1000000)::bigint::text || '.' || "
        f"replace({project_column('id')}::text, '-', '')"
    )
    base64 = f"encode(convert_to({text}, 'UTF8'), 'base64')"
    return f"rtrim(translate(replace({base64}, E'\\n', ''), '+/', '-_'), '=')"


def _change_type() -> str:
    """change_type's SQL."""
    return (
        f"CASE WHEN {project_column('erased_date')} IS NOT NULL THEN 'project.erased' "
        f"WHEN {project_column('deleted_date')} IS NOT NULL THEN 'project.deleted' "
        f"WHEN {project_column('submitted_date')} = {project_column('updated_date')} THEN 'project.created' "
        "ELSE 'project.updated' END"
    )


def change_item_prefix() -> tuple[str, ...]:
    """`{"cursor":…,"partner":…,"environment":…,"type":…,"project":` as SQL texts."""
    slug = json_string_sql(_partner_slug())
    environment = json_string_sql(project_column("environment"))
    return (
        sql_literal('{"cursor":"'),
        _cursor(),
        sql_literal('","partner":'),
        slug,
        sql_literal(',"environment":'),
        environment,
        sql_literal(',"type":"'),
        _change_type(),
        sql_literal('","project":'),
    )


def change_item_project_members() -> tuple[tuple[str, str], ...]:
    """The members the item's project has after a pulled project's: its partner's slug."""
    return (("partner", json_string_sql(_partner_slug())),)


CHANGE_ITEM_SUFFIX = (sql_literal("}"),)
