from ingest.mapping_documents import mapping_document
from ingest.models import FieldMapping
from ingest.normalization import FieldRule
from partners.models import Partner
from projects.canonical import CANONICAL_FIELDS

_FIELD_ORDER = {canonical.name: index for index, canonical in enumerate(CANONICAL_FIELDS)}


def mapping_rules_for_partner(*, partner: Partner) -> list[FieldRule]:
    """The partner's mappings as engine rules, in canonical field order."""
    mappings = FieldMapping.objects.filter(partner=partner)
    return sorted((mapping.as_rule() for mapping in mappings), key=lambda rule: _FIELD_ORDER[rule.field])


def mapping_document_export(*, partner: Partner) -> dict:
    return mapping_document(mapping_rules_for_partner(partner=partner))
