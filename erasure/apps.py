from django.apps import AppConfig


class ErasureConfig(AppConfig):
    name = "erasure"
    verbose_name = "Erasure of personal data"
