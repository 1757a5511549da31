"""A failed export leaves nothing behind, in the temporary directory nor in the exports storage; prune_exports
removes files no export owns (a worker killed between writing a file and recording it), once they are old enough
not to be an export's being written."""

import errno
import io
import os
import time
import uuid
from datetime import timedelta

import pytest
from django.core.files import move
from django.core.management import call_command
from django.utils import timezone

from exports.models import Export
from exports.runs import export_execute
from projects.models import Project
from tests.conftest import SANDBOX

pytestmark = pytest.mark.django_db


class FullVolume:
    """`os` as django.core.files.move sees it with EXPORTS_DIR on another, small file system: the spool cannot be
    renamed into place (EXDEV), so it is copied, and the copy fills the volume after its first write."""

    def __init__(self) -> None:
        self.writes = 0

    def __getattr__(self, name: str):
        return getattr(os, name)

    def rename(self, source, destination) -> None:
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))

    def write(self, fd: int, data: bytes) -> int:
        self.writes += 1
        if self.writes > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return os.write(fd, data)


def test_an_export_that_fills_its_volume_leaves_no_file(partner, exports_dir, tmp_path, settings, monkeypatch):
    Project.objects.bulk_create(
        Project(partner=partner, environment=SANDBOX, external_id=f"HS-{number}", source_data={"notes": "x" * 300})
        for number in range(600)
    )  # about 250 KB: several chunks of the copy
    spool = tmp_path / "spool"
    spool.mkdir()
    settings.EXPORTS_TEMP_DIR = str(spool)
    volume = FullVolume()
    monkeypatch.setattr(move, "os", volume)
    export = Export.objects.create(partner=partner, environment=SANDBOX)

    with pytest.raises(OSError, match="No space left on device"):
        export_execute(export_id=str(export.pk))

    assert volume.writes == 2  # a part was written, as on the full volume
    export.refresh_from_db()
    assert (export.status, export.file_name, export.error) == (
        "failed",
        "",
        "OSError: [Errno 28] No space left on device",
    )
    assert [path for path in exports_dir.rglob("*") if path.is_file()] == []
    assert list(spool.iterdir()) == []


def test_an_export_whose_end_cannot_be_recorded_removes_its_file(partner, exports_dir, settings, monkeypatch):
    Project.objects.create(partner=partner, environment=SANDBOX, external_id="HS-1")
    export = Export.objects.create(partner=partner, environment=SANDBOX)
    update = type(Export.objects.all()).update

    def database_gone_at_the_end(queryset, **fields):
        if fields.get("status") == "done":
            raise OSError("the database went away")
        return update(queryset, **fields)

    monkeypatch.setattr(type(Export.objects.all()), "update", database_gone_at_the_end)

    with pytest.raises(OSError):
        export_execute(export_id=str(export.pk))

    assert [path for path in exports_dir.rglob("*") if path.is_file()] == []


def aged(path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_prune_exports_removes_files_no_export_owns_once_old_enough(
    partner, sandbox_client, exports_dir, settings, django_capture_on_commit_callbacks
):
    Project.objects.create(partner=partner, environment=SANDBOX, external_id="HS-1")
    done = Export.objects.create(partner=partner, environment=SANDBOX)
    export_execute(export_id=str(done.pk))
    done.refresh_from_db()
    running = Export.objects.create(partner=partner, environment=SANDBOX, status="running")
    grace = settings.EXPORT_ORPHAN_GRACE_SECONDS
    files = {
        "owned": exports_dir / done.file_name,
        "orphan": exports_dir / f"sandbox/{uuid.uuid4()}/{uuid.uuid4().hex}.ndjson",
        "orphan beside an owned one": exports_dir / f"sandbox/{done.pk}/{uuid.uuid4().hex}.ndjson",
        "young orphan": exports_dir / f"production/{uuid.uuid4()}/{uuid.uuid4().hex}.ndjson",
        "a running export's": exports_dir / f"sandbox/{running.pk}/{uuid.uuid4().hex}.ndjson",
    }
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if name != "owned":
            path.write_text('{"partial": true}\n')
        aged(path, grace + 60 if name != "young orphan" else grace - 60)
    out = io.StringIO()

    call_command("prune_exports", stdout=out)

    assert out.getvalue() == (
        "Deleted 0 expired export(s); gave up 0 stale one(s); removed 2 file(s) no export owns.\n"
    )
    left = sorted(path.relative_to(exports_dir).as_posix() for path in exports_dir.rglob("*") if path.is_file())
    expected = ["owned", "young orphan", "a running export's"]
    assert left == sorted(files[name].relative_to(exports_dir).as_posix() for name in expected)
    assert not files["orphan"].parent.exists()  # its directory too, once empty
    assert Export.objects.get(pk=done.pk).status == "done"
    assert timezone.now() - Export.objects.get(pk=done.pk).finished_at < timedelta(minutes=5)


def test_a_run_again_removes_the_file_a_killed_run_left_half_copied(partner, exports_dir, settings):
    Project.objects.create(partner=partner, environment=SANDBOX, external_id="HS-1")
    export = Export.objects.create(partner=partner, environment=SANDBOX, status="running")  # its worker was killed
    half_copied = exports_dir / f"sandbox/{export.pk}/{uuid.uuid4().hex}.ndjson"
    half_copied.parent.mkdir(parents=True)
    half_copied.write_text('{"partial"')
    aged(half_copied, settings.WORKER_LEASE_SECONDS + 1)
    being_copied = exports_dir / f"sandbox/{export.pk}/{uuid.uuid4().hex}.ndjson"  # a live run's, written just now
    being_copied.write_text('{"partial"')

    export_execute(export_id=str(export.pk))

    export.refresh_from_db()
    left = sorted(path.relative_to(exports_dir).as_posix() for path in exports_dir.rglob("*") if path.is_file())
    assert left == sorted([export.file_name, being_copied.relative_to(exports_dir).as_posix()])
