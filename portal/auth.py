"""Who may open the console: an active partner user, logged in through the console's own login page.

The console uses Django's session authentication, and so does the admin; they never open each other: the admin
lets in staff only, and partner users are never staff (partners.models.User.clean), while the console lets in
partner users only, so an operator's admin session is sent to the console's login page.
"""

import functools
from collections.abc import Callable

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

from partners.models import User


def is_partner_user(user: object) -> bool:
    return (
        isinstance(user, User)
        and user.is_authenticated
        and user.is_active
        and not user.is_staff
        and user.partner_id is not None
    )


def partner_user_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The view, for a partner user's session; the console's login page for anyone else."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not is_partner_user(request.user):
            return redirect_to_login(request.get_full_path(), login_url="portal:portal-login")
        return view(request, *args, **kwargs)

    return wrapped
