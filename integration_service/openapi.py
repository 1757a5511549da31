"""OpenAPI pieces shared by the views: the problem+json body and the partner authentication scheme."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers

from integration_service.problems import PROBLEM_CONTENT_TYPE

PROBLEM_DESCRIPTIONS = {
    400: "The body or a query parameter is invalid; `errors` names each problem.",
    401: "The bearer token is missing, malformed, expired, or of the other environment. Log in again.",
    403: "The ClientID is missing, unknown, revoked, of another partner or environment, or not yet cleared.",
    404: "No such project for this partner in this environment.",
    413: "The body is larger than the limit, or a push would grow the project's source data past its limit.",
    415: "The body is not application/json, or its charset is not a character encoding.",
    429: "Too many requests; wait for `Retry-After` seconds.",
}


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


def problem_responses(*statuses: int) -> dict:
    return {
        (status, PROBLEM_CONTENT_TYPE): OpenApiResponse(ProblemSerializer, description=PROBLEM_DESCRIPTIONS[status])
        for status in statuses
    }


class PartnerAuthenticationScheme(OpenApiAuthenticationExtension):
    """Every call after login carries both a bearer token and the ClientID header."""

    target_class = "partners.authentication.EnvironmentJWTAuthentication"
    name = ["bearerAuth", "clientId"]

    def get_security_definition(self, auto_schema) -> list[dict]:
        return [
            {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "JWT",
                "description": "The token from POST auth/email/login, of this root's environment.",
            },
            {
                "type": "apiKey",
                "in": "header",
                "name": "ClientID",
                "description": "The key an operator issued to your partner for this environment (sbx_… / prd_…).",
            },
        ]


class EnvironmentAutoSchema(AutoSchema):
    """Operations of the two roots are told apart: `sandbox_push` beside `push`, tagged by environment."""

    def _is_sandbox(self) -> bool:
        return self.path.startswith("/sandbox/")

    def get_operation_id(self) -> str:
        operation_id = getattr(self.view, "operation_name", None) or super().get_operation_id()
        return f"sandbox_{operation_id}" if self._is_sandbox() else operation_id

    def get_tags(self) -> list[str]:
        return ["sandbox"] if self._is_sandbox() else ["production"]


def canonical_paths(endpoints: list[tuple], **kwargs) -> list[tuple]:
    """Document each route as the spec writes it, without the optional trailing slash the routes also accept."""
    return [
        (path.rstrip("/") or path, path_regex, method, callback) for path, path_regex, method, callback in endpoints
    ]
