"""An erasure racing pushes of the same project, batches holding it, a reprocessing run and an export, as real
HTTP requests to a live server and real threads on PostgreSQL: afterwards no marker of the erased project is in any
table or file, every push answered before the erasure is gone with it, every one after was refused, and the
other project pushed meanwhile is whole."""

import json
import threading
import urllib.error
import urllib.parse
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from exports.models import Export
from exports.runs import export_execute
from ingest.models import RawPush
from mappings.reprocessing import projects_reprocess
from mappings.services import mapping_document_import
from projects.models import Project
from tests.conftest import SANDBOX, token_for, url
from tests.erasure.test_erasure_everywhere import files_holding, tables_holding

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and real concurrency need PostgreSQL"),
]

PUSHERS = 4
ROUNDS = 4


@pytest.fixture
def unlimited(settings, tmp_path):
    settings.CLIENT_ID_RATE_LIMIT_PER_MINUTE = 0
    settings.ERASURE_RATE_LIMIT_PER_MINUTE = 0
    settings.EXPORTS_TEMP_DIR = str(tmp_path / "spool")
    (tmp_path / "spool").mkdir()
    settings.STORAGES = {
        **settings.STORAGES,
        "exports": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": tmp_path / "x"}},
    }
    return tmp_path


def test_an_erasure_racing_pushes_batches_a_reprocess_and_an_export_leaves_no_marker(
    live_server, partner, user, sandbox_key, unlimited
):
    mapping_document_import(partner=partner, document={"fields": {"name": {"source": "title", "type": "string"}}})
    headers = {"Authorization": f"Bearer {token_for(user, SANDBOX)}", "ClientID": sandbox_key}
    base = live_server.url + url(SANDBOX, "push").removesuffix("externals/push")

    def call(method: str, path: str, body: object) -> tuple[int, dict]:
        request = urllib.request.Request(
            base + path,
            data=json.dumps(body).encode(),
            headers={**headers, "Content-Type": "application/json"},
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            text = error.read()
            assert text, (error.code, path)
            assert text.startswith(b"{"), (error.code, path, text[-300:])
            return error.code, json.loads(text)

    def in_own_connection(function):
        try:
            return function()
        finally:
            connections.close_all()

    statuses = {}
    for round_number in range(ROUNDS):
        erased_id, kept_id = f"ERASE/{round_number}", f"KEEP-{round_number}"
        erased_marker, kept_marker = f"MARKE{uuid.uuid4().hex}", f"MARKK{uuid.uuid4().hex}"
        assert call("POST", "externals/push", {"id": erased_id, "data": {"title": f"{erased_marker}-first"}})[0] == 201
        export = Export.objects.create(partner=partner, environment=SANDBOX)
        barrier = threading.Barrier(PUSHERS + 4)

        def racer(
            number: int,
            barrier=barrier,
            erased_id=erased_id,
            kept_id=kept_id,
            erased_marker=erased_marker,
            kept_marker=kept_marker,
            export=export,
        ) -> tuple[str, int, dict | None]:
            barrier.wait(timeout=10)
            if number < PUSHERS // 2:
                body = {"id": erased_id, "data": {"title": f"{erased_marker}-{number}"}}
                return ("push", *call("POST", "externals/push", body))
            if number < PUSHERS:
                records = [
                    {"id": kept_id, "data": {"title": f"{kept_marker}-{number}"}},
                    {"id": erased_id, "data": {"notes": f"{erased_marker}-batch-{number}"}},
                ]
                return ("batch", *call("POST", "externals/push/batch", {"records": records}))
            if number == PUSHERS:
                return (
                    "erase",
                    *call(
                        "POST",
                        f"externals/projects/{urllib.parse.quote(erased_id, safe='')}/erasure",
                        {"reason": "race"},
                    ),
                )
            if number == PUSHERS + 1:
                in_own_connection(lambda: projects_reprocess(partner=partner, environment=SANDBOX, batch_size=1))
                return ("reprocess", 0, None)
            if number == PUSHERS + 2:
                in_own_connection(lambda: export_execute(export_id=str(export.pk)))
                return ("export", 0, None)
            return ("push-kept", *call("POST", "externals/push", {"id": kept_id, "data": {"city": kept_marker}}))

        with ThreadPoolExecutor(PUSHERS + 4) as pool:
            outcomes = list(pool.map(racer, range(PUSHERS + 4)))

        erased = Project.objects.get(external_id=erased_id)
        (erasure,) = [(status, body) for kind, status, body in outcomes if kind == "erase"]
        assert erasure[0] == 200, erasure
        assert erasure[1]["erasedDate"] is not None and erased.erased_date is not None
        for kind, status, body in outcomes:
            if kind == "push":
                assert status in (200, 410), (status, body)
            if kind == "batch":
                assert [result["status"] for result in body["results"]][1] in (200, 410), body
                assert body["results"][0]["status"] in (200, 201), body
        # Nothing of it anywhere; the other project whole.
        assert tables_holding(erased_marker) == set()
        assert files_holding(erased_marker, unlimited) == []
        assert RawPush.objects.filter(project=erased).count() == 0
        assert erased.source_data == {} and erased.name is None
        kept = Project.objects.get(external_id=kept_id)
        assert kept.source_data["city"] == kept_marker and kept.erased_date is None
        assert RawPush.objects.filter(project=kept).count() == PUSHERS // 2 + 1
        # The export was done before the erasure (withdrawn: its file deleted), took its snapshot after it (kept),
        # or ran across it (failed, withdrawn, its file deleted).
        export.refresh_from_db()
        assert export.status in ("done", "failed")
        files = list((unlimited / "x").rglob("*.ndjson"))
        if export.withdrawn_at is None:
            assert export.status == "done" and [path.name for path in files] == [export.file_name.split("/")[-1]]
        else:
            assert files == []
        assert len(list((unlimited / "spool").iterdir())) == 0
        statuses[(export.status, export.withdrawn_at is None)] = (
            statuses.get((export.status, export.withdrawn_at is None), 0) + 1
        )
        for path in files:
            path.unlink()
    print("export outcomes (status, kept):", statuses)
