"""The replay's order becomes the writing transaction's xid (set by a trigger on PostgreSQL), served only below the
readers' horizon as the change log is (projects/change_log.py): exact, where a settle delay was not. Events
stored before keep xid 0 and stay first, in their (created_at, id) order."""

from django.db import migrations, models

POSTGRESQL_FORWARD = """
CREATE FUNCTION webhooks_event_writer_xid() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.writer_xid := pg_current_xact_id()::text::bigint;
    RETURN NEW;
END;
$$;

CREATE TRIGGER webhooks_event_writer_xid_insert BEFORE INSERT ON webhooks_webhookevent
FOR EACH ROW EXECUTE FUNCTION webhooks_event_writer_xid();
"""

POSTGRESQL_BACKWARD = """
DROP TRIGGER IF EXISTS webhooks_event_writer_xid_insert ON webhooks_webhookevent;
DROP FUNCTION IF EXISTS webhooks_event_writer_xid();
"""


def writer_xid_trigger_create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL_FORWARD)


def writer_xid_trigger_drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRESQL_BACKWARD)


class Migration(migrations.Migration):

    dependencies = [
        ('partners', '0002_clearance_readiness'),
        ('webhooks', '0004_delivery_retry_index'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='webhookevent',
            name='webhook_event_replay_idx',
        ),
        migrations.RemoveIndex(
            model_name='webhookevent',
            name='webhook_event_type_replay_idx',
        ),
        migrations.AddField(
            model_name='webhookevent',
            name='writer_xid',
            field=models.BigIntegerField(db_default=0, editable=False),
        ),
        migrations.AddIndex(
            model_name='webhookevent',
            index=models.Index(fields=['partner', 'environment', 'writer_xid', 'created_at', 'id'], name='webhook_event_replay_idx'),
        ),
        migrations.AddIndex(
            model_name='webhookevent',
            index=models.Index(fields=['partner', 'environment', 'type', 'writer_xid', 'created_at', 'id'], name='webhook_event_type_replay_idx'),
        ),
        migrations.RunPython(writer_xid_trigger_create, writer_xid_trigger_drop),
    ]
