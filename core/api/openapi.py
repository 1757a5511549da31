"""OpenAPI pieces: one document per root (its own server and credentials), the problem+json body, the partner
authentication schemes."""

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.settings import spectacular_settings
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from core.problems import PROBLEM_CONTENT_TYPE

PROBLEM_DESCRIPTIONS = {
    400: "The body or a query parameter is invalid; `errors` names each problem.",
    401: "The bearer token is missing, malformed, expired, or of the other environment. Log in again.",
    403: "The ClientID is missing, unknown, revoked, of another partner or environment, or not yet cleared.",
    404: "No such project for this partner in this environment.",
    413: "The body is larger than the limit, or a push would grow the project's source data past its limit.",
    415: "The body is not application/json, or its charset is not a character encoding.",
    429: "Too many requests; wait for `Retry-After` seconds.",
    503: "The service is briefly unavailable; send the request again after `Retry-After` seconds (a push is safe "
    "to repeat).",
}

ROOT_DESCRIPTIONS = {
    "sandbox": "The sandbox: integrate and test here first, with an `sbx_…` ClientID and a token from this root's "
    "login. Nothing here reaches production.",
    "production": "Production, once an operator has cleared your partner: a `prd_…` ClientID and a token from this "
    "root's login. A sandbox token or ClientID is refused here.",
}


PARTNER_TAGS = [
    {
        "name": "authentication",
        "description": "Tokens: a person's login, a machine's client secret (OAuth 2.0 "
        "client credentials), and the client secrets of your ClientID.",
    },
    {"name": "push", "description": "Send your CRM's records, one or up to 500 at a time, and deletes."},
    {
        "name": "pull",
        "description": "Read the normalized projects back: a page, one project, or everything at once as an export.",
    },
    {"name": "webhooks", "description": "Be told of changes: your endpoints, their deliveries, the events."},
    {"name": "mapping", "description": "How your fields become the platform's: the mapping in force."},
    {"name": "diagnostics", "description": "The pushes as they arrived, and what each one mapped to."},
]

LICENSE = {
    "name": "Proprietary: for integrating with the platform under your partner agreement",
    "identifier": "LicenseRef-Proprietary",  # SPDX's form for a licence of its own
}


def document_info(*, contact_name: str, contact_path: str) -> dict:
    """drf-spectacular settings every document shares: whom to ask (a page on this service) and the terms."""
    return {
        "CONTACT": {"name": contact_name, "url": f"{settings.PUBLIC_BASE_URL}{contact_path}"},
        "LICENSE": LICENSE,
    }


def root_schema_settings(environment: str) -> dict:
    """drf-spectacular settings for the document of one root: its own server, paths relative to it."""
    prefix = "/sandbox/api/v1" if environment == "sandbox" else "/api/v1"
    return {
        "TITLE": f"Partner Project Data Integration Service ({environment})",
        "DESCRIPTION": ROOT_DESCRIPTIONS[environment] + "\n\n" + API_DESCRIPTION,
        "SERVERS": [{"url": prefix, "description": environment.capitalize()}],
        "SCHEMA_PATH_PREFIX": prefix,
        "SCHEMA_PATH_PREFIX_TRIM": True,
        "TAGS": PARTNER_TAGS,
        **document_info(contact_name="Partner integration support: the API guide", contact_path="/portal/guide/"),
    }


API_DESCRIPTION = (
    "Push project records from your CRM and pull normalized projects back. Get a token with your client secret "
    "(`POST auth/token`, OAuth 2.0 client credentials) or log in with `POST auth/email/login`, then send "
    "`Authorization: Bearer <token>` and your `ClientID` header on every other call. Errors are "
    "`application/problem+json` with a stable `code` and the `requestId` to quote to support. "
    "The partner guide, with every call, error code and the sync recipe, is the partner console's API guide, "
    "`/portal/guide/` on this host (sign in with your user). The webhooks this root sends are the `event` "
    "callback of `create_webhook`. A client generated from this document sends the token itself; add the "
    "`ClientID` header to it (openapi-python-client: `AuthenticatedClient(base_url=..., token=..., "
    'headers={"ClientID": ...})`).'
)


class ProblemFieldErrorSerializer(serializers.Serializer):
    field = serializers.CharField(help_text="Dotted path of the offending field or parameter; empty for the body.")
    message = serializers.CharField()


class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details, as every error of the API is answered."""

    type = serializers.CharField(default="about:blank")
    title = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    code = serializers.CharField(help_text="A stable machine-readable word, e.g. token_not_valid.")
    errors = ProblemFieldErrorSerializer(many=True, required=False)
    requestId = serializers.CharField(
        required=False, help_text="The response's X-Request-ID: quote it to support to find this request."
    )


def problem_responses(*statuses: int, descriptions: dict[int, str] | None = None) -> dict:
    descriptions = {**PROBLEM_DESCRIPTIONS, **(descriptions or {})}
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(ProblemSerializer, description=descriptions[status])
        for status in statuses
    }


class PartnerAuthenticationScheme(OpenApiAuthenticationExtension):
    """Every call after login carries a bearer token and the ClientID header. The token is a person's (the e-mail
    login) or a machine's (a client secret's, OAuth 2.0 client credentials): two alternatives, each with the ClientID.
    An operation a person alone may call says so with `extend_schema(auth=PERSON_ONLY)`."""

    target_class = "partners.authentication.EnvironmentJWTAuthentication"
    name = ["bearerAuth", "clientId", "oauth2"]

    def get_security_requirement(self, auto_schema) -> list[dict]:
        return [{"bearerAuth": [], "clientId": []}, {"oauth2": [], "clientId": []}]

    def get_security_definition(self, auto_schema) -> list[dict]:
        return [
            {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "JWT",
                "description": "A token of this root's environment: from POST auth/email/login (a person), or from "
                "POST auth/token (a client secret).",
            },
            {
                "type": "apiKey",
                "in": "header",
                "name": "ClientID",
                "description": "The key an operator issued to your partner for this environment (sbx_… / prd_…).",
            },
            {
                "type": "oauth2",
                "description": "A machine's token: the OAuth 2.0 client-credentials grant at this root's auth/token, "
                "your ClientID as the client id and a cs_… client secret of it as the client secret.",
                # An absolute path: a relative reference would resolve against the server URL without its last
                # segment (RFC 3986), and this document's server is the root.
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": f"{spectacular_settings.SCHEMA_PATH_PREFIX}/auth/token",
                        "scopes": {},
                    }
                },
            },
        ]


PERSON_ONLY = [{"bearerAuth": [], "clientId": []}]


class EnvironmentAutoSchema(AutoSchema):
    """Operations named by the view (`push`, `list_projects`), tagged by what they are about."""

    def get_operation_id(self) -> str:
        return getattr(self.view, "operation_name", None) or super().get_operation_id()

    def get_tags(self) -> list[str]:
        return [getattr(self.view, "schema_tag", "api")]

    def get_operation(self, *args, **kwargs) -> dict | None:
        """A public operation (a login, the token, a signed link) says so: `security: []`, not nothing."""
        operation = super().get_operation(*args, **kwargs)
        if operation is not None:
            operation.setdefault("security", [])
        return operation


def environment_security(result: dict, generator, request, public) -> dict:
    """Name the credentials after the root (`sandboxBearer`, `productionClientId`), so Swagger UI keeps a sandbox
    token apart from production's and never sends one to the other root's operations."""
    environment = "sandbox" if result["servers"][0]["url"].startswith("/sandbox") else "production"
    names = {
        "bearerAuth": f"{environment}Bearer",
        "clientId": f"{environment}ClientId",
        "oauth2": f"{environment}OAuth2",
    }
    schemes = result.get("components", {}).get("securitySchemes", {})
    result["components"]["securitySchemes"] = {names.get(key, key): value for key, value in schemes.items()}
    for operations in result["paths"].values():
        for operation in operations.values():
            if "security" in operation:
                operation["security"] = [
                    {names.get(key, key): scopes for key, scopes in requirement.items()}
                    for requirement in operation["security"]
                ]
    return result


def canonical_paths(endpoints: list[tuple], **kwargs) -> list[tuple]:
    """The document's own root only, each route as the spec writes it (without the optional trailing slash the
    routes also accept)."""
    root = spectacular_settings.SCHEMA_PATH_PREFIX + "/"
    return [
        (path.rstrip("/") or path, path_regex, method, callback)
        for path, path_regex, method, callback in endpoints
        if path.startswith(root)
    ]


RESPONSE_HEADERS = {
    "X-Request-ID": {
        "schema": {"type": "string"},
        "required": True,
        "description": "This request's id: the one you sent (1-128 letters, digits, `.`, `_`, `:`, `-`) or ours. "
        "Quote it to support.",
    },
    "RateLimit-Policy": {
        "schema": {"type": "string", "example": '"client-id";q=1200;w=60'},
        "description": "Your ClientID's budgets (IETF RateLimit header fields): requests, and records on pushes.",
    },
    "RateLimit": {
        "schema": {"type": "string", "example": '"client-id";r=1187;t=42'},
        "description": "What is left of each budget (`r`) and the seconds until it resets (`t`): pace yourself.",
    },
    "Retry-After": {
        "schema": {"type": "integer", "minimum": 0},
        "description": "Seconds to wait before sending the request again.",
    },
}


def response_headers(result: dict, generator, request, public) -> dict:
    """Declare the headers every answer carries where they are sent (CONTRACT §20): `X-Request-ID` on every answer,
    the RateLimit fields on every answer to a call with a ClientID, `Retry-After` on 429 and 503. Headers an
    operation declares itself (`ETag`, `Location`) stay as it wrote them. Only the headers used are components."""
    used = set()
    for operations in result["paths"].values():
        for operation in operations.values():
            with_client_id = any(
                name.endswith("ClientId") for requirement in operation.get("security", []) for name in requirement
            )
            for status, response in operation["responses"].items():
                names = ["X-Request-ID"]
                if with_client_id:
                    names += ["RateLimit-Policy", "RateLimit"]
                if status in ("429", "503"):
                    names.append("Retry-After")
                headers = response.setdefault("headers", {})
                for name in names:
                    headers.setdefault(name, {"$ref": f"#/components/headers/{name}"})
                used.update(names)
    result["components"]["headers"] = {name: header for name, header in RESPONSE_HEADERS.items() if name in used}
    return result
