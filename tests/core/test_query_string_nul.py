"""A NUL character in the query string of a page (the admin's list filters take any field's value) is a 400, not
the 500 PostgreSQL's "string literal cannot contain NUL" made of it; the API's routes answer their own 400s."""

from http import HTTPStatus

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "path",
    [
        "/admin/partners/user/?email=%00",
        "/admin/projects/project/?external_id=a%00b",
        "/admin/partners/user/?%00=1",
        "/portal/login/?next=%00",
    ],
)
def test_a_nul_in_a_pages_query_string_is_400(admin_client, path):
    response = admin_client.get(path)

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert b"NUL" in response.content


def test_a_page_without_nul_still_answers(admin_client):
    assert admin_client.get("/admin/partners/user/?email=a%40example.com").status_code == HTTPStatus.OK
