"""JSON Merge Patch (RFC 7396): how a push's `data` is applied to a project's accumulated source data."""

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """Keys in the patch replace, keys absent are kept, a key whose value is null is removed.

    Neither argument is modified; the result shares no mutable containers with the patch's callers' target. Merged
    level by level in a loop, so no nesting makes it recurse.
    """
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    pending = [(merged, patch)]
    while pending:
        result, changes = pending.pop()
        for key, value in changes.items():
            if value is None:
                result.pop(key, None)
            elif isinstance(value, dict):
                kept = result.get(key)
                result[key] = dict(kept) if isinstance(kept, dict) else {}
                pending.append((result[key], value))
            else:
                result[key] = value
    return merged
