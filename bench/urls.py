"""The service's routes plus a baseline for bench/push_load.py: an endpoint that only upserts one row.

Mounted only when ROOT_URLCONF=bench.urls; the product never serves it.
"""

import json

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt

from integration_service.urls import urlpatterns as service_urlpatterns


@csrf_exempt
def baseline_upsert(request: HttpRequest) -> HttpResponse:
    body = json.loads(request.body)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO bench_baseline (external_id, data, updated_at) VALUES (%s, %s::jsonb, now()) "
            "ON CONFLICT (external_id) DO UPDATE SET data = EXCLUDED.data, updated_at = EXCLUDED.updated_at",
            [str(body["id"]), json.dumps(body["data"])],
        )
    return JsonResponse({"id": body["id"]})


urlpatterns = [path("bench/baseline-upsert", baseline_upsert), *service_urlpatterns]
