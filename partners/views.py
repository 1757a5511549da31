from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from integration_service.openapi import problem_responses
from partners.serializers import LoginResponseSerializer, LoginSerializer
from partners.services import user_login


class LoginView(APIView):
    """POST auth/email/login: e-mail and password in, a bearer token for this environment out."""

    operation_name = "login"

    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary="Log in with e-mail and password",
        request=LoginSerializer,
        responses={200: LoginResponseSerializer, **problem_responses(400, 401, 413, 415, 429)},
        auth=[],
    )
    def post(self, request: Request, environment: str) -> Response:
        serializer = LoginSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = user_login(**serializer.validated_data, environment=environment)
        return Response({"token": result.token, "tokenType": "Bearer", "expiresIn": result.expires_in})
