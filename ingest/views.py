from http import HTTPStatus

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingest.parsers import StrictJSONParser, decode_body
from ingest.serializers import PushResponseSerializer, PushSerializer
from ingest.services import push_receive
from integration_service.openapi import problem_responses


class PushView(APIView):
    """POST externals/push: store the CRM's record verbatim and upsert its project (201 created, 200 updated)."""

    operation_name = "push"

    parser_classes = [StrictJSONParser]

    @extend_schema(
        summary="Push a project record from the CRM",
        request=PushSerializer,
        responses={
            201: PushResponseSerializer,
            200: PushResponseSerializer,
            **problem_responses(400, 401, 403, 413, 415, 429),
        },
    )
    def post(self, request: Request, environment: str) -> Response:
        body = request.body  # read before request.data, so the verbatim bytes stay available
        serializer = PushSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = push_receive(
            client_id=request.client_id,
            user=request.user,
            environment=environment,
            external_id=serializer.validated_data["id"],
            data=serializer.validated_data["data"],
            body=decode_body(body, request.encoding),
        )
        return Response(
            PushResponseSerializer(result).data, status=HTTPStatus.CREATED if result.created else HTTPStatus.OK
        )
