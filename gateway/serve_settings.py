"""The sections of `gateway serve` over HTTP and of the console: tokens, OAuth, hosts, the console.

Declared apart from `gateway.settings`, whose `Settings` holds them, so each module stays one page.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TokenSettings(_Section):
    """A bearer token of `gateway serve` over HTTP, mapped to a principal (its roles: [principals])."""

    principal: str
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    env: str | None = None
    toolset: str | None = None  # the [[toolsets]] entry this token is confined to

    @model_validator(mode="after")
    def _one_source(self) -> TokenSettings:
        if (self.sha256 is None) == (self.env is None):
            raise ValueError(
                "give exactly one of sha256 (the token's hex digest) or env (a variable holding it)"
            )
        return self


_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
# Asymmetric only: a key published in a JWKS can never be an HMAC secret, and "none" is no signature.
JwtAlgorithm = Literal[
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"
]


def https_or_loopback(value: str | None, what: str) -> str | None:
    """`value` if it is an https URL, or http on a loopback address.

    Raises:
        ValueError: anything else, saying why.
    """
    if value is None:
        return value
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} must be an http(s) URL, e.g. https://auth.example.com")
    if parts.scheme == "http" and parts.hostname not in _LOOPBACK_NAMES:
        raise ValueError(
            f"{what} must use https (plain http only on a loopback address): keys fetched in clear can be forged"
        )
    return value


class OAuthSettings(_Section):
    """`gateway serve --transport http` as an OAuth resource server (docs/mcp.md, "Authentication").

    Access tokens are JWTs from `issuer`, checked against its published keys (JWKS).
    """

    issuer: str  # the authorization server; a token's `iss` must be exactly this
    resource: str | None = None  # this server's URL as clients reach it; default: the URL it serves
    audience: str | None = None  # what a token's `aud` must hold; default: `resource`
    jwks_uri: str | None = None  # default: the `jwks_uri` of the issuer's discovery document
    scopes: list[str] = []  # every token must carry these; advertised as `scopes_supported`
    algorithms: list[JwtAlgorithm] = Field(["RS256", "ES256"], min_length=1)
    principal_claim: str = Field("sub", min_length=1)  # the claim naming the principal
    roles_claim: str | None = "roles"  # a list (or space-separated string) of roles; dots reach into objects
    leeway_seconds: float = Field(30.0, ge=0, le=300)  # clock skew allowed on `exp` and `nbf`
    jwks_min_refresh_seconds: float = Field(60.0, ge=1)  # an unknown `kid` refetches at most this often
    jwks_max_age_seconds: float = Field(3600.0, ge=60)  # keys are refetched at least this often

    @field_validator("issuer", "resource", "jwks_uri")
    @classmethod
    def _secure(cls, value: str | None, info: ValidationInfo) -> str | None:
        return https_or_loopback(value, info.field_name or "url")


class ServeSettings(_Section):
    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    path: str = Field("/mcp", pattern=r"^/")
    tokens: list[TokenSettings] = []
    # Host names answered on every route (docs/mcp.md); default: loopback names, or the bound address.
    allowed_hosts: list[str] | None = None
    allowed_origins: list[str] = []  # web origins allowed besides the server's own
    oauth: OAuthSettings | None = None  # JWT access tokens from an authorization server
    # MCP sessions (Mcp-Session-Id): what lets an elicitation reach a handshake-era client (docs/mcp.md)
    sessions: bool = True
    max_sessions_per_principal: int = Field(1000, ge=1)  # sessions one principal holds open at once


class ConsoleSettings(_Section):
    """The operator console (docs/console.md); principals with the `admin` role in [[serve.tokens]] are admins too."""

    admin_token_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    admin_token_env: str | None = None  # or a variable holding the token
    host: str = "127.0.0.1"
    port: int = Field(8766, ge=0, le=65535)
    session_idle_minutes: float = Field(30.0, gt=0)  # a browser session unused this long ends
    session_hours: float = Field(8.0, gt=0)  # and every session ends this long after sign-in

    @model_validator(mode="after")
    def _at_most_one_source(self) -> ConsoleSettings:
        if self.admin_token_sha256 is not None and self.admin_token_env is not None:
            raise ValueError("give admin_token_sha256 (the token's digest) or admin_token_env, not both")
        return self
