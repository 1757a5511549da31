"""GET integration/mapping (CONTRACT §19): the partner reads the mapping its environment normalizes with."""

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import problem_responses
from mappings.api.serializers import MappingSerializer
from mappings.selectors import mapping_in_force

MAPPING_EXAMPLE = {
    "version": 3,
    "publishedDate": "2026-03-09T16:20:00.123456Z",
    "fields": [
        {
            "field": "name",
            "required": True,
            "type": "string",
            "sources": ["properties.dealname"],
            "expression": "properties.dealname",
            "description": "The project's name, e.g. the deal's or the customer's.",
        },
        {
            "field": "systemSizeKw",
            "required": False,
            "type": "decimal",
            "sources": ["properties.system_size_kw", "properties.system_size_w"],
            "expression": "properties.system_size_w || properties.system_size_kw",
            "description": "The system's size in kilowatts, a decimal.",
        },
    ],
}


class MappingView(APIView):
    """GET integration/mapping: the mapping version in force for the partner in this environment, rule by rule."""

    operation_name = "get_mapping"
    schema_tag = "mapping"

    @extend_schema(
        summary="Your mapping",
        description=(
            "The mapping version this environment normalizes your pushes with: for each canonical field it fills, "
            "whether it is required, the type your value is read as, the paths of your `data` it reads (`sources`), "
            "the rule as written (`expression`) and what the field holds. Read it before your first push. 404 "
            "before our operators have published a mapping for this environment. Read-only; takes no parameters."
        ),
        responses={
            200: MappingSerializer,
            **problem_responses(
                400,
                401,
                403,
                404,
                429,
                503,
                descriptions={
                    400: "A query parameter was sent: this endpoint takes none.",
                    404: "No mapping is published for your partner in this environment yet.",
                },
            ),
        },
        examples=[OpenApiExample("A mapping", value=MAPPING_EXAMPLE)],
    )
    def get(self, request: Request, environment: str) -> Response:
        if request.query_params:
            message = "Unknown parameter; integration/mapping takes no parameters."
            raise ValidationError({name: [message] for name in request.query_params})
        mapping = mapping_in_force(partner_id=request.client_id.partner_id, environment=environment)
        if mapping is None:
            raise NotFound("No mapping is published for your partner in this environment yet.")
        return Response(MappingSerializer(mapping).data)
