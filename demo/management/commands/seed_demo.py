import hashlib
import hmac
import json
from dataclasses import dataclass

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from demo.data import DEMO_MAPPING_DOCUMENT, DEMO_RECORDS
from ingest.services import push_receive
from mappings.documents import mapping_document, parse_mapping_document
from mappings.selectors import mapping_version_get
from mappings.services import mapping_document_import, mapping_version_publish
from partners.choices import CLIENT_ID_PREFIXES, Environment
from partners.models import ClientId, Partner, User
from partners.selectors import client_id_hash
from partners.services import client_id_issue
from platform_api.choices import PLATFORM_KEY_PREFIX
from platform_api.models import PlatformKey
from platform_api.services import platform_key_issue
from projects.models import Project
from readiness.clearance import partner_clear_for_production

DEMO_PARTNER_SLUG = "demo-solar"
DEMO_USER_EMAIL = "demo@example.com"
DEMO_USER_PASSWORD = "demo-password"
ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "admin-password"
DEMO_PLATFORM_KEY_NAME = "demo platform (seed_demo)"
REVOKED = "revoked: seed_demo never restores a revoked key"


def demo_client_key(environment: Environment) -> str:
    """Stable across runs (so the printed keys keep working), secret as long as SECRET_KEY is."""
    digest = hmac.new(settings.SECRET_KEY.encode(), f"demo-client-id:{environment}".encode(), hashlib.sha256)
    return f"{CLIENT_ID_PREFIXES[environment]}demo_{digest.hexdigest()[:32]}"


def demo_platform_key() -> str:
    """Stable across runs, as the demo ClientIDs are."""
    digest = hmac.new(settings.SECRET_KEY.encode(), b"demo-platform-key", hashlib.sha256)
    return f"{PLATFORM_KEY_PREFIX}demo_{digest.hexdigest()[:32]}"


@dataclass(frozen=True)
class DemoKey:
    """A demo key and whether an operator revoked it since it was seeded (then it stays revoked)."""

    key: str
    revoked: bool

    @property
    def shown(self) -> str:
        return REVOKED if self.revoked else self.key


def boxed(lines: list[str]) -> str:
    """The lines in a frame, so they stand out in a terminal full of server output."""
    width = max(len(line) for line in lines)
    rule = "─" * (width + 2)
    return "\n".join(["", f"┌{rule}┐", *(f"│ {line.ljust(width)} │" for line in lines), f"└{rule}┘", ""])


class Command(BaseCommand):
    help = (
        "Create a demo partner with user, ClientIDs, mappings and sandbox projects, and an admin, with well-known "
        "passwords. Refused with DEBUG off unless --force. A later run creates what is missing and changes nothing "
        "an operator changed: no password is reset, no revoked key or clearance restored."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument(
            "--force",
            action="store_true",
            help="Seed even with DEBUG off (a throwaway staging database); never on a production database.",
        )

    @transaction.atomic
    def handle(self, *args, base_url: str, force: bool, **options) -> None:
        if not settings.DEBUG:
            if not force:
                raise CommandError(
                    f"DEBUG is off: seed_demo would create logins with well-known passwords ({ADMIN_EMAIL} / "
                    f"{ADMIN_PASSWORD}). Run it with DEBUG=1 on a development database, or pass --force to seed "
                    "anyway."
                )
            self.stderr.write(
                self.style.WARNING("DEBUG is off and --force given: the demo logins below have well-known passwords.")
            )
        partner, created = Partner.objects.get_or_create(slug=DEMO_PARTNER_SLUG, defaults={"name": "Demo Solar EPC"})
        admin = self._user(ADMIN_EMAIL, ADMIN_PASSWORD, is_staff=True, is_superuser=True)
        user = self._user(DEMO_USER_EMAIL, DEMO_USER_PASSWORD, partner=partner)
        keys = {environment: self._client_id(partner, environment) for environment in Environment}
        if created:  # an operator who revoked the demo partner's clearance since is not overruled
            partner_clear_for_production(partner=partner, performed_by=None, note="seed_demo")
        self._mappings(partner)
        self._demo_projects(user, ClientId.objects.get(key_hash=client_id_hash(keys[Environment.SANDBOX].key)))
        platform_key = self._platform_key()

        base_url = base_url.rstrip("/")
        sandbox, production = keys[Environment.SANDBOX].shown, keys[Environment.PRODUCTION].shown
        lines = [
            "Demo data is ready. Logins:",
            "",
            f"Admin (operators):  {base_url}/admin/  {ADMIN_EMAIL} / {self._password(admin, ADMIN_PASSWORD)}",
            f"Partner user:       {DEMO_USER_EMAIL} / {self._password(user, DEMO_USER_PASSWORD)}  "
            f"(partner '{partner.slug}')",
            f"Partner console:    {base_url}/portal/  (the partner user's login)",
            f"Roots:              {base_url}/sandbox/api/v1/  {base_url}/api/v1/",
            f"                    {base_url}/platform/api/v1/",
            "",
            "Lines to paste for the README's quickstarts (the partner's and the platform's):",
            "",
            f"BASE={base_url}/sandbox/api/v1",
            f"CLIENT_ID={sandbox}",
            f"PRODUCTION_CLIENT_ID={production}",
            f"PLATFORM={base_url}/platform/api/v1",
            f"PLATFORM_KEY={platform_key.shown}",
        ]
        self.stdout.write(boxed(lines))

    def _mappings(self, partner: Partner) -> None:
        """The demo document as the version both environments use; a new version only when it differs."""
        version = mapping_version_get(partner=partner, environment=Environment.SANDBOX)
        if version is None or version.document != mapping_document(parse_mapping_document(DEMO_MAPPING_DOCUMENT)):
            version = mapping_document_import(partner=partner, document=DEMO_MAPPING_DOCUMENT, note="seed_demo")
        mapping_version_publish(version=version, environment=Environment.PRODUCTION, published_by=None)

    def _demo_projects(self, user: User, client_id: ClientId) -> None:
        """Push the demo records once; later runs leave them (and the raw push history) alone."""
        for record in DEMO_RECORDS:
            lookup = {"partner": client_id.partner, "environment": Environment.SANDBOX, "external_id": record["id"]}
            if not Project.objects.filter(**lookup).exists():
                push_receive(
                    client_id=client_id,
                    user=user,
                    environment=Environment.SANDBOX,
                    external_id=record["id"],
                    data=record["data"],
                    body=json.dumps(record),
                )

    def _platform_key(self) -> DemoKey:
        key = demo_platform_key()
        existing = PlatformKey.objects.filter(key_hash=client_id_hash(key)).first()
        if existing is None:
            PlatformKey.objects.filter(name=DEMO_PLATFORM_KEY_NAME).delete()  # a key of another SECRET_KEY
            platform_key_issue(name=DEMO_PLATFORM_KEY_NAME, key=key)
            return DemoKey(key, revoked=False)
        return DemoKey(key, revoked=existing.is_revoked)

    def _user(self, email: str, password: str, **fields) -> User:
        """The user, created with its well-known password when missing; an existing one is left as it is."""
        user = User.objects.filter(email=email).first()
        if user is None:
            user = User.objects.create_user(email, password, **fields)
        return user

    def _password(self, user: User, password: str) -> str:
        return password if user.check_password(password) else "(password changed: kept)"

    def _client_id(self, partner: Partner, environment: Environment) -> DemoKey:
        key = demo_client_key(environment)
        existing = ClientId.objects.filter(key_hash=client_id_hash(key)).first()
        if existing is None:
            client_id_issue(partner=partner, environment=environment, label="demo (seed_demo)", key=key)
            return DemoKey(key, revoked=False)
        return DemoKey(key, revoked=existing.is_revoked)
