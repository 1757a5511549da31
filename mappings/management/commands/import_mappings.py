import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from mappings.documents import MappingDocumentInvalid, mapping_document_load
from mappings.selectors import mapping_version_get
from mappings.services import mapping_document_import
from partners.choices import Environment
from partners.management.base import partner_or_error


class Command(BaseCommand):
    help = (
        "Make a mapping document (JSON file, or - for stdin) the partner's next mapping version, used by the sandbox. "
        "Production keeps its version until publish_mappings --env production."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("file")
        parser.add_argument("--note", default="", help="Why this version exists, kept in its history.")

    def handle(self, *args, slug: str, file: str, note: str, **options) -> None:
        partner = partner_or_error(slug)
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
            document = mapping_document_load(text)
        except OSError as error:
            raise CommandError(f"Cannot read {file}: {error.strerror or error}") from error
        except MappingDocumentInvalid as invalid:  # nested too deep to read
            raise _refused(invalid) from invalid
        except ValueError as error:
            raise CommandError(f"{file} is not valid JSON: {error}") from error
        try:
            version = mapping_document_import(partner=partner, document=document, note=note[:200])
        except MappingDocumentInvalid as invalid:
            raise _refused(invalid) from invalid
        production = mapping_version_get(partner=partner, environment=Environment.PRODUCTION)
        if production == version:
            where = "The sandbox and production (not yet cleared) use it"
        else:
            kept = f"keeps version {production.number}" if production else "has no version yet"
            where = f"The sandbox uses it; production {kept}"
        self.stdout.write(
            f"Imported version {version.number} of '{partner.slug}' ({version.field_count} field(s)). {where}.\n"
            f"Run `reprocess {partner.slug}` to apply it to stored projects."
        )


def _refused(invalid: MappingDocumentInvalid) -> CommandError:
    listing = "\n".join(f"  - {problem}" for problem in invalid.problems)
    return CommandError(f"The mapping document has {len(invalid.problems)} problem(s); nothing was changed:\n{listing}")
