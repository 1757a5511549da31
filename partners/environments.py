from django.http import HttpRequest

from partners.choices import Environment


def request_environment(request: HttpRequest) -> Environment:
    """The environment of the API root the request came in under (set on the URL include)."""
    return Environment(request.resolver_match.kwargs["environment"])
