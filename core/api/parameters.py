"""Query parameters as every list checks them."""

from collections.abc import Iterable


def unknown_parameter_errors(params: Iterable[str], known: Iterable[str]) -> dict[str, list[str]]:
    """Each of `params` that is not `known`, named with the parameters there are, in the order of `params`: a typo
    must not silently widen what is read (CONTRACT §6)."""
    known = tuple(known)
    valid = ", ".join(known)
    return {name: [f"Unknown parameter; the valid ones are {valid}."] for name in params if name not in known}
