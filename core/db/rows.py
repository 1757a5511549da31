"""Single-table SQL for the hot paths (push, reprocessing), built once from the models' own metadata.

A push runs on every save in a partner's CRM. The ORM compiles each statement anew, which cost 0.3-0.7 ms of CPU
a statement here, more than the database needs to run it (bench/README.md). These helpers build a statement once
per model and column list, and convert values through the model fields both ways (`get_db_prep_save` going in,
the backend's and the field's converters coming out), so the columns they read and write hold exactly what the
ORM's would, on PostgreSQL and SQLite alike (tests/core/db/test_rows.py holds them to the ORM).

What they do not do, by design: no `pre_save` (a write naming an `auto_now` or `auto_now_add` field is refused,
since the ORM would have set it), no `db_default` (refused), no signals, no Python defaults for columns left out
of an INSERT. Everything else uses the ORM.
"""

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DEFAULT_DB_ALIAS, NotSupportedError, connection, connections, models
from django.db.models import DEFERRED, NOT_PROVIDED

# Statements and column lists kept, per model: a push's update names the columns that changed (ingest/services.py),
# so their sets are not a fixed few.
_COLUMN_SETS = 1024


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


@functools.lru_cache(maxsize=_COLUMN_SETS)
def _fields(model: type[models.Model], attnames: tuple[str, ...]) -> tuple[models.Field, ...]:
    return tuple(model._meta.get_field(attname) for attname in attnames)


@functools.lru_cache(maxsize=_COLUMN_SETS)
def _written_fields(model: type[models.Model], attnames: tuple[str, ...]) -> tuple[models.Field, ...]:
    """The fields a write names, refusing those whose value the ORM (pre_save) or the database would supply."""
    fields = _fields(model, attnames)
    for field in fields:
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            raise ValueError(f"{model.__name__}.{field.attname} is set by the ORM's pre_save; write it with the ORM.")
        if field.db_default is not NOT_PROVIDED:
            raise ValueError(f"{model.__name__}.{field.attname} has a db_default; write it with the ORM.")
    return fields


# Fields whose get_db_prep_save returns a str or None unchanged, on every backend: most of a project's columns, so
# the per-row preparation skips five calls a value for them (a batch push prepares some 50 values a record).
_TEXT_FIELDS = frozenset({models.CharField, models.TextField})


@functools.lru_cache(maxsize=_COLUMN_SETS)
def _preparers(model: type[models.Model], attnames: tuple[str, ...]) -> tuple[tuple[str, models.Field, bool], ...]:
    return tuple((field.attname, field, type(field) in _TEXT_FIELDS) for field in _fields(model, attnames))


def _prepared_value(field: models.Field, text: bool, value: Any, database) -> Any:
    return value if text and (value is None or type(value) is str) else field.get_db_prep_save(value, database)


def _prepared(model: type[models.Model], values: dict[str, Any]) -> list[Any]:
    database = connections[DEFAULT_DB_ALIAS]  # once: `connection` is a proxy, each use a thread-local look-up
    return [
        _prepared_value(field, text, values[attname], database)
        for attname, field, text in _preparers(model, tuple(values))
    ]


def _prepared_columns(model: type[models.Model], rows: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """The prepared values of each column of these rows (all with the same columns). A column whose value is the
    same object in every row (the partner, the environment, the time received...) is prepared once for all."""
    database = connections[DEFAULT_DB_ALIAS]
    columns = []
    for attname, field, text in _preparers(model, tuple(rows[0])):
        first = rows[0][attname]
        if all(row[attname] is first for row in rows):
            columns.append([_prepared_value(field, text, first, database)] * len(rows))
        else:
            columns.append([_prepared_value(field, text, row[attname], database) for row in rows])
    return columns


def _prepared_rows(model: type[models.Model], rows: Sequence[dict[str, Any]]) -> list[list[Any]]:
    """_prepared of each row (all with the same columns), each shared value prepared once (_prepared_columns)."""
    return [list(row) for row in zip(*_prepared_columns(model, rows), strict=True)]


_TYPE_MODIFIER = re.compile(r"\(.*\)")


def _array_cast(field: models.Field) -> str:
    """A PostgreSQL array parameter of the field's column type: one parameter for a whole column of values, so a
    statement over many rows stays short (psycopg converts a statement of more than 50 parameters or 4 KiB anew
    every time, in Python: a third of a batch push's insert-or-lock) and is one prepared statement for any count.

    The array is of the type without its modifier (varchar, not varchar(255)): an explicit cast to varchar(n) would
    cut longer text to n characters, where writing the value to the column refuses it, as the ORM's statement does.
    """
    base_type = _TYPE_MODIFIER.sub("", field.db_type(connection))
    return f"%s::{base_type}[]"


@functools.cache
def _select_sql(
    vendor: str, model: type[models.Model], attnames: tuple[str, ...], where: tuple[str, ...], for_update: bool
) -> str:
    columns = ", ".join(_quote(field.column) for field in _fields(model, attnames))
    conditions = " AND ".join(f"{_quote(field.column)} = %s" for field in _fields(model, where))
    lock = " FOR UPDATE" if for_update and connection.features.has_select_for_update else ""
    return f"SELECT {columns} FROM {_quote(model._meta.db_table)} WHERE {conditions}{lock}"


@functools.cache
def _converters(vendor: str, model: type[models.Model], attnames: tuple[str, ...]) -> tuple[tuple, ...]:
    """Per column: (column expression, its converters), in the order the ORM's compiler applies them."""
    result = []
    for field in _fields(model, attnames):
        column = field.get_col(model._meta.db_table)
        result.append((column, (*connection.ops.get_db_converters(column), *field.get_db_converters(connection))))
    return tuple(result)


def rows_select(
    model: type[models.Model],
    *,
    attnames: Sequence[str],
    where: dict[str, Any],
    for_update: bool = False,
    using: str = DEFAULT_DB_ALIAS,
) -> list[dict[str, Any]]:
    """The rows whose columns equal `where`, as {attname: Python value}; locked when `for_update`. `using`: the
    database to read (a replica's alias for a read a replica may serve)."""
    attnames = tuple(attnames)
    sql = _select_sql(connection.vendor, model, attnames, tuple(where), for_update)
    with connections[using].cursor() as cursor:
        cursor.execute(sql, _prepared(model, where))
        rows = cursor.fetchall()
    converters = _converters(connection.vendor, model, attnames)
    return [_converted(attnames, row, converters) for row in rows]


@functools.cache
def _select_after_sql(
    model: type[models.Model], attnames: tuple[str, ...], where: tuple[str, ...], for_update: bool, first: str
) -> str:
    # LATERAL, and the row's condition on the first value, make the value's evaluation come first: the row's scan
    # (and its lock) runs once, after it, whatever plan is chosen.
    columns = ", ".join(_quote(field.column) for field in _fields(model, attnames))
    conditions = " AND ".join(f"{_quote(field.column)} = %s" for field in _fields(model, where))
    lock = " FOR UPDATE" if for_update else ""
    return (
        f"WITH head AS MATERIALIZED (SELECT {first} AS value) SELECT head.value, found.* FROM head LEFT JOIN LATERAL "
        f"(SELECT true AS found, {columns} FROM {_quote(model._meta.db_table)} "
        f"WHERE {conditions} AND head.value IS NOT NULL{lock}) found ON true"
    )


def row_select_after(
    model: type[models.Model],
    *,
    first: tuple[str, Sequence[Any]],
    attnames: Sequence[str],
    where: dict[str, Any],
    for_update: bool = False,
) -> tuple[Any, dict[str, Any] | None]:
    """PostgreSQL: one SQL expression (`first`: its text and parameters; never NULL) evaluated, then the row whose
    columns equal `where` (a unique key) read, and locked with `for_update`, in one statement: the expression's
    value, and the row as rows_select gives it or None. The row is read by a LATERAL subquery that depends on the
    value, so the expression runs first and once, before the row's scan and its lock."""
    if connection.vendor != "postgresql":
        raise NotSupportedError("row_select_after needs PostgreSQL (LATERAL).")
    attnames = tuple(attnames)
    first_sql, first_params = first
    sql = _select_after_sql(model, attnames, tuple(where), for_update, first_sql)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*first_params, *_prepared(model, where)])
        ((value, found, *row),) = cursor.fetchall()
    if not found:
        return value, None
    return value, _converted(attnames, row, _converters(connection.vendor, model, attnames))


def instance_from_row(model: type[models.Model], row: dict[str, Any], *, using: str = DEFAULT_DB_ALIAS) -> models.Model:
    """A model instance of a row read here (from `using`), as the ORM would load it: the columns not read are
    deferred."""
    values = [row.get(attname, DEFERRED) for attname in _concrete_attnames(model)]
    return model.from_db(using, list(row), values)


@functools.cache
def _concrete_attnames(model: type[models.Model]) -> tuple[str, ...]:
    return tuple(field.attname for field in model._meta.concrete_fields)


@functools.cache
def _insert_sql(vendor: str, model: type[models.Model], attnames: tuple[str, ...], ignore_conflicts: bool) -> str:
    columns = ", ".join(_quote(field.column) for field in _written_fields(model, attnames))
    placeholders = ", ".join(["%s"] * len(attnames))
    on_conflict = " ON CONFLICT DO NOTHING" if ignore_conflicts else ""  # PostgreSQL, and SQLite since 3.24
    return f"INSERT INTO {_quote(model._meta.db_table)} ({columns}) VALUES ({placeholders}){on_conflict}"


def row_insert(model: type[models.Model], *, values: dict[str, Any], ignore_conflicts: bool = False) -> bool:
    """INSERT one row of these column values. With `ignore_conflicts`, False when a unique constraint already held
    such a row; on PostgreSQL the statement first waits for a concurrent transaction that inserted it to end."""
    with connection.cursor() as cursor:
        cursor.execute(_insert_sql(connection.vendor, model, tuple(values), ignore_conflicts), _prepared(model, values))
        return cursor.rowcount == 1


@functools.lru_cache(maxsize=_COLUMN_SETS)
def _update_sql(vendor: str, model: type[models.Model], attnames: tuple[str, ...]) -> str:
    assignments = ", ".join(f"{_quote(field.column)} = %s" for field in _written_fields(model, attnames))
    return f"UPDATE {_quote(model._meta.db_table)} SET {assignments} WHERE {_quote(model._meta.pk.column)} = %s"


def rows_update(model: type[models.Model], *, instances: Iterable[models.Model], attnames: Sequence[str]) -> None:
    """Write these columns of these instances: one UPDATE by primary key per row, sent as one executemany batch.
    Raises RuntimeError when a row is not there (the caller read it, so something else deleted it).

    bulk_update() builds a CASE expression per column and reprocessed about 200 projects a second here; psycopg 3
    pipelines executemany, which made the same writes ten times faster (a single UPDATE ... FROM VALUES was slower
    still: the cost is in the rows and their indexes, not in round trips).
    """
    attnames = tuple(attnames)
    sql = _update_sql(connection.vendor, model, attnames)
    pk = model._meta.pk
    instances = list(instances)
    if not instances:
        return
    values = [{attname: getattr(instance, attname) for attname in attnames} for instance in instances]
    rows = [_prepared(model, values[0])] if len(values) == 1 else _prepared_rows(model, values)
    for row, instance in zip(rows, instances, strict=True):
        row.append(pk.get_db_prep_save(instance.pk, connection))
    with connection.cursor() as cursor:
        if len(rows) == 1:  # a push's one row: a plain statement, without executemany's pipeline round
            cursor.execute(sql, rows[0])
        else:
            cursor.executemany(sql, rows)
        matched = cursor.rowcount
    if matched != len(rows):
        raise RuntimeError(f"UPDATE of {model.__name__} matched {matched} of {len(rows)} rows.")


# --- many rows at once (the batch push) --------------------------------------------------------------------------


@functools.cache
def _select_in_sql(
    vendor: str, model: type[models.Model], attnames: tuple[str, ...], where: tuple[str, ...], within: str, count: int
) -> str:
    columns = ", ".join(_quote(field.column) for field in _fields(model, attnames))
    conditions = [f"{_quote(field.column)} = %s" for field in _fields(model, where)]
    within_field = model._meta.get_field(within)
    if vendor == "postgresql":
        conditions.append(f"{_quote(within_field.column)} = ANY({_array_cast(within_field)})")
    else:
        conditions.append(f"{_quote(within_field.column)} IN ({', '.join(['%s'] * count)})")
    return f"SELECT {columns} FROM {_quote(model._meta.db_table)} WHERE {' AND '.join(conditions)}"


def rows_select_in(
    model: type[models.Model], *, attnames: Sequence[str], where: dict[str, Any], within: tuple[str, Sequence[Any]]
) -> list[dict[str, Any]]:
    """The rows whose columns equal `where` and whose column `within[0]` is one of `within[1]`, as
    {attname: Python value}."""
    attnames = tuple(attnames)
    within_attname, within_values = within
    if not within_values:
        return []
    vendor = connection.vendor
    count = 0 if vendor == "postgresql" else len(within_values)  # PostgreSQL: one array parameter, any count
    sql = _select_in_sql(vendor, model, attnames, tuple(where), within_attname, count)
    within_field = model._meta.get_field(within_attname)
    within_prepared = [within_field.get_db_prep_save(value, connection) for value in within_values]
    params = [*_prepared(model, where), *([within_prepared] if vendor == "postgresql" else within_prepared)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    converters = _converters(connection.vendor, model, attnames)
    return [_converted(attnames, row, converters) for row in rows]


def column_sql(model: type[models.Model], attname: str, *, alias: str) -> str:
    """`alias`.column of a model's field, quoted, for a statement written by hand (a join of several tables)."""
    return f"{_quote(alias)}.{_quote(model._meta.get_field(attname).column)}"


def table_sql(model: type[models.Model], *, alias: str) -> str:
    return f"{_quote(model._meta.db_table)} {_quote(alias)}"


def params_prepared(model: type[models.Model], *, values: dict[str, Any]) -> list[Any]:
    """Parameters for columns of `model` in a statement written by hand, prepared as rows_select prepares its
    `where`: in the order of `values`."""
    return _prepared(model, values)


def row_converted(model: type[models.Model], *, attnames: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    """Values read from columns of `model` by a statement written by hand, converted as rows_select converts them:
    {attname: Python value}."""
    attnames = tuple(attnames)
    return _converted(attnames, values, _converters(connection.vendor, model, attnames))


def _converted(attnames: tuple[str, ...], row: Sequence[Any], converters: tuple[tuple, ...]) -> dict[str, Any]:
    values = {}
    for attname, value, (column, column_converters) in zip(attnames, row, converters, strict=True):
        for converter in column_converters:
            value = converter(value, column, connection)
        values[attname] = value
    return values


@functools.cache
def _insert_or_lock_sql(
    vendor: str, model: type[models.Model], attnames: tuple[str, ...], unique: tuple[str, ...], count: int
) -> str:
    fields = _written_fields(model, attnames)
    columns = ", ".join(_quote(field.column) for field in fields)
    if vendor == "postgresql":  # the rows as arrays, one per column, inserted in their order
        arrays = ", ".join(_array_cast(field) for field in fields)
        names = ", ".join(f"c{index}" for index in range(len(fields)))
        rows = f"SELECT {names} FROM unnest({arrays}) WITH ORDINALITY AS r({names}, n) ORDER BY n"
    else:
        row = f"({', '.join(['%s'] * len(attnames))})"
        rows = f"VALUES {', '.join([row] * count)}"
    unique_columns = ", ".join(_quote(field.column) for field in _fields(model, unique))
    first = _quote(_fields(model, unique)[0].column)
    return (
        f"INSERT INTO {_quote(model._meta.db_table)} ({columns}) {rows} "
        f"ON CONFLICT ({unique_columns}) DO UPDATE SET {first} = EXCLUDED.{first} WHERE 1 = 0 "
        f"RETURNING {unique_columns}"
    )


def rows_insert_or_lock(
    model: type[models.Model], *, rows: Sequence[dict[str, Any]], unique: Sequence[str]
) -> list[dict[str, Any]]:
    """INSERT the rows whose `unique` columns no row has yet, and lock the rows that already have them, one row
    after the other in the order given, in one statement. Returns the `unique` values of the rows it inserted.

    `ON CONFLICT DO UPDATE ... WHERE 1 = 0` updates nothing, but locks the existing row until the transaction ends
    (PostgreSQL: "all rows will be locked when the ON CONFLICT DO UPDATE action is taken"), first waiting for a
    transaction that holds it or is inserting the same key. Callers that give their rows sorted by the unique key
    so take every lock in one global order, and never deadlock with each other. SQLite has one writer at a time.
    `unique` must name the columns of a unique constraint; the rows must not repeat a key.
    """
    if not rows:
        return []
    attnames = tuple(rows[0])
    unique = tuple(unique)
    vendor = connection.vendor
    if vendor == "postgresql":
        sql = _insert_or_lock_sql(vendor, model, attnames, unique, 0)
        params = _prepared_columns(model, rows)
    else:
        sql = _insert_or_lock_sql(vendor, model, attnames, unique, len(rows))
        params = [value for row in _prepared_rows(model, rows) for value in row]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        inserted = cursor.fetchall()
    return [_converted(unique, row, _converters(connection.vendor, model, unique)) for row in inserted]


def rows_insert(model: type[models.Model], *, rows: Sequence[dict[str, Any]]) -> None:
    """INSERT these rows (each with the same columns), as one executemany batch (pipelined by psycopg 3)."""
    if not rows:
        return
    sql = _insert_sql(connection.vendor, model, tuple(rows[0]), False)
    with connection.cursor() as cursor:
        cursor.executemany(sql, _prepared_rows(model, rows))
