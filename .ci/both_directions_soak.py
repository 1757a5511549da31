"""Issue #17 tried for real: a partner and the platform side by side against a live server on PostgreSQL (gunicorn and
db_workers started as the README says), everything at once for SECONDS: single pushes, batches with deletes, DELETEs,
pushes that restore, the admin's restore service, platform PATCHes with fresh and stale ETags, mapping publishes
with reprocessing (inline, and queued for the db_workers). Followers of both feeds (each partner's
`updatedDate=gt:` pull with includeDeleted, the platform's `changes` at limits 500 and 7) run meanwhile; at the end
each one's last-seen version of every project is compared with a fresh full read and with the database.
Prints counts by status for every writer, then per follower: missed final versions and reorderings (both must be 0).

Setup (the environment of the server, DATABASE_URL included, must be this process's too, for manage.py):
  SOAK_HOST=http://127.0.0.1:8380 SOAK_PLATFORM_KEY=plt_... (read-write)
  SOAK_PARTNERS='{"demo-solar": ["demo@example.com", "demo-password", "sbx_..."], "other": [...]}'
  (sandbox ClientIDs; the first partner needs mapping versions 1 and 2 whose published switch changes projects,
  e.g. version 2 reading `city` from properties.town). Set CLIENT_ID_RATE_LIMIT_PER_MINUTE=0 and
  CLIENT_ID_RECORD_LIMIT_PER_MINUTE=0 on the server, or the writers meet 429s.
usage: .venv/bin/python .ci/both_directions_soak.py SECONDS"""

import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import time
import urllib.parse
from datetime import UTC

import requests

HOST = os.environ.get("SOAK_HOST", "http://127.0.0.1:8000")
BASE = HOST + "/sandbox/api/v1"
PLT = HOST + "/platform/api/v1"
RW = os.environ.get("SOAK_PLATFORM_KEY", "")
PARTNERS = {slug: tuple(login) for slug, login in json.loads(os.environ.get("SOAK_PARTNERS", "{}")).items()}
RUN = os.environ.get("RUN", str(int(time.time())))
IDS = 80
FIRST = next(iter(PARTNERS), "")
WT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def headers(slug):
    email, password, cid = PARTNERS[slug]
    token = requests.post(BASE + "/auth/email/login", json={"email": email, "password": password}).json()["token"]
    return {"Authorization": f"Bearer {token}", "ClientID": cid}


def ext(k):
    return f"ST-{RUN}-{k}"


def record(k, n):
    return {
        "id": ext(k),
        "data": {
            "properties": {"dealname": f"P{k} v{n}", "city": f"C{n}", "town": f"T{n}", "system_size_w": str(5000 + n)}
        },
    }


def count(stats, key):
    stats[key] = stats.get(key, 0) + 1


def pusher(slug, seed, deadline, out):
    rnd, s, stats = random.Random(seed), requests.Session(), {}
    h = headers(slug)
    n = 0
    while time.time() < deadline:
        n += 1
        k = rnd.randrange(IDS)
        if rnd.random() < 0.12:
            r = s.delete(BASE + f"/externals/projects/{urllib.parse.quote(ext(k), safe='')}", headers=h)
            count(stats, f"delete {r.status_code}")
        else:
            r = s.post(BASE + "/externals/push", headers=h, json=record(k, n * 1000 + seed))
            count(stats, f"push {r.status_code}{' restored' if r.ok and r.json().get('restored') else ''}")
        if r.status_code >= 500:
            print("5xx", r.status_code, r.text[:300], flush=True)
    out.put((f"pusher {slug} {seed}", stats))


def batcher(slug, seed, deadline, out):
    rnd, s, stats = random.Random(seed), requests.Session(), {}
    h = headers(slug)
    n = 0
    while time.time() < deadline:
        n += 1
        ks = rnd.sample(range(IDS), 25)
        recs = [{"id": ext(k), "deleted": True} if rnd.random() < 0.15 else record(k, n * 1000 + seed) for k in ks]
        r = s.post(BASE + "/externals/push/batch", headers=h, json={"records": recs})
        count(stats, f"batch {r.status_code}")
        if r.ok:
            for res in r.json()["results"]:
                count(stats, f"  record {res['status']}")
        elif r.status_code >= 500:
            print("5xx", r.status_code, r.text[:300], flush=True)
    out.put((f"batcher {slug} {seed}", stats))


def patcher(seed, deadline, out):
    rnd, s, stats = random.Random(seed), requests.Session(), {}
    h = {"Authorization": f"Bearer {RW}"}
    ids = []
    while time.time() < deadline:
        if not ids or rnd.random() < 0.05:
            slug = rnd.choice(list(PARTNERS))
            r = s.get(PLT + "/projects", headers=h, params={"partner": slug, "environment": "sandbox", "limit": 100})
            ids = [i["id"] for i in r.json()["items"]] if r.ok else []
            if not ids:
                time.sleep(0.2)
                continue
        pid = rnd.choice(ids)
        r = s.get(PLT + f"/projects/{pid}", headers=h)
        count(stats, f"get {r.status_code}")
        if r.status_code != 200:
            continue
        etag = r.headers["ETag"]
        if rnd.random() < 0.2:
            etag = '"1"'
        body = {
            "stage": rnd.choice(["design", "permitting", "installation", None]),
            "milestones": {"ptoDate": f"2026-0{rnd.randint(1, 9)}-1{rnd.randint(0, 9)}"},
            "note": f"n{rnd.random()}",
        }
        r = s.patch(
            PLT + f"/projects/{pid}",
            headers={**h, "If-Match": etag, "Content-Type": "application/merge-patch+json"},
            data=json.dumps(body),
        )
        count(stats, f"patch {r.status_code}")
        if r.status_code >= 500:
            print("5xx", r.status_code, r.text[:300], flush=True)
    out.put((f"patcher {seed}", stats))


def manage(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([f"{WT}/.venv/bin/python", "manage.py", *arguments], cwd=WT, capture_output=True, text=True)


def reprocessor(deadline, out):
    stats, version = {}, 1
    while time.time() < deadline:
        version = 3 - version
        if version == 1:  # inline, as an operator's command does
            p = manage("publish_mappings", FIRST, "--env", "sandbox", "--version", "1")
        else:  # queued for the db_workers, as the admin does
            p = manage("publish_mappings", FIRST, "--env", "sandbox", "--version", "2", "--no-reprocess")
            if p.returncode == 0:
                p = manage(
                    "shell",
                    "-c",
                    "from partners.models import Partner\n"
                    "from mappings.services import reprocess_run_request\n"
                    "from django.db import transaction\n"
                    f"with transaction.atomic(): reprocess_run_request(partner=Partner.objects.get(slug={FIRST!r}), "
                    "environment='sandbox', requested_by=None)",
                )
        count(stats, f"reprocess v{version} rc={p.returncode}")
        if p.returncode:
            print("reprocess failed", p.stdout[-500:], p.stderr[-1500:], flush=True)
        time.sleep(3)
    out.put(("reprocessor", stats))


def restorer(deadline, out):
    stats = {}
    code = (
        "import random, time\nfrom projects.models import Project\nfrom ingest.delete_services import project_restore\n"
        f"end = {deadline}\n"
        "n = 0\n"
        "while time.time() < end:\n"
        f"    ids = list(Project.objects.filter(external_id__startswith='ST-{RUN}-', deleted_date__isnull=False).values_list('pk', flat=True)[:50])\n"  # noqa: E501
        "    if ids and project_restore(project_id=random.choice(ids), restored_by=None): n += 1\n"
        "    time.sleep(0.3)\n"
        "print('restored', n)\n"
    )
    p = subprocess.run(
        [f"{WT}/.venv/bin/python", "manage.py", "shell", "-c", code], cwd=WT, capture_output=True, text=True
    )
    stats[p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "none"] = p.returncode
    if p.returncode:
        print("restorer failed", p.stderr[-1500:], flush=True)
    out.put(("restorer (admin's service)", stats))


def partner_follower(slug, stop_at, out):
    """The documented loop: updatedDate=gt:<watermark>, ordering=updatedDate, includeDeleted=true, page=1."""
    s, h, seen, wm, reordered, pages, items_n = requests.Session(), headers(slug), {}, None, 0, 0, 0
    quiet_since = None
    while True:
        params = {"ordering": "updatedDate", "limit": 100, "includeDeleted": "true"}
        if wm:
            params["updatedDate"] = f"gt:{wm}"
        r = s.get(BASE + "/integration/projects", headers=h, params=params)
        if r.status_code != 200:
            print("follower", slug, r.status_code, r.text[:200], flush=True)
            time.sleep(0.5)
            continue
        pages += 1
        items = r.json()["items"]
        for it in items:
            if wm and it["updatedDate"] <= wm:
                reordered += 1
            wm = it["updatedDate"]
            items_n += 1
            seen[it["id"]] = it
        done, quiet_since = caught_up(empty=not items, stop_at=stop_at, quiet_since=quiet_since)
        if done:
            break
    out.put((f"partner follower {slug}", {"pages": pages, "items": items_n, "reordered": reordered, "seen": seen}))


def caught_up(*, empty: bool, stop_at, quiet_since: float | None) -> tuple[bool, float | None]:
    """Whether a follower may stop (the writers are done and 8 s passed with no new item), and its quiet_since."""
    if not empty:
        return False, None
    if time.time() > stop_at.value > 0:
        quiet_since = quiet_since or time.time()
        if time.time() - quiet_since > 8:
            return True, quiet_since
    time.sleep(0.2)
    return False, quiet_since


def platform_follower(limit, stop_at, out):
    s, h, seen, cursor, last, reordered, pages, items_n = (
        requests.Session(),
        {"Authorization": f"Bearer {RW}"},
        {},
        None,
        None,
        0,
        0,
        0,
    )
    quiet_since = None
    while True:
        params = {"environment": "sandbox", "limit": limit}
        if cursor:
            params["after"] = cursor
        r = s.get(PLT + "/changes", headers=h, params=params)
        if r.status_code != 200:
            print("platform follower", r.status_code, r.text[:200], flush=True)
            time.sleep(0.5)
            continue
        pages += 1
        body = r.json()
        for it in body["items"]:
            pos = (it["project"]["updatedDate"], it["project"]["id"])
            if last and pos <= last:
                reordered += 1
            last = pos
            items_n += 1
            seen[it["project"]["id"]] = it
        cursor = body["nextCursor"]
        done, quiet_since = caught_up(empty=not body["items"], stop_at=stop_at, quiet_since=quiet_since)
        if done:
            break
    out.put(
        (f"platform follower limit={limit}", {"pages": pages, "items": items_n, "reordered": reordered, "seen": seen})
    )


def strip_volatile(p):
    return json.dumps(p, sort_keys=True)


def main():
    seconds = float(sys.argv[1])
    deadline = time.time() + seconds
    out = mp.Queue()
    stop_at = mp.Value("d", 0.0)
    followers = [mp.Process(target=partner_follower, args=(slug, stop_at, out)) for slug in PARTNERS]
    followers += [mp.Process(target=platform_follower, args=(lim, stop_at, out)) for lim in (500, 7)]
    writers = []
    for i, slug in enumerate(PARTNERS):
        writers += [mp.Process(target=pusher, args=(slug, 10 + i * 10 + j, deadline, out)) for j in range(3)]
        writers.append(mp.Process(target=batcher, args=(slug, 100 + i, deadline, out)))
    writers += [mp.Process(target=patcher, args=(200 + j, deadline, out)) for j in range(2)]
    writers += [mp.Process(target=reprocessor, args=(deadline, out)), mp.Process(target=restorer, args=(deadline, out))]
    for p in followers + writers:
        p.start()
    results = {}
    for _ in writers:
        name, stats = out.get()
        results[name] = stats
        print(name, json.dumps(stats), flush=True)
    for p in writers:
        p.join()
    # the queued reprocessing runs may still be under way: wait for the workers' queue to empty
    subprocess.run(
        [
            f"{WT}/.venv/bin/python",
            "manage.py",
            "shell",
            "-c",
            "import time\nfrom mappings.models import ReprocessRun\nfor _ in range(120):\n    n = ReprocessRun.objects.exclude(status__in=['succeeded', 'failed']).count()\n    print('runs pending', n)\n    if not n: break\n    time.sleep(1)\n"  # noqa: E501
            "print(dict(ReprocessRun.objects.values_list('status').annotate(__import__('django').db.models.Count('id'))))",
        ],
        cwd=WT,
    )
    stop_at.value = time.time()
    for _ in followers:
        name, stats = out.get()
        results[name] = stats
    for p in followers:
        p.join()
    # the truth, read fresh: a full pull of each partner (no watermark) and a full read of the platform feed
    truth_partner, truth_platform = {}, {}
    for slug in PARTNERS:
        h, wm = headers(slug), None
        while True:
            params = {"ordering": "updatedDate", "limit": 100, "includeDeleted": "true"}
            if wm:
                params["updatedDate"] = f"gt:{wm}"
            items = requests.get(BASE + "/integration/projects", headers=h, params=params).json()["items"]
            if not items:
                break
            for it in items:
                truth_partner.setdefault(slug, {})[it["id"]] = it
            wm = items[-1]["updatedDate"]
    cursor = None
    while True:
        params = {"environment": "sandbox", "limit": 1000}
        if cursor:
            params["after"] = cursor
        body = requests.get(PLT + "/changes", headers={"Authorization": f"Bearer {RW}"}, params=params).json()
        for it in body["items"]:
            truth_platform[it["project"]["id"]] = it
        if not body["items"]:
            break
        cursor = body["nextCursor"]
    # and the database itself
    db = (
        subprocess.run(
            [
                f"{WT}/.venv/bin/python",
                "manage.py",
                "shell",
                "-c",
                "import json\nfrom projects.models import Project\nfrom core.time import epoch_microseconds\n"
                "print(json.dumps({str(p.pk): [epoch_microseconds(p.updated_date), p.deleted_date is not None] for p in Project.objects.filter(environment='sandbox')}))",  # noqa: E501
            ],
            cwd=WT,
            capture_output=True,
            text=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    db = json.loads(db)
    summary = {}
    for slug in PARTNERS:
        f = results[f"partner follower {slug}"]
        t = truth_partner.get(slug, {})
        missed = [pid for pid, p in t.items() if strip_volatile(f["seen"].get(pid)) != strip_volatile(p)]
        extra = [pid for pid in f["seen"] if pid not in t]
        summary[f"partner follower {slug}"] = {
            "pages": f["pages"],
            "items": f["items"],
            "projects": len(t),
            "missed final": len(missed),
            "reordered": f["reordered"],
            "unknown": len(extra),
        }
        if missed:
            print("MISSED", slug, missed[:5], [(f["seen"].get(m), t[m]) for m in missed[:2]])
    for lim in (500, 7):
        f = results[f"platform follower limit={lim}"]
        missed = [pid for pid, p in truth_platform.items() if strip_volatile(f["seen"].get(pid)) != strip_volatile(p)]
        summary[f"platform follower limit={lim}"] = {
            "pages": f["pages"],
            "items": f["items"],
            "projects": len(truth_platform),
            "missed final": len(missed),
            "reordered": f["reordered"],
        }
        if missed:
            print("MISSED platform", missed[:5], [(f["seen"].get(m), truth_platform[m]) for m in missed[:2]])
    # fresh reads against the database: every project's final updatedDate and deleted state
    wrong = 0
    for pid, it in truth_platform.items():
        dbu, dbdel = db[pid]
        from datetime import datetime

        d = datetime.fromisoformat(it["project"]["updatedDate"].replace("Z", "+00:00"))
        u = (d - datetime(1970, 1, 1, tzinfo=UTC)) // __import__("datetime").timedelta(microseconds=1)
        if u != dbu or (it["type"] == "project.deleted") != dbdel:
            wrong += 1
    summary["feed vs database"] = {"projects in db": len(db), "in feed": len(truth_platform), "disagree": wrong}
    partner_total = sum(len(v) for v in truth_partner.values())
    summary["partner pulls vs feed"] = {"partner pulls": partner_total, "feed": len(truth_platform)}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
