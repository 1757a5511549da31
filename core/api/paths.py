"""Which paths are the API's and the largest body each reads: for the middleware, and for the server's worker
(integration_service/server.py), which reads bodies before Django's apps are involved and so imports only this."""

import re

from django.conf import settings

API_PATH_PREFIXES = ("/api/", "/sandbox/", "/platform/")
BATCH_PUSH_PATH = re.compile(r"/externals/push/batch/?$")  # integration_service/urls.py, name "push-batch"


def is_api_path(path: str) -> bool:
    return path.startswith(API_PATH_PREFIXES)


def body_limit(path: str) -> int:
    """The largest body an API route reads: the batch push has its own limit, every other route the push's."""
    if BATCH_PUSH_PATH.search(path):
        return settings.PUSH_BATCH_MAX_BODY_BYTES
    return settings.PUSH_MAX_BODY_BYTES
