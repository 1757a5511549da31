"""The admin's login form, throttled per e-mail with the API login's counter (partners/throttling.py)."""

from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from partners.throttling import login_failure_record, login_retry_after, login_throttled_message


class ThrottledAdminAuthenticationForm(AdminAuthenticationForm):
    """Refuses every login for an e-mail while it is throttled, even with the right password, so guessing
    cannot go on; a refused login (wrong password, inactive, not staff) counts as a failure."""

    def clean(self) -> dict:
        email = self.cleaned_data.get("username") or ""
        retry_after = login_retry_after(email=email)
        if retry_after:
            raise ValidationError(login_throttled_message(retry_after), code="throttled")
        try:
            return super().clean()
        except ValidationError:
            login_failure_record(email=email)
            raise
