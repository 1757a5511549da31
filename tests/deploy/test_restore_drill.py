"""The restore drill's short form (deploy/restore_drill.py): a full backup under pushes, a point-in-time restore
into a new cluster, the service on it, every push acknowledged before the target there and none sent after it."""

import pytest
import redis
from django.conf import settings

from deploy import pgbackrest
from deploy.local_cluster import binaries
from deploy.restore_drill import Drill

pytestmark = [
    pytest.mark.slow,
    pytest.mark.postgres,
    pytest.mark.skipif(binaries() is None, reason="needs Debian's PostgreSQL binaries (initdb, pg_ctl)"),
    pytest.mark.skipif(not pgbackrest.installed(), reason="needs Debian's pgbackrest (.ci/run installs it)"),
    pytest.mark.skipif(
        settings.DATABASES["default"]["ENGINE"] != "core.db.postgresql",
        reason="runs once, in the PostgreSQL pass (it builds its own clusters)",
    ),
]

REDIS_URL = "redis://127.0.0.1:6379/14"


def test_a_backup_taken_under_pushes_restores_to_a_point_in_time(tmp_path):
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError:
        pytest.skip("Redis is not running on 127.0.0.1:6379 (.ci/run starts it)")
    drill = Drill(seconds=2, pushers=3, logs=tmp_path, redis_url=REDIS_URL)
    try:
        report = drill.run()
    finally:
        drill.close()

    assert report["mismatches"] == []
    target, checked = report["target"], report["checked"]
    assert target["pushes acknowledged before it"] > 0 and target["pushes sent after it"] > 0, target
    assert checked["pushes acknowledged before the target, found"] == target["pushes acknowledged before it"]
    assert checked["pushes sent after the target, found"] == 0
    assert checked["raw pushes stored"] == (
        target["pushes acknowledged before it"] + checked["pushes in flight at the target, found"]
    )
    restored_projects = checked["projects restored"]
    assert restored_projects > 0
    assert checked["read by the partner's pull from the start"] == restored_projects
    assert checked["read by the platform's feed from the start"] == restored_projects
    assert checked["new pushes after the restore"] == 10
    assert report["restore"]["timeline"] == 2
    assert report["archive"]["failed"] == 0
    assert report["backup"]["database bytes"] > report["backup"]["repository bytes (compressed)"] > 0


def test_the_drill_refuses_to_start_without_its_tools(monkeypatch, tmp_path):
    monkeypatch.setattr(pgbackrest, "installed", lambda: False)

    with pytest.raises(RuntimeError, match="needs Debian's PostgreSQL binaries and pgbackrest"):
        Drill(seconds=2, pushers=1, logs=tmp_path, redis_url=REDIS_URL)
