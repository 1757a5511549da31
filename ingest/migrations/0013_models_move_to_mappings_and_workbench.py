"""MappingVersion, MappingPublication and ReprocessRun move to mappings/, SourceKeyDrift to workbench/ (issue #20).

Only the migration state moves: each model keeps its table (db_table), so no table is created, dropped, copied or
rewritten. mappings/0001 and workbench/0001 take the models into their state."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("ingest", "0012_raw_push_outcome"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="SourceKeyDrift"),
                migrations.DeleteModel(name="MappingPublication"),
                migrations.DeleteModel(name="ReprocessRun"),
                migrations.DeleteModel(name="MappingVersion"),
            ],
            database_operations=[],
        ),
    ]
