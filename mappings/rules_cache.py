"""Compiled rules of mapping versions, cached per process by version id.

A version never changes once written (mappings/services.py only adds them), so an entry cannot go stale:
a push reads which version its environment uses, and only a version this process has not seen yet costs a query.
At most VERSION_RULES_MAX_BYTES of rules are kept (a version's enum tables can be large), the oldest going first.
"""

from core.sized_cache import sized_cache
from mappings.documents import rules_from_document
from mappings.normalization import FieldRule

VERSION_RULES_MAX_BYTES = 64 * 1024 * 1024


@sized_cache(max_entries=512, max_bytes=VERSION_RULES_MAX_BYTES)
def version_rules(*, version_id: int) -> tuple[FieldRule, ...]:
    from mappings.models import MappingVersion  # models import the engine modules; keep this module import-light

    document = MappingVersion.objects.values_list("document", flat=True).get(pk=version_id)
    return tuple(rules_from_document(document))


def version_rules_cache_clear() -> None:
    """For tests only: a rolled-back SQLite transaction hands the same id to the next test's version."""
    version_rules.cache_clear()
