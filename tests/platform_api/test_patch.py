"""PATCH projects/{id}: the platform's own fields, a JSON merge patch under If-Match (CONTRACT §13)."""

import json
import uuid
from datetime import UTC, datetime
from http import HTTPStatus

import pytest

from audit.models import AuditEvent
from platform_api.models import PlatformKey
from platform_api.services import project_etag, project_platform_update
from projects.errors import ProjectGone
from projects.models import Project
from tests.conftest import PLATFORM_UNSET, SANDBOX, problem, url
from tests.platform_api.conftest import platform_url
from webhooks.models import WebhookEvent
from webhooks.services import webhook_endpoint_create

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ALLOWED = "stage, milestones, note"
STAGES = (
    "site_survey, design, permitting, procurement, installation, inspection, interconnection, pto, completed, "
    "on_hold, cancelled"
)
MILESTONES = (
    "siteSurveyDate, designCompletedDate, permitSubmittedDate, permitApprovedDate, installScheduledDate, "
    "installCompletedDate, inspectionPassedDate, ptoDate"
)


@pytest.fixture
def project(partner, make_project) -> Project:
    return make_project(partner, environment=SANDBOX, external_id="HS-1", submitted=T0, updated=T0, name="Lee")


def detail(project: Project) -> str:
    return platform_url("project-detail", project_id=str(project.pk))


def patch(client, project: Project, body, *, if_match: str | None = None, content_type="application/json"):
    headers = {"HTTP_IF_MATCH": project_etag(project) if if_match is None else if_match}
    if if_match == "":
        headers = {}
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.generic("PATCH", detail(project), data, content_type=content_type, **headers)


def bad_request(response, errors: list[dict]) -> None:
    assert response.status_code == HTTPStatus.BAD_REQUEST, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == errors


def test_a_patch_sets_the_fields_moves_updated_date_and_answers_the_project_with_its_new_etag(platform_client, project):
    response = patch(
        platform_client,
        project,
        {"stage": "permitting", "milestones": {"siteSurveyDate": "2026-03-05"}, "note": "HOA approval pending"},
        content_type="application/merge-patch+json",
    )

    project.refresh_from_db()
    assert response.status_code == HTTPStatus.OK
    assert project.updated_date > T0
    assert project.platform_updated_date == project.updated_date
    assert response["ETag"] == project_etag(project) != f'"{int(T0.timestamp() * 1_000_000)}"'
    body = response.json()
    assert body["updatedDate"] == project.updated_date.isoformat().replace("+00:00", "Z")
    assert body["platform"] == {
        "stage": "permitting",
        "milestones": {**PLATFORM_UNSET["milestones"], "siteSurveyDate": "2026-03-05"},
        "note": "HOA approval pending",
        "updatedDate": body["updatedDate"],
    }
    assert body["name"] == "Lee" and body["partner"] == "sunrise" and body["environment"] == "sandbox"
    assert platform_client.get(detail(project)).json() == body


def test_the_partner_pulls_the_platform_fields_on_its_own_root(platform_client, sandbox_client, project):
    patch(platform_client, project, {"stage": "design", "milestones": {"permitApprovedDate": "2026-04-01"}})

    pulled = sandbox_client.get(url(SANDBOX, "project-detail", project_id=str(project.pk))).json()
    listed = sandbox_client.get(url(SANDBOX, "project-list")).json()["items"][0]

    assert pulled["platform"]["stage"] == "design"
    assert pulled["platform"]["milestones"]["permitApprovedDate"] == "2026-04-01"
    assert listed["platform"] == pulled["platform"]
    assert "partner" not in pulled  # the partner's own root says nothing of whose it is


def test_merge_patch_keeps_what_it_leaves_out_and_null_clears(platform_client, project):
    patch(
        platform_client,
        project,
        {"stage": "design", "note": "n", "milestones": {"siteSurveyDate": "2026-03-05", "ptoDate": "2026-09-01"}},
    )
    project.refresh_from_db()

    response = patch(platform_client, project, {"milestones": {"ptoDate": None}, "note": None})
    assert response.json()["platform"]["stage"] == "design"
    assert response.json()["platform"]["note"] is None
    assert response.json()["platform"]["milestones"] == {**PLATFORM_UNSET["milestones"], "siteSurveyDate": "2026-03-05"}
    project.refresh_from_db()

    response = patch(platform_client, project, {"milestones": None})
    assert response.json()["platform"]["milestones"] == PLATFORM_UNSET["milestones"]
    assert response.json()["platform"]["stage"] == "design"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="empty"),
        pytest.param({"stage": None, "note": None, "milestones": None}, id="nulls-over-nulls"),
    ],
)
def test_a_patch_that_changes_nothing_keeps_updated_date_and_etag_and_tells_no_one(platform_client, project, body):
    etag = project_etag(project)

    response = patch(platform_client, project, body)

    project.refresh_from_db()
    assert response.status_code == HTTPStatus.OK
    assert response["ETag"] == etag
    assert project.updated_date == T0 and project.platform_updated_date is None
    assert response.json()["updatedDate"] == "2026-03-01T12:00:00Z"
    assert not AuditEvent.objects.filter(action="platform_write").exists()


def test_the_same_values_again_change_nothing(platform_client, project):
    patch(platform_client, project, {"stage": "design", "milestones": {"ptoDate": "2026-09-01"}})
    project.refresh_from_db()
    etag, updated = project_etag(project), project.updated_date

    response = patch(platform_client, project, {"stage": "design", "milestones": {"ptoDate": "2026-09-01"}})

    project.refresh_from_db()
    assert response["ETag"] == etag and project.updated_date == updated


def test_a_change_writes_a_project_updated_event_with_changed_fields_and_an_audit_entry(
    platform_client, project, partner, settings
):
    settings.WEBHOOK_ALLOW_PRIVATE_URLS = True
    webhook_endpoint_create(partner=partner, environment=SANDBOX, url="http://127.0.0.1:9/hooks")

    response = patch(
        platform_client,
        project,
        {"note": "x", "milestones": {"ptoDate": "2026-09-01", "permitApprovedDate": "2026-04-01"}, "stage": "pto"},
    )

    (event,) = WebhookEvent.objects.all()
    body = json.loads(event.body)
    fields = [
        "platform.stage",
        "platform.milestones.permitApprovedDate",
        "platform.milestones.ptoDate",
        "platform.note",
    ]
    assert event.type == "project.updated"
    assert body["changedFields"] == fields
    assert body["data"] == {
        key: value for key, value in response.json().items() if key not in {"partner", "environment"}
    }
    assert body["timestamp"] == response.json()["updatedDate"]
    (audit,) = AuditEvent.objects.filter(action="platform_write")
    assert audit.partner == partner and audit.actor is None
    assert audit.summary == f"Platform key 'platform-sync' changed {', '.join(fields)} of project HS-1 (sandbox)"
    assert audit.details == {"key": "platform-sync", "project": str(project.pk), "fields": fields}


def test_without_if_match_is_428(platform_client, project):
    response = patch(platform_client, project, {"stage": "design"}, if_match="")

    assert response.status_code == HTTPStatus.PRECONDITION_REQUIRED
    assert response["Content-Type"] == "application/problem+json"
    assert response.json() == problem(
        428,
        "Send If-Match with the ETag of the project as you last read it (GET projects/{id}).",
        "if_match_required",
    )


@pytest.mark.parametrize(
    "if_match",
    [
        pytest.param('"1"', id="stale"),
        pytest.param("W/{current}", id="weak-never-matches"),
        pytest.param("{bare}", id="unquoted"),
        pytest.param('"1", "2"', id="none-of-a-list"),
    ],
)
def test_a_stale_etag_is_412_with_the_current_etag_and_changes_nothing(platform_client, project, if_match):
    current = project_etag(project)

    response = patch(
        platform_client, project, {"stage": "design"}, if_match=if_match.format(current=current, bare=current[1:-1])
    )

    assert response.status_code == HTTPStatus.PRECONDITION_FAILED
    assert response["Content-Type"] == "application/problem+json"
    assert response["ETag"] == current
    assert response.json() == {
        **problem(
            412,
            "The project changed since you read it: If-Match does not match its current ETag. GET it again, "
            "re-apply your change to what it is now, and send it with the new ETag.",
            "etag_mismatch",
        ),
        "etag": current,
    }
    project.refresh_from_db()
    assert project.platform_stage is None and project.updated_date == T0


@pytest.mark.parametrize("if_match", ['"1", {current}', "*"])
def test_if_match_takes_a_list_or_any(platform_client, project, if_match):
    response = patch(
        platform_client, project, {"stage": "design"}, if_match=if_match.format(current=project_etag(project))
    )

    assert response.status_code == HTTPStatus.OK


def test_the_etag_read_before_another_write_is_stale_after_it(platform_client, project):
    etag = platform_client.get(detail(project))["ETag"]
    assert patch(platform_client, project, {"stage": "design"}, if_match=etag).status_code == HTTPStatus.OK

    response = patch(platform_client, project, {"stage": "pto"}, if_match=etag)

    assert response.status_code == HTTPStatus.PRECONDITION_FAILED
    assert response.json()["etag"] == platform_client.get(detail(project))["ETag"] != etag


PARTNER_FIELD = f"Not the platform's to change: the partner's CRM owns it. The platform may change {ALLOWED}."


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"systemSizeKw": "9"}, [{"field": "systemSizeKw", "message": PARTNER_FIELD}]),
        ({"name": "X", "stage": "design"}, [{"field": "name", "message": PARTNER_FIELD}]),
        ({"data": {}}, [{"field": "data", "message": PARTNER_FIELD}]),
        ({"updatedDate": "2026-01-01"}, [{"field": "updatedDate", "message": PARTNER_FIELD}]),
        (
            {"platform": {"stage": "design"}},
            [
                {
                    "field": "platform",
                    "message": f"Send the platform's fields at the top level of the patch ({ALLOWED}), not under "
                    "'platform'.",
                }
            ],
        ),
        ({"stagee": "design"}, [{"field": "stagee", "message": f"Unknown field; the platform may change {ALLOWED}."}]),
        ({"stage": "built"}, [{"field": "stage", "message": f"Must be one of {STAGES}, or null."}]),
        ({"stage": 3}, [{"field": "stage", "message": f"Must be one of {STAGES}, or null."}]),
        ({"stage": "DESIGN"}, [{"field": "stage", "message": f"Must be one of {STAGES}, or null."}]),
        ({"note": "x" * 2001}, [{"field": "note", "message": "Must be text of at most 2000 characters, or null."}]),
        ({"note": 5}, [{"field": "note", "message": "Must be text of at most 2000 characters, or null."}]),
        (
            {"milestones": "2026-01-01"},
            [{"field": "milestones", "message": "Must be an object of milestone dates, or null to clear them all."}],
        ),
        (
            {"milestones": {"permitDate": "2026-01-01"}},
            [{"field": "milestones.permitDate", "message": f"Unknown milestone; the milestones are {MILESTONES}."}],
        ),
        *[
            (
                {"milestones": {"ptoDate": value}},
                [{"field": "milestones.ptoDate", "message": "Must be a date written YYYY-MM-DD, or null."}],
            )
            for value in ["2026-02-30", "2026-1-5", "05/01/2026", "2026-05-01T00:00:00Z", 20260501, "", "0000-01-01"]
        ],
        (
            {"stage": "x", "note": [], "milestones": {"ptoDate": "soon"}, "city": "Portland"},
            [
                {"field": "city", "message": PARTNER_FIELD},
                {"field": "stage", "message": f"Must be one of {STAGES}, or null."},
                {"field": "milestones.ptoDate", "message": "Must be a date written YYYY-MM-DD, or null."},
                {"field": "note", "message": "Must be text of at most 2000 characters, or null."},
            ],
        ),
    ],
)
def test_bad_keys_and_values_are_400_naming_each_and_change_nothing(platform_client, project, body, errors):
    bad_request(patch(platform_client, project, body), errors)

    project.refresh_from_db()
    assert project.platform_stage is None and project.platform_note is None and project.updated_date == T0


def test_a_note_of_2000_characters_is_taken(platform_client, project):
    response = patch(platform_client, project, {"note": "é" * 2000})

    assert response.status_code == HTTPStatus.OK
    assert response.json()["platform"]["note"] == "é" * 2000


@pytest.mark.parametrize("body", ["[]", '"design"', "null", "3", '[{"stage": "design"}]'])
def test_a_body_that_is_not_a_json_object_is_400(platform_client, project, body):
    bad_request(
        patch(platform_client, project, body),
        [{"field": "", "message": "The body must be a JSON object: a merge patch of stage, milestones and note."}],
    )


def test_a_body_that_is_not_json_is_400(platform_client, project):
    response = patch(platform_client, project, '{"stage": ')

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "parse_error"


@pytest.mark.parametrize("content_type", ["application/json", "application/merge-patch+json"])
def test_an_empty_body_is_400_not_an_empty_patch(platform_client, project, content_type):
    # A client that lost its body must not read 200 as "written"; `{}` is how to send nothing (kept as a 200).
    response = patch(platform_client, project, b"", content_type=content_type)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "parse_error"
    assert response.json()["detail"] == (
        "The body is empty: send a JSON object, a merge patch of stage, milestones and note."
    )


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/*", ""])
def test_another_content_type_is_415(platform_client, project, content_type):
    response = patch(platform_client, project, '{"stage": "design"}', content_type=content_type)

    assert response.status_code == HTTPStatus.UNSUPPORTED_MEDIA_TYPE
    assert response["Content-Type"] == "application/problem+json"
    project.refresh_from_db()
    assert project.platform_stage is None


def test_a_deleted_project_is_410(platform_client, project):
    Project.objects.filter(pk=project.pk).update(deleted_date=T0)

    response = patch(platform_client, project, {"stage": "design"})

    assert response.status_code == HTTPStatus.GONE
    assert response.json()["deletedDate"] == "2026-03-01T12:00:00Z"
    assert response.json()["code"] == "project_deleted"


def test_a_project_deleted_once_located_is_410_as_the_platform_is_told(project, platform_key):
    Project.objects.filter(pk=project.pk).update(deleted_date=T0)

    with pytest.raises(ProjectGone) as gone:
        project_platform_update(
            project=project, if_match="*", changes={"platform_stage": "design"}, platform_key=PlatformKey.objects.get()
        )

    assert (gone.value.status_code, gone.value.code) == (HTTPStatus.GONE, "project_deleted")
    assert gone.value.detail == "The project was deleted by its partner's CRM; it is kept, but cannot be changed."
    assert gone.value.extensions == {"deletedDate": "2026-03-01T12:00:00Z"}


def test_an_unknown_project_is_404(platform_client):
    response = platform_client.patch(
        platform_url("project-detail", project_id=str(uuid.uuid4())), {}, format="json", HTTP_IF_MATCH="*"
    )

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json() == problem(404, "No project with this id exists.", "not_found")
