from django.apps import AppConfig


class DemoConfig(AppConfig):
    """`seed_demo`: a demo partner with users, keys, a published mapping and sandbox records, for `make run`."""

    name = "demo"
