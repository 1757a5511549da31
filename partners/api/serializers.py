from rest_framework import serializers

from core.api.fields import StrictCharField
from core.time import iso_datetime
from partners.models import IntegrationCredential


class LoginSerializer(serializers.Serializer):
    email = serializers.CharField(max_length=254, trim_whitespace=True)
    password = serializers.CharField(max_length=1024, trim_whitespace=False)


class LoginResponseSerializer(serializers.Serializer):
    token = serializers.CharField()
    tokenType = serializers.CharField()
    expiresIn = serializers.IntegerField(help_text="Seconds until the token expires.")


class LoginWithRefreshResponseSerializer(LoginResponseSerializer):
    refreshToken = serializers.CharField(
        help_text="Renews the token once, by POST auth/token/refresh, before it expires (14 days by default)."
    )


class RefreshSerializer(serializers.Serializer):
    refreshToken = StrictCharField(max_length=4096, help_text="The refreshToken of the login or of the last refresh.")


class TokenRequestSerializer(serializers.Serializer):
    """The client-credentials grant's form (RFC 6749 §4.4.2); the client may authenticate by HTTP Basic instead."""

    grant_type = serializers.ChoiceField(choices=["client_credentials"])
    client_id = serializers.CharField(required=False, help_text="Your ClientID (or send it by HTTP Basic).")
    client_secret = serializers.CharField(required=False, help_text="The cs_… secret (or send it by HTTP Basic).")


class TokenResponseSerializer(serializers.Serializer):
    access_token = serializers.CharField()
    token_type = serializers.CharField()
    expires_in = serializers.IntegerField(help_text="Seconds until the token expires.")


class OAuthErrorSerializer(serializers.Serializer):
    """RFC 6749 §5.2: the errors of the token endpoint and of the refresh (not problem+json), whatever refuses the
    request (partners/oauth_errors.py)."""

    error = serializers.ChoiceField(
        choices=[
            "invalid_request",
            "invalid_client",
            "invalid_grant",
            "unsupported_grant_type",
            "temporarily_unavailable",
            "server_error",
        ]
    )
    error_description = serializers.CharField(required=False)
    code = serializers.CharField(
        required=False,
        help_text="Why, as the problems of the other routes say it (docs/api.md's error table): `throttled`, "
        "`token_reused`, `password_changed`... Absent from the token endpoint's own invalid_request, invalid_client "
        "and unsupported_grant_type.",
    )


class CredentialSerializer(serializers.Serializer):
    """A client secret as the list shows it: never the secret. `clientId`: the ClientID of the call (context)."""

    id = serializers.IntegerField()
    clientId = serializers.SerializerMethodField()
    createdDate = serializers.SerializerMethodField()
    lastUsedDate = serializers.SerializerMethodField(help_text="When it last obtained a token (null: never).")

    def get_clientId(self, credential: IntegrationCredential) -> str:
        return self.context["client_key"]

    def get_createdDate(self, credential: IntegrationCredential) -> str:
        return iso_datetime(credential.created_at)

    def get_lastUsedDate(self, credential: IntegrationCredential) -> str | None:
        return None if credential.last_used_at is None else iso_datetime(credential.last_used_at)


class CredentialWithSecretSerializer(CredentialSerializer):
    """The answer to POST integration/credentials: the one time the secret is shown."""

    clientSecret = serializers.SerializerMethodField(help_text="cs_…: send it to POST auth/token. Shown this once.")

    class Meta:
        fields = ["id", "clientId", "clientSecret", "createdDate", "lastUsedDate"]

    def get_clientSecret(self, credential: IntegrationCredential) -> str:
        return self.context["secret"]

    def to_representation(self, instance: IntegrationCredential) -> dict:
        body = super().to_representation(instance)
        return {name: body[name] for name in self.Meta.fields}


class CredentialListSerializer(serializers.Serializer):
    items = CredentialSerializer(many=True)
