"""The worker's side: deliver an endpoint's due deliveries with several requests in flight, and record them.

A drain claims due deliveries many at a time (`delivery.claims`: one statement, SKIP LOCKED, each leased), sends
them over kept-alive connections with as many requests in flight as the endpoint's window allows
(`delivery.window`: AIMD, up to WEBHOOK_ENDPOINT_CONCURRENCY), and records the outcomes many at a time. Any number
of workers on any number of machines may drain one endpoint at once: each attempt is claimed by one of them.

A failure with no success beside it pauses the endpoint (exponential backoff on failures in a row): a dead endpoint
costs one request per pause, never one per event. What happens after the pause, or after a task's turn, is the
caller's (a drain queues no task): the workers' delivery loop (delivery/engine.py) sweeps for due work every second;
a drain run as a task (webhooks/tasks.py) queues its wake-up or the next turn's task from what the drain returns.
"""

import logging
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Case, F, TextField, Value, When
from django.utils import timezone

from observability.metrics import webhook_delivery_observed
from webhooks.addresses import Target, UrlRefused, url_target
from webhooks.choices import DeliveryStatus
from webhooks.delivery.claims import Claimed, Written, deliveries_claim, deliveries_release, outcomes_write
from webhooks.delivery.retry import retry_delay
from webhooks.delivery.transport import Connections, Outcome
from webhooks.delivery.window import Window
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.selectors import endpoint_signing_secrets
from webhooks.signing import request_headers

logger = logging.getLogger("webhooks.delivery")

CLAIM_MAX = 100  # deliveries one statement claims at most
RECORD_EVERY_SECONDS = 0.02  # outcomes wait at most this long to be written together
STOP_SEEN_SECONDS = 0.25  # a drain looks whether it must stop (no more requests started) at least this often


@dataclass(frozen=True)
class Drained:
    """How a drain ended. `paused_until`: when the endpoint's pause ends, if one stopped the drain. `turn_over`: its
    `turn_seconds` ran out (not paused, not stopped), so deliveries may be left for another drain to go on with."""

    paused_until: datetime | None = None
    turn_over: bool = False


@dataclass
class EndpointPipeline:
    """What a worker keeps for one endpoint from one drain to the next: the window of requests in flight, the
    kept-alive connections, the threads that send, and a running estimate of the endpoint's latency."""

    endpoint_id: int
    window: Window = field(init=False)
    connections: Connections = field(default_factory=Connections)
    latency_ms: float = 0.0
    executor: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        limit = max(1, settings.WEBHOOK_ENDPOINT_CONCURRENCY)
        self.window = Window(limit=limit, slow_ms=round(settings.WEBHOOK_SLOW_SECONDS * 1000))
        self.executor = ThreadPoolExecutor(max_workers=limit, thread_name_prefix=f"webhook-{self.endpoint_id}")

    def claim_size(self) -> int:
        """Enough for the window to keep sending until the next claim, never more than can start within the
        lease's margin at the latency seen."""
        slots = self.window.slots
        if self.window.size < self.window.limit or self.latency_ms > 100:
            return slots
        rounds = int(settings.WEBHOOK_LEASE_MARGIN_SECONDS * 1000 / max(self.latency_ms, 1) / 4)
        return max(slots, min(CLAIM_MAX, slots * max(1, min(rounds, 8))))

    def observe(self, outcome: Outcome) -> None:
        self.window.answered(latency_ms=outcome.latency_ms, succeeded=outcome.succeeded)
        self.latency_ms = (
            outcome.latency_ms if not self.latency_ms else 0.8 * self.latency_ms + 0.2 * outcome.latency_ms
        )

    def close(self) -> None:
        self.executor.shutdown(wait=True)
        self.connections.close()


def deliveries_expire(*, endpoint_id: int) -> None:
    now = timezone.now()
    WebhookDelivery.objects.filter(
        endpoint_id=endpoint_id, status=DeliveryStatus.PENDING, retry_until__lt=now, next_attempt_at__lte=now
    ).update(
        status=DeliveryStatus.FAILED,
        last_error=Case(
            When(last_error="", then=Value("Not delivered within the retry window.")),
            default=F("last_error"),
            output_field=TextField(),
        ),
    )


def _written(item: Claimed, outcome: Outcome, now: datetime) -> Written:
    fields = {
        "response_code": outcome.status_code,
        "latency_ms": outcome.latency_ms,
        "last_error": outcome.error,
        "request_headers": outcome.request_headers,
        "response_headers": outcome.response_headers,
        "response_body": outcome.response_body,
    }
    if outcome.succeeded:
        return Written(item.id, item.attempts, DeliveryStatus.SUCCEEDED, now, delivered_at=now, **fields)
    delay = retry_delay(
        failures=item.attempts,
        base=settings.WEBHOOK_RETRY_BASE_SECONDS,
        cap=settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS,
    )
    next_attempt_at = now + timedelta(seconds=delay)
    if next_attempt_at > item.retry_until:
        return Written(item.id, item.attempts, DeliveryStatus.FAILED, now, delivered_at=None, **fields)
    return Written(item.id, item.attempts, DeliveryStatus.PENDING, next_attempt_at, delivered_at=None, **fields)


def outcomes_record(*, endpoint: WebhookEndpoint, results: list[tuple[Claimed, Outcome]]) -> datetime | None:
    """Every attempt's result passes here: the deliveries' log, their next try or their end (one statement for
    all), the endpoint's pause. Returns when the endpoint's pause ends, if these results paused it."""
    now = timezone.now()
    written = [_written(item, outcome, now) for item, outcome in results]
    outcomes_write(written)
    for row, (item, outcome) in zip(written, results, strict=True):
        result = "delivered" if outcome.succeeded else ("failed" if row.status == DeliveryStatus.FAILED else "retry")
        webhook_delivery_observed(result=result)
        level = logging.DEBUG if outcome.succeeded else logging.INFO
        logger.log(
            level,
            "webhook delivery %s event %s to endpoint %s attempt %s: %s in %s ms %s",
            item.id,
            item.event_id,
            endpoint.pk,
            item.attempts,
            outcome.status_code or "no answer",
            outcome.latency_ms,
            result,
        )
    if any(outcome.succeeded for _, outcome in results):
        if endpoint.failures_in_a_row or endpoint.paused_until:
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failures_in_a_row=0, paused_until=None)
            endpoint.failures_in_a_row, endpoint.paused_until = 0, None
        return None
    with transaction.atomic():
        locked = WebhookEndpoint.objects.select_for_update().filter(pk=endpoint.pk).first()
        if locked is None:
            return None
        locked.failures_in_a_row += 1
        pause = retry_delay(
            failures=locked.failures_in_a_row,
            base=settings.WEBHOOK_RETRY_BASE_SECONDS,
            cap=settings.WEBHOOK_RETRY_MAX_INTERVAL_SECONDS,
        )
        locked.paused_until = now + timedelta(seconds=pause)
        locked.save(update_fields=["failures_in_a_row", "paused_until"])
    endpoint.failures_in_a_row, endpoint.paused_until = locked.failures_in_a_row, locked.paused_until
    return locked.paused_until


@dataclass
class _Sending:
    """One drain pass's view of its endpoint, refreshed before each claim."""

    endpoint: WebhookEndpoint
    target: Target | None
    refused: str
    secrets: list[str]


def _sending(endpoint_id: int) -> _Sending | None:
    endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id).first()
    if endpoint is None or not endpoint.is_enabled:
        return None
    try:
        target, refused = url_target(endpoint.url), ""
    except UrlRefused as error:
        target, refused = None, f"Refused: {error}"
    return _Sending(endpoint=endpoint, target=target, refused=refused, secrets=endpoint_signing_secrets(endpoint))


def _attempt(pipeline: EndpointPipeline, sending: _Sending, item: Claimed) -> Outcome:
    if sending.target is None:
        return Outcome(None, 0, sending.refused)
    headers = request_headers(
        signing_secrets=sending.secrets, message_id=item.event_id, timestamp=int(time.time()), body=item.body
    )
    return pipeline.connections.post(
        target=sending.target, body=item.body.encode(), headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS
    )


def endpoint_deliveries_drain(
    *,
    endpoint_id: int,
    pipeline: EndpointPipeline | None = None,
    stop: threading.Event | None = None,
    turn_seconds: float | None = None,
) -> Drained:
    """Deliver what is due to one endpoint until nothing is, the endpoint fails (it is then paused), `stop` is set,
    or `turn_seconds` have passed (a task's turn; the caller has another one go on). Without a `pipeline`, one is
    made for this drain and closed after it."""
    own = pipeline is None
    pipeline = pipeline or EndpointPipeline(endpoint_id)
    try:
        return _drain(pipeline, stop or threading.Event(), turn_seconds)
    finally:
        if own:
            pipeline.close()


class _Pass:
    """One drain of one endpoint: the runner claims and records; the pipeline's sender threads each take the next
    claimed delivery as soon as the window has room, so no request waits for the runner's statements."""

    def __init__(self, pipeline: EndpointPipeline, sending: _Sending) -> None:
        self.pipeline = pipeline
        self.sending = sending
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # for the runner: outcomes to record, claims to make
        self.sendable = threading.Condition(self.lock)  # for the senders: a delivery and a slot for it
        self.buffer: deque[Claimed] = deque()
        self.active = 0  # requests in flight
        self.outcomes: list[tuple[Claimed, Outcome]] = []
        self.first_outcome_at = 0.0
        self.stale: list[Claimed] = []  # claimed, not sent: their lease ran short
        self.closed = False  # no request is started any more
        self.held = False  # a failure waits to be recorded (it may pause the endpoint): no request is started
        self.timeout = timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS)

    def sender(self) -> None:
        window = self.pipeline.window
        while True:
            with self.lock:
                while not self.closed and (self.held or not self.buffer or self.active >= window.slots):
                    self.sendable.wait()
                if self.closed:
                    return
                item = self.buffer.popleft()
                self.active += 1
                if len(self.buffer) < window.slots:
                    self.changed.notify()  # the runner claims more
            # An attempt that could outlive its lease is not made: the delivery is released, another claim sends it.
            outcome = None if timezone.now() + self.timeout > item.lease_until else self._send(item)
            with self.lock:
                self.active -= 1
                if outcome is None:
                    self.stale.append(item)
                else:
                    self.pipeline.observe(outcome)
                    if not self.outcomes:
                        self.first_outcome_at = time.monotonic()
                    self.outcomes.append((item, outcome))
                    self.held = self.held or not outcome.succeeded
                self.sendable.notify(max(1, window.slots - self.active))  # a slot is free, or more (the window grew)
                if self.held or self.active == 0 or len(self.outcomes) >= CLAIM_MAX or len(self.outcomes) == 1:
                    self.changed.notify()

    def _send(self, item: Claimed) -> Outcome:
        try:
            return _attempt(self.pipeline, self.sending, item)
        except Exception as error:  # a bug must not lose the attempt's slot: it counts as failed
            logger.exception("webhook delivery %s: the attempt raised", item.id)
            return Outcome(None, 0, f"{type(error).__name__}: {error}"[:500])

    def record_due(self) -> bool:
        return bool(self.outcomes) and (
            (self.active == 0 and not self.buffer)
            or len(self.outcomes) >= CLAIM_MAX
            or time.monotonic() - self.first_outcome_at >= RECORD_EVERY_SECONDS
            or any(not outcome.succeeded for _, outcome in self.outcomes)
        )


def _drain(pipeline: EndpointPipeline, stop: threading.Event, turn_seconds: float | None) -> Drained:
    endpoint_id = pipeline.endpoint_id
    deadline = None if turn_seconds is None else time.monotonic() + turn_seconds
    deliveries_expire(endpoint_id=endpoint_id)
    sending = _sending(endpoint_id)
    if sending is None:
        return Drained()
    if sending.endpoint.paused_until and sending.endpoint.paused_until > timezone.now():
        return Drained(paused_until=sending.endpoint.paused_until)
    drain = _Pass(pipeline, sending)
    for _ in range(pipeline.window.limit):
        pipeline.executor.submit(drain.sender)
    paused_until = None
    exhausted = False  # the last claim found nothing more
    disabled = False
    claims = 0
    try:
        while True:
            with drain.changed:
                while True:
                    stopping = stop.is_set() or paused_until is not None or disabled
                    stopping = stopping or (deadline is not None and time.monotonic() > deadline)
                    claim = not (stopping or exhausted) and len(drain.buffer) < pipeline.window.slots
                    finished = (stopping or exhausted) and not drain.buffer and drain.active == 0
                    if stopping:
                        drain.closed = True
                        drain.sendable.notify_all()
                        finished = drain.active == 0
                    if claim or finished or drain.record_due():
                        break
                    drain.changed.wait(timeout=RECORD_EVERY_SECONDS if drain.outcomes else STOP_SEEN_SECONDS)
                outcomes, drain.outcomes = drain.outcomes, []
                stale, drain.stale = drain.stale, []
            if stale:
                deliveries_release(stale)
            if outcomes:  # a pause stops this drain for good: its senders have ended
                paused_until = outcomes_record(endpoint=drain.sending.endpoint, results=outcomes) or paused_until
                with drain.changed:
                    drain.held = drain.held and any(not outcome.succeeded for _, outcome in drain.outcomes)
                    drain.sendable.notify_all()
                continue
            if finished:
                break
            if claim:
                fresh = _sending(endpoint_id) if claims else drain.sending  # a rotated secret, a changed URL...
                claims += 1
                if fresh is None:  # disabled or deleted meanwhile
                    disabled = True
                    continue
                drain.sending = fresh
                claimed = deliveries_claim(endpoint_id=endpoint_id, limit=pipeline.claim_size())
                exhausted = not claimed
                with drain.changed:
                    drain.buffer.extend(claimed)
                    drain.sendable.notify(len(claimed))
    finally:
        with drain.changed:
            drain.closed = True
            drain.sendable.notify_all()
            left = list(drain.buffer) + drain.stale
            drain.buffer.clear()
        if left:
            deliveries_release(left)
    if drain.sending.endpoint.paused_until is None:  # a success after the failure that paused it lifted the pause
        paused_until = None
    turn_over = paused_until is None and deadline is not None and time.monotonic() > deadline and not stop.is_set()
    return Drained(paused_until=paused_until, turn_over=turn_over)
