"""SourceKeyDrift, moved from workbench/ with its table (workbench/0002): state only, no table is touched. Then what
names the model by its old app follows it: its content type, and drift recounts queued before the deploy."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

MOVED = ["sourcekeydrift"]
TASKS = {"workbench.tasks.refresh_source_key_drift": "readiness.tasks.refresh_source_key_drift"}


def _content_types_move(apps, *, old, new):
    ContentType = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not ContentType.objects.filter(app_label=new, model=model).exists():
            ContentType.objects.filter(app_label=old, model=model).update(app_label=new)


def _queued_tasks_move(apps, *, paths):
    DBTaskResult = apps.get_model("django_tasks_database", "DBTaskResult")
    for old, new in paths.items():
        DBTaskResult.objects.filter(task_path=old, status="READY").update(task_path=new)


def follow(apps, schema_editor):
    """The content type follows the model, so the permissions granted on it stay attached; on a new database there
    is none yet. Recounts queued before the deploy name their function by its old module: they run from the new one."""
    _content_types_move(apps, old="workbench", new="readiness")
    _queued_tasks_move(apps, paths=TASKS)


def follow_back(apps, schema_editor):
    _content_types_move(apps, old="readiness", new="workbench")
    _queued_tasks_move(apps, paths={new: old for old, new in TASKS.items()})


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('workbench', '0002_sourcekeydrift_moves_to_readiness'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('django_tasks_database', '0021_conditional_partial_index_ordering'),
        ('mappings', '0001_initial'),
        ('partners', '0002_clearance_readiness'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='SourceKeyDrift',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('environment', models.CharField(choices=[('sandbox', 'Sandbox'), ('production', 'Production')], max_length=10)),
                        ('published_at', models.DateTimeField(null=True)),
                        ('latest_push_at', models.DateTimeField(help_text="When the environment's newest push was received.", null=True)),
                        ('keys', models.JSONField(default=list, help_text='The drifting key paths.')),
                        ('computed_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('partner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='source_key_drifts', to='partners.partner')),
                        ('version', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='mappings.mappingversion')),
                    ],
                    options={
                        'db_table': 'ingest_sourcekeydrift',
                        'constraints': [models.UniqueConstraint(fields=('partner', 'environment'), name='ingest_sourcekeydrift_one_per_environment', violation_error_message='An environment has one drift summary.')],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(follow, follow_back),
    ]
