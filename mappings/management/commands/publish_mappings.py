import sys

from django.core.management.base import CommandError
from tqdm import tqdm

from mappings.management.base import MappingVersionCommand
from mappings.reprocessing import projects_reprocess_from_command
from mappings.selectors import mapping_version_get
from mappings.services import mapping_version_publish
from partners.choices import Environment
from partners.management.base import partner_or_error


class Command(MappingVersionCommand):
    help = (
        "Make an environment use a mapping version (default: the sandbox's) and reprocess its stored projects. "
        "Publishing an older version rolls back."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--env", choices=Environment.values, required=True)
        parser.add_argument("--version", type=int, dest="number", help="The version number (see mapping_versions).")
        parser.add_argument(
            "--no-reprocess", action="store_true", help="Leave stored projects as they are (new pushes still use it)."
        )

    def handle(self, *args, slug: str, env: str, number: int | None, no_reprocess: bool, **options) -> None:
        partner = partner_or_error(slug)
        version = mapping_version_get(partner=partner, number=number, environment=Environment.SANDBOX)
        if version is None:
            which = f"version {number}" if number is not None else "version in the sandbox"
            raise CommandError(f"'{partner.slug}' has no mapping {which}; mapping_versions lists them.")
        previous = mapping_version_get(partner=partner, environment=env)
        mapping_version_publish(version=version, environment=env, published_by=None)
        was = f"version {previous.number}" if previous else "no version"
        self.stdout.write(f"{env.capitalize()} of '{partner.slug}' uses version {version.number} (was {was}).")
        if no_reprocess:
            return
        with tqdm(desc=f"Reprocessing {partner.slug} {env}", unit="project", disable=None, file=sys.stderr) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            summary = projects_reprocess_from_command(partner=partner, environment=env, on_progress=progress)
        self.stdout.write(f"Reprocessed {summary.total} {env} project(s); {summary.changed} changed.")
