from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import InvalidToken
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.tokens import Token

from partners.environments import request_environment
from partners.models import User
from partners.selectors import user_for_token


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

    def get_user(self, validated_token: Token) -> User:
        """simplejwt's checks (user exists and is active) on a look-up that loads only what authorization reads."""
        try:
            user_id = validated_token[api_settings.USER_ID_CLAIM]
        except KeyError as error:
            raise InvalidToken("Token contained no recognizable user identification") from error
        try:
            user = user_for_token(user_id=int(user_id))
        except (TypeError, ValueError):
            user = None
        if user is None:
            raise AuthenticationFailed("User not found", code="user_not_found")
        if not user.is_active:
            raise AuthenticationFailed("User is inactive", code="user_inactive")
        return user
