from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework_simplejwt.authentication import JWTAuthentication

from partners.environments import request_environment
from partners.models import User


class EnvironmentJWTAuthentication(JWTAuthentication):
    """simplejwt's bearer authentication, refusing a token issued under the other environment's root."""

    www_authenticate_realm = "integration"

    def authenticate(self, request: Request) -> tuple[User, object] | None:
        result = super().authenticate(request)
        if result is None:
            return None
        user, token = result
        environment = request_environment(request)
        if token.get("env") != environment:
            raise AuthenticationFailed(
                f"This token was not issued for the {environment} environment; log in under this root.",
                code="token_wrong_environment",
            )
        if user.partner_id is None:
            raise AuthenticationFailed("This user is not a partner user.", code="not_partner_user")
        return user, token
