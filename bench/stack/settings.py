"""The chosen stack alone (issue #33's second row): a DRF APIView behind simplejwt's own JWTAuthentication, answering
404, with the service's apps (for its user model) and database settings but none of its middleware, routes or
checks. What any authenticated request on this stack costs before a service does anything of its own.

    DJANGO_SETTINGS_MODULE=bench.stack.settings gunicorn -c gunicorn.conf.py bench.stack.wsgi:application
"""

from integration_service.settings import *  # noqa: F403

MIDDLEWARE: list[str] = []
ROOT_URLCONF = "bench.stack.urls"
WSGI_APPLICATION = "bench.stack.wsgi.application"
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["rest_framework_simplejwt.authentication.JWTAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_THROTTLE_CLASSES": [],
}
