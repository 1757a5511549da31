"""Unknown query parameters, named alike by every list (core/api/parameters.py)."""

from core.api.parameters import unknown_parameter_errors


def test_each_unknown_parameter_is_named_with_the_known_ones_in_the_order_given():
    assert unknown_parameter_errors(["limit", "sort", "after", "Limit"], ("after", "limit")) == {
        "sort": ["Unknown parameter; the valid ones are after, limit."],
        "Limit": ["Unknown parameter; the valid ones are after, limit."],
    }


def test_known_parameters_are_no_error():
    assert unknown_parameter_errors({"after": "x"}, iter(["after", "limit"])) == {}
