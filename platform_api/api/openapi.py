"""The platform root's OpenAPI document: its server, its credentials (a platform key), its error descriptions."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiExample

from core.api.openapi import document_info

PLATFORM_ROOT = "/platform/api/v1"

PLATFORM_PROBLEMS = {
    400: "A query parameter or the patch is invalid; `errors` names each problem.",
    401: "The platform key is missing, unknown or revoked (partner tokens and ClientIDs are refused here).",
    403: "The platform key is read-only.",
    404: "No such project (or partner).",
    410: (
        "The project was deleted by its partner's CRM (code `project_deleted`; `deletedDate` says when), or erased "
        "for good (code `project_erased`; `erasedDate` says when)."
    ),
    412: "If-Match does not match the project's ETag: it changed since you read it. `etag` is the current one.",
    415: "The patch is not application/merge-patch+json or application/json.",
    428: "If-Match is missing.",
    503: "The project stayed locked by other writers (or the database was briefly unreachable); send it again "
    "after `Retry-After` seconds.",
}

_PATCHES = {
    "Permit approved": {"stage": "procurement", "milestones": {"permitApprovedDate": "2026-05-04"}},
    "A note, and the stage cleared": {"stage": None, "note": "Waiting on HOA"},
}
PATCH_EXAMPLES = [
    OpenApiExample(name, value=value, request_only=True, media_type=media_type)
    for media_type in ("application/merge-patch+json", "application/json")
    for name, value in _PATCHES.items()
]


def platform_schema_settings() -> dict:
    return {
        "TITLE": "Partner Project Data Integration Service (platform)",
        "DESCRIPTION": (
            "The project platform's API: every partner's project changes in one feed, projects of any partner, and "
            "the platform's own fields of a project (stage, milestones, note), written with If-Match. "
            "Send `Authorization: Bearer plt_…`, a platform key an operator issued."
        ),
        "SERVERS": [{"url": PLATFORM_ROOT, "description": "Platform"}],
        "SCHEMA_PATH_PREFIX": PLATFORM_ROOT,
        "SCHEMA_PATH_PREFIX_TRIM": True,
        "TAGS": [
            {
                "name": "platform",
                "description": "Every partner's changes in one feed, their projects, and the platform's own fields.",
            }
        ],
        **document_info(contact_name="The integration service's operators", contact_path="/admin/"),
    }


class PlatformKeyScheme(OpenApiAuthenticationExtension):
    target_class = "platform_api.authentication.PlatformKeyAuthentication"
    name = "platformKey"

    def get_security_definition(self, auto_schema) -> dict:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A platform key (plt_…), issued by an operator; read-only keys cannot PATCH.",
        }
