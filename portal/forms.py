from django import forms
from django.contrib.auth import authenticate
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from core.api.cursors import CursorInvalid
from ingest.api.diagnostics.cursors import push_position
from partners.models import User
from portal.auth import is_partner_user
from projects.choices import MappingStatus
from webhooks.choices import ALL_EVENT_TYPES, EventType
from webhooks.services import url_check

LOGIN_FAILED = "The e-mail or password is wrong."


class LoginForm(forms.Form):
    email = forms.CharField(label="E-mail", max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"}))
    password = forms.CharField(
        max_length=1024, strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )

    def __init__(self, *args, request: HttpRequest, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.request = request
        self.user: User | None = None

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        user = authenticate(self.request, email=User.objects.normalize_email(data["email"]), password=data["password"])
        if not is_partner_user(user):  # an operator's right password opens nothing here, and says nothing more
            raise ValidationError(LOGIN_FAILED, code="invalid_login")
        self.user = user
        return data


class PushFilterForm(forms.Form):
    """The pushes page's filter; the same choices as the API's list (integration/pushes)."""

    mappingStatus = forms.ChoiceField(
        label="Mapping status", required=False, choices=[("", "Any"), *MappingStatus.choices]
    )
    externalId = forms.CharField(label="Your record's id", required=False, max_length=255, strip=False)
    after = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean_after(self):
        text = self.cleaned_data["after"]
        if not text:
            return None
        try:
            return push_position(text)
        except CursorInvalid:
            raise ValidationError("This page link is broken; start from the newest pushes.") from None


class WebhookEndpointForm(forms.Form):
    url = forms.CharField(label="URL", max_length=2000, help_text="https://… on a public address.")
    event_types = forms.MultipleChoiceField(
        label="Events",
        choices=EventType.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        initial=list(ALL_EVENT_TYPES),
        help_text="None ticked means all.",
    )

    def clean_url(self) -> str:
        try:
            return url_check(self.cleaned_data["url"])
        except ValidationError as error:
            raise ValidationError(error.message_dict["url"]) from error
