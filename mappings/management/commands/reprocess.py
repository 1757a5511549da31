import sys

from django.core.management.base import BaseCommand
from tqdm import tqdm

from mappings.reprocessing import projects_reprocess_from_command
from partners.choices import Environment
from partners.management.base import partner_or_error


class Command(BaseCommand):
    help = "Re-normalize a partner's stored projects with its current mappings (after a mapping change)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--env", choices=Environment.values, help="Only this environment (default: both).")
        parser.add_argument("--batch-size", type=int, default=1000)

    def handle(self, *args, slug: str, env: str | None, batch_size: int, **options) -> None:
        partner = partner_or_error(slug)
        # The bar goes to stderr and only on a terminal, so scripts get just the summary on stdout.
        with tqdm(desc=f"Reprocessing {partner.slug}", unit="project", disable=None, file=sys.stderr) as bar:

            def progress(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            summary = projects_reprocess_from_command(
                partner=partner, environment=env, batch_size=batch_size, on_progress=progress
            )
        report = f"Reprocessed {summary.total} project(s) of '{partner.slug}'; {summary.changed} changed"
        if summary.failed:
            more = ", …" if summary.failed > len(summary.failed_examples) else ""
            report += f"; {summary.failed} failed, their issues say why: {', '.join(summary.failed_examples)}{more}"
        self.stdout.write(f"{report}.")
