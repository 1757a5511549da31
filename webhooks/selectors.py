"""Reads. `endpoints_subscribed` runs on every push that changes a project: through core/db/rows.py."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from core.db.rows import column_sql, rows_select, table_sql
from partners.selectors import PartnerState
from projects.change_log import followers_visible
from webhooks import secret_box
from webhooks.choices import WEBHOOK_TEST_EVENT, DeliveryStatus
from webhooks.cursors import EventPosition
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent

_SUBSCRIPTION = ("id", "event_types", "paused_until")


def _endpoints_enabled_sql(partner_id_sql: str) -> str:
    endpoint = WebhookEndpoint
    return (
        f"EXISTS (SELECT 1 FROM {table_sql(endpoint, alias='e')} "
        f"WHERE {column_sql(endpoint, 'partner_id', alias='e')} = {partner_id_sql} "
        f"AND {column_sql(endpoint, 'environment', alias='e')} = %s "
        f"AND {column_sql(endpoint, 'is_enabled', alias='e')} = %s)"
    )


# Whether the caller's partner environment has an enabled endpoint, read by the API request's one look-up of its
# caller (partners/selectors.py, ApiCaller.has_webhook_endpoints); added to it from WebhooksConfig.ready().
ENDPOINTS_ENABLED = PartnerState(sql=_endpoints_enabled_sql, params=lambda environment: (environment, True))


def endpoints_subscribed(*, partner_id: int, environment: str, event_type: str | None = None) -> list[dict]:
    """The enabled endpoints of this partner environment (that take this event type, if one is given):
    [{id, event_types, paused_until}]. One indexed look-up; a partner without endpoints answers with no rows."""
    where = {"partner_id": partner_id, "environment": environment, "is_enabled": True}
    rows = rows_select(WebhookEndpoint, attnames=_SUBSCRIPTION, where=where)
    return [row for row in rows if event_type is None or event_type in row["event_types"]]


def endpoint_delivery_counts(*, endpoint: WebhookEndpoint) -> dict[str, int]:
    return WebhookDelivery.objects.filter(endpoint=endpoint).aggregate(
        **{status: Count("id", filter=Q(status=status)) for status in DeliveryStatus.values}
    )


def deliveries_of_endpoint(*, endpoint_id: int) -> QuerySet[WebhookDelivery]:
    return WebhookDelivery.objects.filter(endpoint_id=endpoint_id).select_related("event")


# --- the partner's self-service API -------------------------------------------------------------------------------


def endpoints_of(*, partner_id: int, environment: str) -> QuerySet[WebhookEndpoint]:
    """A partner environment's endpoints, oldest first."""
    return WebhookEndpoint.objects.filter(partner_id=partner_id, environment=environment).order_by("id")


def endpoint_of(*, partner_id: int, environment: str, endpoint_id: int) -> WebhookEndpoint | None:
    """One of the partner environment's endpoints; None for another partner's or environment's, or none."""
    return endpoints_of(partner_id=partner_id, environment=environment).filter(pk=endpoint_id).first()


def deliveries_page(
    *, endpoint_id: int, status: str | None, before_id: int | None, limit: int
) -> tuple[list[WebhookDelivery], bool]:
    """An endpoint's deliveries, newest first, after the cursor (ids below `before_id`): `limit` of them and
    whether more follow. On the log index (endpoint, -id)."""
    deliveries = WebhookDelivery.objects.filter(endpoint_id=endpoint_id).select_related("event").defer("event__body")
    if status:
        deliveries = deliveries.filter(status=status)
    if before_id is not None:
        deliveries = deliveries.filter(id__lt=before_id)
    rows = list(deliveries.order_by("-id")[: limit + 1])
    return rows[:limit], len(rows) > limit


def events_replay_queryset(
    *, partner_id: int, environment: str, after: EventPosition | None, event_type: str | None
) -> QuerySet[WebhookEvent]:
    """A partner environment's replayable events after the cursor position `after`, in replay order
    (writer_xid, created_at, id): those of the retention window whose transaction lies below the readers' horizon,
    so no event can commit behind a cursor (docs/decisions.md, "Event replay"), test events left out (an
    endpoint's own). On the replay index (partner, environment, writer_xid, created_at, id)."""
    events = WebhookEvent.objects.filter(
        partner_id=partner_id,
        environment=environment,
        created_at__gte=timezone.now() - timedelta(days=settings.WEBHOOK_EVENT_RETENTION_DAYS),
    ).exclude(type=WEBHOOK_TEST_EVENT)
    events = followers_visible(events, xid_field="writer_xid")
    if event_type:
        events = events.filter(type=event_type)
    if after is not None:
        # The >= bounds the index range; the ORs skip what the cursor has seen at that xid and instant.
        events = events.filter(writer_xid__gte=after.writer_xid).filter(
            Q(writer_xid__gt=after.writer_xid)
            | Q(created_at__gt=after.created_at)
            | Q(created_at=after.created_at, id__gt=after.event_id)
        )
    return events.order_by("writer_xid", "created_at", "id")


def events_replay(
    *,
    partner_id: int,
    environment: str,
    after: EventPosition | None,
    event_type: str | None,
    limit: int,
) -> tuple[list[tuple[EventPosition, str]], bool]:
    """At most `limit` replayable events after `after` as [(position, body)], and whether more follow. A page also
    ends once its bodies pass WEBHOOK_EVENT_PAGE_MAX_BYTES (it holds one event at least): events carry whole
    projects, and a thousand of near 1 MiB each must not be held by one web worker."""
    events = events_replay_queryset(partner_id=partner_id, environment=environment, after=after, event_type=event_type)
    rows = events.values_list("writer_xid", "created_at", "id", "body")[: limit + 1].iterator(chunk_size=20)
    page, size = [], 0
    for xid, created_at, event_id, body in rows:
        if len(page) == limit or (page and size + len(body) > settings.WEBHOOK_EVENT_PAGE_MAX_BYTES):
            return page, True
        page.append((EventPosition(xid, created_at, event_id), body))
        size += len(body)
    return page, False


# --- deliveries overdue (/readyz, the admin, the portal) ----------------------------------------------------------


def with_oldest_due(endpoints: QuerySet[WebhookEndpoint]) -> QuerySet[WebhookEndpoint]:
    """The endpoints with `oldest_due`: when their longest-waiting pending delivery came due (one probe of the due
    index each)."""
    oldest = (
        WebhookDelivery.objects.filter(endpoint_id=OuterRef("pk"), status=DeliveryStatus.PENDING)
        .order_by("next_attempt_at")
        .values("next_attempt_at")[:1]
    )
    return endpoints.annotate(oldest_due=Subquery(oldest))


def overdue_since(endpoint: WebhookEndpoint, *, now: datetime | None = None) -> datetime | None:
    """When the endpoint's deliveries came due, if they have waited longer than WEBHOOK_OVERDUE_SECONDS for a
    worker (an endpoint paused after failures, or disabled, is waiting on purpose); else None. Needs
    `with_oldest_due`."""
    now = now or timezone.now()
    oldest = getattr(endpoint, "oldest_due", None)
    if oldest is None or not endpoint.is_enabled or (endpoint.paused_until and endpoint.paused_until > now):
        return None
    return oldest if oldest < now - timedelta(seconds=settings.WEBHOOK_OVERDUE_SECONDS) else None


def deliveries_overdue_readiness() -> dict:
    """/readyz's detail on webhook deliveries (settings.READINESS_DETAILS): whether the workers keep up."""
    now = timezone.now()
    endpoints = with_oldest_due(
        WebhookEndpoint.objects.filter(Q(paused_until__isnull=True) | Q(paused_until__lte=now), is_enabled=True)
    ).filter(oldest_due__lt=now - timedelta(seconds=settings.WEBHOOK_OVERDUE_SECONDS))
    overdue = list(endpoints.values_list("oldest_due", flat=True))
    oldest = min(overdue, default=None)
    return {
        "status": "overdue" if oldest else "ok",
        "endpointsOverdue": len(overdue),
        "oldestDueSeconds": round((now - oldest).total_seconds()) if oldest else None,
        "thresholdSeconds": settings.WEBHOOK_OVERDUE_SECONDS,
    }


def endpoint_signing_secrets(endpoint: WebhookEndpoint) -> list[str]:
    """The secrets a request to this endpoint is signed with: the current one, and the previous while it overlaps."""
    result = [secret_box.decrypt(endpoint.secret_encrypted)]
    until = endpoint.previous_secret_until
    if endpoint.previous_secret_encrypted and until and until > timezone.now():
        result.append(secret_box.decrypt(endpoint.previous_secret_encrypted))
    return result
