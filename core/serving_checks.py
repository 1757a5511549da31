"""Checks the web server runs as it starts: a deploy check registered with SERVING_TAG that finds an error stops
the start (wsgi.py), as `manage.py check --deploy` reports it. Other commands (migrate, db_worker) are not held."""

from django.core import checks
from django.core.exceptions import ImproperlyConfigured

SERVING_TAG = "serving"


def serving_checks_enforce() -> None:
    """Raise ImproperlyConfigured with every error of the serving checks, so the web server does not start."""
    errors = [
        message
        for message in checks.run_checks(tags=[SERVING_TAG], include_deployment_checks=True)
        if message.is_serious() and not message.is_silenced()
    ]
    if errors:
        raise ImproperlyConfigured(
            "\n".join(f"({error.id}) {error.msg}" + (f" HINT: {error.hint}" if error.hint else "") for error in errors)
        )
