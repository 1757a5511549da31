"""Other PostgreSQL sessions of a test: a connection of their own to the test database, and a wait until one of them
waits for a row lock."""

import time

import psycopg
from django.db import connection


def psycopg_dsn() -> str:
    """The test database's connection string, for a psycopg connection outside Django's."""
    settings = connection.settings_dict
    parts = {key.lower(): settings[key] for key in ("NAME", "USER", "HOST", "PORT", "PASSWORD") if settings[key]}
    parts["dbname"] = parts.pop("name")
    return " ".join(f"{name}={value}" for name, value in parts.items())


def wait_until_blocked(seconds: float = 10) -> None:
    """Until some session of the test database waits for a row lock."""
    query = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
    deadline = time.monotonic() + seconds
    with psycopg.connect(psycopg_dsn(), autocommit=True) as watcher:
        while time.monotonic() < deadline:
            if watcher.execute(query).fetchone()[0]:
                return
            time.sleep(0.01)
    raise AssertionError("no session came to wait for the row")
