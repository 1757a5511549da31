"""How a worker reads an export on PostgreSQL: one REPEATABLE READ READ ONLY transaction, a server-side cursor, and
progress written from another connection while the snapshot is read."""

import json
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from exports import runs
from exports import snapshot as snapshot_module
from exports.models import Export
from exports.runs import export_execute
from projects.models import Project
from tests.conftest import SANDBOX

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the snapshot's transaction is PostgreSQL's"),
]


def read_elsewhere(export_pk) -> Export:
    """The export's row as another connection sees it now."""
    seen = {}

    def read() -> None:
        try:
            seen["export"] = Export.objects.get(pk=export_pk)
        finally:
            connection.close()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    return seen["export"]


def test_a_worker_reads_one_read_only_snapshot_through_a_cursor_and_shows_progress_meanwhile(
    partner, make_project, settings, monkeypatch
):
    settings.EXPORT_PROGRESS_EVERY = 2
    settings.EXPORT_CHUNK_SIZE = 2
    for number in range(5):
        make_project(partner, external_id=f"HS-{number}")
    # As rows written before the change log began: below every horizon, which another database's long transaction
    # on a shared cluster could otherwise hold back behind these for minutes.
    Project.objects.update(change_xid=0)
    export = Export.objects.create(partner=partner, environment=SANDBOX)
    observed: list[tuple] = []
    write = runs.ndjson_export

    def observing_write(projects, out, *, on_progress, **kwargs):
        def progress(done: int) -> None:
            on_progress(done)
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only'), "
                    "(SELECT count(*) FROM pg_cursors)"
                )
                setting = cursor.fetchone()
            deadline = time.monotonic() + 5
            while (seen := read_elsewhere(export.pk)).done != done and time.monotonic() < deadline:
                time.sleep(0.01)
            observed.append((*setting, seen.status, seen.count, seen.done))

        return write(projects, out, on_progress=progress, **kwargs)

    monkeypatch.setattr(runs, "ndjson_export", observing_write)

    export_execute(export_id=str(export.pk))

    assert observed == [
        ("repeatable read", "on", 1, "running", 5, 2),
        ("repeatable read", "on", 1, "running", 5, 4),
    ]
    export.refresh_from_db()
    assert (export.status, export.count, export.done) == ("done", 5, 5)
    with connection.cursor() as cursor:  # the worker's connection is back to the defaults
        cursor.execute("SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')")
        assert cursor.fetchone() == ("read committed", "off")


def test_a_snapshot_that_fails_leaves_the_connection_usable_with_its_defaults(partner, make_project, monkeypatch):
    make_project(partner, external_id="HS-1")
    export = Export.objects.create(partner=partner, environment=SANDBOX)

    def broken(*args, **kwargs):
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1/0")

    monkeypatch.setattr(runs, "ndjson_export", broken)

    with pytest.raises(Exception, match="division by zero"):
        export_execute(export_id=str(export.pk))

    assert Export.objects.get().status == "failed"
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')")
        assert cursor.fetchone() == ("read committed", "off")


def export_bytes(exports_dir, export_pk) -> tuple[Export, bytes]:
    export = Export.objects.get(pk=export_pk)
    assert export.status == "done", export.error
    return export, (exports_dir / export.file_name).read_bytes()


def test_readers_of_one_snapshot_write_the_same_bytes_as_one_reader_whatever_commits_meanwhile(
    partner, make_project, settings, monkeypatch, exports_dir
):
    settings.EXPORT_CHUNK_SIZE = 2  # 13 projects: three ranges of about four rows
    start = datetime(2026, 3, 1, tzinfo=UTC)
    projects = [
        make_project(
            partner,
            external_id=f"HS-{number}",
            updated=start + timedelta(seconds=number // 3),
            name=f"Résidence {number}",
            source_data={"properties": {"ville": "Zürich", "kw": 7.25, "tags": ["a", "b"]}, "n": number},
        )
        for number in range(13)  # three projects a stamp: the ranges are cut between projects of one updatedDate
    ]
    Project.objects.update(change_xid=0)  # below every horizon (see above)
    settings.EXPORT_READERS = 1
    one = Export.objects.create(partner=partner, environment=SANDBOX)
    export_execute(export_id=str(one.pk))
    one, expected = export_bytes(exports_dir, one.pk)

    shared = snapshot_module.snapshot_share
    shares = []

    def share_then_commit_elsewhere() -> str:
        """Once the snapshot is shared and before the other readers import it, another connection commits a change
        in every range, a deletion and a new project."""
        shares.append(shared())

        def write() -> None:
            try:
                Project.objects.filter(external_id="HS-12").update(name="changed", change_xid=0)
                Project.objects.filter(external_id="HS-6").update(name="changed", change_xid=0)
                Project.objects.filter(external_id="HS-1").update(deleted_date=start, change_xid=0)
                make_project(partner, external_id="HS-new", updated=start + timedelta(days=1))
                Project.objects.filter(external_id="HS-new").update(change_xid=0)
            finally:
                connection.close()

        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
        return shares[-1]

    monkeypatch.setattr(snapshot_module, "snapshot_share", share_then_commit_elsewhere)
    settings.EXPORT_READERS = 3
    three = Export.objects.create(partner=partner, environment=SANDBOX)

    export_execute(export_id=str(three.pk))

    three, written = export_bytes(exports_dir, three.pk)
    assert len(shares) == 1
    assert written == expected
    in_order = sorted(projects, key=lambda project: (project.updated_date, project.id))
    assert [json.loads(line)["externalId"] for line in written.splitlines()] == [p.external_id for p in in_order]
    assert (three.count, three.done, three.watermark) == (13, 13, one.watermark)
    assert Project.objects.get(external_id="HS-12").name == "changed"  # committed meanwhile, not exported


def test_a_snapshot_the_other_readers_cannot_import_fails_the_export(partner, make_project, settings, monkeypatch):
    settings.EXPORT_CHUNK_SIZE = 2
    for number in range(8):
        make_project(partner, external_id=f"HS-{number}")
    Project.objects.update(change_xid=0)
    monkeypatch.setattr(snapshot_module, "snapshot_share", lambda: "00000003-0000001B-1")
    export = Export.objects.create(partner=partner, environment=SANDBOX)

    with pytest.raises(Exception, match="invalid snapshot identifier"):
        export_execute(export_id=str(export.pk))

    export.refresh_from_db()
    assert (export.status, export.file_name) == ("failed", "")
    assert export.error == 'DataError: invalid snapshot identifier: "00000003-0000001B-1"'
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')")
        assert cursor.fetchone() == ("read committed", "off")
