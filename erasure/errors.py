from rest_framework import status

from core.errors import ServiceError


class ErasureReasonRequired(ServiceError):
    status_code = status.HTTP_400_BAD_REQUEST
    code = "reason_required"
    default_detail = "An operator's erasure says why: give a reason."
