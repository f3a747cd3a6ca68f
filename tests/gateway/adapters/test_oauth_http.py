"""`gateway serve` as an OAuth resource server: a real server process, the real SDK client, real HTTP.

The issuer is a loopback stub publishing keys made in the test (`oauth_support`); the end-to-end
flow with a real OpenID provider is in `test_oauth_provider.py`.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest

from .mcp_server_support import ROOT, http_client, http_server, innermost, server_env, write_config
from .oauth_support import Issuer, hmac_with_public_key, rsa_key, serve_issuer, tampered, unsigned

STATIC_TOKEN = "static-token-0123456789"

CONFIG = """
[principals.bob]
roles = ["guest"]

[[policy.rules]]
effect = "deny"
categories = ["files"]
roles = ["guest"]

[[serve.tokens]]
principal = "ops"
sha256 = "{digest}"

[serve.oauth]
issuer = "{issuer}"
scopes = ["mcp:tools"]
"""


@dataclass
class Served:
    url: str
    issuer: Issuer
    output: list[str]

    @property
    def origin(self) -> str:
        return self.url.removesuffix("/mcp")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serve_issuer(rsa_key("k1")) as issuer:
        digest = hashlib.sha256(STATIC_TOKEN.encode()).hexdigest()
        config = write_config(tmp_path, CONFIG.format(digest=digest, issuer=issuer.url))
        with http_server(config) as server:
            yield Served(server.url, issuer, server.output)


def post(url: str, token: str | None = None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    return httpx2.post(url, json=body, headers=headers)


def test_a_401_points_to_the_protected_resource_metadata(served: Served) -> None:
    refused = post(served.url)
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    metadata_url = f"{served.origin}/.well-known/oauth-protected-resource/mcp"
    assert challenge.startswith("Bearer ") and f'resource_metadata="{metadata_url}"' in challenge
    assert challenge.endswith(', scope="mcp:tools"')
    for url in (metadata_url, f"{served.origin}/.well-known/oauth-protected-resource"):
        metadata = httpx2.get(url).json()
        assert metadata["resource"] == served.url
        assert metadata["authorization_servers"] == [served.issuer.url]
        assert metadata["scopes_supported"] == ["mcp:tools"]


def test_a_browser_page_on_another_site_reads_the_metadata_but_not_mcp(served: Served) -> None:
    """The Inspector's web UI discovers how to sign in cross-origin; /mcp keeps its Origin check."""
    page = {"Origin": "http://localhost:6274"}
    for url in (
        f"{served.origin}/.well-known/oauth-protected-resource/mcp",
        f"{served.origin}/.well-known/oauth-protected-resource",
    ):
        preflight = httpx2.options(
            url,
            headers=page
            | {
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "mcp-protocol-version",
            },
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "*"
        read = httpx2.get(url, headers=page)
        assert read.status_code == 200 and read.headers["access-control-allow-origin"] == "*"
        assert read.json()["resource"] == served.url
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    refused = httpx2.post(
        served.url, json=body, headers=page | {"Accept": "application/json, text/event-stream"}
    )
    assert refused.status_code == 403 and refused.json()["error"] == "forbidden_origin"


def test_a_session_opened_with_one_users_token_is_not_found_with_anothers(served: Served) -> None:
    issuer = served.issuer
    alice = issuer.sign(issuer.claims(served.url))
    mallory = issuer.sign(issuer.claims(served.url, sub="mallory"))
    version = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    with httpx2.Client(timeout=30) as http:
        opened = http.post(
            served.url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            headers=version | {"Authorization": f"Bearer {alice}"},
        )
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
        stolen = http.post(
            served.url, json=listing, headers=version | session | {"Authorization": f"Bearer {mallory}"}
        )
        own = http.post(
            served.url, json=listing, headers=version | session | {"Authorization": f"Bearer {alice}"}
        )
    assert stolen.status_code == 404 and "invoke_tool" not in stolen.text
    assert own.status_code == 200 and "invoke_tool" in own.text


def test_a_token_without_the_required_scope_gets_403_insufficient_scope(served: Served) -> None:
    issuer = served.issuer
    refused = post(served.url, issuer.sign(issuer.claims(served.url, scope="openid profile")))
    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    assert refused.headers["www-authenticate"].endswith(', scope="mcp:tools"')
    assert "resource_metadata=" in refused.headers["www-authenticate"]


def test_claims_name_the_principal_and_add_roles_to_the_configured_ones(
    served: Served, tmp_path: Path
) -> None:
    issuer = served.issuer

    async def categories(token: str) -> list[str]:
        async with http_client(served.url, token) as client:
            seen = await client.call_tool("discover_tools", {})
            await client.call_tool(
                "invoke_tool", {"tool_name": "notes_archive", "parameters": {"note_id": "n"}}
            )
            return [c["name"] for c in seen.structured_content["categories"]]

    alice = issuer.sign(issuer.claims(served.url, roles=["admin"]))
    bob = issuer.sign(issuer.claims(served.url, sub="bob", roles=None))  # roles from [principals.bob]
    carol = issuer.sign(issuer.claims(served.url, sub="carol", roles=["guest"]))  # roles from the claim
    assert anyio.run(categories, alice) == ["files", "notes"]
    assert anyio.run(categories, bob) == ["notes"]
    assert anyio.run(categories, carol) == ["notes"]
    assert anyio.run(categories, STATIC_TOKEN) == ["files", "notes"]  # static tokens keep working
    audit = (tmp_path / "audit.jsonl").read_text()
    assert [json.loads(line)["principal"] for line in audit.splitlines()] == ["alice", "bob", "carol", "ops"]
    assert alice not in "".join(served.output)


def _refusals(issuer: Issuer, audience: str) -> dict[str, str]:
    good = issuer.claims(audience)
    return {
        "expired": issuer.sign(issuer.claims(audience, exp=int(good["iat"]) - 120)),
        "for another server": issuer.sign(issuer.claims("http://127.0.0.1:1/mcp")),
        "from another issuer": issuer.sign(issuer.claims(audience, iss="https://evil.example.com")),
        "unsigned (alg none)": unsigned(good),
        "tampered": tampered(issuer.sign(issuer.claims(audience, roles=[])), roles=["admin"]),
        "hmac keyed with the public key": hmac_with_public_key(good, issuer.keys[0]),
    }


@pytest.mark.parametrize("case", list(_refusals(Issuer([rsa_key("k")], url="http://x"), "http://x")))
def test_bad_tokens_are_refused_with_401_and_the_metadata(served: Served, case: str) -> None:
    token = _refusals(served.issuer, served.url)[case]
    statuses: list[int] = []

    async def scenario() -> None:
        with pytest.raises(Exception) as caught:  # the SDK raises it from nested task groups
            async with http_client(served.url, token, statuses=statuses) as client:
                await client.call_tool("discover_tools", {})
        assert innermost(caught.value) is not None

    anyio.run(scenario)
    assert statuses and set(statuses) == {401}
    assert "resource_metadata=" in post(served.url, token).headers["www-authenticate"]


def test_bound_to_every_address_the_resource_must_be_named(tmp_path: Path) -> None:
    config = write_config(
        tmp_path, '[serve]\nallowed_hosts = ["*"]\n\n[serve.oauth]\nissuer = "https://auth.example.com"\n'
    )
    command = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config), "--transport", "http"]
    done = subprocess.run(
        [*command, "--host", "0.0.0.0", "--port", "0"],
        check=False,
        cwd=ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "set [serve.oauth] resource" in done.stderr
    assert "Traceback" not in done.stderr
