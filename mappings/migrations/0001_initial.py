"""MappingVersion, MappingPublication and ReprocessRun, moved from ingest/ with their tables (ingest/0013): state only,
no table is touched. Their content types and queued tasks follow in workbench/0001."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('ingest', '0013_models_move_to_mappings_and_workbench'),
        ('partners', '0002_clearance_readiness'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='MappingVersion',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('number', models.PositiveIntegerField(editable=False)),
                        ('document', models.JSONField(editable=False, help_text='The mapping document, as export_mappings writes it.')),
                        ('note', models.CharField(blank=True, editable=False, max_length=200)),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                        ('created_by', models.ForeignKey(editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('partner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='mapping_versions', to='partners.partner')),
                    ],
                    options={
                        'db_table': 'ingest_mappingversion',
                        'ordering': ['partner', '-number'],
                        'permissions': [('publish_mappingversion', 'Can publish a mapping version to an environment')],
                    },
                ),
                migrations.CreateModel(
                    name='MappingPublication',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('environment', models.CharField(choices=[('sandbox', 'Sandbox'), ('production', 'Production')], max_length=10)),
                        ('published_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('partner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='mapping_publications', to='partners.partner')),
                        ('published_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('version', models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name='publications', to='mappings.mappingversion')),
                    ],
                    options={
                        'db_table': 'ingest_mappingpublication',
                        'ordering': ['partner', 'environment'],
                    },
                ),
                migrations.CreateModel(
                    name='ReprocessRun',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('environment', models.CharField(blank=True, choices=[('sandbox', 'Sandbox'), ('production', 'Production')], help_text='Leave empty for both environments.', max_length=10)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed')], default='queued', editable=False, max_length=10)),
                        ('requested_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                        ('started_at', models.DateTimeField(editable=False, null=True)),
                        ('finished_at', models.DateTimeField(editable=False, null=True)),
                        ('total', models.PositiveIntegerField(default=0, editable=False)),
                        ('done', models.PositiveIntegerField(default=0, editable=False)),
                        ('changed', models.PositiveIntegerField(default=0, editable=False)),
                        ('failed', models.PositiveIntegerField(default=0, editable=False, help_text='Projects whose normalization failed; each got an issue saying why.')),
                        ('failed_examples', models.JSONField(default=list, editable=False, help_text='The first few failed external ids.')),
                        ('error', models.TextField(blank=True, editable=False)),
                        ('partner', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reprocess_runs', to='partners.partner')),
                        ('requested_by', models.ForeignKey(editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'ingest_reprocessrun',
                        'ordering': ['-requested_at'],
                    },
                ),
                migrations.AddConstraint(
                    model_name='mappingversion',
                    constraint=models.UniqueConstraint(fields=('partner', 'number'), name='ingest_mappingversion_number_unique', violation_error_message='This partner already has a mapping version with this number.'),
                ),
                migrations.AddConstraint(
                    model_name='mappingpublication',
                    constraint=models.UniqueConstraint(fields=('partner', 'environment'), name='ingest_mappingpublication_one_per_environment', violation_error_message='An environment uses one mapping version at a time.'),
                ),
            ],
            database_operations=[],
        ),
    ]
