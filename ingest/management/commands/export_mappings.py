import json

from django.core.management.base import BaseCommand

from ingest.selectors import mapping_document_export
from partners.management.base import partner_or_error


class Command(BaseCommand):
    help = "Print a partner's field mappings as a mapping document (JSON), for import_mappings."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")

    def handle(self, *args, slug: str, **options) -> None:
        document = mapping_document_export(partner=partner_or_error(slug))
        self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))
