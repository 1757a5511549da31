import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "integration_service.settings")

application = get_wsgi_application()

from django.db import connections  # noqa: E402  (after Django is set up)

from core.db.timeouts import database_timeouts_apply  # noqa: E402
from core.serving_checks import serving_checks_enforce  # noqa: E402

database_timeouts_apply("web")  # the web servers' bounds on their transactions (settings.DATABASE_TIMEOUTS)
serving_checks_enforce()  # e.g. no shared cache with DEBUG off: the server refuses to start (partners/checks.py)
connections.close_all()  # the master forks the workers after this (preload_app): none may share its connections
