"""The partners app's deploy checks: the login and request budgets are one budget only in a shared cache."""

from django.conf import settings
from django.core import checks
from django.core.cache import caches
from django.core.cache.backends.dummy import DummyCache
from django.core.cache.backends.locmem import LocMemCache

from core.file_cache import SharedFileCache
from core.serving_checks import SERVING_TAG


@checks.register(SERVING_TAG, deploy=True)
def shared_cache_check(app_configs: object, **kwargs: object) -> list[checks.CheckMessage]:
    """With DEBUG off, a cache in each process's memory (no REDIS_URL) is an error: failed logins and requests would
    be counted per process (partners/throttling.py). `check --deploy` shows it; the web server refuses to start
    (core/serving_checks.py). LOCAL_CACHE_ALLOWED=1 makes it a warning, for one web process."""
    if settings.DEBUG:
        return []
    if isinstance(caches["default"], SharedFileCache):
        return [
            checks.Warning(
                "DEBUG is off and the cache is in files on this machine (CACHE_DIR, no REDIS_URL): its processes "
                "count one budget, but a web process on another machine would count its own.",
                hint="Serve from one machine only, or set REDIS_URL.",
                id="partners.W002",
            )
        ]
    if not isinstance(caches["default"], LocMemCache | DummyCache):
        return []
    limit = settings.LOGIN_FAILURE_LIMIT
    why = (
        "DEBUG is off and the cache is each process's own memory (no REDIS_URL): every web process would count "
        f"failed logins and requests on its own, so a login budget of {limit} would be {limit} per process."
    )
    if settings.LOCAL_CACHE_ALLOWED:
        return [
            checks.Warning(
                why,
                hint="LOCAL_CACHE_ALLOWED=1: run a single web process (WORKERS=1) on one machine, or set REDIS_URL.",
                id="partners.W001",
            )
        ]
    return [
        checks.Error(
            why,
            hint=(
                "Set REDIS_URL (or configure another shared cache). Only for a single web process on one machine, "
                "LOCAL_CACHE_ALLOWED=1 accepts the local memory."
            ),
            id="partners.E001",
        )
    ]
