"""The console's environment page shows the mapping in force there as a table (CONTRACT §19), or says there is none."""

import html
import re
from http import HTTPStatus

import pytest

from mappings.services import mapping_document_import, mapping_version_publish
from projects.canonical import CANONICAL_DESCRIPTIONS
from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db

DOCUMENT = {
    "fields": {
        "systemSizeKw": {"source": "deal.size_w || deal.size_kw", "type": "decimal", "scale": [0.001, 1]},
        "name": {"source": "deal.title", "type": "string", "required": True},
        "notes": {"source": "'<none>'", "type": "string"},
    }
}


def mapping_rows(page: str) -> list[list[str]]:
    """The mapping table's cells, row by row, as text with the markup between them left out."""
    table = page.split('<table id="mapping-fields">')[1].split("</table>")[0].split("<tbody>")[1]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    return [
        [
            html.unescape(re.sub(r"<br>", " | ", re.sub(r"<(?!br)[^>]+>", "", cell))).strip()
            for cell in re.findall(r"<td>(.*?)</td>", row, re.S)
        ]
        for row in rows
    ]


def test_the_mapping_in_force_is_a_table_in_canonical_order(portal, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)

    response = portal.get("/portal/sandbox/")

    assert response.status_code == HTTPStatus.OK
    page = response.content.decode()
    assert "Version 1, in force here since" in page
    assert mapping_rows(page) == [
        [
            "name",
            "Required",
            "string",
            "deal.title",
            "deal.title",
            CANONICAL_DESCRIPTIONS["name"],
        ],
        [
            "systemSizeKw",
            "Optional",
            "decimal",
            "deal.size_kw | deal.size_w",
            "deal.size_w || deal.size_kw",
            CANONICAL_DESCRIPTIONS["systemSizeKw"],
        ],
        [
            "notes",
            "Optional",
            "string",
            "nothing (a constant)",
            "'<none>'",
            "Free text about the project.",
        ],
    ]
    assert 'id="mapping-none"' not in page


def test_no_mapping_published_yet_says_so(portal, partner):
    page = portal.get("/portal/sandbox/").content.decode()

    assert 'id="mapping-fields"' not in page
    assert "No mapping published yet for the sandbox" in page


def test_each_environment_shows_its_own_version(portal, partner, cleared_partner):
    first = mapping_document_import(partner=partner, document={"fields": {"name": {"source": "a", "type": "string"}}})
    assert "No mapping published yet for the production" in portal.get("/portal/production/").content.decode()
    mapping_version_publish(version=first, environment="production", published_by=None)
    mapping_document_import(partner=partner, document={"fields": {"city": {"source": "b", "type": "string"}}})

    sandbox = portal.get("/portal/sandbox/").content.decode()
    production = portal.get("/portal/production/").content.decode()

    assert "Version 2, in force" in sandbox and [row[0] for row in mapping_rows(sandbox)] == ["city"]
    assert "Version 1, in force" in production and [row[0] for row in mapping_rows(production)] == ["name"]


def test_another_partners_mapping_is_never_shown(portal, partner, other_partner):
    mapping_document_import(partner=other_partner, document=DOCUMENT)

    page = portal.get("/portal/sandbox/").content.decode()

    assert "No mapping published yet" in page
    assert "deal.title" not in page


def test_the_overview_links_each_environment_and_its_mapping_version(portal, partner):
    mapping_document_import(partner=partner, document=DOCUMENT)

    page = portal.get("/portal/").content.decode()

    sandbox_row = page.split('<tr id="environment-sandbox">')[1].split("</tr>")[0]
    assert '<a href="/portal/sandbox/">Sandbox</a>' in sandbox_row
    assert '<a href="/portal/sandbox/#mapping">1</a>' in sandbox_row


def test_the_page_needs_a_partner_users_session(client, partner, user):
    anonymous = client.get("/portal/sandbox/")
    assert anonymous.status_code == HTTPStatus.FOUND
    assert anonymous["Location"] == "/portal/login/?next=/portal/sandbox/"

    client.post("/portal/login/", {"email": user.email, "password": PASSWORD})
    assert client.get("/portal/staging/").status_code == HTTPStatus.NOT_FOUND
    assert client.get("/portal/sandbox/").status_code == HTTPStatus.OK
