from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView


class PushView(APIView):
    """POST externals/push: placeholder until the push issue lands."""

    def post(self, request: Request, environment: str) -> Response:
        return Response(status=501)
