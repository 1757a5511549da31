from collections.abc import Callable

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from platform_api.choices import PlatformKeyScope
from platform_api.services import platform_key_issue


def platform_url(name: str, **kwargs) -> str:
    """`platform_url("changes")` → /platform/api/v1/changes"""
    return reverse(f"platform:{name}", kwargs=kwargs or None)


@pytest.fixture
def platform_key(db) -> str:
    return platform_key_issue(name="platform-sync")[1]


@pytest.fixture
def read_only_key(db) -> str:
    return platform_key_issue(name="platform-reports", scope=PlatformKeyScope.READ)[1]


@pytest.fixture
def bearer() -> Callable[[str], APIClient]:
    def make(key: str) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return client

    return make


@pytest.fixture
def platform_client(bearer, platform_key) -> APIClient:
    return bearer(platform_key)


@pytest.fixture
def read_only_client(bearer, read_only_key) -> APIClient:
    return bearer(read_only_key)
