from django import forms
from django.core.exceptions import ValidationError

from webhooks.choices import ALL_EVENT_TYPES, EventType
from webhooks.models import WebhookEndpoint
from webhooks.services import url_check


class WebhookEndpointForm(forms.ModelForm):
    """URL checked as a delivery would check it (scheme, host resolving to public addresses)."""

    url = forms.CharField(label="URL", max_length=2000, help_text="https://… on a public address.")
    event_types = forms.MultipleChoiceField(
        choices=EventType.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        initial=list(ALL_EVENT_TYPES),
        help_text="None ticked means all.",
    )

    class Meta:
        model = WebhookEndpoint
        fields = ("partner", "environment", "url", "event_types", "description", "is_enabled")

    def clean_url(self) -> str:
        try:
            return url_check(self.cleaned_data["url"])
        except ValidationError as error:
            raise ValidationError(error.message_dict["url"]) from error
