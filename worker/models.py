from django.db import models
from django.utils import timezone


class WorkerLease(models.Model):
    """A running `db_worker`'s lease on the tasks it holds (worker/leases.py): renewed every
    WORKER_HEARTBEAT_SECONDS; once `expires_at` has passed, the worker is taken for dead and its tasks are queued
    again."""

    worker_id = models.CharField(primary_key=True, max_length=64)
    hostname = models.CharField(max_length=255, blank=True)
    pid = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    class Meta:
        db_table = "worker_lease"

    def __str__(self) -> str:
        return f"Worker {self.worker_id} on {self.hostname} (pid {self.pid}) until {self.expires_at:%H:%M:%S}"
