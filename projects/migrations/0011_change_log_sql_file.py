"""The change log's SQL now lives in one readable file, projects/sql/change_log.sql, and this applies it: the same
sequence, functions and triggers that 0007 created and 0010 redefined, so nothing changes in a database that has
them (the functions' text is the same; the file's statements replace what they define).

To change the change log's SQL: edit the file, then add a migration like this one, with the file's new digest
(`sha256sum projects/sql/change_log.sql`). tests/projects/test_change_log_sql.py fails until both are done.
"""

from django.db import migrations

from projects.sql import change_log_sql_apply


class Migration(migrations.Migration):
    dependencies = [("projects", "0010_change_log_turn_alone")]

    operations = [migrations.RunPython(change_log_sql_apply, migrations.RunPython.noop)]

    # The file as this migration applied it when written: the newest such digest must be the file's.
    change_log_sql_sha256 = "b94fb651bfe193a1c9c9c3a8cf1135b03a202d2a8c518382dd6f5f4856d500d3"
