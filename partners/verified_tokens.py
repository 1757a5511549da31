"""Access tokens whose signature this process has verified, kept by their exact bytes: a bounded map to their claims.

Verifying a token (PyJWT: its segments decoded, the HMAC key prepared and its length checked, the signature
computed) was a tenth of an authenticated GET's CPU. For the same bytes under the same key, what that concludes
cannot change, and the key is the settings' (simplejwt's token backend, made once per process). So a token seen
before is taken from here; everything that can change is checked again on every request, as the full path would:
the time claims (PyJWT's `iat`, `nbf` and `exp` checks, then simplejwt's `verify`: its expiry, id and type), and,
after this, the caller's state (revocation, login family, password, ClientID: partners/authentication.py). A token
failing any of these now is not answered from here: the full path validates it again and says why.
"""

import threading
from collections import OrderedDict
from datetime import UTC, datetime

from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.state import token_backend
from rest_framework_simplejwt.tokens import Token
from rest_framework_simplejwt.utils import aware_utcnow

MAX_TOKENS = 4096  # tokens of a process's recent callers; each entry is a few hundred bytes


class VerifiedTokens:
    """The claims of verified tokens by their bytes, the least recently used forgotten first past `size`."""

    def __init__(self, *, size: int) -> None:
        self.size = size
        self._claims: OrderedDict[bytes, tuple[type[Token], dict]] = OrderedDict()
        self._lock = threading.Lock()  # a worker's threads share it

    def __len__(self) -> int:
        return len(self._claims)

    def token(self, raw: bytes) -> Token | None:
        """The token `raw` as its class validated it before, its time claims and simplejwt's checks made again now;
        None when it was not verified here, or when a check fails now (the caller then validates it in full)."""
        with self._lock:
            entry = self._claims.get(raw)
            if entry is None:
                return None
            self._claims.move_to_end(raw)
        token_class, claims = entry
        if not _times_hold(claims):
            return None
        token = token_class.__new__(token_class)  # as Token.__init__ leaves it, its decode skipped
        token.token = raw
        token.current_time = aware_utcnow()
        token.payload = dict(claims)
        try:
            token.verify()
        except TokenError:
            return None
        return token

    def remember(self, raw: bytes, token: Token) -> None:
        """Keep `token`, which its class has just validated from `raw` in full. Only a token of the class simplejwt
        tries first is kept: a class tried before it might accept the bytes later, and would answer first."""
        if type(token) is not api_settings.AUTH_TOKEN_CLASSES[0]:
            return
        with self._lock:
            self._claims[raw] = (type(token), dict(token.payload))
            self._claims.move_to_end(raw)
            while len(self._claims) > self.size:
                self._claims.popitem(last=False)


def _times_hold(claims: dict) -> bool:
    """PyJWT's checks of the time claims, as its decode makes them (api_jwt.py, `_validate_claims`): `iat` and `nbf`
    not after now, `exp` after now, each by the backend's leeway. Their values were read as integers when the token
    was first verified."""
    now = datetime.now(tz=UTC).timestamp()
    leeway = token_backend.get_leeway().total_seconds()
    return (
        ("iat" not in claims or int(claims["iat"]) <= now + leeway)
        and ("nbf" not in claims or int(claims["nbf"]) <= now + leeway)
        and ("exp" not in claims or int(claims["exp"]) > now - leeway)
    )


verified_tokens = VerifiedTokens(size=MAX_TOKENS)
