"""The background side of an export: failure, running twice, pruning, the admin."""

import io
from datetime import timedelta
from http import HTTPStatus

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from exports import runs
from exports.models import Export
from exports.runs import export_execute
from partners.models import ClientId
from tests.conftest import SANDBOX, url
from tests.exports.conftest import ndjson

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(partner, make_project):
    return make_project(partner, external_id="HS-1", source_data={"a": 1})


def test_a_failing_run_is_reported_as_failed(sandbox_client, project, monkeypatch, django_capture_on_commit_callbacks):
    def broken(*args, **kwargs):
        raise OSError("No space left on device")

    monkeypatch.setattr(runs, "ndjson_export", broken)
    with django_capture_on_commit_callbacks(execute=True):
        export_id = sandbox_client.post(url(SANDBOX, "exports")).json()["id"]

    response = sandbox_client.get(url(SANDBOX, "export", export_id=export_id))

    assert response.status_code == HTTPStatus.OK
    assert response.json() == {
        "id": export_id,
        "status": "failed",
        "count": None,  # progress is written from another connection, which a test's transaction hides
        "done": 0,
        "downloadUrl": None,
        "expiresAt": None,
        "watermark": None,
    }
    export = Export.objects.get()
    assert export.error == "OSError: No space left on device"
    assert export.expires_at - export.finished_at == timedelta(days=1)  # pruned like a done one


def test_a_failed_run_leaves_no_file_behind(sandbox_client, project, monkeypatch, exports_dir, tmp_path, settings):
    settings.EXPORTS_TEMP_DIR = str(tmp_path / "spool")
    (tmp_path / "spool").mkdir()
    monkeypatch.setattr(runs.exports_storage(), "save", lambda *args, **kwargs: 1 / 0)
    export = Export.objects.create(partner=project.partner, environment=SANDBOX)

    with pytest.raises(ZeroDivisionError):
        export_execute(export_id=str(export.pk))

    assert list((tmp_path / "spool").iterdir()) == []
    assert not exports_dir.exists() or list(exports_dir.rglob("*")) == []
    assert Export.objects.get().status == "failed"


def test_a_finished_export_is_not_run_again(sandbox_client, project, export_done, exports_dir):
    status = export_done(sandbox_client)
    files = sorted(exports_dir.rglob("*.ndjson"))

    export_execute(export_id=status["id"])

    assert sorted(exports_dir.rglob("*.ndjson")) == files
    assert sandbox_client.get(url(SANDBOX, "export", export_id=status["id"])).json() == status


def test_a_run_whose_worker_died_is_carried_out_anew(sandbox_client, project, exports_dir):
    export = Export.objects.create(partner=project.partner, environment=SANDBOX, status="running", count=5, done=2)

    export_execute(export_id=str(export.pk))

    status = sandbox_client.get(url(SANDBOX, "export", export_id=str(export.pk))).json()
    assert (status["status"], status["count"], status["done"]) == ("done", 1, 1)
    assert len(list(exports_dir.rglob("*.ndjson"))) == 1


def test_of_two_runs_at_once_the_first_to_finish_is_kept(sandbox_client, user, project, exports_dir, monkeypatch):
    """A run that finds its export done when it finishes (another run was quicker) deletes its own file."""
    export = Export.objects.create(
        partner=project.partner, environment=SANDBOX, requested_by=user, requested_with=ClientId.objects.get()
    )
    write = runs._export_write

    def quicker_run_first(export_to_write):
        written = write(export_to_write)
        monkeypatch.setattr(runs, "_export_write", write)
        export_execute(export_id=str(export.pk))  # the other run, start to end, while this one hands its file over
        return written

    monkeypatch.setattr(runs, "_export_write", quicker_run_first)
    export_execute(export_id=str(export.pk))

    export.refresh_from_db()
    assert export.status == "done"
    assert [path.relative_to(exports_dir).as_posix() for path in exports_dir.rglob("*.ndjson")] == [export.file_name]
    link = sandbox_client.get(url(SANDBOX, "export", export_id=str(export.pk))).json()["downloadUrl"]
    assert [line["externalId"] for line in ndjson(sandbox_client.get(link))] == ["HS-1"]


def test_an_export_deleted_before_its_run_is_skipped(project):
    export_execute(export_id="00000000-0000-0000-0000-000000000000")


def test_prune_exports_deletes_expired_exports_and_their_files_and_gives_up_stale_runs(
    sandbox_client, project, export_done, exports_dir, settings
):
    kept = export_done(sandbox_client)["id"]
    expired = export_done(sandbox_client)["id"]
    Export.objects.filter(pk=expired).update(expires_at=timezone.now() - timedelta(seconds=1))
    stale = Export.objects.create(
        partner=project.partner,
        environment=SANDBOX,
        status="running",
        requested_at=timezone.now() - timedelta(seconds=settings.EXPORT_STALE_AFTER_SECONDS + 1),
    )
    waiting = Export.objects.create(partner=project.partner, environment=SANDBOX)
    out = io.StringIO()

    call_command("prune_exports", stdout=out)

    assert out.getvalue() == "Deleted 1 expired export(s); gave up 1 stale one(s); removed 0 file(s) no export owns.\n"
    assert set(Export.objects.values_list("pk", "status")) == {
        (Export.objects.get(pk=kept).pk, "done"),
        (stale.pk, "failed"),
        (waiting.pk, "queued"),
    }
    assert [path.relative_to(exports_dir).as_posix() for path in exports_dir.rglob("*.ndjson")] == [
        Export.objects.get(pk=kept).file_name
    ]
    assert Export.objects.get(pk=stale.pk).error == "Given up by prune_exports: its worker stopped before it was done."


def test_operators_see_exports_and_deleting_one_deletes_its_file(
    admin_client, sandbox_client, project, export_done, exports_dir
):
    export_id = export_done(sandbox_client)["id"]

    listing = admin_client.get(reverse("admin:exports_export_changelist"))
    page = admin_client.get(reverse("admin:exports_export_change", args=[export_id]))
    deleted = admin_client.post(reverse("admin:exports_export_delete", args=[export_id]), {"post": "yes"})

    assert (listing.status_code, page.status_code, deleted.status_code) == (200, 200, 302)
    assert "Sunrise Solar EPC" in listing.content.decode()
    assert not Export.objects.exists()
    assert list(exports_dir.rglob("*.ndjson")) == []
