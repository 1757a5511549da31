"""The README's management commands run as it writes them, from a clean clone after `make run` (issue #27)."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
COMMAND_LINE = re.compile(r"The same operations are management commands, run as `([^`]+) <command>`")


def test_the_operators_commands_run_as_the_readme_writes_them(tmp_path):
    prefix = COMMAND_LINE.search((ROOT / "README.md").read_text())
    assert prefix, "the README says how to run the management commands"
    words = shlex.split(prefix.group(1))
    assignment = re.compile(r"^[A-Z_]+=")
    assignments = dict(word.split("=", 1) for word in words if assignment.match(word))
    command = [sys.executable if word == ".venv/bin/python" else word for word in words if not assignment.match(word)]
    environment = {key: value for key, value in os.environ.items() if key not in ("DEBUG", "SECRET_KEY")}
    environment |= {"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", **assignments}

    answer = subprocess.run(
        [*command, "help", "issue_platform_key"], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )

    assert answer.returncode == 0, answer.stderr[-2000:]
    assert "usage: manage.py issue_platform_key" in answer.stdout
