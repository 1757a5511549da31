"""Where a push's worker CPU goes, in-process: request_cost.py's push (bench/changing.lua's record, every push
changing its project) through Django's test client and the whole middleware, on PostgreSQL with Redis, DEBUG off.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/integration_perf REDIS_URL=redis://127.0.0.1:6379/7 \
        .venv/bin/python bench/push_profile.py --pushes 3000
    py-spy record -r 1000 -f raw -o push.txt -- .venv/bin/python bench/push_profile.py --pushes 3000

Prints the CPU (process time) a push took, least of the rounds; run under py-spy (as above) for where it goes.
"""

import argparse
import json
import os
import time

os.environ["CLIENT_ID_RATE_LIMIT_PER_MINUTE"] = os.environ["CLIENT_ID_RECORD_LIMIT_PER_MINUTE"] = "1000000000"

import _setup
from django.core.management import call_command
from django.db import connection
from django.test import Client
from push_load import partner_credentials

IDS = 500


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pushes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    token, key = partner_credentials("bench-push-profile")
    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_CLIENTID=key)
    run = str(time.time())

    def push(number: int, counter: int) -> None:
        record = _setup.lua_record(number, counter)
        record["data"]["properties"]["hs_lastmodifieddate"] = f"{run}-{counter}"
        text = json.dumps(record, separators=(",", ":"))
        response = client.post("/sandbox/api/v1/externals/push", text, content_type="application/json")
        assert response.status_code in (200, 201), response.content

    for number in range(1, IDS + 1):  # every id exists: the measured pushes are updates, each a change
        push(number, 0)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    counter = 0
    spent = []
    for _ in range(args.rounds):
        started = time.process_time()
        for _ in range(args.pushes):
            counter += 1
            push(counter % IDS + 1, counter)
        spent.append((time.process_time() - started) * 1000 / args.pushes)
    print("CPU ms a push (this process), rounds:", ", ".join(f"{ms:.3f}" for ms in spent), f"least {min(spent):.3f}")


if __name__ == "__main__":
    main()
