"""One change log (projects/change_log.py): stamps from one sequence on PostgreSQL, reserved together with the
transaction's xid, and the writing xid recorded on every project row whose updatedDate moves. SQLite keeps its
last stamp in a one-row table. Both start after the newest updatedDate stored, so no new stamp falls behind one
a follower has already seen."""

from datetime import UTC, datetime, timedelta

from django.db import migrations, models
from django.db.models import Max

# Any constant: the advisory lock that makes "take an xid, take stamps" one step for each writer.
STAMPS_LOCK = 7_302_114_003

POSTGRESQL_FORWARD = f"""
CREATE SEQUENCE projects_change_stamp_seq AS bigint;

CREATE FUNCTION projects_change_stamps_reserve(n integer) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    first bigint;
BEGIN
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

CREATE FUNCTION projects_project_change_xid() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.change_xid := pg_current_xact_id()::text::bigint;
    RETURN NEW;
END
$$;

CREATE TRIGGER projects_project_change_xid_insert BEFORE INSERT ON projects_project
FOR EACH ROW EXECUTE FUNCTION projects_project_change_xid();

CREATE TRIGGER projects_project_change_xid_update BEFORE UPDATE OF updated_date ON projects_project
FOR EACH ROW WHEN (NEW.updated_date IS DISTINCT FROM OLD.updated_date)
EXECUTE FUNCTION projects_project_change_xid();
"""

POSTGRESQL_BACKWARD = """
DROP TRIGGER IF EXISTS projects_project_change_xid_update ON projects_project;
DROP TRIGGER IF EXISTS projects_project_change_xid_insert ON projects_project;
DROP FUNCTION IF EXISTS projects_project_change_xid();
DROP FUNCTION IF EXISTS projects_change_stamps_reserve(integer);
DROP SEQUENCE IF EXISTS projects_change_stamp_seq;
"""

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def change_log_create(apps, schema_editor):
    Project = apps.get_model("projects", "Project")
    newest = Project.objects.aggregate(newest=Max("updated_date"))["newest"]
    last = (newest - EPOCH) // timedelta(microseconds=1) if newest else 0
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL_FORWARD)
        if last:
            schema_editor.execute("SELECT setval('projects_change_stamp_seq', %s)", [last])
    elif last:
        apps.get_model("projects", "ChangeStampCounter").objects.create(id=1, last_stamp=last)


def change_log_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL_BACKWARD)


class Migration(migrations.Migration):

    dependencies = [
        ('projects', '0006_deleted_date_and_platform_fields'),
    ]

    operations = [
        migrations.CreateModel(
            name='ChangeStampCounter',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('last_stamp', models.BigIntegerField()),
            ],
        ),
        migrations.AddField(
            model_name='project',
            name='change_xid',
            field=models.BigIntegerField(default=0, editable=False),
        ),
        migrations.DeleteModel(
            name='ChangeClock',
        ),
        migrations.RunPython(change_log_create, change_log_drop),
    ]
