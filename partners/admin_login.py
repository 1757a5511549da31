"""The admin's login form, on the failed-login budget of the API's and the console's (partners/throttling.py)."""

from django.contrib.admin.forms import AdminAuthenticationForm
from django.core.exceptions import ValidationError

from core.client_ip import request_client_ip
from partners.throttling import login_attempt_give_back, login_attempt_take, login_throttled_message


class ThrottledAdminAuthenticationForm(AdminAuthenticationForm):
    """Refuses every login from a client address while it (or it with this e-mail) is throttled, even with the right
    password, so guessing cannot go on; a refused login (wrong password, inactive, not staff) counts as a failure."""

    def clean(self) -> dict:
        email = self.cleaned_data.get("username") or ""
        ip = request_client_ip(self.request)
        retry_after = login_attempt_take(ip=ip, identity=email)
        if retry_after:
            raise ValidationError(login_throttled_message(retry_after), code="throttled")
        try:
            cleaned_data = super().clean()
        except ValidationError:
            raise  # refused: the attempt stays counted as a failure
        except Exception:
            login_attempt_give_back(ip=ip, identity=email)  # undecided (the database is down): no failure
            raise
        login_attempt_give_back(ip=ip, identity=email)
        return cleaned_data
