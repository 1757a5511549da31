"""Start each partner environment's change clock at its newest updatedDate, and give projects that shared an
updatedDate (a reprocess batch stamped all its rows alike) unique new ones, after every existing one.

A follower whose watermark sat inside such a group would have skipped the rest of it; with new stamps it pulls
them again, which its upsert by id makes harmless.
"""

from datetime import UTC, datetime, timedelta

from django.db import migrations
from django.db.models import Count, Max

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def stamp_existing_projects(apps, schema_editor):
    Project = apps.get_model("projects", "Project")
    ChangeClock = apps.get_model("projects", "ChangeClock")
    newest = Project.objects.values("partner_id", "environment").annotate(newest=Max("updated_date")).order_by()
    for row in newest:
        projects = Project.objects.filter(partner_id=row["partner_id"], environment=row["environment"])
        shared = (
            projects.values("updated_date").annotate(count=Count("id")).filter(count__gt=1).values("updated_date")
        )
        last = (row["newest"] - EPOCH) // MICROSECOND
        for project in projects.filter(updated_date__in=shared).order_by("updated_date", "id").only("id"):
            last += 1
            projects.filter(pk=project.pk).update(updated_date=EPOCH + last * MICROSECOND)
        ChangeClock.objects.create(partner_id=row["partner_id"], environment=row["environment"], last_stamp=last)


class Migration(migrations.Migration):
    dependencies = [("projects", "0004_change_clock")]

    operations = [migrations.RunPython(stamp_existing_projects, migrations.RunPython.noop)]
