"""`gateway serve` as an OAuth resource server: JWT access tokens checked against the issuer's keys.

The MCP SDK does the protocol (`/.well-known/oauth-protected-resource`, `WWW-Authenticate` with
`resource_metadata` on 401, `insufficient_scope` on 403); this module decides whether a token is
good and whom it names:

- the signature, by a key of the issuer's JWKS (fetched from its discovery document's `jwks_uri`,
  cached, refetched when a token names an unknown `kid`, at most every `jwks_min_refresh_seconds`);
- only the algorithms the operator allows (asymmetric ones: never `none`, never HS*);
- `iss` exactly the issuer, `aud` holding this server's resource URL, `exp` (required) and `nbf`;
- the principal from one claim, roles from another (both configurable), scopes from `scope`/`scp`.

Static `[[serve.tokens]]` keep working beside it. A token is never logged or kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import anyio
import httpx2
import jwt
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.routes import create_protected_resource_routes
from mcp.server.auth.settings import AuthSettings
from pydantic import Field
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import UserError
from ..named_toolsets import NO_TOOLSETS, Toolsets
from ..rendering import safe_text
from ..settings.sections import OAuthSettings, https_or_loopback

log = logging.getLogger("gateway.oauth")

MAX_TOKEN_BYTES = 16_384
"""A longer bearer token is refused unread."""

_MAX_DOCUMENT_BYTES = 1_000_000
_FETCH_SECONDS = 10.0


class MappedToken(AccessToken):
    """A verified access token with the principal and roles its claims name, and the named toolsets
    its client id, scopes or audience confine it to (`gateway.named_toolsets`)."""

    principal: str
    roles: list[str]
    toolsets: list[str] = Field(default_factory=list)


class KeySet:
    """The issuer's signing keys (JWKS), fetched when needed, cached, refetched with a floor.

    Args:
        settings: `[serve.oauth]`: the issuer, its `jwks_uri` if given, the refresh intervals.
        clock: seconds, monotonic (tests move it).
    """

    def __init__(self, settings: OAuthSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings
        self.clock = clock
        self.keys: list[dict[str, Any]] = []
        self.fetched_at: float | None = None  # last successful fetch
        self.tried_at: float | None = None  # last attempt, successful or not
        self._lock = anyio.Lock()

    async def key_for(self, kid: str | None, alg: str) -> jwt.PyJWK | None:
        """The key that checks a token signed with `alg` under `kid`; None when the issuer has none."""
        now = self.clock()
        if self.fetched_at is None or now - self.fetched_at >= self.settings.jwks_max_age_seconds:
            await self._refresh(now)
        found = _pick(self.keys, kid, alg)
        if found is None:
            # A new key after a rotation: look again, but a stream of made-up kids costs one fetch a floor.
            await self._refresh(self.clock())
            found = _pick(self.keys, kid, alg)
        return found

    async def _refresh(self, now: float) -> None:
        async with self._lock:
            if self.tried_at is not None and now - self.tried_at < self.settings.jwks_min_refresh_seconds:
                return  # tried moments ago (maybe for a concurrent request): a floor on fetches, even failed ones
            self.tried_at = self.clock()
            try:
                keys = await self._fetch()
            except (httpx2.HTTPError, ValueError) as exc:
                # The keys held so far stay in use; with none, every token is refused until the issuer answers.
                log.warning(
                    "could not fetch the signing keys of %s: %s",
                    self.settings.issuer,
                    safe_text(str(exc), 300),
                )
                return
            self.keys, self.fetched_at = keys, self.clock()

    async def _fetch(self) -> list[dict[str, Any]]:
        async with httpx2.AsyncClient(timeout=_FETCH_SECONDS, follow_redirects=False) as http:
            uri = self.settings.jwks_uri or await _jwks_uri(http, self.settings.issuer)
            document = await _get_json(http, uri)
        keys = document.get("keys")
        if not isinstance(keys, list):
            raise ValueError(f"{uri} holds no JWKS (no `keys` list)")
        return [k for k in keys if isinstance(k, dict) and k.get("use", "sig") == "sig"]


async def _jwks_uri(http: httpx2.AsyncClient, issuer: str) -> str:
    """The issuer's `jwks_uri`, from its OpenID Connect or RFC 8414 discovery document."""
    base = issuer.rstrip("/")
    scheme, _, rest = base.partition("://")
    host, slash, path = rest.partition("/")
    candidates = [
        f"{base}/.well-known/openid-configuration",
        f"{scheme}://{host}/.well-known/oauth-authorization-server{slash}{path}",
    ]
    problems = []
    for url in candidates:
        try:
            document = await _get_json(http, url)
        except (httpx2.HTTPError, ValueError) as exc:
            problems.append(f"{url}: {exc}")
            continue
        # A document for another issuer would hand over its keys (RFC 8414 section 3.3).
        if document.get("issuer") != issuer:
            raise ValueError(
                f"{url} names issuer {safe_text(str(document.get('issuer')), 200)}, not {issuer}"
            )
        uri = document.get("jwks_uri")
        if not isinstance(uri, str):
            raise ValueError(f"{url} has no jwks_uri")
        return https_or_loopback(uri, "jwks_uri") or uri  # the rule of the configured URLs
    raise ValueError("no discovery document: " + "; ".join(problems))


async def _get_json(http: httpx2.AsyncClient, url: str) -> dict[str, Any]:
    response = await http.get(url, headers={"Accept": "application/json"})
    response.raise_for_status()
    if len(response.content) > _MAX_DOCUMENT_BYTES:
        raise ValueError(f"{url} answered more than {_MAX_DOCUMENT_BYTES} bytes")
    document = response.json()
    if not isinstance(document, dict):
        raise ValueError(f"{url} answered no JSON object")
    return document


def _pick(keys: list[dict[str, Any]], kid: str | None, alg: str) -> jwt.PyJWK | None:
    """The key named `kid` usable with `alg`; without a kid, the one key that fits, if only one does."""
    fitting = []
    for jwk in keys:
        if kid is not None and jwk.get("kid") != kid:
            continue
        if jwk.get("alg", alg) != alg:  # a key published for one algorithm serves no other
            continue
        try:
            fitting.append(jwt.PyJWK(jwk, algorithm=alg))
        except jwt.PyJWTError:
            continue  # another key type (an RSA key for ES256), or an unusable key
    return fitting[0] if len(fitting) == 1 or (fitting and kid is not None) else None


class JwtVerifier:
    """Checks JWT access tokens from `[serve.oauth] issuer` (the SDK's `TokenVerifier`).

    Args:
        settings: `[serve.oauth]`.
        audience: the `aud` a token must hold (`audience`, else `resource`, else the served URL).
        keys: the issuer's keys (default: fetched as configured).
        toolsets: the named toolsets, which may bind a client id or a scope.
        resources: {a toolset endpoint's resource URL: its toolset}: audiences accepted too, each
            confining its token to that toolset.
    """

    def __init__(
        self,
        settings: OAuthSettings,
        audience: str,
        keys: KeySet | None = None,
        *,
        toolsets: Toolsets = NO_TOOLSETS,
        resources: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.audience = audience
        self.keys = keys or KeySet(settings)
        self.toolsets = toolsets
        self.resources = dict(resources or {})

    async def verify_token(self, token: str) -> AccessToken | None:
        claims = await self.claims(token)
        if claims is None:
            return None
        principal = claim_at(claims, self.settings.principal_claim)
        if not isinstance(principal, str) or not principal:
            log.warning("refused a token: no %s claim to name the principal", self.settings.principal_claim)
            return None
        roles = _strings(claim_at(claims, self.settings.roles_claim)) if self.settings.roles_claim else []
        client = claims.get("client_id") or claims.get("azp")
        scopes = _strings(claims.get("scope", claims.get("scp")))
        aud = claims.get("aud")
        audiences = [aud] if isinstance(aud, str) else _strings(aud)
        # A token for the whole catalog is bound by its client and scopes; one for a toolset's endpoint, to it too.
        bound = self.toolsets.bound(client=client if isinstance(client, str) else None, scopes=scopes)
        if self.audience not in audiences:
            bound |= {self.resources[a] for a in audiences if a in self.resources}
        exp = claims.get("exp")
        return MappedToken(
            token="",
            client_id=client if isinstance(client, str) else principal,
            scopes=scopes,
            # The SDK refuses a token past `expires_at` on its own, without the leeway decode allowed.
            expires_at=int(exp + self.settings.leeway_seconds) if isinstance(exp, int | float) else None,
            resource=self.audience,
            subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
            claims={"iss": claims.get("iss")},
            principal=principal,
            roles=roles,
            toolsets=sorted(bound),
        )

    async def claims(self, token: str) -> dict[str, Any] | None:
        """The token's claims if it is good for this server; None (and a logged reason) if not."""
        if len(token) > MAX_TOKEN_BYTES or token.count(".") != 2:
            return None  # not a JWS in compact form (or a static token nobody configured)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        alg = header.get("alg")
        if alg not in self.settings.algorithms:
            log.warning(
                "refused a token signed with %s (allowed: %s)",
                safe_text(str(alg), 20),
                self.settings.algorithms,
            )
            return None
        kid = header.get("kid")
        key = await self.keys.key_for(kid if isinstance(kid, str) else None, alg)
        if key is None:
            log.warning(
                "refused a token: %s has no %s key named %s",
                self.settings.issuer,
                alg,
                safe_text(str(kid), 100),
            )
            return None
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=[alg],
                audience=[self.audience, *self.resources],
                issuer=self.settings.issuer,
                leeway=self.settings.leeway_seconds,
                options={"require": ["exp", "iss", "aud"], "verify_iat": False},
            )
        except jwt.PyJWTError as exc:
            log.warning("refused a token: %s", safe_text(str(exc), 200))
            return None
        return claims


class Verifiers:
    """Static `[[serve.tokens]]` first, then JWTs from the issuer; the first that knows the token wins.

    A static token carries every required scope: the operator configured it for this server.
    """

    def __init__(self, static: TokenVerifier | None, jwts: JwtVerifier | None, scopes: list[str]) -> None:
        self.static = static
        self.jwts = jwts
        self.scopes = scopes

    async def verify_token(self, token: str) -> AccessToken | None:
        if self.static is not None and (found := await self.static.verify_token(token)) is not None:
            return found.model_copy(update={"scopes": list(self.scopes)})
        return await self.jwts.verify_token(token) if self.jwts is not None else None


def claim_at(claims: Mapping[str, Any], path: str | None) -> Any:
    """The claim at `path`: a claim's name, or names joined by dots into nested objects."""
    if not path:
        return None
    if path in claims:  # a name with dots in it, e.g. a namespaced claim "https://example.com/roles"
        return claims[path]
    value: Any = claims
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _strings(value: Any) -> list[str]:
    """A claim that is a list of strings or one space-separated string, as a list (else empty)."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v]
    return []


def check_resource(oauth: OAuthSettings | None, bind: str) -> None:
    """Fail at start when the served URL cannot be the resource tokens are issued for.

    Raises:
        UserError: bound to every address with no `[serve.oauth] resource`.
    """
    if oauth is not None and oauth.resource is None and bind in ("0.0.0.0", "::", ""):
        raise UserError(
            f"listening on every address ({bind or 'all'}): set [serve.oauth] resource to the URL clients "
            "reach the gateway by, e.g. https://gateway.example.com/mcp (tokens are issued for it)"
        )


def root_metadata_route(auth: AuthSettings) -> Route:
    """The protected resource metadata at `/.well-known/oauth-protected-resource` as well.

    RFC 9728 puts it under the resource's path (the SDK's route); clients written before that try
    the root, and without it report a 404 as an OAuth error.
    """
    assert auth.resource_server_url is not None
    (route,) = create_protected_resource_routes(
        resource_url=auth.resource_server_url,
        authorization_servers=[auth.issuer_url],
        scopes_supported=auth.required_scopes,
    )
    return Route("/.well-known/oauth-protected-resource", endpoint=route.endpoint, methods=["GET", "OPTIONS"])


class ScopeChallenge:
    """ASGI middleware: the SDK's 401 and 403 challenges name the scopes a token needs.

    RFC 6750 section 3's `scope` attribute; MCP clients ask the authorization server for exactly
    these (before falling back to the metadata's `scopes_supported`). Only the challenges that carry
    `resource_metadata` (the MCP route's) are touched.
    """

    def __init__(self, app: ASGIApp, scopes: list[str]) -> None:
        self.app = app
        self.attribute = f', scope="{" ".join(scopes)}"'.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_scope(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] in (401, 403):
                message = {**message, "headers": [self._named(k, v) for k, v in message.get("headers", [])]}
            await send(message)

        await self.app(scope, receive, send_with_scope)

    def _named(self, key: bytes, value: bytes) -> tuple[bytes, bytes]:
        if key.lower() == b"www-authenticate" and b"resource_metadata=" in value and b"scope=" not in value:
            return key, value + self.attribute
        return key, value
