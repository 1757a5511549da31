"""Endpoints registered before erasures existed hear of them when they hear of deletes (webhooks 0007)."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

BEFORE = [("webhooks", "0006_delivery_last_exchange")]
AFTER = [("webhooks", "0007_endpoints_hear_erasures")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_an_endpoint_of_deletes_is_subscribed_to_erasures_right_after_them():
    apps = migrate(BEFORE)
    partner = apps.get_model("partners", "Partner").objects.create(name="Sunrise", slug="sunrise")
    endpoint_model = apps.get_model("webhooks", "WebhookEndpoint")
    subscriptions = {
        "all": ["project.created", "project.updated", "project.deleted", "partner.production_cleared"],
        "deletes": ["project.deleted"],
        "no deletes": ["project.created"],
    }
    for description, types in subscriptions.items():
        endpoint_model.objects.create(
            partner=partner,
            environment="sandbox",
            url="https://x.example",
            event_types=types,
            description=description,
            secret_encrypted="x",
        )

    try:
        apps = migrate(AFTER)
        after = dict(apps.get_model("webhooks", "WebhookEndpoint").objects.values_list("description", "event_types"))
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    assert after == {
        "all": [
            "project.created",
            "project.updated",
            "project.deleted",
            "project.erased",
            "partner.production_cleared",
        ],
        "deletes": ["project.deleted", "project.erased"],
        "no deletes": ["project.created"],
    }
