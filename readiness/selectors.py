"""Reads over a partner's latest pushes for the operators' pages: the onboarding summary and source key discovery."""

from collections import Counter
from collections.abc import Iterable, Iterator

from django.db.models import Func, IntegerField, QuerySet

from ingest.models import RawPush
from mappings.evaluation import OPERATOR_PAGE_SAMPLE, PageAllowance, PushPool, within_page_allowance
from mappings.models import MappingPublication
from mappings.normalization import FieldRule, apply_rule, normalize
from mappings.selectors import mapping_rules_for_partner
from partners.choices import Environment
from partners.models import Partner
from projects.choices import MappingStatus
from readiness.discovery import Discovery, FillRate, discover_keys

DISCOVERY_MAX_BYTES = 8 * 1024 * 1024  # of push bodies read for key discovery: ~0.1 s of JSON decoding


def _published_numbers(partner: Partner) -> dict[str, int | None]:
    numbers = dict.fromkeys(Environment.values)
    for environment, number in MappingPublication.objects.filter(partner=partner).values_list(
        "environment", "version__number"
    ):
        numbers[environment] = number
    return numbers


def partner_onboarding(*, partner: Partner, recent: int = OPERATOR_PAGE_SAMPLE) -> dict:
    """What an operator needs to judge a partner's integration: credentials, mappings, and how sandbox pushes map.

    The latest `recent` sandbox pushes are normalized with the current mappings, so the share reflects a mapping
    change at once, before any reprocessing; only those pushes are read, whatever the partner's history, and only
    as many as the page's allowance evaluates (mappings/evaluation.py: OPERATOR_PAGE_SECONDS).
    """
    rules = mapping_rules_for_partner(partner_id=partner.pk, environment=Environment.SANDBOX)
    pushes = (
        RawPush.objects.filter(partner=partner, environment=Environment.SANDBOX)
        .order_by("-received_at", "-id")
        .values_list("data", flat=True)[:recent]
    )
    results = [normalize(data, rules) for data in within_page_allowance(pushes)]
    statuses = Counter(result.mapping_status for result in results)
    issue_counts = Counter((issue["field"], issue["reason"]) for result in results for issue in result.issues)
    client_ids = partner.client_ids.filter(revoked_at__isnull=True)
    return {
        "users": partner.users.filter(is_active=True).count(),
        "sandbox_client_ids": client_ids.filter(environment=Environment.SANDBOX).count(),
        "production_client_ids": client_ids.filter(environment=Environment.PRODUCTION).count(),
        "mappings": len(rules),
        **{f"{environment}_version": number for environment, number in _published_numbers(partner).items()},
        "recent_sandbox_pushes": len(results),
        "mapped_share": round(100 * statuses[MappingStatus.MAPPED] / len(results)) if results and rules else None,
        "top_issues": [
            {"field": field, "reason": reason, "count": count} for (field, reason), count in issue_counts.most_common(5)
        ],
    }


class _OctetLength(Func):
    """A text column's size in bytes; PostgreSQL reads it from a TOASTed value's header without decompressing it."""

    function = "OCTET_LENGTH"
    output_field = IntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))", **extra)


def source_key_discovery(*, partner: Partner, sample: int = 1000, rules: list[FieldRule] | None = None) -> Discovery:
    """Key paths of the partner's latest `sample` pushes, with counts, examples and the mappings that use them, and
    each rule's fill rate over the first of them the page's allowance evaluates (OPERATOR_PAGE_SAMPLE, within
    OPERATOR_PAGE_SECONDS: mappings/evaluation.py). `rules`: the sandbox's when not given (the workbench's edited ones).

    A push can be a megabyte: only the latest pushes within DISCOVERY_MAX_BYTES are read (their sizes are read
    first), a few at a time, and only as far as discovery's own limits go.
    """
    if rules is None:
        rules = mapping_rules_for_partner(partner_id=partner.pk, environment=Environment.SANDBOX)
    sources = {rule.field: rule.source for rule in rules}
    filled: Counter = Counter()
    allowance = PageAllowance()

    def filling(documents: Iterable[dict]) -> Iterator[dict]:
        for document in documents:
            if rules and allowance.take():
                pool = PushPool(document, rules=len(rules))  # the push's rules share one, as when it was stored
                filled.update(
                    rule.field
                    for index, rule in enumerate(rules)
                    if apply_rule(rule, document, pool, later=len(rules) - index - 1)[0] is not None
                )
            yield document

    latest = RawPush.objects.filter(partner=partner).order_by("-received_at", "-id")
    within, sampled = pushes_within_budget(pushes=latest, sample=sample)
    discovery = discover_keys(filling(latest.values_list("data", flat=True)[:within].iterator(chunk_size=20)), sources)
    discovery.capped = discovery.capped or within < sampled
    discovery.fill_rates = {rule.field: FillRate(filled=filled[rule.field], sampled=allowance.taken) for rule in rules}
    return discovery


def pushes_within_budget(*, pushes: QuerySet[RawPush], sample: int) -> tuple[int, int]:
    """How many of the first `sample` pushes (in the queryset's order) fit in DISCOVERY_MAX_BYTES of bodies (at
    least one), and how many there were; only their sizes are read."""
    sizes = list(pushes.values_list(_OctetLength("body"), flat=True)[:sample])
    within, total = 0, 0
    for size in sizes:
        total += size
        if total > DISCOVERY_MAX_BYTES and within:
            break
        within += 1
    return within, len(sizes)
