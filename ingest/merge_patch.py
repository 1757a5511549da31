"""JSON Merge Patch (RFC 7396): how a push's `data` is applied to a project's accumulated source data."""

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """Keys in the patch replace, keys absent are kept, a key whose value is null is removed.

    Neither argument is modified; the result shares no mutable containers with the patch's callers' target.
    """
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
