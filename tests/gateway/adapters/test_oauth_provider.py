"""End to end with a real OpenID provider (npm's oidc-provider under node) and the SDK client's OAuth flow.

The client finds the provider through the gateway's 401 and protected resource metadata, registers
itself, signs in with PKCE and a resource indicator, and calls the tools with the JWT it got. The
test plays the user's browser (the provider signs the user in without a page). Tokens the provider
issued for another server, or changed after it signed them, are refused; so are another provider's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import anyio
import httpx2
import jwt
import pytest
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from .mcp_server_support import http_server, write_config
from .oauth_support import oidc_provider, tampered, unsigned

REDIRECT_URI = "http://127.0.0.1:9/callback"  # never reached: the browser stops at the redirect

CONFIG = """
[[policy.rules]]
effect = "deny"
categories = ["files"]
roles = ["guest"]

[serve.oauth]
issuer = "{issuer}"
scopes = ["mcp:tools"]
"""


@dataclass
class Memory:
    """The client's token storage, in memory."""

    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class Browser:
    """Follows the authorization URL's redirects, cookies kept, until the provider sends back to the client."""

    visited: list[str] = field(default_factory=list)
    pending: str = ""

    async def open(self, url: str) -> None:
        self.pending = url

    async def callback(self) -> AuthorizationCodeResult:
        url = self.pending
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            for _ in range(10):
                self.visited.append(url)
                if url.startswith(REDIRECT_URI):
                    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
                    assert "code" in query, query
                    return AuthorizationCodeResult(
                        code=query["code"], state=query.get("state"), iss=query.get("iss")
                    )
                response = await http.get(url)
                assert response.is_redirect, (response.status_code, response.text[:500])
                url = urljoin(url, response.headers["location"])
        raise AssertionError(f"no redirect back to the client: {self.visited}")


@dataclass
class Setup:
    url: str
    issuer: str
    data_dir: Path


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    with oidc_provider(OIDC_ROLES='["guest"]') as issuer:
        config = write_config(tmp_path, CONFIG.format(issuer=issuer))
        with http_server(config) as server:
            yield Setup(server.url, issuer, tmp_path)


def test_the_sdk_clients_oauth_flow_signs_in_and_calls_the_tools(setup: Setup) -> None:
    storage, browser = Memory(), Browser()
    metadata = OAuthClientMetadata.model_validate(
        {
            "redirect_uris": [REDIRECT_URI],
            "client_name": "gateway tests",
            "grant_types": ["authorization_code"],
        }
    )
    auth = OAuthClientProvider(setup.url, metadata, storage, browser.open, browser.callback)

    async def scenario() -> list[str]:
        async with (
            create_mcp_http_client(auth=auth) as http,
            Client(streamable_http_client(setup.url, http_client=http)) as client,
        ):
            seen = await client.call_tool("discover_tools", {})
            await client.call_tool(
                "invoke_tool", {"tool_name": "notes_archive", "parameters": {"note_id": "n"}}
            )
            return [c["name"] for c in seen.structured_content["categories"]]

    assert anyio.run(scenario) == ["notes"]  # the provider's roles claim made alice a guest
    assert browser.visited[0].startswith(f"{setup.issuer}/auth?")
    assert parse_qs(urlsplit(browser.visited[0]).query)["resource"] == [setup.url]
    assert storage.tokens is not None and storage.client is not None
    token = storage.tokens.access_token
    assert jwt.get_unverified_header(token)["typ"] == "at+jwt"
    claims = jwt.decode(token, options={"verify_signature": False})
    assert (claims["iss"], claims["aud"], claims["sub"]) == (setup.issuer, setup.url, "alice")
    audit = [json.loads(line) for line in (setup.data_dir / "audit.jsonl").read_text().splitlines()]
    assert [record["principal"] for record in audit] == ["alice"]


def _client_credentials(issuer: str, resource: str) -> str:
    response = httpx2.post(
        f"{issuer}/token",
        data={"grant_type": "client_credentials", "resource": resource, "scope": "mcp:tools"},
        auth=("robot", "robot-secret"),
    )
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


def _status(url: str, token: str) -> int:
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    # An initialize: it needs no session (a ping outside one is refused with 400 when sessions are on).
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    return httpx2.post(url, json=body, headers=headers).status_code


def test_the_providers_tokens_for_another_server_changed_or_unsigned_are_refused(setup: Setup) -> None:
    good = _client_credentials(setup.issuer, setup.url)
    assert _status(setup.url, good) == 200  # the control: the same kind of token, for this server
    claims = jwt.decode(good, options={"verify_signature": False})
    refused = {
        "for another server": _client_credentials(setup.issuer, "http://127.0.0.1:9/mcp"),
        "tampered": tampered(good, sub="alice", roles=["admin"]),
        "unsigned (alg none)": unsigned(claims),
    }
    with oidc_provider() as other:  # another issuer, its own keys, a token for this very server
        refused["from another issuer"] = _client_credentials(other, setup.url)
    assert {case: _status(setup.url, token) for case, token in refused.items()} == dict.fromkeys(refused, 401)
