"""Who may use the console, and how a browser stays signed in.

Admins hold the console's admin token (`[console]`) or a bearer token of `[[serve.tokens]]` whose
principal has the `admin` role. Tokens are known by their SHA-256 digests only and compared in
constant time. A browser signs in once and then carries a session cookie (HttpOnly,
SameSite=Strict) sealed with an HMAC; every state-changing request also carries a CSRF token
derived from that session. An API client may send its token as `Authorization: Bearer` instead.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..admin import admin_tokens
from ..config import Settings

"""Who decided, in the audit log, when the console's own admin token signed in."""
SESSION_COOKIE = "gateway_console"
LOGIN_COOKIE = "gateway_console_login"
SESSION_SECONDS = 8 * 3600.0


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class AdminTokens:
    """The admin tokens, by digest, each with the name decisions are recorded under."""

    def __init__(self, digests: Mapping[str, str]) -> None:
        self._digests = dict(digests)

    @classmethod
    def from_settings(cls, settings: Settings, environ: Mapping[str, str]) -> AdminTokens:
        """The operator's tokens (`gateway.admin`): configured ones, else the data directory's own.

        Raises:
            UserError: a token names an environment variable that is not set.
        """
        return cls(admin_tokens(settings, environ))

    def __bool__(self) -> bool:
        return bool(self._digests)

    def fingerprint(self) -> bytes:
        """Changes when the set of tokens changes (sessions signed under other tokens end)."""
        return hashlib.sha256("\n".join(sorted(self._digests)).encode()).digest()

    def who(self, token: str) -> str | None:
        """The admin holding `token`, or None."""
        digest = _digest(token)
        found = None
        for known, who in self._digests.items():  # every entry, each in constant time
            if hmac.compare_digest(known, digest):
                found = who
        return found


@dataclass(frozen=True)
class Session:
    who: str
    nonce: str
    expires_at: float


class Sessions:
    """Sealed session cookies and the CSRF tokens bound to them.

    Args:
        key: the sealing key; replicas that share it honour each other's sessions.
    """

    def __init__(self, key: bytes, *, clock: Callable[[], float] = time.time) -> None:
        self._key = key
        self._clock = clock

    def _mac(self, purpose: str, text: str) -> str:
        return hmac.new(self._key, f"{purpose}\n{text}".encode(), hashlib.sha256).hexdigest()

    def issue(self, who: str) -> str:
        body = json.dumps(
            {"who": who, "nonce": secrets.token_hex(16), "exp": self._clock() + SESSION_SECONDS}
        )
        payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
        return f"{payload}.{self._mac('session', payload)}"

    def read(self, value: str | None) -> Session | None:
        """The session a cookie holds; None when it is missing, forged or expired."""
        if not value or "." not in value or len(value) > 1000:
            return None
        payload, _, mac = value.rpartition(".")
        if not hmac.compare_digest(mac, self._mac("session", payload)):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            session = Session(str(data["who"]), str(data["nonce"]), float(data["exp"]))
        except (ValueError, KeyError, TypeError):
            return None
        return session if session.expires_at > self._clock() else None

    def csrf(self, session: Session) -> str:
        return self._mac("csrf", session.nonce)

    def login_csrf(self, nonce: str) -> str:
        """The login form's CSRF token, bound to the nonce in the login cookie."""
        return self._mac("login", nonce)

    @staticmethod
    def valid(expected: str, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(expected, given or "")


def session_key(settings: Settings, tokens: AdminTokens) -> bytes:
    """The key sealing sessions: from the confirmation secret when there is one (replicas share it)."""
    secret = settings.confirmation.secret
    base = secret.get_secret_value().encode() if secret is not None else secrets.token_bytes(32)
    return hmac.new(base, b"metatool-gateway/console-session" + tokens.fingerprint(), hashlib.sha256).digest()
