import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from projects.change_log import followers_visible
from projects.models import Project
from tests.conftest import SANDBOX, url


@pytest.fixture(autouse=True)
def exports_dir(settings, tmp_path) -> Path:
    """Each test's export files in a directory of its own."""
    location = tmp_path / "exports"
    settings.STORAGES = {
        **settings.STORAGES,
        "exports": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": location}},
    }
    return location


def wait_until_followers_see_every_project(seconds: float = 60) -> None:
    """An export reads through the change log's horizon, as a follower does. On a PostgreSQL cluster that other
    databases share, their transactions can hold the horizon back behind what a test just committed for a moment:
    wait for it before asking for an export whose contents the test states."""
    deadline = time.monotonic() + seconds
    while followers_visible(Project.objects.all()).count() < Project.objects.count():
        assert time.monotonic() < deadline, "the change log's horizon stayed behind the projects"
        time.sleep(0.05)


def ndjson(response) -> list[dict]:
    """The lines of a download, each parsed."""
    text = b"".join(response.streaming_content).decode()
    assert text == "" or text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def export_done(django_capture_on_commit_callbacks) -> Callable[..., dict]:
    """POST an export (its task runs as the request commits, as the immediate backend runs it) and return its
    status as GET answers it."""

    def run(client: APIClient, body: dict | None = None, *, environment: str = SANDBOX) -> dict:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(url(environment, "exports"), body, format="json" if body is not None else None)
        assert response.status_code == 202, response.json()
        status = client.get(response["Location"])
        assert status.status_code == 200, status.json()
        return status.json()

    return run
