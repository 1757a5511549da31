from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from integration_service.client_ip import request_client_ip
from integration_service.openapi import problem_responses
from partners.serializers import LoginResponseSerializer, LoginSerializer
from partners.services import user_login


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
            "`Authorization: Bearer <token>` until it expires (`expiresIn` seconds), then log in again. No ClientID "
            "is needed here. Five failed logins for one e-mail from one address, or twenty for any e-mails from one "
            "address, within five minutes answer 429 with `Retry-After` for the rest of those five minutes."
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
                value={"token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…", "tokenType": "Bearer", "expiresIn": 3600},
                response_only=True,
            ),
        ],
        responses={
            200: LoginResponseSerializer,
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
        result = user_login(**serializer.validated_data, environment=environment, ip=request_client_ip(request))
        return Response({"token": result.token, "tokenType": "Bearer", "expiresIn": result.expires_in})
