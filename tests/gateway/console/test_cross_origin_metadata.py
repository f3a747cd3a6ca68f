"""A browser page on another site (the MCP Inspector's web UI, say) discovers how to sign in.

Debian's chromium enforces CORS itself: a page served on another loopback port and name (as the
Inspector's UI is, on `http://localhost:6274`) reads the protected resource metadata cross-origin,
and its request to `/mcp` is refused by the Origin check.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from ..adapters.mcp_server_support import http_server, write_config
from ..adapters.oauth_support import rsa_key, serve_issuer
from ..loopback_http import loopback

CONFIG = """
[[serve.tokens]]
principal = "ops"
sha256 = "{digest}"

[serve.oauth]
issuer = "{issuer}"
scopes = ["mcp:tools"]
"""


@pytest.fixture
def mcp_url(tmp_path: Path) -> Iterator[str]:
    with serve_issuer(rsa_key("k1")) as issuer:
        digest = hashlib.sha256(b"static-token-0123456789").hexdigest()
        with http_server(write_config(tmp_path, CONFIG.format(digest=digest, issuer=issuer.url))) as server:
            yield server.url


FETCH = """async ([url, init]) => {
    try {
        const response = await fetch(url, init);
        return {status: response.status, body: await response.text()};
    } catch (error) {
        return {error: String(error)};
    }
}"""


async def _another_site(request: Request) -> HTMLResponse:
    return HTMLResponse("<!doctype html><title>another site</title>")


def test_a_page_on_another_site_reads_the_metadata_and_cannot_call_mcp(mcp_url: str, page: Any) -> None:
    with loopback(Starlette(routes=[Route("/", _another_site)])) as site:
        page.goto(site.replace("127.0.0.1", "localhost") + "/")  # another origin than the gateway's
        metadata_url = mcp_url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        # The MCP-Protocol-Version header makes the browser send a preflight first, as a client does.
        read = page.evaluate(FETCH, [metadata_url, {"headers": {"MCP-Protocol-Version": "2025-11-25"}}])
        ping = '{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
        init = {"method": "POST", "body": ping, "headers": {"Content-Type": "application/json"}}
        refused = page.evaluate(FETCH, [mcp_url, init])
    assert read.get("status") == 200, read
    assert f'"resource":"{mcp_url}"' in read["body"]
    assert "error" in refused, refused  # 403 without CORS headers: the page may not read anything
