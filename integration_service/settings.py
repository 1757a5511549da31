"""The one settings module. Every value comes from the environment, with defaults safe for local use.

See README.md "Configuration" for the list of variables.
"""

import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "django-insecure-local-development-only-never-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "csp",
    "rest_framework",
    "rest_framework_simplejwt.token_blacklist",  # refresh tokens: each one works once (partners/tokens.py)
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks",
    "worker",  # before django_tasks_db: its db_worker serves every queue by default
    "django_tasks_db",
    "core",  # its management commands (database_role_timeouts); no models
    "partners",
    "projects",
    "mappings",
    "ingest",
    "readiness",
    "workbench",
    "audit",
    "webhooks",
    "exports",
    "observability",
    "portal",
    "platform_api",
    "erasure",
    "demo",
]

MIDDLEWARE = [
    "observability.middleware.RequestObservabilityMiddleware",  # first: every response gets X-Request-ID
    "core.db.replicas.sticky.ReplicaStickyMiddleware",  # a caller's writes read back from the primary
    "django.middleware.security.SecurityMiddleware",
    "core.middleware.HtmlContentSecurityPolicyMiddleware",
    "core.middleware.ApiSkippingWhiteNoiseMiddleware",  # WhiteNoise's, not on API paths
    "partners.oauth_errors.OAuthErrorMiddleware",  # outside the problems: the token routes answer OAuth's errors
    "core.middleware.ApiProblemMiddleware",
    "core.middleware.QueryStringNulMiddleware",
    "partners.throttling.RateLimitHeadersMiddleware",
    "core.middleware.PageMiddleware",  # PAGE_MIDDLEWARE, on every path but the API's
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
# Run by core.middleware.PageMiddleware in this order, where they stood in MIDDLEWARE, for the admin, the console and
# the other pages; the API's answers never used them (issue #33).
PAGE_MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
# The admin's and CSRF's checks look for their middleware in MIDDLEWARE itself; it runs for the pages from
# PAGE_MIDDLEWARE, which core/checks.py checks in their place (tests/core/test_page_middleware.py holds the admin's
# pages to them).
SILENCED_SYSTEM_CHECKS = ["admin.E408", "admin.E409", "admin.E410", "security.W003"]

ROOT_URLCONF = os.environ.get("ROOT_URLCONF", "integration_service.urls")  # bench/ mounts a baseline beside it
WSGI_APPLICATION = "integration_service.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database(url: str | None) -> dict:
    """One database's settings from its URL (the default's from DATABASE_URL, SQLite unless set)."""
    database = dj_database_url.parse(url, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60), conn_health_checks=True)
    if database["ENGINE"] == "django.db.backends.postgresql":
        # Parameters travel apart from the SQL, so psycopg prepares a statement run often (a push's few, a
        # follower's page) and PostgreSQL stops parsing and planning it anew on every request. Django leaves
        # preparing off unless prepare_threshold is set (behind a pooler in transaction mode: -1, docs/deploy.md).
        # The threshold is psycopg's: runs of a statement before it is prepared; a negative one never prepares.
        database.setdefault("OPTIONS", {})["server_side_binding"] = True
        prepare_threshold = env_int("DATABASE_PREPARE_THRESHOLD", 5)
        database["OPTIONS"]["prepare_threshold"] = prepare_threshold if prepare_threshold >= 0 else None
        # Django's backend, with prepared statements that outlive the next release's migration (its docstring).
        database["ENGINE"] = "core.db.postgresql"
        # A database host that drops packets must not hold a request (or /readyz) until the kernel gives up on TCP.
        database["OPTIONS"]["connect_timeout"] = env_int("DATABASE_CONNECT_TIMEOUT_SECONDS", 5)
        # A leader lost without closing its connections (a machine gone, a cut network) must not hold a worker's
        # idle LISTEN connection or a statement in flight for the hours TCP's defaults take: keepalives find a
        # silent peer within the bound, the TCP user timeout data it never acknowledges (docs/deploy.md).
        if (dead_after := env_int("DATABASE_DEAD_CONNECTION_SECONDS", 30)) > 0:
            database["OPTIONS"].update(
                keepalives=1,
                keepalives_idle=max(1, dead_after // 3),
                keepalives_interval=max(1, dead_after // 6),
                keepalives_count=4,
                tcp_user_timeout=dead_after * 1000,
            )
        # PostgreSQL's JIT compiles a long expression for seconds once a plan's estimated cost passes
        # jit_above_cost: the JSON projects/json_sql.py has the database write, on a deep page or an export (10.5 s
        # for one 2,000-row fetch). Statements as short as the service's gain nothing from it: off everywhere.
        options = database["OPTIONS"].get("options", "")
        database["OPTIONS"]["options"] = f"{options} -c jit=off".strip()
    elif database["ENGINE"] == "django.db.backends.sqlite3":
        # `make run` shares one SQLite file between gunicorn's threads and the worker. A deferred transaction that
        # has read cannot wait for another writer (SQLite refuses at once: "database is locked"); one that takes
        # the write lock when it begins waits its turn, up to the timeout.
        database.setdefault("OPTIONS", {}).update(transaction_mode="IMMEDIATE", timeout=20)
    return database


DATABASES = {"default": _database(os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}

# Streaming replicas of the default database (CONTRACT §21, core/db/replicas/): the pulls, the
# platform's feed and reads, exports, the event replay and push diagnostics read there; every write, and every read
# in a write's transaction, on the primary. Aliases replica_1, replica_2, … in the order listed.
REPLICA_ALIASES = []
for _place, _url in enumerate(env_list("DATABASE_REPLICA_URLS", ""), start=1):
    if not _url.startswith(("postgres://", "postgresql://")):
        raise ImproperlyConfigured("DATABASE_REPLICA_URLS lists PostgreSQL streaming replicas (postgres://…).")
    _replica = _database(_url)
    # A replica that does not answer is skipped: it must not hold a request for the default's connect timeout.
    _replica["OPTIONS"]["connect_timeout"] = env_int("REPLICA_CONNECT_TIMEOUT_SECONDS", 2)
    _replica["TEST"] = {"MIRROR": "default"}  # a test run reads the one test database through it
    DATABASES[f"replica_{_place}"] = _replica
    REPLICA_ALIASES.append(f"replica_{_place}")
DATABASE_ROUTERS = ["core.db.replicas.routing.ReplicaRouter"]
# The service's own bounds on PostgreSQL (core/db/timeouts.py; why: docs/decisions.md, "Bounded transactions"), in
# seconds, 0 for none. The web servers': no request holds a worker thread, a row lock or the followers (a transaction
# with a change stamp holds every follower's horizon) for longer; a push that finds its project locked answers 503
# after DATABASE_LOCK_TIMEOUT_SECONDS instead of waiting as long as the holder. The worker's: an export reads for
# minutes in one transaction, a reprocessing run writes in long batches, so its statements and idle spells may
# take longer, and it waits longer for a lock. Other commands (migrate) keep the server's own.
DATABASE_TIMEOUTS = {
    "web": {
        "statement": env_int("DATABASE_STATEMENT_TIMEOUT_SECONDS", 30),
        "lock": env_int("DATABASE_LOCK_TIMEOUT_SECONDS", 5),
        "idle_in_transaction": env_int("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS", 30),
    },
    "worker": {
        "statement": env_int("WORKER_DATABASE_STATEMENT_TIMEOUT_SECONDS", 600),
        "lock": env_int("WORKER_DATABASE_LOCK_TIMEOUT_SECONDS", 30),
        "idle_in_transaction": env_int("WORKER_DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_SECONDS", 600),
    },
}
REPLICA_STICKY_SECONDS = env_int("REPLICA_STICKY_SECONDS", 5)
REPLICA_MAX_LAG_SECONDS = env_int("REPLICA_MAX_LAG_SECONDS", 10)
# How long a replica's measured state (up and its lag, or down) is trusted before it is measured again.
REPLICA_CHECK_SECONDS = float(os.environ.get("REPLICA_CHECK_SECONDS", "1") or 1)
REPLICA_DOWN_RECHECK_SECONDS = float(os.environ.get("REPLICA_DOWN_RECHECK_SECONDS", "5") or 5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "partners.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

REDIS_URL = os.environ.get("REDIS_URL", "")
# Every cache key starts with this, so deployments sharing one Redis database (staging beside production) never
# share list totals, rate limits or login counts. The database name tells deployments apart by default.
CACHE_KEY_PREFIX = os.environ.get("CACHE_KEY_PREFIX", "").strip() or str(DATABASES["default"]["NAME"])
if REDIS_URL:
    CACHES = {
        "default": {
            # Django's, with one Redis client per process instead of one per call (core/cache.py).
            "BACKEND": "core.cache.RedisCache",
            "LOCATION": REDIS_URL,
            # Likewise for a Redis that stops answering: a rate-limit check must not hold a thread for minutes.
            "OPTIONS": {
                "socket_connect_timeout": env_int("REDIS_TIMEOUT_SECONDS", 2),
                "socket_timeout": env_int("REDIS_TIMEOUT_SECONDS", 2),
            },
        }
    }
elif CACHE_DIR := os.environ.get("CACHE_DIR", "").strip():
    # Files shared by the processes of one machine (`make run`'s gunicorn workers count one budget): core/file_cache.py.
    CACHES = {"default": {"BACKEND": "core.file_cache.SharedFileCache", "LOCATION": CACHE_DIR}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
CACHES["default"]["KEY_PREFIX"] = CACHE_KEY_PREFIX
# Without a shared cache every process counts failed logins and requests on its own, so with DEBUG off the web
# server refuses to start and `check --deploy` says why (partners/checks.py). Only for ONE web process on one
# machine may this accept the process's own memory.
LOCAL_CACHE_ALLOWED = env_bool("LOCAL_CACHE_ALLOWED", False)

# Background work (reprocessing from the admin): queued in the database, run by `manage.py db_worker`, which any
# number of machines may run against the same PostgreSQL. Tests use the immediate backend.
TASKS = {
    "default": {
        "BACKEND": os.environ.get("TASKS_BACKEND", "django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default", "webhooks"],
    }
}
# Loops a `db_worker` runs beside its tasks when it serves their queue (by name: worker/ sits below the apps it runs).
WORKER_QUEUE_LOOPS = {
    "webhooks": "webhooks.delivery.engine.engine_start",
    "default": "ingest.retention.maintenance_loop_start",  # raw pushes' partitions ahead, and the window's pruning
}
# A worker holds the tasks it runs by a lease it renews every WORKER_LEASE_SECONDS / 3
# (worker/leases.py); a task whose worker's lease has run out (the worker died) is queued again by any live worker.
WORKER_LEASE_SECONDS = float(os.environ.get("WORKER_LEASE_SECONDS") or 15)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
# Export files (exports/): the file system under EXPORTS_DIR by default, which every web and worker process must
# share; any Django storage backend instead (an S3-compatible bucket through django-storages: docs/deploy.md).
EXPORTS_DIR = Path(os.environ.get("EXPORTS_DIR") or BASE_DIR / "var" / "exports")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
    "exports": {
        "BACKEND": os.environ.get("EXPORTS_STORAGE_BACKEND") or "django.core.files.storage.FileSystemStorage",
        "OPTIONS": json.loads(os.environ.get("EXPORTS_STORAGE_OPTIONS") or "null") or {"location": EXPORTS_DIR},
    },
}

# Production hardening; `manage.py check --deploy` passes with DEBUG=0 and the variables in README.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", SECURE_HSTS_SECONDS > 0)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)

# Every HTML page (admin, partner console, Swagger UI) runs scripts from the service only, and the inline ones that
# carry the page's nonce (`request.csp_nonce`): no inline script or event handler an injected string could add.
# Styles may be inline (the admin's own templates set style attributes); images may be data: URLs (Swagger UI's).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
    }
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["partners.authentication.EnvironmentJWTAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "partners.permissions.HasValidClientId",
    ],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.StrictJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "core.api.negotiation.ExactContentNegotiation",
    "EXCEPTION_HANDLER": "partners.exception_handler.rate_limited_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "core.api.openapi.EnvironmentAutoSchema",
    "DEFAULT_THROTTLE_CLASSES": ["partners.throttling.ClientIdRateThrottle"],
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    # The document of a root is these settings with that root's (core.api.openapi.root_schema_settings);
    # left alone (`manage.py spectacular`, the deploy check), it is production's.
    "TITLE": "Partner Project Data Integration Service (production)",
    "SERVERS": [{"url": "/api/v1", "description": "Production"}],
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "SCHEMA_PATH_PREFIX_TRIM": True,
    "VERSION": "1.0.0",
    # 3.1: a member that may be null is `type: [..., "null"]`, which generators read with their defaults
    # (datamodel-code-generator's ignore 3.0's `nullable` on a required member); see docs/decisions.md.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["core.api.openapi.canonical_paths"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.openapi.environment_security",
        "core.api.openapi.response_headers",
        "webhooks.api.openapi.signature_headers",
    ],
    # One document per root (integration_service/urls.py); Swagger UI lists the sandbox first.
    "SWAGGER_UI_SETTINGS": {
        "urls": [
            {"url": "/sandbox/api/v1/schema/?format=json", "name": "Sandbox (/sandbox/api/v1)"},
            {"url": "/api/v1/schema/?format=json", "name": "Production (/api/v1)"},
            {"url": "/platform/api/v1/schema/?format=json", "name": "Platform (/platform/api/v1)"},
        ],
        "urls.primaryName": "Sandbox (/sandbox/api/v1)",
        "persistAuthorization": False,
        "validatorUrl": None,  # no badge fetched from swagger.io: the page loads nothing from outside (and its CSP)
    },
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The push answer's mappingStatus, in the single push and in each batch result: one enum by one name.
    "ENUM_NAME_OVERRIDES": {"PushMappingStatusEnum": ["unmapped", "partial", "mapped"]},
}

SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=env_int("JWT_ACCESS_TOKEN_MINUTES", 60)),
    # The e-mail login's refresh token (CONTRACT §18): spent by its one use, which answers a new pair.
    "REFRESH_TOKEN_LIFETIME": timedelta(days=env_int("JWT_REFRESH_TOKEN_DAYS", 14)),
    "ROTATE_REFRESH_TOKENS": True,
    "BLACKLIST_AFTER_ROTATION": True,
    "AUTH_HEADER_TYPES": ("Bearer",),
    "UPDATE_LAST_LOGIN": False,
    # Tokens carry a digest of the password hash and stop working when the password changes (checked on the
    # same query that loads the user).
    "CHECK_REVOKE_TOKEN": True,
    "SIGNING_KEY": os.environ.get("JWT_SIGNING_KEY", SECRET_KEY),
}

# Failed logins before 429 (API, admin and console alike), counted from the first failure for a window: per client
# address and e-mail, and per client address across e-mails (0 turns a limit off). See partners/throttling.py.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5)
LOGIN_FAILURE_ADDRESS_LIMIT = env_int("LOGIN_FAILURE_ADDRESS_LIMIT", 20)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", 300)
# Reverse proxies in front of the service that append the client's address to X-Forwarded-For (docs/deploy.md).
# 0: the header is ignored and the peer's address is the client's (core/client_ip.py).
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)

# Requests per ClientID per minute before 429 (0 turns the limit off).
CLIENT_ID_RATE_LIMIT_PER_MINUTE = env_int("CLIENT_ID_RATE_LIMIT_PER_MINUTE", 1200)
# Erasures per ClientID per minute (CONTRACT §22), a budget of their own beside the requests' (0 turns it off): an
# erasure touches every table that held the project, and a loop erasing a whole CRM is not an ordinary sync.
ERASURE_RATE_LIMIT_PER_MINUTE = env_int("ERASURE_RATE_LIMIT_PER_MINUTE", 60)

# How often a ClientID's "last used" time is written at most (saves a write per request).
CLIENT_ID_LAST_USED_RESOLUTION_SECONDS = env_int("CLIENT_ID_LAST_USED_RESOLUTION_SECONDS", 60)

# Retry-After of the 503 answered for a fault of the database or Redis (core/outages.py).
UNAVAILABLE_RETRY_AFTER_SECONDS = env_int("UNAVAILABLE_RETRY_AFTER_SECONDS", 2)
# /readyz reports the database not writable this long after a write was last refused for a full disk
# (core/db/writable.py).
DATABASE_NOT_WRITABLE_SECONDS = env_int("DATABASE_NOT_WRITABLE_SECONDS", 30)

PUSH_MAX_BODY_BYTES = env_int("PUSH_MAX_BODY_BYTES", 1024 * 1024)
# Seconds a request may take to arrive once its first byte has (gunicorn's worker reads it first: server.py).
REQUEST_READ_TIMEOUT_SECONDS = env_int("REQUEST_READ_TIMEOUT_SECONDS", 20)
# Served without a proxy (TRUSTED_PROXY_COUNT 0), open connections one client address may hold in each gunicorn
# worker (of its 1,000), past which a new one is answered 429 and closed: slow clients from one address cannot fill
# the slots (integration_service/server.py). 0 turns it off. Behind proxies, the proxy's own limit applies.
CONNECTIONS_PER_ADDRESS = env_int("CONNECTIONS_PER_ADDRESS", 100)
PUSH_MAX_DEPTH = env_int("PUSH_MAX_DEPTH", 32)

# Batch push (POST externals/push/batch): records per batch, and its own body limit.
PUSH_BATCH_MAX_RECORDS = env_int("PUSH_BATCH_MAX_RECORDS", 500)
PUSH_BATCH_MAX_BODY_BYTES = env_int("PUSH_BATCH_MAX_BODY_BYTES", 10 * 1024 * 1024)
# Records pushed per ClientID per minute, single pushes and batch records alike, before 429 (0 turns it off).
CLIENT_ID_RECORD_LIMIT_PER_MINUTE = env_int("CLIENT_ID_RECORD_LIMIT_PER_MINUTE", 60_000)

# Django refuses to read a body over this; the middleware has already held each route to its own limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(PUSH_MAX_BODY_BYTES, PUSH_BATCH_MAX_BODY_BYTES, 2_621_440)
# The largest body gunicorn reads on any path (the admin's forms and uploads included); a larger one is a 413 unread.
REQUEST_MAX_BODY_BYTES = DATA_UPLOAD_MAX_MEMORY_SIZE
# Bytes of requests a gunicorn worker holds while reading them; past it, bodies under way wait to be read.
REQUEST_READ_BUDGET_BYTES = env_int("REQUEST_READ_BUDGET_BYTES", 64 * 1024 * 1024)
# A project's accumulated source data, as compact UTF-8 JSON; a push that would grow it past this is a 413.
PROJECT_MAX_SOURCE_BYTES = env_int("PROJECT_MAX_SOURCE_BYTES", 1024 * 1024)

# Cache list totals between pages (projects/totals.py). Only correct when every worker shares the cache, since a
# write replaces the data version in the cache of the process that made it; so on by default with Redis only.
PROJECT_TOTALS_CACHED = env_bool("PROJECT_TOTALS_CACHED", bool(REDIS_URL))

PROJECT_PAGE_SIZE_DEFAULT = env_int("PROJECT_PAGE_SIZE_DEFAULT", 20)
PROJECT_PAGE_SIZE_MAX = env_int("PROJECT_PAGE_SIZE_MAX", 100)
# A write overtaken again and again by later writers of its projects takes its turn alone (projects/change_log.py):
# it waits this long for the writers under way to end, then answers 503 project_busy with nothing stored.
CHANGE_LOG_ALONE_WAIT_SECONDS = float(os.environ.get("CHANGE_LOG_ALONE_WAIT_SECONDS") or 10)
# /readyz's details.changeLog says `held` once the oldest open write has held the followers this long.
CHANGE_LOG_HORIZON_HELD_SECONDS = env_int("CHANGE_LOG_HORIZON_HELD_SECONDS", 5)

# --- Exports (exports/): a partner's first pull in one call, written by the background worker ----------------------
EXPORT_DOWNLOAD_TTL_SECONDS = env_int("EXPORT_DOWNLOAD_TTL_SECONDS", 86400)  # a done export's link, then pruned
EXPORTS_MAX_ACTIVE = env_int("EXPORTS_MAX_ACTIVE", 3)  # queued or running per partner environment, then 429
EXPORT_STALE_AFTER_SECONDS = env_int("EXPORT_STALE_AFTER_SECONDS", 6 * 3600)  # prune_exports fails a run this old
EXPORT_CHUNK_SIZE = env_int("EXPORT_CHUNK_SIZE", 2000)  # rows per fetch from the server-side cursor
EXPORT_PROGRESS_EVERY = env_int("EXPORT_PROGRESS_EVERY", 10_000)  # rows between two progress writes
EXPORT_READERS = env_int("EXPORT_READERS", 2)  # connections reading one export's snapshot at once (PostgreSQL)
EXPORTS_TEMP_DIR = os.environ.get("EXPORTS_TEMP_DIR") or None  # where a file is written before storage takes it
# prune_exports removes a file in the exports storage that no export owns once it is this old (younger, it may be one
# being written).
EXPORT_ORPHAN_GRACE_SECONDS = env_int("EXPORT_ORPHAN_GRACE_SECONDS", 3600)

# --- Webhooks (webhooks/): change events to partners' endpoints, sent by `db_worker` (webhooks/delivery/engine.py) -
# On by default with DEBUG (`make run`: a receiver on one's own machine works at once); off in production unless set.
WEBHOOK_ALLOW_PRIVATE_URLS = env_bool("WEBHOOK_ALLOW_PRIVATE_URLS", DEBUG)
WEBHOOK_TIMEOUT_SECONDS = float(os.environ.get("WEBHOOK_TIMEOUT_SECONDS") or 5)  # a whole attempt, connect included
WEBHOOK_RETRY_BASE_SECONDS = float(os.environ.get("WEBHOOK_RETRY_BASE_SECONDS") or 5)  # then 10, 20, 40 ...
WEBHOOK_RETRY_MAX_INTERVAL_SECONDS = float(os.environ.get("WEBHOOK_RETRY_MAX_INTERVAL_SECONDS") or 3600)
WEBHOOK_RETRY_FOR_SECONDS = float(os.environ.get("WEBHOOK_RETRY_FOR_SECONDS") or 86400)  # then marked failed
WEBHOOK_SECRET_OVERLAP_SECONDS = env_int("WEBHOOK_SECRET_OVERLAP_SECONDS", 86400)  # old secret still signs
WEBHOOK_DRAIN_SECONDS = float(os.environ.get("WEBHOOK_DRAIN_SECONDS") or 30)  # one task's turn at one endpoint
# Requests in flight to one endpoint from one worker process, at most (fewer while it answers slowly or fails).
WEBHOOK_ENDPOINT_CONCURRENCY = env_int("WEBHOOK_ENDPOINT_CONCURRENCY", 8)
WEBHOOK_SLOW_SECONDS = float(os.environ.get("WEBHOOK_SLOW_SECONDS") or 1)  # an answer slower halves the requests
# A claimed delivery is leased for WEBHOOK_TIMEOUT_SECONDS + this: the most it may wait for a free request slot.
WEBHOOK_LEASE_MARGIN_SECONDS = float(os.environ.get("WEBHOOK_LEASE_MARGIN_SECONDS") or 3)
# A `db_worker` sent SIGTERM (or SIGINT) claims nothing more at once, and gives what it holds this long to end: the
# webhook attempts in flight (each ends within WEBHOOK_TIMEOUT_SECONDS) and its running task. Then it hands back what
# has not ended (the task queued again, deliveries due again) and exits 0 (worker/management/commands/db_worker.py).
WORKER_STOP_SECONDS = float(os.environ.get("WORKER_STOP_SECONDS") or WEBHOOK_TIMEOUT_SECONDS + 2)
# The workers' delivery loop: a sweep for due deliveries (retries, ended pauses, a dead worker's expired leases)
# every WEBHOOK_SWEEP_SECONDS on PostgreSQL, where NOTIFY wakes it for new events; a poll this often on SQLite.
WEBHOOK_SWEEP_SECONDS = float(os.environ.get("WEBHOOK_SWEEP_SECONDS") or 1)
WEBHOOK_POLL_SECONDS = float(os.environ.get("WEBHOOK_POLL_SECONDS") or 0.1)
WEBHOOK_RUNNER_IDLE_SECONDS = float(os.environ.get("WEBHOOK_RUNNER_IDLE_SECONDS") or 60)
# /readyz and the admin say deliveries are overdue when one has been due longer than this.
WEBHOOK_OVERDUE_SECONDS = float(os.environ.get("WEBHOOK_OVERDUE_SECONDS") or 60)
# /readyz's details beside its checks, by name (observability imports no app): {name in the body: function}.
READINESS_DETAILS = {
    "webhookDeliveries": "webhooks.selectors.deliveries_overdue_readiness",
    "changeLog": "projects.selectors.change_log_readiness",
}
# A drain queued this long ago and not started yet is taken as lost (its queue row gone): the next event queues one.
WEBHOOK_DRAIN_REQUEST_STALE_SECONDS = float(os.environ.get("WEBHOOK_DRAIN_REQUEST_STALE_SECONDS") or 300)
# Events are kept (and replayable through GET integration/events) this many days; prune_webhook_events deletes older.
WEBHOOK_EVENT_RETENTION_DAYS = env_int("WEBHOOK_EVENT_RETENTION_DAYS", 30)
# Raw pushes (bodies verbatim) are kept this many days (CONTRACT §22; docs/decisions.md says why 30): whole days older
# are dropped as partitions on PostgreSQL by the worker every RAW_PUSH_MAINTENANCE_SECONDS (and prune_raw_pushes),
# which also creates the partitions of the next RAW_PUSH_PARTITIONS_AHEAD_DAYS days.
RAW_PUSH_RETENTION_DAYS = env_int("RAW_PUSH_RETENTION_DAYS", 30)
RAW_PUSH_PARTITIONS_AHEAD_DAYS = env_int("RAW_PUSH_PARTITIONS_AHEAD_DAYS", 7)
RAW_PUSH_MAINTENANCE_SECONDS = float(os.environ.get("RAW_PUSH_MAINTENANCE_SECONDS") or 3600)
# A page of GET integration/events ends early once its bodies pass this many bytes (events carry whole projects).
WEBHOOK_EVENT_PAGE_MAX_BYTES = env_int("WEBHOOK_EVENT_PAGE_MAX_BYTES", 8 * 1024 * 1024)

# --- E-mail to partners' users (clearance); console unless EMAIL_HOST is set -------------------------------------
PUBLIC_BASE_URL = os.environ.get("PUBLIC_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not EMAIL_USE_SSL)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "integration@localhost")

# Who may read /metrics besides loopback: `Authorization: Bearer <METRICS_TOKEN>` (empty: loopback only).
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")

# One JSON object per line (LOG_FORMAT=plain for people reading a terminal), each carrying the request id.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s",
            "rename_fields": {"levelname": "level", "name": "logger"},
            "timestamp": "time",
        },
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": os.environ.get("LOG_FORMAT", "json"),
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # The request line says it already; crashes (5xx) are still logged with their traceback.
        "django.request": {"level": "ERROR"},
    },
}
