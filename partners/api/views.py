from http import HTTPStatus

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import PERSON_ONLY, problem_responses
from core.client_ip import request_client_ip
from core.errors import ServiceError
from partners.api.serializers import (
    CredentialListSerializer,
    CredentialWithSecretSerializer,
    LoginSerializer,
    LoginWithRefreshResponseSerializer,
    OAuthErrorSerializer,
    RefreshSerializer,
    TokenRequestSerializer,
    TokenResponseSerializer,
)
from partners.models import IntegrationCredential
from partners.oauth import OAuthError, authorization_server_metadata, token_request_read
from partners.selectors import client_id_credential, client_id_credentials
from partners.services import (
    LoginResult,
    credential_create,
    credential_revoke,
    credential_token_issue,
    user_login,
    user_token_refresh,
)

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}  # RFC 6749 §5.1: answers that carry tokens
OAUTH_ERROR_DESCRIPTIONS = {
    400: "`invalid_request`: the request is malformed (its body, a parameter).",
    413: "`invalid_request`, `code` payload_too_large: the body is larger than the limit.",
    415: "`invalid_request`, `code` unsupported_media_type: send JSON.",
    429: "`temporarily_unavailable`, `code` throttled: too many failed attempts; wait for `Retry-After` seconds.",
    503: "`temporarily_unavailable`: the service is briefly unavailable; send the request again after `Retry-After` "
    "seconds.",
}


def oauth_error_responses(*statuses: int, descriptions: dict[int, str] | None = None) -> dict:
    """The answers of the token routes that are not tokens: RFC 6749 §5.2 JSON (partners/oauth_errors.py)."""
    descriptions = {**OAUTH_ERROR_DESCRIPTIONS, **(descriptions or {})}
    return {
        (status, "application/json"): OpenApiResponse(OAuthErrorSerializer, description=descriptions[status])
        for status in statuses
    }


def _token_answer(result: LoginResult) -> Response:
    body = {
        "token": result.token,
        "tokenType": "Bearer",
        "expiresIn": result.expires_in,
        "refreshToken": result.refresh_token,
    }
    return Response(body, headers=NO_STORE)


class LoginView(APIView):
    """POST auth/email/login: e-mail and password in, a bearer token for this environment out."""

    operation_name = "login"
    schema_tag = "authentication"

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary="Log in with e-mail and password",
        description=(
            "Exchange a partner user's e-mail and password for a bearer token of this root's environment. Send it as "
            "`Authorization: Bearer <token>` until it expires (`expiresIn` seconds), then renew it with the "
            "`refreshToken` (POST auth/token/refresh) or log in again. No ClientID is needed here. Five failed logins "
            "for one e-mail from one address, or twenty for any e-mails from one address, within five minutes answer "
            "429 with `Retry-After` for the rest of those five minutes. For a machine, prefer a client secret and "
            "POST auth/token: its tokens do not end with a person's password."
        ),
        request=LoginSerializer,
        examples=[
            OpenApiExample(
                "Log in",
                value={"email": "dev@your-company.example", "password": "your password"},
                request_only=True,
            ),
            OpenApiExample(
                "Token",
                value={
                    "token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…",
                    "tokenType": "Bearer",
                    "expiresIn": 3600,
                    "refreshToken": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…",
                },
                response_only=True,
            ),
        ],
        responses={
            200: LoginWithRefreshResponseSerializer,
            **problem_responses(
                400,
                401,
                413,
                415,
                429,
                503,
                descriptions={401: "The e-mail or password is wrong (the same answer for both)."},
            ),
        },
        auth=[],
    )
    def post(self, request: Request, environment: str) -> Response:
        serializer = LoginSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        ip = request_client_ip(request)
        return _token_answer(user_login(**serializer.validated_data, environment=environment, ip=ip))


class TokenRefreshView(APIView):
    """POST auth/token/refresh: a refresh token in (spent), a new token and refresh token out."""

    operation_name = "refresh_token"
    schema_tag = "authentication"

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary="Renew a login's token",
        description=(
            "Exchange the `refreshToken` of POST auth/email/login (or of an earlier refresh) for a new token and a "
            "new refresh token. Each refresh token works once: a spent one sent again may have been copied, so it "
            "revokes every token of its login (the refresh token that replaced it and the access tokens issued with "
            "them, refused from the next request on; RFC 9700 §4.14.2), and the answer says so (`token_reused`). "
            "Refused (401 `invalid_grant`, `code` saying why) when it has expired, was used before, is of the other "
            "root, or its user was deactivated or changed their password. Errors are RFC 6749 §5.2's "
            '`{"error", "error_description", "code"}`.'
        ),
        request=RefreshSerializer,
        responses={
            200: LoginWithRefreshResponseSerializer,
            **oauth_error_responses(
                400,
                401,
                413,
                415,
                503,
                descriptions={
                    401: "`invalid_grant`: the refresh token is spent, expired, or no longer valid; `code` says why "
                    "(`token_reused`: a spent one used again, which revoked every token of its login)."
                },
            ),
        },
        auth=[],
    )
    def post(self, request: Request, environment: str) -> Response:
        serializer = RefreshSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = serializer.validated_data["refreshToken"]
        return _token_answer(user_token_refresh(refresh_token=token, environment=environment))


class TokenView(APIView):
    """POST auth/token: the OAuth 2.0 client-credentials grant (RFC 6749 §4.4), errors as its §5.2 says."""

    operation_name = "get_token"
    schema_tag = "authentication"

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary="Get a token with a client secret (OAuth 2.0 client credentials)",
        description=(
            "`grant_type=client_credentials`, the client authenticated by HTTP Basic (ClientID as the user, the "
            "`cs_…` client secret as the password) or by the `client_id` and `client_secret` parameters, in a form "
            "body (`application/x-www-form-urlencoded`, as OAuth clients send it; a JSON object of the same members "
            "is read too). The token acts for your partner, not a "
            "person: send it with the same ClientID. It ends when it expires or its secret or ClientID is revoked. "
            'Every error is RFC 6749 §5.2\'s `{"error", "error_description"}` (with `code` when the service\'s '
            "own reason has one), 429 and 503 included. Failed attempts are throttled as logins are (429 "
            "`temporarily_unavailable`, `Retry-After`). OAuth clients discover this endpoint by RFC 8414 at "
            "`/.well-known/oauth-authorization-server/<root>` (or `.well-known/oauth-authorization-server` under the "
            "root)."
        ),
        # One media type, the one OAuth clients send: of a body with two, openapi-python-client 0.29 writes a module
        # that does not import (its issue #1451; docs/decisions.md).
        request={"application/x-www-form-urlencoded": TokenRequestSerializer},
        responses={
            200: TokenResponseSerializer,
            **oauth_error_responses(
                400,
                401,
                413,
                429,
                503,
                descriptions={
                    400: "`invalid_request` or `unsupported_grant_type`.",
                    401: "`invalid_client`; `WWW-Authenticate: Basic` when the client authenticated by HTTP Basic.",
                },
            ),
        },
        examples=[
            OpenApiExample(
                "Token",
                value={
                    "access_token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…",
                    "token_type": "Bearer",
                    "expires_in": 3600,
                },
                response_only=True,
            ),
        ],
        auth=[],
    )
    def post(self, request: Request, environment: str) -> Response:
        authorization = request.headers.get("Authorization", "")
        try:
            client = token_request_read(
                media_type=(request.content_type or "").split(";", 1)[0].strip().lower(),
                body=request.body,
                authorization=authorization,
            )
            grant = credential_token_issue(
                client_key=client.client_id,
                client_secret=client.client_secret,
                environment=environment,
                ip=request_client_ip(request),
            )
        except OAuthError as error:
            headers = error.response_headers(basic=bool(authorization.strip()))
            return Response(error.body, status=error.status_code, headers={**headers, **NO_STORE})
        body = {"access_token": grant.access_token, "token_type": "Bearer", "expires_in": grant.expires_in}
        return Response(body, headers=NO_STORE)


class AuthorizationServerMetadataView(APIView):
    """GET .well-known/oauth-authorization-server: RFC 8414 metadata of the root's token endpoint, for OAuth
    clients' discovery. Served under the root and at RFC 8414 §3.1's address for an issuer with a path
    (/.well-known/oauth-authorization-server/<root>); the issuer is the root's URL."""

    authentication_classes = []
    permission_classes = []
    throttle_classes: list = []

    @extend_schema(exclude=True)  # discovery for OAuth clients, not an operation of the API
    def get(self, request: Request, environment: str) -> Response:
        issuer = request.build_absolute_uri(reverse(f"{environment}:token")).removesuffix("/auth/token")
        return Response(authorization_server_metadata(issuer=issuer))


class PersonRequired(ServiceError):
    status_code = HTTPStatus.FORBIDDEN
    code = "person_required"
    default_detail = (
        "Client secrets are created and revoked with a person's token (POST auth/email/login), not with a token "
        "of a client secret."
    )


CREDENTIAL_ID = OpenApiParameter("credential_id", int, OpenApiParameter.PATH, description="The credential's id.")
CREDENTIAL_NOT_FOUND = {404: "No such live client secret of this ClientID."}


def _credential_context(request: Request, **extra: str) -> dict:
    return {"client_key": request.headers.get("ClientID", "").strip(), **extra}


class CredentialListView(APIView):
    """GET|POST integration/credentials: the client secrets of the call's ClientID; create one."""

    operation_name = "credentials"
    schema_tag = "authentication"

    @extend_schema(
        operation_id="list_credentials",
        summary="List the client secrets of your ClientID",
        description="The live client secrets of the ClientID you call with, newest first; never the secrets.",
        responses={200: CredentialListSerializer, **problem_responses(401, 403, 429, 503)},
    )
    def get(self, request: Request, environment: str) -> Response:
        credentials = client_id_credentials(client_id=request.client_id)
        return Response(CredentialListSerializer({"items": credentials}, context=_credential_context(request)).data)

    @extend_schema(
        operation_id="create_credential",
        summary="Create a client secret",
        description=(
            "A client secret (`cs_…`) for the ClientID you call with, shown in this answer only: store it in your "
            "secret store and get tokens with it (POST auth/token). At most 5 live per ClientID (409). Needs a "
            "person's token (403 `person_required` with a client secret's)."
        ),
        request=None,
        responses={
            201: CredentialWithSecretSerializer,
            **problem_responses(401, 403, 409, 429, 503, descriptions={409: "Five live client secrets already."}),
        },
        auth=PERSON_ONLY,
    )
    def post(self, request: Request, environment: str) -> Response:
        if isinstance(request.user, IntegrationCredential):
            raise PersonRequired()
        credential, secret = credential_create(client_id=request.client_id, created_by=request.user)
        body = CredentialWithSecretSerializer(credential, context=_credential_context(request, secret=secret)).data
        return Response(body, status=HTTPStatus.CREATED, headers={"Cache-Control": "no-store"})


class CredentialDetailView(APIView):
    """DELETE integration/credentials/{id}: revoke a client secret."""

    operation_name = "credential"
    schema_tag = "authentication"

    @extend_schema(
        operation_id="revoke_credential",
        summary="Revoke a client secret",
        description="It obtains no more tokens, and every token it obtained is refused from the next request on.",
        parameters=[CREDENTIAL_ID],
        responses={204: None, **problem_responses(401, 403, 404, 429, 503, descriptions=CREDENTIAL_NOT_FOUND)},
        auth=PERSON_ONLY,
    )
    def delete(self, request: Request, environment: str, credential_id: str) -> Response:
        if isinstance(request.user, IntegrationCredential):
            raise PersonRequired()
        credential = None
        if credential_id.isascii() and credential_id.isdigit() and len(credential_id) < 19:
            credential = client_id_credential(client_id=request.client_id, credential_id=int(credential_id))
        if credential is None:
            raise NotFound("No live client secret with this id exists for this ClientID.")
        credential_revoke(credential=credential, revoked_by=request.user)
        return Response(status=HTTPStatus.NO_CONTENT)
