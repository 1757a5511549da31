"""Where the sampled time went, from py-spy's collapsed stacks (push_load.py --py-spy DIR):

    .venv/bin/python bench/py_spy_summary.py DIR/worker-*.txt

Samples are of the thread holding the GIL (py-spy --gil): Python's CPU. Prints each sample given to one part, the
deepest frame's that names one (a JSON decode inside DRF's parser is DRF's; psycopg under Django's cursor is
psycopg's), so the parts add up to 100 %; then the inclusive share (a sample counted for every part it passes
through) of the parts the issue named; then the costliest functions by own time.
"""

import collections
import re
import sys

GROUPS = {  # name: a pattern of a frame ("Class.function (package/file.py:line)")
    "Redis client built (Redis.__init__)": r"^Redis\.__init__ \(redis/client\.py",
    "redis-py": r"\(redis/",
    "rate limits (partners/throttling.py)": r"^(?!RateLimitHeadersMiddleware).*\(partners/throttling\.py",
    "Django database layer": r"\(django/db/",
    "psycopg": r"\(psycopg/",
    "authentication (simplejwt, caller query)": r"\(rest_framework_simplejwt/|\(partners/authentication\.py",
    "ClientID check (partners/permissions.py)": r"\(partners/permissions\.py",
    "DRF (rest_framework)": r"\(rest_framework/",
    "Django's handler and middleware": r"\(django/core/handlers/|\(django/middleware/|\(django/contrib/[^)]*middleware",
    "the service's middleware": r"\(observability/middleware|\(core/middleware|RateLimitHeaders",
    "normalization (mappings/normalization.py)": r"\(ingest/normalization",
    "the push view and services (ingest/)": r"\(ingest/",
    "projects/ (change log, rows)": r"\(projects/",
    "logging": r"\(logging/|\(pythonjsonlogger/",
    "metrics (prometheus_client)": r"\(prometheus_client/",
    "gunicorn (reading, writing)": r"\(gunicorn/|\(integration_service/server\.py",
}


INCLUSIVE = ["redis-py", "Redis client built (Redis.__init__)", "Django database layer", "psycopg"]
INCLUSIVE_AUTHENTICATION = r"\(rest_framework_simplejwt/|\(partners/authentication\.py"


def part(frames: list[str]) -> str:
    for frame in reversed(frames):
        for name, pattern in GROUPS.items():
            if re.search(pattern, frame):
                return name
    return "other (standard library, threads)"


def main() -> None:
    parts: collections.Counter = collections.Counter()
    inclusive: collections.Counter = collections.Counter()
    own: collections.Counter = collections.Counter()
    total = 0
    for path in sys.argv[1:]:
        with open(path) as lines:
            for line in lines:
                stack, _, count = line.rstrip().rpartition(" ")
                if not stack:
                    continue
                samples = int(count)
                frames = stack.split(";")
                total += samples
                own[re.sub(r":\d+\)$", ")", frames[-1])] += samples
                parts[part(frames)] += samples
                for name in INCLUSIVE:
                    if any(re.search(GROUPS[name], frame) for frame in frames):
                        inclusive[name] += samples
                if any(re.search(INCLUSIVE_AUTHENTICATION, frame) for frame in frames):
                    inclusive["authentication, inclusive (its caller query too)"] += samples
    print(f"{total} samples")
    for name, samples in parts.most_common():
        print(f"{100 * samples / total:5.1f} %  {name}")
    print("\ninclusive:")
    for name, samples in inclusive.most_common():
        print(f"{100 * samples / total:5.1f} %  {name}")
    print("\nown time, top 20:")
    for frame, samples in own.most_common(20):
        print(f"{100 * samples / total:5.1f} %  {frame}")


if __name__ == "__main__":
    main()
