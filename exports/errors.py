from rest_framework import status

from core.errors import ServiceError


class ExportsBusy(ServiceError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "too_many_exports"


class ExportLinkInvalid(ServiceError):
    status_code = status.HTTP_404_NOT_FOUND
    code = "not_found"
    default_detail = "This download link is not valid: use the downloadUrl of GET integration/exports/{id} as it is."


class ExportLinkExpired(ServiceError):
    status_code = status.HTTP_410_GONE
    code = "expired"


class ExportWithdrawn(ServiceError):
    status_code = status.HTTP_410_GONE
    code = "export_withdrawn"
    default_detail = (
        "This export was withdrawn: a project it held was erased (its file is deleted). Ask for a new export "
        "(POST integration/exports)."
    )
