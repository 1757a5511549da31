import secrets

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from partners.management.base import partner_or_error, validation_message
from partners.services import partner_user_create


class Command(BaseCommand):
    help = "Create a user of a partner, who logs in to the API by e-mail and password."

    def add_arguments(self, parser) -> None:
        parser.add_argument("slug")
        parser.add_argument("email")
        parser.add_argument("--password", help="Generated and printed when not given.")

    def handle(self, *args, slug: str, email: str, password: str | None, **options) -> None:
        partner = partner_or_error(slug)
        generated = password is None
        if generated:
            password = secrets.token_urlsafe(18)
        elif not password:
            raise CommandError("The password must not be empty.")
        try:
            user = partner_user_create(partner=partner, email=email, password=password)
        except ValidationError as error:
            raise CommandError(validation_message(error)) from error
        try:
            validate_password(password, user)
        except ValidationError as weak:
            self.stderr.write(self.style.WARNING(f"Warning: weak password ({' '.join(weak.messages)})"))
        self.stdout.write(f"Created user {user.email} for partner '{partner.slug}'.")
        if generated:
            self.stdout.write(f"Password: {password}")
