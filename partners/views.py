from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from partners.serializers import LoginSerializer
from partners.services import user_login


class LoginView(APIView):
    """POST auth/email/login: e-mail and password in, a bearer token for this environment out."""

    authentication_classes = []
    permission_classes = []

    def post(self, request: Request, environment: str) -> Response:
        serializer = LoginSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = user_login(**serializer.validated_data, environment=environment)
        return Response({"token": result.token, "tokenType": "Bearer", "expiresIn": result.expires_in})
