from collections import Counter

from ingest.mapping_documents import mapping_document
from ingest.models import FieldMapping
from ingest.normalization import FieldRule
from partners.choices import Environment
from partners.models import Partner
from projects.canonical import CANONICAL_FIELDS
from projects.choices import MappingStatus
from projects.models import Project

_FIELD_ORDER = {canonical.name: index for index, canonical in enumerate(CANONICAL_FIELDS)}


def mapping_rules_for_partner(*, partner: Partner) -> list[FieldRule]:
    """The partner's mappings as engine rules, in canonical field order."""
    mappings = FieldMapping.objects.filter(partner=partner)
    return sorted((mapping.as_rule() for mapping in mappings), key=lambda rule: _FIELD_ORDER[rule.field])


def mapping_document_export(*, partner: Partner) -> dict:
    return mapping_document(mapping_rules_for_partner(partner=partner))


def partner_onboarding(*, partner: Partner, recent: int = 200) -> dict:
    """What an operator needs to judge a partner's integration: credentials, mappings, and how sandbox data maps.

    Only the `recent` most recently updated sandbox projects are read, so the page stays quick for any partner.
    """
    sandbox_projects = list(
        Project.objects.for_partner(partner, Environment.SANDBOX)
        .order_by("-updated_date", "-id")
        .values_list("mapping_status", "issues")[:recent]
    )
    statuses = Counter(status for status, _ in sandbox_projects)
    issue_counts = Counter((issue["field"], issue["reason"]) for _, issues in sandbox_projects for issue in issues)
    client_ids = partner.client_ids.filter(revoked_at__isnull=True)
    return {
        "users": partner.users.filter(is_active=True).count(),
        "sandbox_client_ids": client_ids.filter(environment=Environment.SANDBOX).count(),
        "production_client_ids": client_ids.filter(environment=Environment.PRODUCTION).count(),
        "mappings": FieldMapping.objects.filter(partner=partner).count(),
        "recent_sandbox_projects": len(sandbox_projects),
        "mapped_share": round(100 * statuses[MappingStatus.MAPPED] / len(sandbox_projects))
        if sandbox_projects
        else None,
        "top_issues": [
            {"field": field, "reason": reason, "count": count} for (field, reason), count in issue_counts.most_common(5)
        ],
    }
