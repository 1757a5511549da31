"""Hostile shapes schemathesis does not generate, sent as raw HTTP to one API root of a running server.

    python .ci/hostile_requests.py http://127.0.0.1:8765/sandbox/api/v1/ TOKEN CLIENT_ID

Non-standard JSON (NaN, Infinity, 1e400), lone surrogates, NUL, deep nesting, huge integers, charsets that are not
character sets, wildcard media types, a project grown past its source data limit, bad list parameters and writes
to unknown paths. Fails (exit 1) on any 5xx, any error that is not a problem+json body, any answer that is not the
expected status, or any request slower than a few seconds.
"""

import http.client
import json
import sys
import time
import uuid
from urllib.parse import quote, urlsplit

SECONDS_PER_REQUEST = 5


def body_of(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def push_cases(run: str) -> list[tuple[str, bytes, str, int]]:
    """(name, body, content type, expected status) for POST externals/push."""
    json_type = "application/json"

    def record(data: str, external_id: str = f'"{run}-x"') -> bytes:
        return body_of(f'{{"id": {external_id}, "data": {data}}}')

    deep = '{"n": ' * 40 + "1" + "}" * 40
    return [
        ("a good push", record('{"name": "ok"}', f'"{run}-ok"'), json_type, 201),
        ("NaN", record('{"a": NaN}'), json_type, 400),
        ("Infinity", record('{"a": [Infinity]}'), json_type, 400),
        ("-Infinity", record('{"a": {"b": -Infinity}}'), json_type, 400),
        ("1e400", record('{"a": 1e400}'), json_type, 400),
        ("-1e400", record('{"a": -1e400}'), json_type, 400),
        ("NaN id", record("{}", "NaN"), json_type, 400),
        ("lone surrogate value", record('{"a": "\\ud800"}'), json_type, 400),
        ("lone surrogate key", record('{"\\udfff": 1}'), json_type, 400),
        ("lone surrogate id", record("{}", '"\\ud800"'), json_type, 400),
        ("NUL", record('{"a": "\\u0000"}'), json_type, 400),
        ("nested 40 deep", record(deep), json_type, 400),
        ("nested 100,000 deep", body_of("[" * 100_000 + "]" * 100_000), json_type, 400),
        ("integer of 5,000 digits", record(f'{{"a": {"9" * 5000}}}'), json_type, 400),
        ("integer of 4,300 digits", record(f'{{"a": {"9" * 4300}}}', f'"{run}-int"'), json_type, 201),
        ("charset=base64", record("{}"), "application/json; charset=base64", 415),
        ("charset=rot13", record("{}"), "application/json; charset=rot13", 415),
        ("charset=zlib", record("{}"), "application/json; charset=zlib", 415),
        ("charset=hex", record("{}"), "application/json; charset=hex", 415),
        ("charset=idna", record("{}"), "application/json; charset=idna", 415),
        ("charset=klingon", record("{}"), "application/json; charset=klingon", 415),
        ("Content-Type */*", record("{}"), "*/*", 415),
        ("Content-Type application/*", record("{}"), "application/*", 415),
        ("source data grown past 1 MiB, 1", record(f'{{"a": "{"x" * 700_000}"}}', f'"{run}-big"'), json_type, 201),
        ("source data grown past 1 MiB, 2", record(f'{{"b": "{"y" * 700_000}"}}', f'"{run}-big"'), json_type, 413),
    ]


LIST_QUERIES = [
    "updatedDate=gt:0001-01-01T00:00:00%2B01:00",
    "updatedDate=lt:9999-12-31T23:59:59-01:00",
    "submittedDate=gt:9999-12-31",
    "submittedDate=btw:0001-01-01T00:00:00%2B01:00_2026-01-01",
    "updatedDate=btw:2026-01-01_9999-12-31",
    "limit=1.0",
    "page=1.0",
    "limit=%2B5",
    "limit=%205",
    "limit=%D9%A5",
    "page=" + "9" * 1001,
]


def request(base: str, method: str, path: str, *, body: bytes = b"", headers: dict) -> tuple[int, str, bytes, float]:
    parts = urlsplit(base)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=SECONDS_PER_REQUEST * 2)
    started = time.monotonic()
    connection.request(method, path, body=body or None, headers={**headers, "Content-Length": str(len(body))})
    response = connection.getresponse()
    content = response.read()
    elapsed = time.monotonic() - started
    connection.close()
    return response.status, response.getheader("Content-Type", ""), content, elapsed


def problem_ok(content_type: str, content: bytes) -> bool:
    if content_type != "application/problem+json":
        return False
    try:
        body = json.loads(content)
    except ValueError:
        return False
    return isinstance(body, dict) and {"type", "title", "status", "detail", "code"} <= body.keys()


def main(base: str, token: str, client_id: str) -> int:
    root = urlsplit(base).path
    auth = {"Authorization": f"Bearer {token}", "ClientID": client_id}
    run = uuid.uuid4().hex[:8]
    checks = []  # (name, method, path, body, headers, expected status or None for "any 4xx")
    for name, body, content_type, expected in push_cases(run):
        checks.append((name, "POST", root + "externals/push", body, {**auth, "Content-Type": content_type}, expected))
    for name, body, content_type, expected in push_cases(run)[1:3]:
        headers = {"Content-Type": content_type}
        checks.append((f"login: {name}", "POST", root + "auth/email/login", body, headers, expected))
    for name, text, content_type, expected in [
        ("batch: NaN", '{"records": [{"id": "b", "data": {"a": NaN}}]}', "application/json", 400),
        ("batch: 1e400", '{"records": [{"id": "b", "data": {"a": 1e400}}]}', "application/json", 200),
        ("batch: charset=base64", '{"records": []}', "application/json; charset=base64", 415),
        ("batch: */*", '{"records": []}', "*/*", 415),
    ]:
        headers = {**auth, "Content-Type": content_type}
        checks.append((name, "POST", root + "externals/push/batch", body_of(text), headers, expected))
    for name, text, content_type, expected in [
        ("export: NaN", '{"updatedDate": NaN}', "application/json", 400),
        ("export: NUL", '{"updatedDate": "gt:2026-01-01\\u0000"}', "application/json", 400),
        ("export: nested 40 deep", '{"exclude": ' + "[" * 40 + "]" * 40 + "}", "application/json", 400),
        ("export: */*", "{}", "*/*", 415),
        ("export: charset=zlib", "{}", "application/json; charset=zlib", 415),
    ]:
        headers = {**auth, "Content-Type": content_type}
        checks.append((name, "POST", root + "integration/exports", body_of(text), headers, expected))
    download = f"{root}integration/exports/{uuid.uuid4()}/download"
    for query in ("", "?expires=1&signature=x", f"?expires={'9' * 100}&signature=x", "?expires=%00&signature=%00"):
        checks.append((f"export download {query[:40]}", "GET", download + query, b"", {}, 404))
    for query in LIST_QUERIES:
        checks.append((f"list ?{query[:50]}", "GET", f"{root}integration/projects?{query}", b"", auth, 400))
    for encoded in ("%00", "a%00b", "a%0Ab", "%ED%A0%80", "%FF", "x" * 300):  # CRM ids no push could have stored
        checks.append((f"delete id {encoded[:20]}", "DELETE", f"{root}externals/projects/{encoded}", b"", auth, 404))
    long_query = f"{root}integration/projects?page={'9' * 9000}"
    checks.append(("a request line over gunicorn's limit", "GET", long_query, b"", auth, 414))
    for method in ("POST", "PUT", "PATCH", "DELETE", "PROPFIND"):
        for path in (root + "nope", root + "x/y", root.replace("v1", "v2") + "externals/push", "/api", "/sandbox/x"):
            headers = {"Content-Type": "application/json"}
            checks.append((f"{method} {path}", method, quote(path), b"{}", headers, 404))

    failures = 0
    for name, method, path, body, headers, expected in checks:
        status, content_type, content, elapsed = request(base, method, path, body=body, headers=headers)
        problems = []
        if status != expected:
            problems.append(f"status {status}, expected {expected}")
        if status >= 400 and not problem_ok(content_type, content):
            problems.append(f"not a problem+json body ({content_type}): {content[:120]!r}")
        if elapsed > SECONDS_PER_REQUEST:
            problems.append(f"took {elapsed:.1f} s")
        if problems:
            failures += 1
            print(f"FAIL {name}: {'; '.join(problems)}")
    print(f"{len(checks) - failures} of {len(checks)} hostile requests answered as expected on {root}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
