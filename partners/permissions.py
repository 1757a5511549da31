from typing import TYPE_CHECKING

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

if TYPE_CHECKING:
    from rest_framework.views import APIView

from partners.environments import request_environment
from partners.services import client_id_check


class HasValidClientId(BasePermission):
    """The request's ClientID header must be a live key of the user's partner for this environment.

    Runs after IsAuthenticated, so a bad token is a 401 before any ClientID problem is a 403. The ClientID was
    read with the token's user (`request.caller`, partners/authentication.py). A rejected key raises
    ClientIdRejected, which the exception handler renders as the 403 problem.
    On success the request carries `client_id` for the views.
    """

    def has_permission(self, request: Request, view: "APIView") -> bool:
        request.client_id = client_id_check(
            key=request.headers.get("ClientID"), caller=request.caller, environment=request_environment(request)
        )
        return True
