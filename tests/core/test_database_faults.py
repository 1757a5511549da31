"""Each fault of the database says what it is (issue #34 item 6): PostgreSQL's error, by its SQLSTATE, raised at the
cursor as psycopg raises it (Django wraps it, the psycopg error as its cause). A full disk is a 503 `database_full`
that says so, /readyz reports the database not writable and integration_faults_total counts it; the other
faults (read-only, resources, a lock or statement timeout, a conflict) answer 503 with their own detail; an
unreachable database keeps its answer; a program limit is no outage. tests/core/test_full_disk.py fills a real disk."""

from http import HTTPStatus

import psycopg.errors
import pytest
from django.db import OperationalError, connection
from django.db.utils import InternalError
from django.test import Client
from prometheus_client import REGISTRY

from core import outages
from ingest.models import RawPush
from projects.models import Project
from tests.conftest import PASSWORD, SANDBOX, problem, url

pytestmark = pytest.mark.django_db(
    transaction=True
)  # autocommit, as served: a failed write breaks no outer transaction

PUSH = {"id": "CRM-1", "data": {"name": "Lee"}}


def refusing_writes(error: Exception):
    """A cursor wrapper: every INSERT or UPDATE fails with `error`, as the database would raise it."""

    def refuse(execute, sql, params, many, context):
        if sql.lstrip().upper().startswith(("INSERT", "UPDATE")):
            raise error
        return execute(sql, params, many, context)

    return refuse


def django_error(wrapper: type[Exception], cause: Exception) -> Exception:
    """What Django raises for psycopg's `cause` (django.db.utils.DatabaseErrorWrapper)."""
    error = wrapper(str(cause))
    error.__cause__ = cause
    return error


def disk_full() -> Exception:
    return django_error(
        OperationalError,
        psycopg.errors.DiskFull('could not extend file "base/16384/16500": No space left on device'),
    )


def faults_counted(fault: str) -> float:
    return REGISTRY.get_sample_value("integration_faults_total", {"fault": fault}) or 0.0


def detail(outage: outages.Outage) -> str:
    return f"{outage.detail} Send the request again shortly; a push is safe to repeat."


def test_a_full_disk_answers_503_database_full_and_stores_nothing(sandbox_client):
    counted = faults_counted("database_full")
    sandbox_client.raise_request_exception = False

    with connection.execute_wrapper(refusing_writes(disk_full())):
        response = sandbox_client.post(url(SANDBOX, "push"), PUSH, format="json")

    assert (response.status_code, response["Retry-After"]) == (HTTPStatus.SERVICE_UNAVAILABLE, "2")
    assert response.json() == problem(
        503,
        "The database cannot write: its disk is full. Reads still work. Send the request again shortly; a push is "
        "safe to repeat.",
        "database_full",
    )
    assert (Project.objects.count(), RawPush.objects.count()) == (0, 0)
    assert faults_counted("database_full") - counted == 1


def test_readyz_reports_the_database_not_writable_after_a_full_disk_then_ok(sandbox_client, settings, monkeypatch):
    assert Client().get("/readyz").json()["checks"]["database"] == "ok"
    with connection.execute_wrapper(refusing_writes(disk_full())):
        sandbox_client.post(url(SANDBOX, "push"), PUSH, format="json")

    response = Client().get("/readyz")

    assert response.status_code == HTTPStatus.OK  # the balancer keeps the servers: reads work, pushes say why not
    assert (response.json()["status"], response.json()["checks"]) == (
        "degraded",
        {"database": "not_writable", "cache": "ok"},
    )
    settings.DATABASE_NOT_WRITABLE_SECONDS = 0
    monkeypatch.setattr("core.db.writable.time.time", lambda: 10**10)  # long after
    assert (Client().get("/readyz").json()["status"], Client().get("/readyz").json()["checks"]["database"]) == (
        "ready",
        "ok",
    )


def test_a_full_disk_is_a_page_that_says_so_in_the_admin(operator):
    """The admin's login writes the operator's last login."""
    browser = Client(raise_request_exception=False)

    with connection.execute_wrapper(refusing_writes(disk_full())):
        response = browser.post("/admin/login/", {"username": operator.email, "password": PASSWORD})

    assert (response.status_code, response["Retry-After"]) == (HTTPStatus.SERVICE_UNAVAILABLE, "2")
    assert "<p>The database cannot write: its disk is full. Reads still work.</p>" in response.content.decode()


FAULTS = {
    "read-only": (django_error(InternalError, psycopg.errors.ReadOnlySqlTransaction("")), outages.DATABASE_READ_ONLY),
    "out of memory": (django_error(OperationalError, psycopg.errors.OutOfMemory("")), outages.DATABASE_OUT_OF_MEMORY),
    "too many connections": (
        django_error(OperationalError, psycopg.errors.TooManyConnections("")),
        outages.DATABASE_NO_CONNECTION,
    ),
    "lock timeout": (django_error(OperationalError, psycopg.errors.LockNotAvailable("")), outages.DATABASE_LOCKED),
    "statement timeout": (django_error(OperationalError, psycopg.errors.QueryCanceled("")), outages.DATABASE_TIMEOUT),
    "deadlock": (django_error(OperationalError, psycopg.errors.DeadlockDetected("")), outages.DATABASE_CONFLICT),
    "gone": (django_error(OperationalError, psycopg.OperationalError("server closed")), outages.DATABASE_DOWN),
}


def test_each_database_fault_says_what_it_is(sandbox_client):
    """One test for all (each a flush of the database less, run as served)."""
    sandbox_client.raise_request_exception = False
    counted = {name: faults_counted(outage.fault) for name, (_, outage) in FAULTS.items()}
    answers = {}

    for name, (error, _) in FAULTS.items():
        with connection.execute_wrapper(refusing_writes(error)):
            response = sandbox_client.post(url(SANDBOX, "push"), PUSH, format="json")
        answers[name] = (response.status_code, response["Retry-After"], response.json())

    assert answers == {
        name: (503, "2", problem(503, detail(outage), outage.code)) for name, (_, outage) in FAULTS.items()
    }
    assert Project.objects.count() == 0
    for name, (_, outage) in FAULTS.items():
        assert faults_counted(outage.fault) > counted[name], name


def test_a_program_limit_is_a_failure_of_ours_not_an_outage(sandbox_client):
    """The same request would fail again: a 500 (logged), not a 503 that a client would repeat for ever."""
    sandbox_client.raise_request_exception = False
    error = django_error(OperationalError, psycopg.errors.ProgramLimitExceeded("index row size exceeds maximum"))

    with connection.execute_wrapper(refusing_writes(error)):
        response = sandbox_client.post(url(SANDBOX, "push"), PUSH, format="json")

    assert response.status_code == HTTPStatus.INTERNAL_SERVER_ERROR
    assert response.json() == problem(500, "The service failed to handle this request; it has been logged.", "error")
