# The platform write action (CONTRACT §13): its writes are audited with the key's name.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('audit', '0002_project_delete_and_restore_actions'),
    ]

    operations = [
        migrations.AlterField(
            model_name='auditevent',
            name='action',
            field=models.CharField(choices=[('mapping_version_created', 'Mapping version saved'), ('mapping_version_published', 'Mapping version published'), ('production_cleared', 'Cleared for production'), ('production_revoked', 'Production clearance revoked'), ('client_id_issued', 'ClientID issued'), ('client_id_revoked', 'ClientID revoked'), ('user_added', 'User added'), ('user_deactivated', 'User deactivated'), ('reprocess_requested', 'Reprocessing requested'), ('project_deleted', "Project deleted by the partner's CRM"), ('project_restored', 'Project restored by an operator'), ('platform_write', 'Platform write')], max_length=40),
        ),
    ]
