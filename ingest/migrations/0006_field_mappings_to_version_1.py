"""Each partner's field mappings become its mapping version 1, used by both environments as before."""

from django.db import migrations

# The options each mapping type takes, as ingest/mapping_documents.py had them when this migration was written.
TYPE_OPTIONS = {"integer": ("scale",), "decimal": ("scale",), "date": ("formats",), "datetime": ("formats",),
                "phone": ("region",), "enum": ("values",)}


def _spec(mapping) -> dict:
    options = {key: value for key, value in (mapping.options or {}).items() if key in TYPE_OPTIONS.get(mapping.type, ())}
    spec = {"source": mapping.source, "type": mapping.type, **options}
    if mapping.default is not None:
        spec["default"] = mapping.default
    if mapping.required:
        spec["required"] = True
    return spec


def forwards(apps, schema_editor):
    FieldMapping = apps.get_model("ingest", "FieldMapping")
    MappingVersion = apps.get_model("ingest", "MappingVersion")
    MappingPublication = apps.get_model("ingest", "MappingPublication")
    documents = {}
    for mapping in FieldMapping.objects.order_by("partner_id", "field"):
        documents.setdefault(mapping.partner_id, {})[mapping.field] = _spec(mapping)
    for partner_id, fields in documents.items():
        version = MappingVersion.objects.create(
            partner_id=partner_id, number=1, document={"fields": fields}, note="the mappings before versioning"
        )
        for environment in ("sandbox", "production"):
            MappingPublication.objects.create(partner_id=partner_id, environment=environment, version=version)


def backwards(apps, schema_editor):
    """Back to per-field mappings: the sandbox's version (the one being worked on) for both environments."""
    FieldMapping = apps.get_model("ingest", "FieldMapping")
    MappingPublication = apps.get_model("ingest", "MappingPublication")
    for publication in MappingPublication.objects.filter(environment="sandbox").select_related("version"):
        for field, spec in publication.version.document["fields"].items():
            options = {key: value for key, value in spec.items() if key not in ("source", "type", "default", "required")}
            FieldMapping.objects.create(
                partner_id=publication.partner_id,
                field=field,
                source=spec["source"],
                type=spec["type"],
                options=options,
                default=spec.get("default"),
                required=spec.get("required", False),
            )
    MappingPublication.objects.all().delete()
    apps.get_model("ingest", "MappingVersion").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("ingest", "0005_mapping_versions")]

    operations = [migrations.RunPython(forwards, backwards)]
