"""Every marked example of docs/api.md, sent to the server as written: the answer must be the documented one.

The convention is written at the top of docs/api.md (an HTML comment). In short: `<!-- example STATUS -->` before a
```sh block holding one curl call, and the ```json block after it is the answer. The examples run in the order of the
document against `make run`'s demo data (seed_demo), as a reader who follows the guide from the top would send them.
"""

import io
import json
import re
import shlex
import textwrap
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from demo.management.commands.seed_demo import DEMO_USER_EMAIL, DEMO_USER_PASSWORD, demo_client_key, demo_platform_key
from partners.choices import Environment
from partners.models import ClientId
from partners.selectors import client_id_hash
from partners.services import credential_create
from projects.models import Project

pytestmark = pytest.mark.django_db

API_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "api.md"
HOST = "http://127.0.0.1:8000"
MARKER = re.compile(r"^<!-- example (\d{3}) -->$")
FENCE = re.compile(r"^\s*```(\w*)\s*$")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
ANYTHING = "…"
OTHER_MEMBERS = "..."


@dataclass
class Example:
    line: int
    status: int
    command: str
    answer: str


def _fenced_blocks(lines: list[str], start: int) -> tuple[str, str, int]:
    """The next fenced block at or after `start`: its language, its text, and the line after its closing fence."""
    index = start
    while not FENCE.match(lines[index]):
        index += 1
    language = FENCE.match(lines[index]).group(1)
    end = index + 1
    while not FENCE.match(lines[end]):
        end += 1
    return language, "\n".join(line.strip() for line in lines[index + 1 : end]), end + 1


def docs_examples(text: str) -> list[Example]:
    lines = text.splitlines()
    examples = []
    for number, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if not marker:
            continue
        language, command, after = _fenced_blocks(lines, number + 1)
        answer_language, answer, _ = _fenced_blocks(lines, after)
        assert (language, answer_language) == ("sh", "json"), f"docs/api.md:{number + 1}: a sh block, then json"
        examples.append(Example(line=number + 1, status=int(marker.group(1)), command=command, answer=answer))
    return examples


def curl_request(command: str, variables: dict[str, str]) -> tuple[str, str, dict[str, str], str | None]:
    """(method, path with query, headers, body) of the one curl call in a shell block."""
    text = "\n".join(line for line in command.splitlines() if not line.startswith("#")).replace("\\\n", " ")
    text = text.replace('"${AUTH[@]}"', '-H "Authorization: Bearer $TOKEN" -H "ClientID: $CLIENT_ID"')
    text = re.sub(r"\$\{?(\w+)\}?", lambda match: variables[match.group(1)], text)
    words = shlex.split(text)
    assert words.count("curl") == 1, f"one curl call per example: {command}"
    words = words[words.index("curl") + 1 :]
    method, url, headers, body = None, None, {}, None
    while words:
        word = words.pop(0)
        if word == "-X":
            method = words.pop(0)
        elif word == "-H":
            name, value = words.pop(0).split(":", 1)
            headers[name.strip()] = value.strip()
        elif word in ("-d", "--data", "--data-raw"):
            body = words.pop(0)
        elif word.startswith("-"):
            assert word in ("-s", "-i", "-si"), f"curl option {word} is not one the examples test knows"
        else:
            url = word
    parts = urlsplit(url)
    return (
        method or ("POST" if body is not None else "GET"),
        parts.path + ("?" + parts.query if parts.query else ""),
        headers,
        body,
    )


def mismatches(documented, answered, where: str = "") -> list[str]:
    """Where the answer differs from the documented one, modulo ids, dates and the elisions the convention allows."""
    if documented == ANYTHING:
        return []
    if isinstance(documented, str) and isinstance(answered, str):
        if documented.endswith((ANYTHING, OTHER_MEMBERS)) and documented.rstrip("….") != "":
            prefix = documented.removesuffix(ANYTHING).removesuffix(OTHER_MEMBERS)
            return [] if answered.startswith(prefix) else [f"{where}: {answered!r} does not start with {prefix!r}"]
        for kind in (UUID, DATE_TIME):
            if kind.match(documented) and kind.match(answered):
                return []
    if isinstance(documented, dict) and isinstance(answered, dict):
        problems = []
        documented_keys = [key for key in documented if key != OTHER_MEMBERS]
        if OTHER_MEMBERS not in documented and set(answered) != set(documented_keys):
            problems.append(f"{where}: members {sorted(answered)}, documented {sorted(documented_keys)}")
        for key in documented_keys:
            if key not in answered:
                problems.append(f"{where}.{key}: documented, not answered")
            else:
                problems.extend(mismatches(documented[key], answered[key], f"{where}.{key}"))
        return problems
    if isinstance(documented, list) and isinstance(answered, list):
        if len(documented) != len(answered):
            return [f"{where}: {len(answered)} items answered, {len(documented)} documented"]
        return [
            problem
            for index, (one, other) in enumerate(zip(documented, answered, strict=True))
            for problem in mismatches(one, other, f"{where}[{index}]")
        ]
    return [] if documented == answered else [f"{where}: answered {answered!r}, documented {documented!r}"]


def _variables(client: APIClient, token: str) -> dict[str, str]:
    """What the shell variables of docs/api.md hold for the demo partner at this point of the guide."""
    variables = {
        "BASE": f"{HOST}/sandbox/api/v1",
        "PLATFORM": f"{HOST}/platform/api/v1",
        "CLIENT_ID": demo_client_key(Environment.SANDBOX),
        "PLATFORM_KEY": demo_platform_key(),
        "EMAIL": DEMO_USER_EMAIL,
        "PASSWORD": DEMO_USER_PASSWORD,
        "TOKEN": token,
    }
    project = Project.objects.filter(environment=Environment.SANDBOX, external_id="HS-2001").first()
    if project is not None:
        variables["PROJECT_ID"] = str(project.pk)
        read = client.get(f"/platform/api/v1/projects/{project.pk}", HTTP_AUTHORIZATION=f"Bearer {demo_platform_key()}")
        variables["ETAG"] = read.headers.get("ETag", "")
    return variables


def test_the_guide_marks_its_examples():
    examples = docs_examples(API_GUIDE.read_text())

    assert len(examples) >= 7


def test_every_example_in_the_guide_answers_as_documented():
    call_command("seed_demo", "--force", stdout=io.StringIO(), stderr=io.StringIO())  # the test database: a throwaway
    client = APIClient()
    token = client.post(
        "/sandbox/api/v1/auth/email/login", {"email": DEMO_USER_EMAIL, "password": DEMO_USER_PASSWORD}, format="json"
    ).json()["token"]
    problems = []

    for example in docs_examples(API_GUIDE.read_text()):
        method, path, headers, body = curl_request(example.command, _variables(client, token))
        response = client.generic(
            method,
            path,
            data=body or "",
            content_type=headers.pop("Content-Type", "application/json"),
            headers=headers,
        )
        where = f"docs/api.md:{example.line} {method} {path.split('?')[0]}"
        if response.status_code != example.status:
            problems.append(f"{where}: status {response.status_code}, documented {example.status}")
        answered = json.loads(response.content) if response.content else None
        problems.extend(mismatches(json.loads(example.answer), answered, where))

    assert problems == []


def python_blocks(text: str) -> list[str]:
    """The guide's ```python blocks, in order (indented ones included, dedented)."""
    return [
        textwrap.dedent(block) for block in re.findall(r"^ *```python\n(.*?)^ *```$", text, re.DOTALL | re.MULTILINE)
    ]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_guides_python_runs_as_written_against_a_live_server(live_server):
    """The standard-library `call` helper, then the push, batch, delete and list snippets that use it, in order."""
    call_command("seed_demo", "--force", stdout=io.StringIO(), stderr=io.StringIO())  # the test database: a throwaway
    blocks = python_blocks(API_GUIDE.read_text())
    start = next(index for index, block in enumerate(blocks) if "def call(" in block)
    helper = blocks[start].replace('"http://127.0.0.1:8000/sandbox/api/v1"', repr(f"{live_server.url}/sandbox/api/v1"))
    client_key = demo_client_key(Environment.SANDBOX)
    _, secret = credential_create(client_id=ClientId.objects.get(key_hash=client_id_hash(client_key)), created_by=None)
    helper = helper.replace('"sbx_...", "cs_..."', f"{client_key!r}, {secret!r}")
    uses = blocks[start + 1 : start + 5]  # push, batch, delete, list
    namespace = {"records": [{"id": "HS-2002", "data": {"properties": {"dealname": "Diaz"}}}], "crm_id": "HS-2002"}

    exec(helper, namespace)
    for block in uses:
        exec(block, namespace)

    assert UUID.match(namespace["project_id"])
    assert [(result["status"], result["externalId"]) for result in namespace["results"]] == [(201, "HS-2002")]
    assert [item["externalId"] for item in namespace["page"]["items"]] == ["HS-2001"]
    assert "data" not in namespace["page"]["items"][0]
    assert Project.objects.get(external_id="HS-2002").deleted_date is not None
