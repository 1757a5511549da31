"""SourceKeyDrift moves to readiness/ (issue #29). Only the migration state moves: the model keeps its table
(db_table "ingest_sourcekeydrift"), so no table is created, dropped, copied or rewritten. readiness/0001 takes the
model into its state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("workbench", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="SourceKeyDrift")],
            database_operations=[],
        ),
    ]
