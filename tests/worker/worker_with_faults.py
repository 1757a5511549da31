"""`manage.py db_worker` with a test's fault in it, run as `python -m tests.worker.worker_with_faults <arguments>`.

WORKER_TEST_PAUSE names a function or method (`module:attribute` or `module:Class.method`): on its
WORKER_TEST_PAUSE_AT-th call (1 unless given) the worker creates the file WORKER_TEST_PAUSE_MARKER and stops there
until it is killed, in the middle of its task (or, WORKER_TEST_PAUSE_SECONDS given, that long, then goes on).
WORKER_TEST_MAIL_DIR: e-mails are written there, a file a connection (Django's file backend), instead of being sent.
"""

import importlib
import os
import sys
import threading
import time
from pathlib import Path


def pause_install(target: str, at: int, marker: Path) -> None:
    module_name, _, attribute = target.partition(":")
    owner = importlib.import_module(module_name)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    calls = 0
    lock = threading.Lock()

    def paused(*args, **kwargs):
        nonlocal calls
        with lock:
            calls += 1
            reached = calls == at
        if reached:
            marker.touch()
            time.sleep(float(os.environ.get("WORKER_TEST_PAUSE_SECONDS") or 3600))  # 3600: until kill -9
        return original(*args, **kwargs)

    setattr(owner, name, paused)


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "integration_service.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import execute_from_command_line

    if mail_dir := os.environ.get("WORKER_TEST_MAIL_DIR"):
        settings.EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
        settings.EMAIL_FILE_PATH = mail_dir
    if target := os.environ.get("WORKER_TEST_PAUSE"):
        pause_install(
            target, int(os.environ.get("WORKER_TEST_PAUSE_AT") or 1), Path(os.environ["WORKER_TEST_PAUSE_MARKER"])
        )
    execute_from_command_line(["manage.py", "db_worker", *sys.argv[1:]])


if __name__ == "__main__":
    main()
