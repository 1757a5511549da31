"""Who may call /platform/api/v1/: a platform key as a bearer token, nothing else (CONTRACT §13)."""

from typing import TYPE_CHECKING

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed, PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from partners.services import last_use_record
from platform_api.choices import PLATFORM_KEY_PREFIX
from platform_api.models import PlatformKey
from platform_api.selectors import platform_key_get

if TYPE_CHECKING:
    from rest_framework.views import APIView

USAGE = f"Send 'Authorization: Bearer {PLATFORM_KEY_PREFIX}…', the platform key an operator issued."


class PlatformKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer plt_…`. Anything else is a 401 here, a partner's token or ClientID included: they
    belong to the partner roots, as a platform key is refused there (their token check cannot read it)."""

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="platform"'

    def authenticate(self, request: Request) -> tuple[PlatformKey, PlatformKey]:
        header = request.headers.get("Authorization", "")
        if not header.strip():
            raise AuthenticationFailed(f"No platform key was sent. {USAGE}", code="platform_key_missing")
        scheme, _, key = header.strip().partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key.startswith(PLATFORM_KEY_PREFIX):
            raise AuthenticationFailed(
                f"This root takes platform keys only; partner credentials belong to the partner roots. {USAGE}",
                code="platform_key_required",
            )
        platform_key = platform_key_get(key=key)
        if platform_key is None:
            raise AuthenticationFailed("The platform key is not valid.", code="platform_key_unknown")
        if platform_key.is_revoked:
            raise AuthenticationFailed(
                "The platform key has been revoked; ask an operator for a new one.", code="platform_key_revoked"
            )
        last_use_record(platform_key)
        return platform_key, platform_key


class PlatformKeyScopeAllows(BasePermission):
    """Reads for every key; writes for read-write keys only (403)."""

    def has_permission(self, request: Request, view: "APIView") -> bool:
        if request.method in SAFE_METHODS or request.auth.can_write:
            return True
        raise PermissionDenied("This platform key is read-only; writes need a read-write key.", code="read_only_key")
