import json

from django.core.serializers.json import DjangoJSONEncoder
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


PLATFORM_UPDATE = (
    "UPDATE projects_project SET platform_note = %s, platform_stage = %s, platform_updated_date = now() "
    "WHERE id = %s RETURNING id, platform_note, platform_stage, platform_updated_date"
)


def platform_update(request: HttpRequest, project_id: str) -> HttpResponse:
    """Parse a PATCH's body and UPDATE one project's row by id (bench/platform_patch.py): what any such write must
    do, in one statement, without a key, a precondition, a change log, an audit or an event."""
    body = json.loads(request.body)
    with connection.cursor() as cursor:
        cursor.execute(PLATFORM_UPDATE, [body.get("note"), body.get("stage"), project_id])
        row = cursor.fetchone()
    if row is None:
        return JsonResponse({"detail": "not found"}, status=404)
    return JsonResponse(dict(zip(("id", "note", "stage", "updatedDate"), row, strict=True)), encoder=DjangoJSONEncoder)


def page(request: HttpRequest) -> HttpResponse:
    """A bare read of a page of projects after a position, as a follower reads them: one statement, the rows as
    dicts written by Django's JSON encoder. No authentication, no totals, no service code: what any such page must
    cost. `partner` (an id; none: every partner), `environment`, `after` (an ISO date-time), `limit`, `data=1`."""
    params = request.GET
    columns = (
        "*"
        if params.get("data") == "1"
        else "p.id, p.external_id, p.submitted_date, p.updated_date, "
        + (
            "p.mapping_status, p.issues, p.name, p.status, p.customer_first_name, p.customer_last_name, "
            "p.customer_email, p.customer_phone, p.city, p.state, p.system_size_kw, p.module_count, p.contract_amount, "
            "p.currency, p.contract_signed_date, p.platform_stage, p.platform_note, p.platform_updated_date"
        )
    )
    conditions, values = ["p.environment = %s"], [params.get("environment", "production")]
    if params.get("partner"):
        conditions.append("p.partner_id = %s")
        values.append(int(params["partner"]))
    if params.get("after"):
        conditions.append("p.updated_date > %s")
        values.append(params["after"])
    sql = (
        f"SELECT {columns} FROM projects_project p WHERE {' AND '.join(conditions)} "
        "ORDER BY p.updated_date, p.id LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, int(params.get("limit", 100))])
        names = [column.name for column in cursor.description]
        rows = cursor.fetchall()
    items = [dict(zip(names, row, strict=True)) for row in rows]
    after = rows[-1][names.index("updated_date")].isoformat() if rows else None  # Django's encoder cuts to ms
    return JsonResponse(
        {"items": items, "after": after}, encoder=DjangoJSONEncoder, json_dumps_params={"ensure_ascii": False}
    )
