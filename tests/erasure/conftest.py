from http import HTTPStatus
from urllib.parse import quote

from tests.conftest import SANDBOX, url


def push(client, external_id: str, data: dict, environment: str = SANDBOX):
    return client.post(url(environment, "push"), {"id": external_id, "data": data}, format="json")


def erasure_path(external_id: str, environment: str = SANDBOX) -> str:
    """The erasure's path with the CRM id percent-encoded whole, as a CRM's HTTP client sends it (`/` as %2F)."""
    root = url(environment, "push").removesuffix("push")
    return f"{root}projects/{quote(external_id, safe='')}/erasure"


def erase(client, external_id: str, body: object = None, environment: str = SANDBOX):
    return client.post(erasure_path(external_id, environment), body if body is not None else {}, format="json")


def erased_ok(client, external_id: str, **kwargs) -> dict:
    response = erase(client, external_id, **kwargs)
    assert response.status_code == HTTPStatus.OK, response.content
    return response.json()
