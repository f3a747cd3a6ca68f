"""Who may use the console, and how a browser stays signed in.

Admins hold the console's admin token (`[console]`) or a bearer token of `[[serve.tokens]]` whose
principal has the `admin` role. Tokens are known by their SHA-256 digests only and compared in
constant time. A browser signs in once and then carries a session cookie (HttpOnly,
SameSite=Strict) sealed with an HMAC; every state-changing request also carries a CSRF token
derived from that session. An API client may send its token as `Authorization: Bearer` instead.

A session ends when it has been idle too long (the cookie records when it was last used and is
sealed again on each page), when it reaches its absolute lifetime, or when its holder signs out:
signing out revokes it on the server, so a copy of the old cookie is refused too.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from ..admin import admin_tokens
from ..settings.loading import Settings

"""Who decided, in the audit log, when the console's own admin token signed in."""
SESSION_COOKIE = "gateway_console"
LOGIN_COOKIE = "gateway_console_login"
SESSION_SECONDS = 8 * 3600.0
"""A session's absolute lifetime, by default, however busy it is."""
IDLE_SECONDS = 30 * 60.0
"""How long a session may go unused, by default, before it ends."""


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
    issued_at: float
    seen_at: float


class Sessions:
    """Sealed session cookies, the CSRF tokens bound to them, and the sessions signed out.

    Args:
        key: the sealing key; replicas that share it honour each other's sessions.
        clock: the time, in seconds (injected by tests).
        idle_seconds: a session unused this long ends.
        lifetime_seconds: a session ends this long after sign-in, however busy.
    """

    def __init__(
        self,
        key: bytes,
        *,
        clock: Callable[[], float] = time.time,
        idle_seconds: float = IDLE_SECONDS,
        lifetime_seconds: float = SESSION_SECONDS,
    ) -> None:
        self._key = key
        self._clock = clock
        self.idle_seconds = idle_seconds
        self.lifetime_seconds = lifetime_seconds
        # Signed-out sessions, by nonce, until they would have ended anyway (then forgotten).
        self._revoked: dict[str, float] = {}

    def _mac(self, purpose: str, text: str) -> str:
        return hmac.new(self._key, f"{purpose}\n{text}".encode(), hashlib.sha256).hexdigest()

    def _seal(self, session: Session) -> str:
        body = json.dumps(
            {"who": session.who, "nonce": session.nonce, "iat": session.issued_at, "seen": session.seen_at}
        )
        payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
        return f"{payload}.{self._mac('session', payload)}"

    def issue(self, who: str) -> str:
        """A new session's cookie value."""
        now = self._clock()
        return self._seal(Session(who, secrets.token_hex(16), now, now))

    def refresh(self, session: Session) -> str:
        """The cookie value of `session` used now (same nonce, so its CSRF token stays valid)."""
        return self._seal(replace(session, seen_at=self._clock()))

    def max_age(self, session: Session) -> int:
        """Seconds the browser should keep the cookie: until idle, or the end of its lifetime."""
        left = session.issued_at + self.lifetime_seconds - self._clock()
        return max(0, int(min(self.idle_seconds, left)))

    def read(self, value: str | None) -> Session | None:
        """The session a cookie holds; None when it is missing, forged, idle too long, too old or signed out."""
        if not value or "." not in value or len(value) > 1000:
            return None
        payload, _, mac = value.rpartition(".")
        if not hmac.compare_digest(mac, self._mac("session", payload)):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
            session = Session(str(data["who"]), str(data["nonce"]), float(data["iat"]), float(data["seen"]))
        except (ValueError, KeyError, TypeError):
            return None
        now = self._clock()
        if now - session.seen_at > self.idle_seconds or now - session.issued_at > self.lifetime_seconds:
            return None
        return None if session.nonce in self._revoked else session

    def revoke(self, session: Session) -> None:
        """Sign `session` out: its cookie is refused from now on, wherever it was copied."""
        now = self._clock()
        self._revoked = {n: end for n, end in self._revoked.items() if end > now}
        self._revoked[session.nonce] = session.issued_at + self.lifetime_seconds

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
