"""GET changes: every partner's projects of one environment, in the change order, resumable by cursor."""

from datetime import UTC, datetime, timedelta
from http import HTTPStatus

import pytest

from platform_api.cursors import change_cursor, change_position
from projects.representation import project_representation
from tests.conftest import PRODUCTION, SANDBOX
from tests.platform_api.conftest import platform_url

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def changes(client, **params):
    response = client.get(platform_url("changes"), params)
    assert response.status_code == HTTPStatus.OK, response.content
    return response.json()


def invalid(client, errors: list[dict], **params) -> None:
    response = client.get(platform_url("changes"), params)
    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"] == errors


@pytest.fixture
def feed(partner, other_partner, make_project):
    """Production projects of two partners interleaved in time, a deleted one, and sandbox ones apart."""
    return {
        "created": make_project(partner, environment=PRODUCTION, external_id="A", submitted=at(1), updated=at(1)),
        "updated": make_project(other_partner, environment=PRODUCTION, external_id="B", submitted=at(0), updated=at(2)),
        "deleted": make_project(
            partner, environment=PRODUCTION, external_id="C", submitted=at(0), updated=at(3), deleted_date=at(3)
        ),
        "sandbox": make_project(partner, environment=SANDBOX, external_id="S", submitted=at(0), updated=at(0)),
    }


def test_one_page_has_every_partners_changes_in_order_with_type_and_body(platform_client, feed):
    body = changes(platform_client)

    created, updated, deleted = feed["created"], feed["updated"], feed["deleted"]
    cursors = [change_cursor(updated_date=p.updated_date, project_id=p.id) for p in (created, updated, deleted)]
    assert body == {
        "items": [
            {
                "cursor": cursors[0],
                "partner": "sunrise",
                "environment": "production",
                "type": "project.created",
                "project": {**project_representation(created), "partner": "sunrise"},
            },
            {
                "cursor": cursors[1],
                "partner": "helios",
                "environment": "production",
                "type": "project.updated",
                "project": {**project_representation(updated), "partner": "helios"},
            },
            {
                "cursor": cursors[2],
                "partner": "sunrise",
                "environment": "production",
                "type": "project.deleted",
                "project": {
                    "id": str(deleted.id),
                    "externalId": "C",
                    "deleted": True,
                    "deletedDate": "2026-03-01T12:00:03Z",
                    "submittedDate": "2026-03-01T12:00:00Z",
                    "updatedDate": "2026-03-01T12:00:03Z",
                    "partner": "sunrise",
                },
            },
        ],
        "nextCursor": cursors[2],
        "hasMore": False,
    }


def test_the_sandbox_feed_is_apart(platform_client, feed):
    body = changes(platform_client, environment="sandbox")

    assert [item["project"]["externalId"] for item in body["items"]] == ["S"]
    assert body["items"][0]["environment"] == "sandbox"


def test_paging_by_next_cursor_sees_each_project_once_and_an_empty_page_keeps_the_cursor(platform_client, feed):
    first = changes(platform_client, limit=2)
    second = changes(platform_client, limit=2, after=first["nextCursor"])
    end = changes(platform_client, limit=2, after=second["nextCursor"])

    assert [item["project"]["externalId"] for item in first["items"]] == ["A", "B"]
    assert first["hasMore"] is True
    assert [item["project"]["externalId"] for item in second["items"]] == ["C"]
    assert second["hasMore"] is False
    assert end == {"items": [], "nextCursor": second["nextCursor"], "hasMore": False}


def test_a_project_changed_again_comes_again_at_its_latest_change_only(platform_client, feed, partner, make_project):
    first = changes(platform_client, limit=2)
    feed["created"].updated_date = at(10)  # A changes after the follower passed it
    feed["created"].save()

    rest = changes(platform_client, after=first["nextCursor"])
    everything = changes(platform_client)

    assert [item["project"]["externalId"] for item in rest["items"]] == ["C", "A"]
    assert rest["items"][1]["type"] == "project.updated"
    assert [item["project"]["externalId"] for item in everything["items"]] == ["B", "C", "A"]


def test_ties_on_updated_date_are_broken_by_id_and_paging_through_them_loses_none(
    platform_client, partner, other_partner, make_project
):
    # Two partners' clocks are apart: their projects may share an updatedDate.
    projects = [
        make_project(owner, environment=PRODUCTION, external_id=f"T{number}", submitted=at(0), updated=at(5))
        for number, owner in enumerate([partner, other_partner, partner, other_partner])
    ]
    seen, after = [], None
    while True:
        body = changes(platform_client, limit=1, **({"after": after} if after else {}))
        seen += [item["project"]["id"] for item in body["items"]]
        after = body["nextCursor"]
        if not body["hasMore"]:
            break

    assert seen == sorted(str(project.id) for project in projects)


def test_an_empty_feed_has_a_null_cursor(platform_client):
    assert changes(platform_client) == {"items": [], "nextCursor": None, "hasMore": False}


def test_limit_defaults_to_100_and_goes_to_1000(platform_client, partner, make_project):
    for number in range(101):
        make_project(partner, environment=PRODUCTION, external_id=f"P{number}", updated=at(number))

    assert len(changes(platform_client)["items"]) == 100
    assert changes(platform_client)["hasMore"] is True
    assert len(changes(platform_client, limit=1000)["items"]) == 101
    assert changes(platform_client, limit=1000)["hasMore"] is False


def test_the_cursor_is_opaque_and_url_safe_and_round_trips():
    project_id = __import__("uuid").uuid4()
    cursor = change_cursor(updated_date=at(1.000001), project_id=project_id)

    assert cursor.isascii() and all(character.isalnum() or character in "-_" for character in cursor)
    assert change_position(cursor) == (at(1.000001), project_id)


@pytest.mark.parametrize(
    "after",
    [
        pytest.param("nonsense", id="not-base64-of-a-cursor"),
        pytest.param("!!!", id="not-base64"),
        pytest.param("MS4xMjM", id="too-few-parts"),
        pytest.param(change_cursor(updated_date=T0, project_id=__import__("uuid").uuid4())[:-3], id="truncated"),
        pytest.param("Mi4xLjAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDA", id="other-version"),
        pytest.param("", id="empty"),
    ],
)
def test_a_malformed_cursor_is_400(platform_client, after):
    message = (
        "Not a cursor of this feed: pass back a nextCursor exactly as it came, or leave after out to start at the "
        "beginning."
    )
    if after == "":
        message = "This field may not be blank."
    invalid(platform_client, [{"field": "after", "message": message}], after=after)


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ("0", "Ensure this value is greater than or equal to 1."),
        ("1001", "Ensure this value is less than or equal to 1000."),
        ("ten", "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point)."),
        ("1.5", "Must be a whole number written with the digits 0-9 (no sign, spaces or decimal point)."),
        ("", "A valid integer is required."),
    ],
)
def test_limit_out_of_bounds_or_not_a_number_is_400(platform_client, limit, message):
    invalid(platform_client, [{"field": "limit", "message": message}], limit=limit)


def test_an_unknown_environment_or_parameter_is_400_naming_each(platform_client):
    invalid(
        platform_client,
        [
            {"field": "afetr", "message": "Unknown parameter; the valid ones are after, limit, environment."},
            {"field": "environment", "message": '"staging" is not a valid choice.'},
        ],
        environment="staging",
        afetr="x",
    )
