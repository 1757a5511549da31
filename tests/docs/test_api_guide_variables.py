"""docs/api.md sets every shell variable it uses before it uses it (issue #35): a reader who pastes its shell blocks
from the top never sends an empty `$PROJECT_ID` or `$REFRESH_TOKEN`."""

import re
from pathlib import Path

API_GUIDE = Path(__file__).resolve().parents[2] / "docs" / "api.md"
FENCE = re.compile(r"^\s*```(\w*)\s*$")
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
USE = re.compile(rf"\$\{{?({NAME})")
ASSIGNMENT = re.compile(rf"^(?:export\s+|local\s+)?({NAME})(?:\[[^\]]*\])?=")
COMMAND_START = re.compile(r"\$\(|&&|\|\||[;|({]")
LOOP_OR_READ = re.compile(rf"\b(?:for\s+({NAME})\s+in|read\s+(?:-\w+\s+)*({NAME}))")


def shell_blocks(text: str) -> list[tuple[int, list[str]]]:
    """Each ```sh or ```bash block: the line of its first line, and its lines, continuation lines joined."""
    lines, blocks, index = text.split("\n"), [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        end = index + 1
        while not FENCE.match(lines[end]):
            end += 1
        if opening.group(1) in {"sh", "bash"}:
            blocks.append((index + 2, lines[index + 1 : end]))
        index = end + 1
    return blocks


def code_of(line: str) -> str:
    """The line without what the shell does not expand: single-quoted text and comments."""
    code = re.sub(r"'[^']*'", "''", line)
    return re.sub(r"(^|\s)#.*$", "", code)


def assigned_in(code: str) -> set[str]:
    names = set()
    for command in COMMAND_START.split(code):
        words = command.split()
        while words and (assignment := ASSIGNMENT.match(words[0] if words[0] not in {"export", "local"} else "")):
            names.add(assignment.group(1))
            words = words[1:]
        if words and words[0] in {"export", "local"}:
            names.update(match.group(1) for word in words[1:] if (match := ASSIGNMENT.match(word)))
    return names | loop_names(code)


def loop_names(code: str) -> set[str]:
    """What `for NAME in` and `read NAME` set, for the rest of their line too."""
    return {loop or read for loop, read in LOOP_OR_READ.findall(code)}


def used_before_set(text: str) -> list[str]:
    assigned, missing = set(), []
    for first_line, lines in shell_blocks(text):
        for offset, line in enumerate(lines):
            code = code_of(line)
            assigned |= loop_names(code)
            missing += [f"line {first_line + offset}: ${name}" for name in USE.findall(code) if name not in assigned]
            assigned |= assigned_in(code)
    return missing


def test_every_variable_docs_api_md_uses_is_set_before():
    text = API_GUIDE.read_text(encoding="utf-8")

    assert used_before_set(text) == []
    assert {"BASE", "CLIENT_ID", "TOKEN", "REFRESH_TOKEN", "PROJECT_ID", "PLATFORM_KEY"} <= {
        name for _, lines in shell_blocks(text) for line in lines for name in assigned_in(code_of(line))
    }


def test_the_check_finds_a_variable_used_before_it_is_set():
    text = """
```sh
BASE=http://127.0.0.1:8000/sandbox/api/v1 EMAIL=a@example.com
curl -s "$BASE/integration/projects/$PROJECT_ID" -H "Authorization: Bearer ${TOKEN}" -d '{"a": "$IN_QUOTES"}'  # $NOTE
TOKEN=$(curl -s "$BASE/auth" -d "$EMAIL"); for ITEM in 1 2; do echo "$ITEM"; done
export PROJECT_ID=1
```

```bash
curl "$BASE/integration/projects/$PROJECT_ID" -H "Authorization: Bearer $TOKEN" -H "X: $REFRESH_TOKEN"
```
"""

    assert used_before_set(text) == ["line 4: $PROJECT_ID", "line 4: $TOKEN", "line 10: $REFRESH_TOKEN"]
