"""The token request of the OAuth 2.0 client-credentials grant (RFC 6749 §4.4), read from its HTTP parts, the
errors it is answered with (§5.2: `{"error", "error_description"}`, not problem+json), the authorization server's
metadata (RFC 8414) and the challenges of `WWW-Authenticate` (RFC 6750 §3). Plain functions, no database.
"""

import base64
import binascii
import json
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote_plus

GRANT_TYPE = "client_credentials"
REALM = "integration"
AUTH_METHODS = ("client_secret_basic", "client_secret_post")
_HOW = "Send the ClientID and its client secret by HTTP Basic, or as the client_id and client_secret parameters."


def challenge(scheme: str, *, realm: str = REALM, error: str | None = None, description: str | None = None) -> str:
    """A `WWW-Authenticate` challenge with the realm and, when given, RFC 6750 §3's `error` and `error_description`
    (whose characters are printable ASCII but `"` and `\\`: an ellipsis is written "...", others are replaced)."""
    parameters = [f'realm="{realm}"']
    if error:
        parameters.append(f'error="{error}"')
    if description:
        text = description.replace("\u2026", "...")  # an ellipsis, as the details write it
        text = "".join(c if " " <= c <= "~" and c not in '"\\' else "'" if c == '"' else " " for c in text)
        parameters.append(f'error_description="{text}"')
    return f"{scheme} {', '.join(parameters)}"


class OAuthError(Exception):
    """An error of the token endpoint, as RFC 6749 §5.2 words it: 400, or 401 for `invalid_client`, with a Basic
    challenge when the client authenticated with HTTP Basic (`response_headers`)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description

    @property
    def status_code(self) -> int:
        return 401 if self.error == "invalid_client" else 400

    def response_headers(self, *, basic: bool) -> dict[str, str]:
        """§5.2: a 401 carries the challenge "matching the authentication scheme used by the client": only a client
        that sent an Authorization header is challenged; one that sent client_secret in the body is not."""
        if self.error != "invalid_client" or not basic:
            return {}
        return {"WWW-Authenticate": challenge("Basic", error=self.error, description=self.description)}

    @property
    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


def invalid_request(description: str) -> OAuthError:
    return OAuthError("invalid_request", description)


def invalid_client(description: str = f"Client authentication failed. {_HOW}") -> OAuthError:
    return OAuthError("invalid_client", description)


@dataclass(frozen=True)
class ClientCredentials:
    client_id: str
    client_secret: str


class _JSONObject(list):
    """A JSON object as its members in order, so a member sent twice is seen rather than the last one kept."""


def _json_pairs(body: bytes) -> list[tuple[str, str]]:
    """The members of a JSON object body whose values are strings; text no character can be (a lone surrogate) and
    nesting too deep for the parser are malformed requests, not errors of the service."""
    try:
        document = json.loads(body.decode("utf-8"), object_pairs_hook=_JSONObject)
    except RecursionError:
        raise invalid_request("The JSON body must be an object whose values are strings.") from None
    except (UnicodeDecodeError, ValueError):
        raise invalid_request("The body is not JSON.") from None
    if not isinstance(document, _JSONObject) or not all(isinstance(value, str) for _, value in document):
        raise invalid_request("The JSON body must be an object whose values are strings.")
    try:
        "".join(part for pair in document for part in pair).encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_request(
            "The JSON body holds a lone surrogate (\\ud800-\\udfff), which is not a character."
        ) from None
    return list(document)


def _parameters(*, media_type: str, body: bytes) -> dict[str, str]:
    """The request's parameters; those sent without a value are omitted (§3.2), one sent twice is refused."""
    if media_type == "application/x-www-form-urlencoded":
        try:
            pairs = parse_qsl(body.decode("ascii"), keep_blank_values=True, encoding="utf-8", errors="strict")
        except UnicodeDecodeError:
            raise invalid_request("The form body is not UTF-8 percent-encoded.") from None
    elif media_type == "application/json":
        pairs = _json_pairs(body)
    elif not body:
        pairs = []
    else:
        raise invalid_request("Send the parameters as application/x-www-form-urlencoded (or as a JSON object).")
    names = [name for name, _ in pairs]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise invalid_request(f"A parameter is sent more than once: {', '.join(repeated)}.")
    return {name: value for name, value in pairs if value}


def _basic(authorization: str) -> ClientCredentials:
    """The client of an `Authorization: Basic` header, each part form-urlencoded (§2.3.1)."""
    scheme, _, encoded = authorization.strip().partition(" ")
    if scheme.lower() != "basic":
        raise invalid_client(f"The Authorization header's scheme is not Basic. {_HOW}")
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        client_id, colon, client_secret = decoded.partition(":")
        client_id, client_secret = (unquote_plus(part, errors="strict") for part in (client_id, client_secret))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise invalid_client(f"The Basic credentials are not base64 of UTF-8 'clientId:clientSecret'. {_HOW}") from None
    if not colon or not client_id or not client_secret:
        raise invalid_client(f"The Basic credentials need both the ClientID and the client secret. {_HOW}")
    return ClientCredentials(client_id=client_id, client_secret=client_secret)


def token_request_read(*, media_type: str, body: bytes, authorization: str) -> ClientCredentials:
    """The client of a valid client-credentials token request, or the OAuthError it is answered with."""
    parameters = _parameters(media_type=media_type, body=body)
    grant_type = parameters.get("grant_type")
    if grant_type is None:
        raise invalid_request(f"The grant_type parameter is missing; it is '{GRANT_TYPE}'.")
    if grant_type != GRANT_TYPE:
        raise OAuthError("unsupported_grant_type", f"The only grant type here is '{GRANT_TYPE}'.")
    if not authorization.strip():
        if "client_id" not in parameters or "client_secret" not in parameters:
            raise invalid_client()
        return ClientCredentials(client_id=parameters["client_id"], client_secret=parameters["client_secret"])
    if "client_secret" in parameters:
        raise invalid_request("Authenticate the client one way: HTTP Basic or the client_secret parameter, not both.")
    client = _basic(authorization)
    if parameters.get("client_id", client.client_id) != client.client_id:
        raise invalid_request("The client_id parameter is not the ClientID of the Basic credentials.")
    return client


def authorization_server_metadata(*, issuer: str) -> dict[str, object]:
    """RFC 8414 §2's metadata of the authorization server whose issuer identifier is `issuer` (a root's URL without
    its trailing slash): its token endpoint serves the client-credentials grant only, and there is no authorization
    endpoint. The member of response types is required, and non-empty for authlib's validation: "none" (registered
    by OAuth 2.0 Multiple Response Type Encoding Practices) is the one that issues nothing from there."""
    return {
        "issuer": issuer,
        "token_endpoint": f"{issuer}/auth/token",
        "grant_types_supported": [GRANT_TYPE],
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "response_types_supported": ["none"],
        "service_documentation": f"{issuer}/schema/",
    }
