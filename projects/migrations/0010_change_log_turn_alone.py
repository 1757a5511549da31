"""A writer overtaken again and again takes its turn alone (projects/change_log.py, `stamped_transaction`).

Every writer now holds a gate, shared, from its reservation to its end; a writer that must go alone takes it
exclusively, in the same call as its stamps: writers that have reserved end first, new ones wait for it.
"""

from django.db import migrations

STAMPS_LOCK = 7_302_114_003  # as in 0007
# Any other constant: the gate every writer passes, shared, and a writer alone, exclusively.
WRITERS_GATE = 7_302_114_004


def reserve_function(gate: str) -> str:
    return f"""
CREATE FUNCTION projects_change_stamps_reserve(n integer, alone boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    first bigint;
BEGIN
    -- Transaction-level, and taken before the stamps lock: a writer may wait here, never while holding that.
    {gate}
    -- Session-level, released three statements on: held while the xid and the stamps are taken, not to commit.
    PERFORM pg_advisory_lock({STAMPS_LOCK});
    PERFORM pg_current_xact_id();
    first := greatest(
        nextval('projects_change_stamp_seq'),
        (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
    );
    PERFORM setval('projects_change_stamp_seq', first + n - 1);
    PERFORM pg_advisory_unlock({STAMPS_LOCK});
    RETURN first;
END
$$;
"""


FORWARD = "DROP FUNCTION projects_change_stamps_reserve(integer);" + reserve_function(
    f"IF alone THEN PERFORM pg_advisory_xact_lock({WRITERS_GATE}); "
    f"ELSE PERFORM pg_advisory_xact_lock_shared({WRITERS_GATE}); END IF;"
)

BACKWARD = "DROP FUNCTION projects_change_stamps_reserve(integer, boolean);" + reserve_function("").replace(
    "(n integer, alone boolean DEFAULT false)", "(n integer)"
)


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("projects", "0009_platform_changes_index")]

    operations = [migrations.RunPython(forward, backward)]
