"""The console's connections, in Debian's chromium: who connected which account, never a secret, and
a disconnection that holds at the next call and is audited."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from playwright.sync_api import expect

from gateway.vault import Grant, SqliteVault, VaultKeys, new_key

from ..adapters.mcp_server_support import http_client, http_server, text_of
from .conftest import ADMIN_TOKEN, CONFIG, off_the_browsers_loop, sign_in

SECRET = "alice-own-api-key-7777777"
SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Shop API"},
    "servers": [{"url": "http://127.0.0.1:9"}],
    "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}},
    "paths": {
        "/orders": {
            "get": {
                "operationId": "listOrders",
                "summary": "List orders.",
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}


def test_the_operator_sees_who_connected_what_and_disconnects_it(tmp_path: Path, page: Any) -> None:
    key = new_key()
    vault = SqliteVault(tmp_path / "vault.sqlite3", VaultKeys([key]))
    vault.put(Grant("local", "openapi:shop", kind="api_key", account="alice@shop.example", api_key=SECRET))
    vault.close()
    (tmp_path / "shop.json").write_text(json.dumps(SPEC))
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path}"\ncatalogs = []\n{CONFIG}\n'
        f'[[openapi]]\nname = "shop"\nspec = "{tmp_path / "shop.json"}"\n'
        'auth = { type = "api_key", per_principal = true }\n'
    )

    async def call(url: str) -> Any:
        async with http_client(url) as client:
            return text_of(
                await client.call_tool("invoke_tool", {"tool_name": "shop_list_orders", "parameters": {}})
            )

    with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN, "GATEWAY_VAULT_KEYS": key}) as server:
        console = server.url.removesuffix("/mcp") + "/console"
        sign_in(page, console)
        page.goto(f"{console}/connections")
        row = page.locator("table.connections tbody tr").first
        expect(row).to_contain_text("local")
        expect(row).to_contain_text("openapi:shop")
        expect(row).to_contain_text("alice@shop.example")
        assert SECRET not in page.content()
        row.get_by_role("button", name="Disconnect").click()
        expect(page.locator("#done")).to_contain_text("Disconnected.")
        expect(page.locator("table.connections")).to_contain_text("No one has connected an account.")
        refused = off_the_browsers_loop(anyio.run, call, server.url)
    assert refused["error"]["code"] == "not_connected"
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    [gone] = [r for r in lines if r["outcome"] == "disconnected"]
    assert (gone["principal"], gone["tool"], gone["decided_by"]["channel"]) == (
        "local",
        "openapi:shop",
        "console",
    )
