"""How a worker reads an export on PostgreSQL: one REPEATABLE READ READ ONLY transaction, a server-side cursor, and
progress written from another connection while the snapshot is read."""

import threading
import time

import pytest
from django.db import connection

from exports import services
from exports.models import Export
from exports.services import export_execute
from projects.models import Project
from tests.conftest import SANDBOX

pytestmark = [
    pytest.mark.django_db(transaction=True),
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
    write = services.ndjson_write

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

    monkeypatch.setattr(services, "ndjson_write", observing_write)

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

    monkeypatch.setattr(services, "ndjson_write", broken)

    with pytest.raises(Exception, match="division by zero"):
        export_execute(export_id=str(export.pk))

    assert Export.objects.get().status == "failed"
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')")
        assert cursor.fetchone() == ("read committed", "off")
