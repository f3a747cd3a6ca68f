"""A test issuer: signing keys made here, its discovery document and JWKS served on loopback.

Tokens are signed with PyJWT as an authorization server would sign them; the gateway fetches the
keys over real HTTP, as it would from a real issuer.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from jwt.utils import base64url_decode, base64url_encode
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ... import oidc_provider as oidc
from ..loopback_http import loopback
from .mcp_server_support import _stop, _wait_for_line


@dataclass
class SigningKey:
    kid: str
    alg: str
    private: Any

    def public_jwk(self) -> dict[str, Any]:
        algorithm = jwt.get_algorithm_by_name(self.alg)
        jwk: dict[str, Any] = algorithm.to_jwk(self.private.public_key(), as_dict=True)
        return {**jwk, "kid": self.kid, "alg": self.alg, "use": "sig"}


def rsa_key(kid: str) -> SigningKey:
    return SigningKey(kid, "RS256", rsa.generate_private_key(public_exponent=65537, key_size=2048))


def ec_key(kid: str) -> SigningKey:
    return SigningKey(kid, "ES256", ec.generate_private_key(ec.SECP256R1()))


@dataclass
class Issuer:
    """The issuer's state: its URL once served, the keys it publishes, what was fetched."""

    keys: list[SigningKey]
    url: str = ""
    fetched: list[str] = field(default_factory=list)
    discovery: dict[str, Any] = field(default_factory=dict)  # replaces fields of the discovery document

    def sign(self, claims: dict[str, Any], key: SigningKey | None = None, **header: Any) -> str:
        key = key or self.keys[0]
        return jwt.encode(claims, key.private, algorithm=key.alg, headers={"kid": key.kid, **header})

    def claims(self, audience: str | list[str], **overrides: Any) -> dict[str, Any]:
        """Claims of a good access token for `audience`; `overrides` replace (None: drop) claims."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.url,
            "sub": "alice",
            "aud": audience,
            "exp": now + 300,
            "iat": now,
            "scope": "mcp:tools",
            "client_id": "test-client",
            "roles": ["admin"],
        }
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def app(self) -> Starlette:
        async def discovery(request: Request) -> JSONResponse:
            self.fetched.append(request.url.path)
            return JSONResponse({"issuer": self.url, "jwks_uri": f"{self.url}/jwks", **self.discovery})

        async def jwks(request: Request) -> JSONResponse:
            self.fetched.append(request.url.path)
            return JSONResponse({"keys": [k.public_jwk() for k in self.keys]})

        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", discovery),
                Route("/jwks", jwks),
            ]
        )


@contextmanager
def serve_issuer(*keys: SigningKey) -> Iterator[Issuer]:
    """An issuer publishing `keys` (default: one RSA key) on a loopback port."""
    issuer = Issuer(list(keys) or [rsa_key("k1")])
    with loopback(issuer.app()) as url:
        issuer.url = url
        yield issuer


def unsigned(claims: dict[str, Any]) -> str:
    """A token with `alg: none` and no signature."""
    return jwt.encode(claims, "", algorithm="none")  # "none" takes no key: PyJWT reads "" as None


def tampered(token: str, **changes: Any) -> str:
    """`token` with its payload changed and its signature kept."""
    header, payload, signature = token.split(".")
    claims = {**json.loads(base64url_decode(payload)), **changes}
    return f"{header}.{base64url_encode(json.dumps(claims).encode()).decode()}.{signature}"


def hmac_with_public_key(claims: dict[str, Any], key: SigningKey) -> str:
    """HS256 keyed with the issuer's public key (the algorithm confusion attack); PyJWT will not make one."""
    public = key.private.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    header = {"alg": "HS256", "typ": "JWT", "kid": key.kid}
    signing_input = b".".join(base64url_encode(json.dumps(part).encode()) for part in (header, claims))
    signature = hmac.new(public, signing_input, hashlib.sha256).digest()
    return f"{signing_input.decode()}.{base64url_encode(signature).decode()}"


@contextmanager
def oidc_provider(**env: str) -> Iterator[str]:
    """npm's oidc-provider under node on a loopback port (`tests/oidc/provider.mjs`); yields its issuer.

    Skips when node or the package is missing (`python -m tests.oidc_provider` installs it).
    """
    why = oidc.missing()
    if why is not None:
        pytest.skip(why)
    directory = oidc.install()  # copies today's script beside the installed packages
    proc = subprocess.Popen(
        ["node", "provider.mjs"],
        cwd=directory,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    drain = None
    try:
        line, _, drain = _wait_for_line(proc, proc.stdout, "oidc-provider ready", "oidc-provider")
        yield line.split()[-1]
    finally:
        _stop(proc, drain)
