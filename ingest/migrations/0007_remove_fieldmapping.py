from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("ingest", "0006_field_mappings_to_version_1")]

    operations = [migrations.DeleteModel(name="FieldMapping")]
