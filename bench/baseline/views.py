import json

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse

UPSERT = (
    "INSERT INTO bench_baseline (external_id, data, updated_at) VALUES (%s, %s::jsonb, now()) "
    "ON CONFLICT (external_id) DO UPDATE SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at"
)


def upsert(request: HttpRequest) -> HttpResponse:
    """Parse the push's body and upsert one row (bench/_setup.py's bench_baseline table): what any push must do."""
    body = json.loads(request.body)
    with connection.cursor() as cursor:
        cursor.execute(UPSERT, [str(body["id"]), json.dumps(body["data"])])
    return JsonResponse({"id": body["id"]})
