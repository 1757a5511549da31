from django.core.management.base import BaseCommand


class MappingVersionCommand(BaseCommand):
    """A command whose --version is a mapping version number, in place of Django's own --version (its release)."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs):
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)
