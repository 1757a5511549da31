from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, BaseUserManager, PermissionsMixin
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from partners.choices import ClearanceAction, Environment


class Partner(models.Model):
    """An EPC company whose CRM pushes and pulls projects through the service."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=60, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    production_cleared_at = models.DateTimeField(null=True, blank=True, editable=False)
    production_cleared_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        editable=False,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_cleared_for_production(self) -> bool:
        return self.production_cleared_at is not None


class ProductionClearanceEvent(models.Model):
    """One clearing or revoking of a partner's production access: who, when, and through what."""

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="clearance_events")
    action = models.CharField(max_length=10, choices=ClearanceAction.choices)
    performed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    performed_at = models.DateTimeField(default=timezone.now)
    note = models.CharField(max_length=200, blank=True)
    readiness = models.JSONField(
        default=list, blank=True, help_text="The warnings the operator confirmed when clearing (none: all was ready)."
    )

    class Meta:
        ordering = ["-performed_at"]

    def __str__(self) -> str:
        return f"{self.partner}: {self.get_action_display()} at {self.performed_at:%Y-%m-%d %H:%M}"


class UserManager(BaseUserManager):
    use_in_migrations = True

    @classmethod
    def normalize_email(cls, email: str | None) -> str:
        return (email or "").strip().lower()

    def get_by_natural_key(self, username: str) -> "User":
        return self.get(email=self.normalize_email(username))

    def create_user(self, email: str, password: str | None = None, **extra_fields) -> "User":
        if not email:
            raise ValueError("An e-mail address is required.")
        user = self.model(email=self.normalize_email(email), **extra_fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_superuser(self, email: str, password: str | None = None, **extra_fields) -> "User":
        extra_fields.setdefault("is_staff", True)
        extra_fields.setdefault("is_superuser", True)
        return self.create_user(email, password, **extra_fields)


class User(AbstractBaseUser, PermissionsMixin):
    """A person who logs in by e-mail: a partner's user (API) or an operator (admin, no partner)."""

    email = models.EmailField(unique=True)
    full_name = models.CharField(max_length=200, blank=True)
    partner = models.ForeignKey(Partner, null=True, blank=True, on_delete=models.PROTECT, related_name="users")
    is_active = models.BooleanField(default=True)
    is_staff = models.BooleanField(default=False, help_text="Operators: may log in to the admin.")
    date_joined = models.DateTimeField(default=timezone.now)

    objects = UserManager()

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    class Meta:
        ordering = ["email"]
        constraints = [
            models.UniqueConstraint(
                Lower("email"),
                name="partners_user_email_ci_unique",
                violation_error_message="A user with this e-mail address already exists.",
            ),
        ]

    def __str__(self) -> str:
        return self.email

    def clean(self) -> None:
        super().clean()
        self.email = UserManager.normalize_email(self.email)
        if not self.is_staff and self.partner_id is None:
            raise ValidationError(
                {"partner": "A partner's user needs its partner (operators are staff, without a partner)."}
            )
        if self.is_staff and self.partner_id is not None:
            raise ValidationError({"partner": "Operators (staff) belong to no partner: leave the partner empty."})


class RevocableQuerySet(models.QuerySet):
    def active(self) -> "RevocableQuerySet":
        return self.filter(revoked_at__isnull=True)


class HashedKey(models.Model):
    """A key the service issues (a ClientID, a platform key): only its SHA-256 is stored, beside its visible start,
    who issued it and when, who revoked it and when, and when it was last used."""

    prefix = models.CharField(max_length=16, editable=False, help_text="The visible start of the key.")
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)

    objects = RevocableQuerySet.as_manager()

    class Meta:
        abstract = True

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class ClientId(HashedKey):
    """A key an operator issues to one partner for one environment. Only its SHA-256 is stored."""

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="client_ids")
    environment = models.CharField(max_length=10, choices=Environment.choices)
    label = models.CharField(max_length=100, blank=True)

    class Meta:
        verbose_name = "ClientID"
        verbose_name_plural = "ClientIDs"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.partner}, {self.get_environment_display()})"


class IntegrationCredential(models.Model):
    """A client secret (`cs_…`) a partner creates for its machines under one of its ClientIDs (CONTRACT §18): the
    OAuth 2.0 client-credentials grant (POST auth/token) exchanges the ClientID and this secret for an access token
    that acts for the partner, not a person. Only the secret's SHA-256 is stored, as for a ClientID.

    On a partner API request whose token is a credential's, `request.user` is this credential (`is_authenticated`,
    `partner_id`), as a platform key is the caller on the platform's API.
    """

    partner = models.ForeignKey(Partner, on_delete=models.CASCADE, related_name="credentials")
    client_id = models.ForeignKey(ClientId, on_delete=models.CASCADE, related_name="credentials")
    prefix = models.CharField(max_length=16, editable=False, help_text="The visible start of the secret.")
    secret_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, editable=False, on_delete=models.SET_NULL, related_name="+"
    )
    last_used_at = models.DateTimeField(
        null=True, blank=True, editable=False, help_text="When it last obtained a token."
    )

    objects = RevocableQuerySet.as_manager()

    # DRF's IsAuthenticated reads this off request.user; the credential is the caller (see the docstring).
    is_authenticated = True
    is_active = True

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"credential {self.prefix}…"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None


class TokenFamily(models.Model):
    """The tokens of one e-mail login (RFC 9700 §4.14.2): its refresh tokens, each spent for the next, and the access
    tokens issued with them, all carrying this family's id (partners/tokens.py, `fam`). `refresh_jti` is the one
    refresh token of it that is live; one used again after it was spent revokes the family, and every token of it is
    refused from the next request on, as is an export link its tokens asked for."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    refresh_jti = models.CharField(max_length=255, help_text="The jti of the family's live refresh token.")
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name_plural = "token families"

    def __str__(self) -> str:
        return f"login {self.pk} of user {self.user_id}"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None
