"""Every endpoint that hears of deletes hears of erasures (CONTRACT §22): a follower that removes a deleted project
must also erase an erased one, and an endpoint's list of types was stored when it was registered."""

from django.db import migrations


def subscribe(apps, schema_editor):
    WebhookEndpoint = apps.get_model("webhooks", "WebhookEndpoint")
    for endpoint in WebhookEndpoint.objects.only("pk", "event_types").iterator():
        types = list(endpoint.event_types)
        if "project.deleted" in types and "project.erased" not in types:
            types.insert(types.index("project.deleted") + 1, "project.erased")
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(event_types=types)


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0006_delivery_last_exchange")]

    operations = [migrations.RunPython(subscribe, migrations.RunPython.noop)]
