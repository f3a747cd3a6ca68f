"""Credentials of one entry: bearer tokens, API keys, HTTP basic and OAuth 2 client credentials.

Secrets come from an environment variable or a file named in the configuration, are read on the
first call (listing and searching need none), and never leave this module except in the request
itself: every text the gateway returns or logs from a call is scrubbed of them (`scrub`), including
the access tokens OAuth 2 hands out, and httpx's own request log is filtered the same way. Each is
scrubbed in every form it travels in (`encodings`: percent-encoded in a query or cookie, base64 in
a Basic header).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, quote_plus

from ..errors import ToolFailed, UserError
from ..settings.loading import OpenApiAuthSettings
from ..vault.grants import Grant
from .origins import origin, shown

_log = logging.getLogger("gateway.openapi")
REDACTED = "[redacted]"
REFRESH_MARGIN_SECONDS = 30.0
"""An OAuth 2 access token is renewed this long before it expires."""
_MIN_SECRET = 4  # shorter values are not scrubbed from text (they would mangle it)


def encodings(value: str) -> set[str]:
    """Every form a secret travels or is echoed in: raw, percent-encoded (as a path or a query
    encodes it, with upper or lower case hex), and as a JSON string's inside."""
    forms = {value, json.dumps(value)[1:-1]}
    for encoded in (quote(value, safe=""), quote_plus(value, safe=""), quote(value)):
        forms.add(encoded)
        forms.add(re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), encoded))
    return {f for f in forms if len(f) >= _MIN_SECRET}


class _Registry:
    """Every secret value in use in this process, for scrubbing logs."""

    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def add(self, values: set[str]) -> None:
        with self._lock:
            self._values |= values

    def discard(self, values: set[str]) -> None:
        with self._lock:
            self._values -= values

    def scrub(self, text: str) -> str:
        with self._lock:
            values = sorted(self._values, key=len, reverse=True)
        for value in values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text


SECRETS = _Registry()


class _LogFilter(logging.Filter):
    """Scrubs secrets from the records of the HTTP client's loggers (a query API key is in the URL)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = SECRETS.scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        return True


def install_log_filter() -> None:
    for name in ("httpx2", "httpcore2", "httpx", "httpcore"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _LogFilter) for f in logger.filters):
            logger.addFilter(_LogFilter())


def check(entry: str, settings: OpenApiAuthSettings) -> None:
    """Raises: UserError: the auth section misses what its type needs."""
    kind = settings.type
    if settings.per_principal:
        if kind not in ("bearer", "api_key"):
            raise UserError(f"[[openapi]] {entry}: per_principal works with auth type 'bearer' or 'api_key'")
        if settings.env is not None or settings.file is not None:
            raise UserError(
                f"[[openapi]] {entry}: per_principal takes each caller's own secret from the vault: "
                "remove env and file (they would be the operator's, for everybody)"
            )
        return
    if kind != "none" and (settings.env is None) == (settings.file is None):
        raise UserError(f"[[openapi]] {entry}: auth type {kind!r} needs exactly one of env or file")
    if kind in ("basic", "oauth2") and not (settings.username or settings.username_env):
        what = "the user" if kind == "basic" else "the client id"
        raise UserError(f"[[openapi]] {entry}: auth type {kind!r} needs username or username_env ({what})")


class Grants(Protocol):
    """Where each caller's own secret is (the vault): theirs for a service, or None."""

    def get(self, principal: str, service: str) -> Grant | None: ...


def service_of(entry: str) -> str:
    """The vault's name for an entry's grants: `openapi:NAME`."""
    return f"openapi:{entry}"


class Credentials:
    """Applies one entry's authentication to requests; thread-safe.

    With `per_principal`, the secret is the caller's own, from `grants` (the vault), and never the
    operator's: a caller who has not connected the API gets `not_connected`, and nothing is sent.
    """

    def __init__(
        self,
        entry: str,
        settings: OpenApiAuthSettings,
        schemes: Mapping[str, Any],
        *,
        environ: Mapping[str, str] | None = None,
        token_request: Callable[[str, dict[str, str], tuple[str, str]], Any] | None = None,
        base_url: str | None = None,
        grants: Grants | None = None,
    ) -> None:
        check(entry, settings)
        self.entry = entry
        self.grants = grants
        self.settings = settings
        self._environ = os.environ if environ is None else environ
        self.token_request = token_request
        self._lock = threading.Lock()
        self._secret: str | None = None
        self._token: str | None = None
        self._expires = 0.0
        self._mine: set[str] = set()
        self._mine_lock = threading.Lock()
        self.location, self.name = self._api_key_place(schemes)
        self.token_url = _on_base(settings.token_url, base_url)
        if self.token_url is None and settings.type == "oauth2":
            self.token_url = _described_token_url(entry, schemes, base_url)

    def _api_key_place(self, schemes: Mapping[str, Any]) -> tuple[str, str]:
        declared = next(
            (s for s in schemes.values() if isinstance(s, dict) and s.get("type") == "apiKey"), {}
        )
        location = self.settings.location or str(declared.get("in") or "header")
        return location, self.settings.name or str(declared.get("name") or "X-API-Key")

    @property
    def hidden(self) -> set[tuple[str, str]]:
        """(location, lowercase name) of parameters the gateway fills in itself."""
        return {(self.location, self.name.lower())} if self.settings.type == "api_key" else set()

    def _remember(self, value: str) -> str:
        forms = encodings(value)
        with self._mine_lock:  # also called under self._lock
            self._mine |= forms
        SECRETS.add(forms)
        return value

    def _read(self, env: str | None, file: Path | None, what: str) -> str:
        if env is not None:
            value = self._environ.get(env, "")
            if not value:
                raise ToolFailed(
                    "permission_denied",
                    f"the gateway has no {what} for {self.entry}: the operator has to set {env}",
                )
            return value.strip()
        assert file is not None
        try:
            value = file.expanduser().read_text(encoding="utf-8").strip()
        except OSError:
            value = ""
        if not value:
            raise ToolFailed(
                "permission_denied",
                f"the gateway has no {what} for {self.entry}: the operator has to fill the secrets file",
            )
        return value

    def secret(self) -> str:
        with self._lock:
            if self._secret is None:
                what = {"bearer": "token", "api_key": "API key", "basic": "password"}.get(
                    self.settings.type, "client secret"
                )
                self._secret = self._remember(self._read(self.settings.env, self.settings.file, what))
            return self._secret

    def _user(self) -> str:
        if self.settings.username_env is not None:
            return self._read(self.settings.username_env, None, "user name")
        return self.settings.username or ""

    def own_secret(self, principal: str | None) -> str:
        """The caller's own token or key for this entry, from the vault.

        Raises:
            ToolFailed: `not_connected` (the caller has not connected the API), or `unavailable`
                (no vault is configured, or its keys do not open the caller's grant).
        """
        service = service_of(self.entry)
        if self.grants is None or principal is None:
            raise ToolFailed(
                "unavailable",
                f"{self.entry} uses each caller's own credentials, and the gateway has no vault: the operator "
                "has to set the vault's keys (docs/security.md, the vault)",
            )
        try:
            grant = self.grants.get(principal, service)
        except UserError as exc:  # the vault's keys do not open it: the operator's to fix, said in the log
            _log.warning("openapi %s: the grant of %s cannot be opened: %s", self.entry, principal, exc)
            raise ToolFailed(
                "unavailable", f"the gateway cannot open your credentials for {self.entry}; tell the operator"
            ) from None
        value = None if grant is None else (grant.api_key or grant.access_token)
        if not value:
            raise ToolFailed(
                "not_connected",
                f"{principal} has not connected {self.entry}: the user has to connect their own account "
                f"first (gateway connect {service}); nothing was sent",
            )
        return self._remember(value.strip())

    def apply(
        self,
        headers: dict[str, str],
        query: list[tuple[str, str]],
        cookies: dict[str, str],
        principal: str | None = None,
    ) -> None:
        """Adds the credentials to a request's parts (fetching an access token if needed); with
        `per_principal`, `principal`'s own."""
        kind = self.settings.type
        if kind == "none":
            return
        if self.settings.per_principal:
            secret = self.own_secret(principal)
            if kind == "bearer":
                headers["Authorization"] = f"Bearer {secret}"
            elif self.location == "query":
                query.append((self.name, secret))
            elif self.location == "cookie":
                cookies[self.name] = secret
            else:
                headers[self.name] = secret
            return
        if kind == "bearer":
            headers["Authorization"] = f"Bearer {self.secret()}"
        elif kind == "basic":
            pair = f"{self._user()}:{self.secret()}".encode()
            headers["Authorization"] = "Basic " + self._remember(base64.b64encode(pair).decode())
        elif kind == "oauth2":
            headers["Authorization"] = f"Bearer {self.access_token()}"
        elif self.location == "query":
            query.append((self.name, self.secret()))
        elif self.location == "cookie":
            cookies[self.name] = self.secret()
        else:
            headers[self.name] = self.secret()

    @property
    def refreshable(self) -> bool:
        return self.settings.type == "oauth2"

    def invalidate(self) -> None:
        """Forget the access token (the API refused it): the next call fetches a new one."""
        with self._lock:
            self._token, self._expires = None, 0.0

    def access_token(self) -> str:
        secret, user = self.secret(), self._user()
        with self._lock:
            if self._token is not None and time.monotonic() < self._expires:
                return self._token
            if self.token_request is None or self.token_url is None:
                raise ToolFailed(
                    "permission_denied", f"the gateway cannot get an access token for {self.entry}"
                )
            form = {"grant_type": "client_credentials"}
            if self.settings.scopes:
                form["scope"] = " ".join(self.settings.scopes)
            self._remember(base64.b64encode(f"{user}:{secret}".encode()).decode())  # its Basic header
            answer = self.token_request(self.token_url, form, (user, secret))
            token = answer.get("access_token") if isinstance(answer, dict) else None
            if not isinstance(token, str) or not token:
                raise ToolFailed(
                    "permission_denied",
                    f"the token endpoint of {self.entry} gave no access token; the operator has to check the "
                    "client credentials",
                )
            lifetime = answer.get("expires_in")
            seconds = (
                float(lifetime)
                if isinstance(lifetime, int | float) and not isinstance(lifetime, bool)
                else 3600.0
            )
            self._token = self._remember(token)
            self._expires = time.monotonic() + seconds - REFRESH_MARGIN_SECONDS
            return token

    def scrub(self, value: Any) -> Any:
        """`value` with every secret of this entry replaced, in strings at any depth."""
        if isinstance(value, str):
            with self._mine_lock:
                mine = sorted(self._mine, key=len, reverse=True)
            for secret in mine:
                if len(secret) >= _MIN_SECRET and secret in value:
                    value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {self.scrub(k): self.scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.scrub(v) for v in value]
        return value

    def close(self) -> None:
        SECRETS.discard(self._mine)


def _on_base(url: str | None, base_url: str | None) -> str | None:
    return base_url.rstrip("/") + url if url and base_url and url.startswith("/") else url


def _described_token_url(entry: str, schemes: Mapping[str, Any], base_url: str | None) -> str:
    """The description's clientCredentials token URL, only on the API's own origin (the client id
    and secret go there).

    Raises:
        UserError: none, or one on another origin (the operator has to set token_url).
    """
    url = _on_base(_token_url(schemes), base_url)
    if url is None:
        raise UserError(
            f"[[openapi]] {entry}: auth type 'oauth2' needs token_url (the description has no "
            "clientCredentials flow)"
        )
    if origin(url) is None or origin(url) != origin(base_url):
        raise UserError(
            f"[[openapi]] {entry}: the description's token URL is on {shown(origin(url))}, not on the API's "
            f"{shown(origin(base_url))}; the client secret is sent only to a token_url set in the configuration"
        )
    return url


def _token_url(schemes: Mapping[str, Any]) -> str | None:
    for scheme in schemes.values():
        flows = scheme.get("flows") if isinstance(scheme, dict) else None
        flow = flows.get("clientCredentials") if isinstance(flows, dict) else None
        if isinstance(flow, dict) and isinstance(flow.get("tokenUrl"), str):
            return str(flow["tokenUrl"])
    return None
