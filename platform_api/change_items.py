"""A changes feed item's members around its project, as SQL for projects.json_sql (PostgreSQL writes the feed's
JSON): the same members, in the same order, as platform_api.views.ChangesView writes in Python on SQLite."""

from django.db import connection

from partners.models import Partner
from projects.json_sql import json_string_sql, project_column, sql_literal


def _partner_slug() -> str:
    quote = connection.ops.quote_name
    partners = quote(Partner._meta.db_table)
    return (
        f"(SELECT {partners}.{quote('slug')} FROM {partners} "
        f"WHERE {partners}.{quote('id')} = {project_column('partner')})"
    )


def _cursor() -> str:
    """platform_api.cursors.cursor_encode: `1.<updatedDate in µs since the epoch>.<id hex>`, URL-safe base64, no
    padding (PostgreSQL's base64 also breaks lines every 76 characters: none are kept)."""
    updated = project_column("updated_date")
    text = (
        f"'1.' || (extract(epoch FROM {updated}) * 1000000)::bigint::text || '.' || "
        f"replace({project_column('id')}::text, '-', '')"
    )
    base64 = f"encode(convert_to({text}, 'UTF8'), 'base64')"
    return f"rtrim(translate(replace({base64}, E'\\n', ''), '+/', '-_'), '=')"


def _change_type() -> str:
    """platform_api.views's change type: deleted, created (its one stamp is both dates), else updated."""
    return (
        f"CASE WHEN {project_column('deleted_date')} IS NOT NULL THEN 'project.deleted' "
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
