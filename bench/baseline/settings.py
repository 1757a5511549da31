"""A bare Django app for the benchmarks' baselines: one upsert per request (bench/push_load.py), or one page of
projects read (bench/pull_rate.py, bench/platform_feed.py); no middleware, no apps, nothing of the service's but its
database settings and the request-reading limits its gunicorn worker reads.

    DJANGO_SETTINGS_MODULE=bench.baseline.settings gunicorn -c gunicorn.conf.py bench.baseline.wsgi:application
"""

import os

from integration_service import settings as service

SECRET_KEY = os.environ.get("SECRET_KEY", "benchmarks-only")
DEBUG = False
ALLOWED_HOSTS = ["*"]
INSTALLED_APPS: list[str] = []
MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.baseline.urls"
WSGI_APPLICATION = "bench.baseline.wsgi.application"
USE_TZ = True
# The service's: the same PostgreSQL, connections kept as long and checked as often, statements bound server-side.
DATABASES = service.DATABASES
# integration_service.server's worker (gunicorn.conf.py) reads these before the application sees a request.
REQUEST_MAX_BODY_BYTES = service.REQUEST_MAX_BODY_BYTES
REQUEST_READ_BUDGET_BYTES = service.REQUEST_READ_BUDGET_BYTES
REQUEST_READ_TIMEOUT_SECONDS = service.REQUEST_READ_TIMEOUT_SECONDS
PUSH_MAX_BODY_BYTES = service.PUSH_MAX_BODY_BYTES
PUSH_BATCH_MAX_BODY_BYTES = service.PUSH_BATCH_MAX_BODY_BYTES
DATA_UPLOAD_MAX_MEMORY_SIZE = service.DATA_UPLOAD_MAX_MEMORY_SIZE
TRUSTED_PROXY_COUNT = service.TRUSTED_PROXY_COUNT
CONNECTIONS_PER_ADDRESS = service.CONNECTIONS_PER_ADDRESS
