"""A leader that vanishes without closing its connections (a lost machine, a cut network) must not hold a worker's
idle LISTEN connection or a statement in flight for the hours the kernel's TCP defaults take (issue #34, item 1):
every PostgreSQL connection asks for TCP keepalives and a TCP user timeout, both bounded by
DATABASE_DEAD_CONNECTION_SECONDS."""

import json

import pytest
from django.db import connection

from tests.core.test_connect_timeouts import run_django

PRINT_OPTIONS = (
    "import json\n"
    "from django.conf import settings\n"
    "options = settings.DATABASES['default']['OPTIONS']\n"
    "print(json.dumps({key: options.get(key) for key in "
    "('keepalives', 'keepalives_idle', 'keepalives_interval', 'keepalives_count', 'tcp_user_timeout')}))"
)


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor != "postgresql", reason="libpq's connection options")
def test_the_live_connection_asks_for_keepalives_and_a_tcp_user_timeout():
    connection.ensure_connection()
    options = {option.keyword.decode(): option.val for option in connection.connection.pgconn.info}

    assert options["keepalives"] == b"1"
    assert options["keepalives_idle"] == b"10"
    assert options["keepalives_interval"] == b"5"
    assert options["keepalives_count"] == b"4"
    assert options["tcp_user_timeout"] == b"30000"
    with connection.cursor() as cursor:  # what the server was told: a socket of its own, the same keepalives
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        ("12", {"keepalives": 1, "keepalives_idle": 4, "keepalives_interval": 2, "keepalives_count": 4,
                "tcp_user_timeout": 12000}),
        ("0", {"keepalives": None, "keepalives_idle": None, "keepalives_interval": None, "keepalives_count": None,
               "tcp_user_timeout": None}),
    ],
    ids=["12 s", "off"],
)  # fmt: skip
def test_the_bound_is_a_setting(seconds, expected):
    _, result = run_django(
        PRINT_OPTIONS, DATABASE_URL="postgres://postgres@127.0.0.1:1/nothing", DATABASE_DEAD_CONNECTION_SECONDS=seconds
    )

    assert json.loads(result.stdout) == expected, result.stderr
