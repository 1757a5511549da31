"""Whether a push's refused value came from that push or from an earlier one.

A push is merged into the project's source data (a JSON merge patch), and the whole merged data is normalized: so an
issue of a push can name a value that push never sent, kept from an earlier push (a partner reading the push's body
beside it would look for it in vain). The push's own data, read by the field's rule alone, says which: if it does not
yield the refused value, the value came from the data earlier pushes left.
"""

from collections.abc import Sequence

from mappings.evaluation import PushPool
from mappings.issue_values import ISSUE_VALUE_MAX_CHARS, issue_value_limit
from mappings.normalization import FieldRule, apply_rule


def issues_from_earlier_pushes(*, issues: Sequence[dict], data: dict, rules: Sequence[FieldRule]) -> list[bool]:
    """For each of a push's issues, in order: True when its refused value is not what the push's own `data` gives
    the field's rule (`rules`: the rules to judge by). False for an issue without a value (a required field with
    none) or of a field `rules` do not map: nothing says the value came from elsewhere."""
    position = {rule.field: index for index, rule in enumerate(rules)}
    # The rules read the push again: one push's work, shared as normalization shares it (mappings/evaluation.py).
    flags, pool = [], PushPool(data, rules=len(rules))
    for issue in issues:
        index = position.get(issue.get("field"))
        if index is None or issue.get("value") is None:
            flags.append(False)
            continue
        # Cut where the stored value was cut: a record's later issues show shorter values (issue_values.py).
        limit = issue_value_limit(issue["value"])
        _, own_issue = apply_rule(rules[index], data, pool, later=len(rules) - index - 1, value_chars=limit)
        if own_issue is not None and limit != ISSUE_VALUE_MAX_CHARS and own_issue.get("value") != issue["value"]:
            # a partner's value holding the marker itself: read as it was cut when not cut
            _, own_issue = apply_rule(rules[index], data, pool, later=len(rules) - index - 1)
        flags.append(own_issue is None or own_issue.get("value") != issue["value"])
    return flags
