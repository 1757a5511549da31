from collections import Counter
from http import HTTPStatus

from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import problem_responses
from core.api.parsers import JSONText, PushJSONParser
from ingest.api.batch_parser import BatchJSONParser, batch_records
from ingest.api.examples import PUSH_BATCH_EXAMPLES
from ingest.api.serializers import (
    DeleteResponseSerializer,
    PushBatchResponseSerializer,
    PushBatchSerializer,
    PushResponseSerializer,
    PushSerializer,
    push_fields_checked,
    push_response_body,
)
from ingest.batch_services import RecordRefused, push_batch_receive
from ingest.delete_services import DeleteResult, project_delete
from ingest.services import PushContext, push_receive
from observability.metrics import push_observed, push_result_name, pushes_observed
from partners.throttling import client_id_records_take


class PushView(APIView):
    """POST externals/push: store the CRM's record verbatim and upsert its project (201 created, 200 updated)."""

    operation_name = "push"
    schema_tag = "push"
    rate_limit_counts_records = True  # the request is counted with its records, in one round trip

    parser_classes = [PushJSONParser]

    @extend_schema(
        summary="Push a project record from the CRM",
        description=(
            "Send a record of your CRM: your own `id` and any fields under `data`. The first push of an `id` creates "
            "the project (201); later pushes update it (200) as a JSON Merge Patch (RFC 7396): keys you send replace "
            "the stored ones, keys you leave out are kept, a key sent as `null` is removed. Every push is kept as "
            "sent. `changed` is false when nothing changed. A value your field mappings cannot read does not fail "
            "the push: it is listed in `issues`. Repeating a push is safe."
        ),
        request=PushSerializer,
        examples=[
            OpenApiExample(
                "A HubSpot deal",
                value={
                    "id": "HS-2001",
                    "data": {
                        "properties": {"dealname": "Lee Residence", "dealstage": "closedwon", "system_size_w": "7200"}
                    },
                },
                request_only=True,
            ),
            OpenApiExample(
                "A partial update",
                value={"id": "HS-2001", "data": {"properties": {"dealstage": "installation_scheduled"}}},
                request_only=True,
            ),
        ],
        responses={
            201: PushResponseSerializer,
            200: PushResponseSerializer,
            **problem_responses(
                400,
                401,
                403,
                410,
                413,
                415,
                429,
                503,
                descriptions={410: "This id belongs to a project erased for good (`project_erased`): push a new id."},
            ),
        },
    )
    def post(self, request: Request, environment: str) -> Response:
        body = request.data  # a JSONText; DRF's empty data when there is no body
        external_id, data = push_fields_checked(body.value if isinstance(body, JSONText) else body)
        client_id_records_take(request=request, count=1)
        result = push_receive(
            client_id=request.client_id,
            user=request.caller.person,
            environment=environment,
            external_id=external_id,
            data=data,
            body=body.text,
            context=_push_context(request),
        )
        push_observed(
            environment=environment,
            result=push_result_name(result),
            issue_fields=[issue["field"] for issue in result.project.issues],
        )
        return Response(push_response_body(result), status=HTTPStatus.CREATED if result.created else HTTPStatus.OK)


class PushBatchView(APIView):
    """POST externals/push/batch: many records, each stored as a single push would be; one result per record."""

    operation_name = "push_batch"
    schema_tag = "push"
    rate_limit_counts_records = True  # the request is counted with its records, in one round trip

    parser_classes = [BatchJSONParser]

    @extend_schema(
        summary="Push many project records from the CRM at once",
        description=(
            "Each record is held to every rule of POST externals/push and answered on its own, in the order sent: "
            "201/200 with the push's answer, or 400 with the record's problem (nothing of it stored). The valid "
            "records are stored in one transaction. A body that is not a batch is refused whole (400, 413, 415)."
        ),
        request=PushBatchSerializer,
        responses={200: PushBatchResponseSerializer, **problem_responses(400, 401, 403, 413, 415, 429, 503)},
        examples=PUSH_BATCH_EXAMPLES,
    )
    def post(self, request: Request, environment: str) -> Response:
        read = batch_records(request.data)
        records = [item.record for item in read if item.record is not None]
        client_id_records_take(request=request, count=len(records))
        stored = iter(
            push_batch_receive(
                client_id=request.client_id,
                user=request.caller.person,
                environment=environment,
                records=records,
                context=_push_context(request),
            )
        )
        answer, deleted = PushResponseSerializer(), DeleteResponseSerializer()  # one for all results: they only write
        results = []
        observed, issue_fields = Counter(), Counter()  # counted in the metrics once for the batch
        for item in read:
            if item.record is None:
                problem = {key: item.problem[key] for key in ("detail", "code", "errors") if key in item.problem}
                refused = {"index": item.index, "status": 400, "id": None, "externalId": item.external_id}
                results.append({**refused, **problem})
                observed["refused"] += 1
                continue
            result = next(stored)
            if isinstance(result, DeleteResult):
                results.append({"index": item.index, "status": HTTPStatus.OK, **deleted.to_representation(result)})
                observed["deleted" if result.changed else "unchanged"] += 1
            elif isinstance(result, RecordRefused):
                refused = {"index": item.index, "status": result.status, "id": None, "externalId": item.external_id}
                results.append({**refused, "detail": result.detail, "code": result.code})
                observed["refused"] += 1
            else:
                status = HTTPStatus.CREATED if result.created else HTTPStatus.OK
                results.append({"index": item.index, "status": status, **answer.to_representation(result)})
                observed[push_result_name(result)] += 1
                issue_fields.update(issue["field"] for issue in result.project.issues)
        pushes_observed(environment=environment, results=observed, issue_fields=issue_fields)
        return Response({"results": results})


class ProjectDeleteView(APIView):
    """DELETE externals/projects/{crm id}: the CRM deleted its record; the project becomes a tombstone (§12)."""

    operation_name = "delete_project"
    schema_tag = "push"

    @extend_schema(
        summary="Delete a project your CRM deleted",
        description=(
            "The path ends with your CRM's `id` of the record (the `id` you push; URL-encode it, `/` as `%2F`: the "
            "whole rest of the path is the id, a trailing slash included). The project is kept, with its data and "
            "every push, but the pull leaves it out (`includeDeleted=true` lists it as a tombstone) and "
            "`GET integration/projects/{id}` answers 410. Deleting it again answers `changed: false` with the same "
            "dates. A later push of the same `id` restores the same project. Repeating a delete is safe."
        ),
        parameters=[
            OpenApiParameter(
                "external_id", str, OpenApiParameter.PATH, description="Your CRM's id of the record, URL-encoded."
            )
        ],
        responses={
            200: DeleteResponseSerializer,
            **problem_responses(
                401,
                403,
                404,
                410,
                429,
                503,
                descriptions={
                    404: "No project with this id of your CRM in this environment.",
                    410: "The project was erased for good (`project_erased`, with its `erasedDate`).",
                },
            ),
        },
        examples=[
            OpenApiExample(
                "Deleted",
                response_only=True,
                status_codes=["200"],
                value={
                    "id": "6f1c2a4e-8d0b-4c55-9a51-2b7e3f0d9c11",
                    "externalId": "HS-2001",
                    "deleted": True,
                    "deletedDate": "2026-03-11T09:00:00.123456Z",
                    "updatedDate": "2026-03-11T09:00:00.123501Z",
                    "changed": True,
                },
            )
        ],
    )
    def delete(self, request: Request, environment: str, external_id: str) -> Response:
        client_id_records_take(request=request, count=1)
        result = project_delete(
            client_id=request.client_id,
            user=request.caller.person,
            environment=environment,
            external_id=external_id,
            context=_push_context(request),
        )
        push_observed(environment=environment, result="deleted" if result.changed else "unchanged")
        return Response(DeleteResponseSerializer(result).data)


def _push_context(request: Request) -> PushContext:
    """What the request's one look-up of its caller (partners/authentication.py) already read for a push."""
    caller = request.caller
    credential = caller.credential
    return PushContext(
        mapping_version_id=caller.mapping_version_id,
        has_webhook_endpoints=caller.has_webhook_endpoints,
        credential_id=credential.pk if credential is not None else None,
    )
