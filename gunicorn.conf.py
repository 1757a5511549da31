"""How gunicorn serves the service, in one place: `make run`, `.ci/fuzz`, the tests and the production set-up in
the README all start `gunicorn -c gunicorn.conf.py --bind ADDRESS`. Why these values: docs/decisions.md, "Serving".
"""

import os

wsgi_app = "integration_service.wsgi:application"

# Threaded workers that read each request whole in their main loop before a thread takes it, so clients trickling
# headers or bodies hold no thread; gunicorn's own errors (bad request line, 414, 431, ...) are problem+json.
worker_class = "integration_service.server.ProblemThreadWorker"
workers = int(os.environ.get("WORKERS", "2"))
threads = int(os.environ.get("THREADS", "16"))

# Seconds an idle kept-alive connection waits for its next request (in the poller, holding no thread).
keepalive = 5
# The master loads the application once and forks ready workers: a SIGHUP's new workers accept at once instead of
# after seconds of importing Django while the old ones have already stopped accepting (requests waited that long,
# under load past clients' timeouts). New code is deployed with a new master (USR2, then SIGTERM to the old one:
# docs/deploy.md, "Restarting without dropping a request"); HUP re-reads only this configuration.
preload_app = True

# A worker whose main loop stops answering the arbiter this long is restarted (threads do not count).
timeout = 30
graceful_timeout = 30

# gunicorn 25+ opens a control socket at one fixed path per user ($HOME/.gunicorn/gunicorn.ctl), which every
# gunicorn of that user on the machine (tests, a second deployment) would take from the one before. Signals do.
control_socket_disable = True


def pre_fork(server, worker):
    """The objects the master loaded (Django, the app, its modules: about 120,000) are frozen before a worker is
    forked, out of the cyclic collector's generations. Left in them, they made the oldest generation so large that a
    worker's full collection (due when the survivors grow by a quarter of it) came only every few thousand requests,
    and the reference cycles a request leaves behind (DRF's view and request refer to each other, holding the body
    and its parsed JSON) piled up until then: +5 MiB every 1,000 pushes of 150-450 KB, bench/mapping_soak.py
    (issue #33). Frozen, they are never scanned, and the workers' own survivors are collected as they accrue."""
    import gc

    gc.freeze()


# After a request with a large body, the memory its threads freed is handed back to the system: glibc otherwise keeps
# the freed pages of the arenas those bodies, their parsed JSON and their rows went through. With pre_fork's freeze
# above, bench/mapping_soak.py's 10,000 pushes of 150-450 KB grow a worker +0.2-0.5 MiB per 1,000 (+1.6 with the
# freeze alone, +5-6 with neither; issue #33). Only past TRIM_AFTER_BODY_BYTES: a trim walks the arenas (0.03-0.06
# ms measured on a small heap; such a request costs tens of milliseconds).
TRIM_AFTER_BODY_BYTES = 64 * 1024


def _malloc_trim():
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


_trim = _malloc_trim()


def post_request(worker, req, environ, resp):
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return
    if _trim is not None and length > TRIM_AFTER_BODY_BYTES:
        _trim(0)
