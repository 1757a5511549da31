import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ingest.mapping_documents import MappingDocumentInvalid
from ingest.services import mapping_document_import
from partners.management.base import partner_or_error


class Command(BaseCommand):
    help = "Replace a partner's field mappings with a mapping document (JSON file, or - for stdin)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file")

    def handle(self, *args, slug: str, file: str, **options) -> None:
        partner = partner_or_error(slug)
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
            document = json.loads(text)
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror or error}") from error
        except ValueError as error:
            raise CommandError(f"{file} is not valid JSON: {error}") from error
        try:
            mappings = mapping_document_import(partner=partner, document=document)
        except MappingDocumentInvalid as invalid:
            listing = "\n".join(f"  - {problem}" for problem in invalid.problems)
            raise CommandError(
                f"The mapping document has {len(invalid.problems)} problem(s); nothing was changed:\n{listing}"
            ) from invalid
        self.stdout.write(
            f"Imported {len(mappings)} mapping(s) for '{partner.slug}'. "
            f"Run `reprocess {partner.slug}` to apply them to stored projects."
        )
