"""The replica routing's rules, without a standby: which database a request reads, read-your-writes, fallback."""

import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, transaction
from django.test import RequestFactory

from core.db.replicas import health, routing, sticky
from core.db.replicas.routing import ReplicaRouter, reads_alias, replica_reads
from projects.models import Project

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def one_replica(settings, monkeypatch):
    settings.REPLICA_ALIASES = ["replica_1"]
    monkeypatch.setattr(routing, "replica_choose", lambda: "replica_1")


class View:
    @replica_reads
    def get(self, request):
        return reads_alias(), ReplicaRouter().db_for_read(Project)


def request(client_id: str = "sbx_reader"):
    return RequestFactory().get("/", HTTP_CLIENTID=client_id)


def test_without_replicas_everything_reads_the_primary(settings):
    settings.REPLICA_ALIASES = []

    assert View().get(request()) == (DEFAULT_DB_ALIAS, DEFAULT_DB_ALIAS)


def test_a_marked_handler_reads_the_replica_and_nothing_else_does(one_replica):
    assert View().get(request()) == ("replica_1", "replica_1")
    assert reads_alias() == DEFAULT_DB_ALIAS
    assert ReplicaRouter().db_for_read(Project) == DEFAULT_DB_ALIAS
    assert ReplicaRouter().db_for_write(Project) == DEFAULT_DB_ALIAS


def test_a_read_inside_a_write_transaction_reads_the_primary(one_replica):
    with transaction.atomic():
        assert View().get(request()) == (DEFAULT_DB_ALIAS, DEFAULT_DB_ALIAS)


def test_a_caller_reads_its_own_write_from_the_primary_for_the_sticky_seconds(one_replica, settings, client):
    settings.REPLICA_STICKY_SECONDS = 5
    writer = RequestFactory().post("/", HTTP_CLIENTID="sbx_writer")
    middleware = sticky.ReplicaStickyMiddleware(lambda request: type("Answer", (), {"status_code": 201})())

    middleware(writer)

    assert View().get(request("sbx_writer")) == (DEFAULT_DB_ALIAS, DEFAULT_DB_ALIAS)
    assert View().get(request("sbx_other")) == ("replica_1", "replica_1")


def test_a_refused_write_does_not_make_its_caller_sticky(one_replica):
    writer = RequestFactory().post("/", HTTP_CLIENTID="sbx_writer")
    sticky.ReplicaStickyMiddleware(lambda request: type("Answer", (), {"status_code": 400})())(writer)

    assert View().get(request("sbx_writer")) == ("replica_1", "replica_1")


def test_when_the_cache_cannot_answer_the_primary_serves(one_replica, monkeypatch):
    def broken(key):
        raise ConnectionError("cache down")

    monkeypatch.setattr(sticky.cache, "get", broken)

    assert View().get(request()) == (DEFAULT_DB_ALIAS, DEFAULT_DB_ALIAS)


def test_a_replica_failing_mid_read_is_marked_down_and_the_primary_answers(one_replica, monkeypatch):
    calls = []
    marked = []
    monkeypatch.setattr(routing, "replica_mark_down", marked.append)
    closed = []
    stub = type("Replica", (), {"close": lambda self: closed.append("replica_1")})()
    monkeypatch.setattr(
        routing, "connections", {DEFAULT_DB_ALIAS: routing.connections[DEFAULT_DB_ALIAS], "replica_1": stub}
    )

    class Failing:
        @replica_reads
        def get(self, request):
            calls.append(reads_alias())
            if reads_alias() != DEFAULT_DB_ALIAS:
                raise OperationalError("the standby went away")
            return "answered"

    assert Failing().get(request()) == "answered"
    assert calls == ["replica_1", DEFAULT_DB_ALIAS]
    assert marked == closed == ["replica_1"]


def test_no_replica_that_may_serve_means_the_primary(settings, monkeypatch):
    settings.REPLICA_ALIASES = ["replica_1"]
    monkeypatch.setattr(health, "replica_state", lambda alias: health.ReplicaState(alias, health.LAGGING, 30.0, 0))

    assert View().get(request()) == (DEFAULT_DB_ALIAS, DEFAULT_DB_ALIAS)


@pytest.mark.parametrize(
    ("replayed", "primary", "since_last", "expected"),
    [
        ("0/3000000", 0x3000000, 500.0, (health.UP, 0.0)),  # caught up: an idle primary makes no lag
        ("0/2000000", 0x3000000, 3.0, (health.UP, 3.0)),
        ("0/2000000", 0x3000000, 11.0, (health.LAGGING, 11.0)),
        ("0/2000000", 0x3000000, None, (health.LAGGING, float("inf"))),  # never replayed a commit
        ("1/0", 0xFFFFFFFF, 20.0, (health.UP, 0.0)),  # the high word of a WAL position counts
    ],
)
def test_the_lag_is_measured_against_the_primarys_wal_position(
    replayed, primary, since_last, expected, monkeypatch, settings
):
    settings.REPLICA_MAX_LAG_SECONDS = 10

    class Cursor:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def execute(self, sql, params=None):
            pass

        def fetchone(self):
            return (True, replayed, since_last)

    monkeypatch.setattr(health, "connections", {"replica_1": type("C", (), {"cursor": lambda self: Cursor()})()})
    monkeypatch.setattr(health, "_primary_lsn", lambda: primary)
    health.replica_states_forget()

    state = health._measure("replica_1")

    assert (state.state, state.lag_seconds) == expected


def test_the_first_write_after_an_idle_spell_is_not_taken_for_the_idle_time(settings):
    """The standby replayed past where this process saw the primary a second ago, though the last transaction it
    replayed was committed 500 s ago (the primary was idle): it is at most a second behind."""
    settings.REPLICA_MAX_LAG_SECONDS = 10
    health.replica_states_forget()
    health._positions.append((100.0, 0x2000000))
    health._positions.append((101.0, 0x2800000))

    lag = health._lag(replayed=0x2000000, primary=0x3000000, since_last_replayed=500.0, now=102.0)

    assert lag == 2.0  # the newest position it has passed was seen at 100.0
    assert health._lag(replayed=0x1000000, primary=0x3000000, since_last_replayed=500.0, now=102.0) == 500.0
    assert health._lag(replayed=0x1000000, primary=0x3000000, since_last_replayed=None, now=102.0) == float("inf")
    health.replica_states_forget()


def test_a_marked_handlers_project_look_up_reads_the_replica(one_replica, monkeypatch, partner, make_project):
    """projects/selectors.py's project_get is a statement built once, not the ORM's: it still reads where the
    router would, the replica inside a marked handler, the primary outside one."""
    from core.db import rows
    from projects.selectors import project_get

    project = make_project(partner, external_id="HS-1")
    used = []
    primary = rows.connections[DEFAULT_DB_ALIAS]

    class Recording:
        def __getitem__(self, alias):
            used.append(alias)
            return primary  # the replica's stand-in: the same database

    monkeypatch.setattr(rows, "connections", Recording())

    class Reader:
        @replica_reads
        def get(self, request):
            return project_get(partner_id=partner.pk, environment="sandbox", project_id=str(project.pk))

    found = Reader().get(request())
    assert (found.pk, found.external_id, found._state.db, found._state.adding) == (
        project.pk,
        "HS-1",
        "replica_1",
        False,
    )
    assert "replica_1" in used
    used.clear()
    assert project_get(partner_id=partner.pk, environment="sandbox", project_id=str(project.pk)).pk == project.pk
    assert "replica_1" not in used
    assert project_get(partner_id=partner.pk, environment="production", project_id=str(project.pk)) is None
