"""Writes: endpoints (operators), events and their deliveries (written in the transaction of the change)."""

import functools
import json
import secrets
from collections.abc import Sequence
from datetime import timedelta
from http import HTTPStatus

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.db.rows import row_insert, rows_insert
from core.errors import ServiceError
from core.time import iso_datetime
from observability.after_commit import on_commit_soft
from partners.choices import Environment
from partners.models import Partner, User
from projects.changes import ProjectChange, ProjectChangeKind
from projects.models import Project
from projects.representation import project_pulled_representation
from webhooks import secret_box
from webhooks.addresses import UrlRefused, url_target
from webhooks.choices import ALL_EVENT_TYPES, WEBHOOK_TEST_EVENT, DeliveryStatus, EventType
from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.notify import deliveries_due_notify
from webhooks.selectors import endpoints_subscribed
from webhooks.signing import secret_generate

# --- endpoints ----------------------------------------------------------------------------------------------------


PARTNER_ENDPOINTS_PER_ENVIRONMENT = 10  # what a partner registers itself, through the API or the console


class TooManyEndpoints(ServiceError):
    status_code = HTTPStatus.CONFLICT
    code = "too_many_webhooks"


def event_types_clean(event_types: list[str] | None) -> list[str]:
    """The event types of a subscription, in their canonical order; all of them when none are given."""
    if not event_types:
        return list(ALL_EVENT_TYPES)
    unknown = sorted(set(event_types) - set(ALL_EVENT_TYPES))
    if unknown:
        raise ValidationError(
            {"event_types": f"Unknown event type(s): {', '.join(unknown)}. Known: {', '.join(ALL_EVENT_TYPES)}."}
        )
    return [event_type for event_type in ALL_EVENT_TYPES if event_type in event_types]


def url_check(url: str) -> str:
    """The URL, if the service may call it (resolving its host); else a ValidationError saying why."""
    url = url.strip()
    try:
        url_target(url)
    except UrlRefused as error:
        raise ValidationError({"url": str(error)}) from error
    return url


def webhook_endpoint_create(
    *,
    partner: Partner,
    environment: str,
    url: str,
    event_types: list[str] | None = None,
    created_by: User | None = None,
    description: str = "",
    is_enabled: bool = True,
    max_per_environment: int | None = None,
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint and return it with its signing secret, which is never shown again.
    `max_per_environment` (the partners' API): TooManyEndpoints when the partner environment has that many; the
    partner's row is locked for the count, so concurrent registrations cannot pass it together."""
    url = url_check(url)  # resolves the host: before the lock, not under it
    secret = secret_generate()
    endpoint = WebhookEndpoint(
        partner=partner,
        environment=environment,
        url=url,
        event_types=event_types_clean(event_types),
        description=description,
        is_enabled=is_enabled,
        secret_encrypted=secret_box.encrypt(secret),
        created_by=created_by,
    )
    endpoint.full_clean()
    with transaction.atomic():
        if max_per_environment is not None:
            Partner.objects.select_for_update().filter(pk=partner.pk).first()
            if WebhookEndpoint.objects.filter(partner=partner, environment=environment).count() >= max_per_environment:
                raise TooManyEndpoints(
                    f"This environment has {max_per_environment} webhooks already, the most it can have: delete one."
                )
        endpoint.save()
    return endpoint, secret


def webhook_endpoint_update(
    *,
    endpoint: WebhookEndpoint,
    url: str,
    event_types: list[str] | None,
    is_enabled: bool,
    description: str | None = None,
) -> WebhookEndpoint:
    """Change an endpoint (`description` None: kept). A changed URL is checked as at registration; an unchanged one
    is not again here (every delivery checks it), so an endpoint whose host went private can still be disabled."""
    url = url.strip()
    if url != endpoint.url:
        endpoint.url = url_check(url)
    endpoint.event_types = event_types_clean(event_types)
    if description is not None:
        endpoint.description = description
    was_enabled = WebhookEndpoint.objects.filter(pk=endpoint.pk, is_enabled=True).exists()
    endpoint.is_enabled = is_enabled
    endpoint.full_clean(exclude=["partner", "url", "secret_encrypted"])
    endpoint.save(update_fields=["url", "event_types", "is_enabled", "description"])
    if is_enabled and not was_enabled:
        _drain_soon(endpoint.pk)  # what waited while it was disabled
    return endpoint


def webhook_endpoint_set_enabled(*, endpoint: WebhookEndpoint, enabled: bool) -> WebhookEndpoint:
    """A disabled endpoint gets no new events; its pending deliveries wait and go out when it is enabled again
    (or are marked failed once their retry window has passed)."""
    changed = WebhookEndpoint.objects.filter(pk=endpoint.pk).exclude(is_enabled=enabled).update(is_enabled=enabled)
    endpoint.is_enabled = enabled
    if changed and enabled:
        _drain_soon(endpoint.pk)
    return endpoint


def webhook_endpoint_rotate_secret(*, endpoint: WebhookEndpoint) -> str:
    """A new secret, returned once. The old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP_SECONDS, so
    the partner can switch its receiver over without refusing a request."""
    secret = secret_generate()
    endpoint.previous_secret_encrypted = endpoint.secret_encrypted
    endpoint.previous_secret_until = timezone.now() + timedelta(seconds=settings.WEBHOOK_SECRET_OVERLAP_SECONDS)
    endpoint.secret_encrypted = secret_box.encrypt(secret)
    endpoint.save(update_fields=["secret_encrypted", "previous_secret_encrypted", "previous_secret_until"])
    return secret


def webhook_endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    """Deletes the endpoint and its delivery log; the events stay (other endpoints may have them)."""
    endpoint.delete()


# --- events (the outbox) ------------------------------------------------------------------------------------------


def _event_id() -> str:
    return "evt_" + secrets.token_hex(16)


def _body(*, event_type: str, event_id: str, timestamp: str, data: dict, extra: dict | None = None) -> str:
    # As the API writes JSON (DRF's renderer): compact, UTF-8 kept as is.
    body = {"type": event_type, "id": event_id, "timestamp": timestamp, "data": data, **(extra or {})}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def _record(*, partner_id: int, environment: str, event_type: str, endpoints: list[dict], items: list) -> None:
    """Write events of one type (each a timestamp, data, and members of the body after data or None) with a
    delivery per endpoint, and have the worker deliver them once this transaction commits. `endpoints`: the
    subscribed ones, from `endpoints_subscribed`."""
    if not endpoints or not items:
        return
    now = timezone.now()
    retry_until = now + timedelta(seconds=settings.WEBHOOK_RETRY_FOR_SECONDS)
    events = []
    for timestamp, data, extra in items:
        event_id = _event_id()
        body = _body(event_type=event_type, event_id=event_id, timestamp=timestamp, data=data, extra=extra)
        events.append(
            {
                "id": event_id,
                "partner_id": partner_id,
                "environment": environment,
                "type": event_type,
                "created_at": now,
                "body": body,
                "project_id": data["id"] if event_type in _PROJECT_EVENT_TYPES else None,
            }
        )
    deliveries = [
        {
            "event_id": event["id"],
            "endpoint_id": endpoint["id"],
            "status": DeliveryStatus.PENDING,
            "attempts": 0,
            "created_at": now,
            "next_attempt_at": now,
            "retry_until": retry_until,
            "last_error": "",
        }
        for event in events
        for endpoint in endpoints
    ]
    if len(events) == 1:  # a push: the hot path's plain statements
        row_insert(WebhookEvent, values=events[0])
        for delivery in deliveries:
            row_insert(WebhookDelivery, values=delivery)
    else:  # a batch push or a reprocess (bulk_create cost a batch push a sixth of its time, its arrays of bodies)
        rows_insert(WebhookEvent, rows=events)
        rows_insert(WebhookDelivery, rows=deliveries)
    for endpoint in endpoints:
        if endpoint["paused_until"] is None or endpoint["paused_until"] <= now:  # a paused one has a wake-up due
            _drain_soon(endpoint["id"])


_PROJECT_EVENT_TYPES = (
    EventType.PROJECT_CREATED,
    EventType.PROJECT_UPDATED,
    EventType.PROJECT_DELETED,
    EventType.PROJECT_ERASED,
)
_PROJECT_EVENT_TYPE_OF = {
    ProjectChangeKind.CREATED: EventType.PROJECT_CREATED,
    ProjectChangeKind.UPDATED: EventType.PROJECT_UPDATED,
    ProjectChangeKind.DELETED: EventType.PROJECT_DELETED,
    ProjectChangeKind.ERASED: EventType.PROJECT_ERASED,
}


def project_event_endpoints(*, partner_id: int, environment: str) -> list[dict]:
    """The endpoints to tell about this partner environment's project changes: one indexed look-up."""
    endpoints = endpoints_subscribed(partner_id=partner_id, environment=environment)
    return [endpoint for endpoint in endpoints if set(endpoint["event_types"]) & set(_PROJECT_EVENT_TYPES)]


def project_events_record(
    *, endpoints: list[dict], partner_id: int, environment: str, changes: Sequence[ProjectChange]
) -> None:
    """`project.created`, `project.updated` (restores too) or `project.deleted` (data is the tombstone) by the kind
    of each change of one partner environment's projects, as their writer returned them (projects/services.py):
    `data` is each project as the pull returns it, `timestamp` its updatedDate. A project.updated also has
    `changedFields`: the change's changed fields (camelCase names, "data" for source data, "platform.stage"...).
    Nothing at all without endpoints."""
    if not endpoints or not changes:
        return
    for event_type in _PROJECT_EVENT_TYPES:
        subscribed = [endpoint for endpoint in endpoints if event_type in endpoint["event_types"]]
        chosen = [change for change in changes if _PROJECT_EVENT_TYPE_OF[change.kind] == event_type]
        if not subscribed or not chosen:
            continue
        items = []
        for change in chosen:
            data = project_pulled_representation(change.project)
            extra = None
            if event_type == EventType.PROJECT_UPDATED:
                extra = {"changedFields": list(change.changed_fields)}
            items.append((data["updatedDate"], data, extra))
        _record(
            partner_id=partner_id, environment=environment, event_type=event_type, endpoints=subscribed, items=items
        )


def partner_event_record(*, partner: Partner, event_type: str) -> None:
    """`partner.production_cleared` / `_revoked`, to the partner's endpoints of both environments (the sandbox's
    is where a partner integrating hears that production is open)."""
    now = timezone.now()
    data = {
        "partner": partner.slug,
        "name": partner.name,
        "productionCleared": partner.is_cleared_for_production,
        "productionBaseUrl": f"{settings.PUBLIC_BASE_URL}/api/v1/",
    }
    items = [(iso_datetime(now), data, None)]
    for environment in Environment.values:
        endpoints = endpoints_subscribed(partner_id=partner.pk, environment=environment, event_type=event_type)
        _record(partner_id=partner.pk, environment=environment, event_type=event_type, endpoints=endpoints, items=items)


@transaction.atomic
def webhook_endpoint_send_test(*, endpoint: WebhookEndpoint) -> WebhookEvent:
    """A signed `webhook.test` event to this endpoint alone, delivered (and retried) like any other, queued at once:
    the endpoint's pause after failures is lifted, since whoever asks has usually just fixed the receiver."""
    now = timezone.now()
    data = {"endpointId": endpoint.pk, "message": "A test event from the integration service."}
    event_id = _event_id()
    event = WebhookEvent.objects.create(
        id=event_id,
        partner_id=endpoint.partner_id,
        environment=endpoint.environment,
        type=WEBHOOK_TEST_EVENT,
        created_at=now,
        body=_body(event_type=WEBHOOK_TEST_EVENT, event_id=event_id, timestamp=iso_datetime(now), data=data),
    )
    WebhookDelivery.objects.create(
        event=event,
        endpoint=endpoint,
        next_attempt_at=now,
        retry_until=now + timedelta(seconds=settings.WEBHOOK_RETRY_FOR_SECONDS),
    )
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(paused_until=None)
    _drain_soon(endpoint.pk)
    return event


def events_prune(*, older_than_days: int, chunk: int = 5000) -> int:
    """Delete the events written more than `older_than_days` ago, and their deliveries, partner environment by
    partner environment in chunks (each its own short transaction, on the replay index); returns how many."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    deleted = 0
    for partner_id in Partner.objects.values_list("pk", flat=True):
        for environment in Environment.values:
            while True:
                # In the replay index's order: the oldest events come first, so each chunk reads little past them.
                ids = list(
                    WebhookEvent.objects.filter(partner_id=partner_id, environment=environment, created_at__lt=cutoff)
                    .order_by("writer_xid", "created_at", "id")
                    .values_list("id", flat=True)[:chunk]
                )
                if ids:
                    with transaction.atomic():
                        WebhookDelivery.objects.filter(event_id__in=ids).delete()
                        deleted += WebhookEvent.objects.filter(id__in=ids).delete()[1].get(WebhookEvent._meta.label, 0)
                if len(ids) < chunk:
                    break
    return deleted


# --- erasure (CONTRACT §22) ---------------------------------------------------------------------------------------

ERASED_DELIVERY_NOTE = "Not sent: the project was erased before this event went out (CONTRACT §22)."


def project_events_redact(*, project: Project) -> int:
    """Empty the events of a project being erased, in the caller's transaction (which holds the project's row
    locked, so no event of it can be written meanwhile): each body keeps its type, id and timestamp, its `data` only
    the project's ids (`{"id", "externalId", "erased": true}`, no `changedFields`); their deliveries' stored answers
    go, and those still pending are not sent. How many events. The project's own `project.erased` comes after."""
    mine = WebhookEvent.objects.filter(project_id=project.pk)
    # Events written before project_id was kept: the project's data's id in the body, a UUID no other body holds.
    legacy = WebhookEvent.objects.filter(
        partner_id=project.partner_id,
        environment=project.environment,
        project_id__isnull=True,
        type__in=[EventType.PROJECT_CREATED, EventType.PROJECT_UPDATED, EventType.PROJECT_DELETED],
        body__contains=f'"id":"{project.pk}"',
    )
    event_ids = [
        *mine.exclude(type=EventType.PROJECT_ERASED).values_list("id", flat=True),
        *legacy.values_list("id", flat=True),
    ]
    events = WebhookEvent.objects.filter(pk__in=event_ids).order_by().values_list("id", "type", "body")
    redacted = 0
    for event_id, event_type, body in events.iterator(chunk_size=500):
        timestamp = json.loads(body)["timestamp"]
        data = {"id": str(project.pk), "externalId": project.external_id, "erased": True}
        WebhookEvent.objects.filter(pk=event_id).update(
            body=_body(event_type=event_type, event_id=event_id, timestamp=timestamp, data=data)
        )
        redacted += 1
        # The delivery log's stored exchange (an answer may echo the body; last_error quotes the answer) goes too.
        deliveries = WebhookDelivery.objects.filter(event_id=event_id)
        deliveries.update(response_body="", response_headers="", request_headers="", last_error="")
        deliveries.filter(status=DeliveryStatus.PENDING).update(
            status=DeliveryStatus.FAILED, last_error=ERASED_DELIVERY_NOTE
        )
    return redacted


# --- redelivery (operators and partners) --------------------------------------------------------------------------


def delivery_redeliver(*, delivery: WebhookDelivery) -> None:
    """Send a delivery again (whatever became of it), with a new retry window; the endpoint's pause is lifted,
    since an operator asking has usually just heard the receiver is back."""
    now = timezone.now()
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        status=DeliveryStatus.PENDING,
        next_attempt_at=now,
        retry_until=now + timedelta(seconds=settings.WEBHOOK_RETRY_FOR_SECONDS),
    )
    WebhookEndpoint.objects.filter(pk=delivery.endpoint_id).update(paused_until=None)
    _drain_soon(delivery.endpoint_id)


def _drain_soon(endpoint_id: int) -> None:
    """Have the endpoint drained once this transaction commits: its NOTIFY wakes the workers' delivery loop, and
    a drain task is queued unless one is queued and not started yet (webhooks/tasks.py)."""
    from webhooks.tasks import drain_request  # inside: the task module imports this one (docs/decisions.md)

    deliveries_due_notify(endpoint_ids=[endpoint_id])
    # Soft: a database gone the instant after the commit leaves the deliveries pending, and the workers' sweep
    # (webhooks/delivery/engine.py) finds them; the write they follow stands and is answered as stored.
    on_commit_soft(functools.partial(drain_request, endpoint_id=endpoint_id), step="webhook_drain_request")
