import json

from django.core.management.base import CommandError

from mappings.documents import document_ordered
from mappings.management.base import MappingVersionCommand
from mappings.selectors import mapping_version_get
from partners.choices import Environment
from partners.management.base import partner_or_error


class Command(MappingVersionCommand):
    help = (
        "Print a partner's mapping document (JSON), for import_mappings: the sandbox's version, "
        "or --version N, or the one --env uses."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--version", type=int, dest="number", help="This version number (see mapping_versions).")
        which.add_argument("--env", choices=Environment.values, help="The version this environment uses.")

    def handle(self, *args, slug: str, number: int | None, env: str | None, **options) -> None:
        partner = partner_or_error(slug)
        version = mapping_version_get(partner=partner, number=number, environment=env)
        if version is None and number is not None:
            raise CommandError(f"'{partner.slug}' has no mapping version {number}; mapping_versions lists them.")
        document = document_ordered(version.document) if version else {"fields": {}}
        self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))
