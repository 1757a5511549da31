"""How gunicorn serves the service, in one place: `make run`, `.ci/fuzz`, the tests and the production set-up in
the README all start `gunicorn -c gunicorn.conf.py --bind ADDRESS`. Why these values: docs/decisions.md, "Serving".
"""

import ctypes
import ctypes.util
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

# glibc raises its mmap threshold (up to 32 MiB) each time it frees a block above it: after the first large push,
# blocks of hundreds of kilobytes (a push's body, its JSON, its strings) come from the heap arenas of the worker's
# threads and fragment them. Each worker grew about 5 MiB every 1,000 pushes of 150-450 KB, linearly, though its
# Python objects did not (bench/mapping_soak.py, bench/README.md). A fixed threshold (as MALLOC_MMAP_THRESHOLD_
# would set) keeps every block of 128 KiB or more mapped and returned when freed. Set in the master before the
# application is loaded, so every worker it forks inherits it.
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD_BYTES = 128 * 1024


def large_blocks_mapped() -> bool:
    """Fix glibc's mmap threshold at MMAP_THRESHOLD_BYTES; False where the C library has no mallopt (not glibc)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))
    except (OSError, AttributeError):
        return False


large_blocks_mapped()
