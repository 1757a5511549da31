"""Reads for the console's pages, always of the logged-in user's partner (a look-up by id alone never happens)."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Prefetch, Q, QuerySet

from ingest.models import RawPush
from mappings.selectors import mapping_publications
from partners.choices import Environment
from partners.models import ClientId, IntegrationCredential, Partner
from readiness.drift.selectors import source_key_drift
from readiness.onboarding import ReadinessGap, environment_health, production_readiness_gaps
from webhooks.choices import DeliveryStatus
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.selectors import with_oldest_due

API_ROOTS = {Environment.SANDBOX: "/sandbox/api/v1/", Environment.PRODUCTION: "/api/v1/"}
DELIVERY_LOG_PAGE = 50


@dataclass(frozen=True)
class EnvironmentSummary:
    environment: str
    label: str
    api_root: str
    open: bool  # its ClientIDs work (production: once cleared)
    client_ids: int  # active ones
    pushes: int
    last_push: datetime | None
    mapping_version: int | None
    webhooks: int


def environments_summary(*, partner: Partner) -> list[EnvironmentSummary]:
    pushes = {
        row["environment"]: row
        for row in RawPush.objects.filter(partner=partner)
        .values("environment")
        .annotate(count=Count("id"), last=Max("received_at"))
        .order_by()
    }
    keys = dict(
        ClientId.objects.active()
        .filter(partner=partner)
        .values("environment")
        .annotate(count=Count("id"))
        .values_list("environment", "count")
    )
    hooks = dict(
        WebhookEndpoint.objects.filter(partner=partner)
        .values("environment")
        .annotate(count=Count("id"))
        .order_by()
        .values_list("environment", "count")
    )
    publications = mapping_publications(partner=partner)
    return [
        EnvironmentSummary(
            environment=environment.value,
            label=environment.label,
            api_root=API_ROOTS[environment],
            open=environment == Environment.SANDBOX or partner.is_cleared_for_production,
            client_ids=keys.get(environment, 0),
            pushes=pushes.get(environment, {}).get("count", 0),
            last_push=pushes.get(environment, {}).get("last"),
            mapping_version=publications[environment].version.number if environment in publications else None,
            webhooks=hooks.get(environment, 0),
        )
        for environment in Environment
    ]


def _partner_words(gap: ReadinessGap) -> str | None:
    """What the operators wait for, said to the partner (None: nothing the partner needs to hear)."""
    facts = gap.facts
    return {
        "no_mappings": "Our operators have not written the field mappings for your records yet.",
        "production_no_version": "Your field mappings are not yet published to production.",
        "production_other_version": "Production still uses an earlier version of your field mappings "
        f"(version {facts.get('production')}; the sandbox has version {facts.get('sandbox')}).",
        "no_sandbox_pushes": "No records pushed to the sandbox yet: push some, so that the mappings can be checked.",
        "mapped_share_low": f"{facts.get('share')}% of your latest {facts.get('sampled')} sandbox records map "
        f"cleanly; production opens from {facts.get('ready')}%. Your sandbox pushes say which values were refused, "
        "and why.",
        "essential_unmapped": f"Your records' {' and '.join(facts.get('fields', []))} "
        f"{'is' if len(facts.get('fields', [])) == 1 else 'are'} not mapped yet.",
        "sandbox_drift": "Your sandbox records carry fields that are new since the mappings were made and are not "
        f"mapped yet: {', '.join(facts.get('keys', []))}.",
    }.get(gap.code)


def production_waits(*, partner: Partner) -> list[str]:
    """What the operators still wait for before clearing the partner for production, in the partner's words: the
    readiness the operators' clearance page shows (readiness/onboarding.py). Empty once cleared."""
    if partner.is_cleared_for_production:
        return []
    sandbox = environment_health(partner=partner, environment=Environment.SANDBOX)
    drift = source_key_drift(partner=partner, environment=Environment.SANDBOX)
    gaps = production_readiness_gaps(partner=partner, sandbox=sandbox, sandbox_drift=drift)
    return [words for gap in gaps if (words := _partner_words(gap))]


def partner_client_ids(*, partner: Partner) -> QuerySet[ClientId]:
    """The partner's ClientIDs, each with its live client secrets (`live_credentials`, newest first)."""
    live = Prefetch("credentials", queryset=IntegrationCredential.objects.active(), to_attr="live_credentials")
    return (
        ClientId.objects.filter(partner=partner)
        .only("prefix", "label", "environment", "created_at", "last_used_at", "revoked_at")
        .prefetch_related(live)
    )


def partner_live_client_id(*, partner: Partner, client_id_pk: int) -> ClientId | None:
    return ClientId.objects.active().filter(partner=partner, pk=client_id_pk).first()


def partner_credential(*, partner: Partner, credential_pk: int) -> IntegrationCredential | None:
    """One live client secret of the partner's, with its ClientID."""
    return (
        IntegrationCredential.objects.active()
        .select_related("client_id")
        .filter(partner=partner, pk=credential_pk)
        .first()
    )


def partner_webhooks(*, partner: Partner, environment: str) -> QuerySet[WebhookEndpoint]:
    counts = {status: Count("deliveries", filter=Q(deliveries__status=status)) for status in DeliveryStatus.values}
    endpoints = WebhookEndpoint.objects.filter(partner=partner, environment=environment).annotate(**counts)
    return with_oldest_due(endpoints).order_by("id")


def partner_webhook(*, partner: Partner, environment: str, endpoint_id: int) -> WebhookEndpoint | None:
    return WebhookEndpoint.objects.filter(partner=partner, environment=environment, pk=endpoint_id).first()


def delivery_log(*, endpoint: WebhookEndpoint, before: int | None = None) -> tuple[list[WebhookDelivery], bool]:
    """The endpoint's latest deliveries (before the delivery id `before`), newest first, and whether more follow."""
    deliveries = WebhookDelivery.objects.filter(endpoint=endpoint).select_related("event").defer("event__body")
    if before is not None:
        deliveries = deliveries.filter(pk__lt=before)
    rows = list(deliveries.order_by("-id")[: DELIVERY_LOG_PAGE + 1])
    return rows[:DELIVERY_LOG_PAGE], len(rows) > DELIVERY_LOG_PAGE


def endpoint_delivery(*, endpoint: WebhookEndpoint, delivery_id: int) -> WebhookDelivery | None:
    return WebhookDelivery.objects.filter(endpoint=endpoint, pk=delivery_id).select_related("event").first()
