"""An OpenAPI entry that takes each caller's own key (`per_principal`): every call carries the key of
the principal that made it, from the vault, never the operator's nor another's; a caller who has not
connected gets `not_connected` and nothing is sent. Through `open_gateway` with a real SQLite vault,
a real loopback HTTP server, `invoke_tool` and code mode, and `gateway connect` at a terminal (the
steps docs/openapi.md shows: a vault key from `gateway vault key`, then `gateway connect`).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from gateway import Gateway, ToolContext, run_sync
from gateway.cli import main
from gateway.context import Principal, ToolResult
from gateway.errors import UserError
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings
from gateway.vault import Grant, SqliteVault, VaultKeys, new_key

from ..adapters.mcp_server_support import http_client, http_server, text_of
from .conftest import Loopback, op, write_spec

KEYS = {"alice": "alice-key-0123456789", "bob": "bob-key-9876543210"}


def _spec(base: str) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "Shop API"},
        "servers": [{"url": base}],
        "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}},
        "paths": {"/orders": {"get": op("listOrders")}},
    }


def _settings(tmp_path: Path, loopback: Loopback, **auth: Any) -> Any:
    spec = write_spec(tmp_path, _spec(loopback.url))
    return load_settings(
        overrides={
            "data_dir": str(tmp_path / "data"),
            "catalogs": [],
            "openapi": [
                {
                    "name": "shop",
                    "spec": str(spec),
                    "auth": {"type": "api_key", "per_principal": True, **auth},
                }
            ],
            "search.dense.mode": "off",
            "code.enabled": True,
        },
        environ={},
    )


@pytest.fixture
def gw(tmp_path: Path, loopback: Loopback, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gateway]:
    key = new_key()
    monkeypatch.setenv("GATEWAY_VAULT_KEYS", key)
    vault = SqliteVault(tmp_path / "data" / "vault.sqlite3", VaultKeys([key]))
    for principal, secret in KEYS.items():
        vault.put(Grant(principal, "openapi:shop", kind="api_key", api_key=secret))
    vault.close()
    loopback.answer(lambda seen: (200, {}, {"orders": [seen.headers.get("x-api-key")]}))
    with open_gateway(_settings(tmp_path, loopback)) as opened:
        yield opened


def _list_orders(gw: Gateway, principal: str) -> ToolResult:
    ctx = ToolContext(principal=Principal(principal))
    return run_sync(gw.call("invoke_tool", {"tool_name": "shop_list_orders", "parameters": {}}, ctx))


def test_each_call_carries_the_key_of_the_principal_that_made_it(gw: Gateway, loopback: Loopback) -> None:
    assert _list_orders(gw, "alice").output == {"orders": ["[redacted]"]}  # echoed back: scrubbed
    assert _list_orders(gw, "bob").ok
    assert [s.headers["x-api-key"] for s in loopback.seen] == [KEYS["alice"], KEYS["bob"]]
    schema = run_sync(gw.call("get_tool_schema", {"tool_name": "shop_list_orders"}, ToolContext()))
    assert "X-Api-Key" not in json.dumps(schema.output)  # the model cannot pass one, nor name an account


def test_a_caller_who_has_not_connected_gets_not_connected_and_nothing_is_sent(
    gw: Gateway, loopback: Loopback
) -> None:
    refused = _list_orders(gw, "carol")
    assert refused.error is not None and refused.error.code == "not_connected"
    assert "gateway connect openapi:shop" in refused.error.message
    assert loopback.seen == []


def test_a_program_runs_with_its_callers_key(gw: Gateway, loopback: Loopback) -> None:
    ctx = ToolContext(principal=Principal("bob"), call_id="prog")
    ran = run_sync(gw.call("run_code", {"code": "call('shop_list_orders', {})"}, ctx))
    assert ran.ok, ran
    assert [s.headers["x-api-key"] for s in loopback.seen] == [KEYS["bob"]]


def test_an_entry_that_takes_each_callers_key_takes_no_operators_key(
    tmp_path: Path, loopback: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATEWAY_VAULT_KEYS", new_key())
    with (
        pytest.raises(UserError, match="remove env and file"),
        open_gateway(_settings(tmp_path, loopback, env="SHOP_KEY")),
    ):
        pass


def test_the_local_user_connects_at_a_terminal(
    tmp_path: Path, loopback: Loopback, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path, _spec(loopback.url))
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\ncatalogs = []\n'
        f'[[openapi]]\nname = "shop"\nspec = "{spec}"\nauth = {{ type = "api_key", per_principal = true }}\n'
    )
    assert main(["vault", "key"]) == 0
    monkeypatch.setenv("GATEWAY_VAULT_KEYS", capsys.readouterr().out.strip())
    monkeypatch.setattr("sys.stdin", io.StringIO("my-own-key-42\n"))
    assert main(["connect", "openapi:shop", "--config", str(config)]) == 0
    assert "connected openapi:shop for local" in capsys.readouterr().out
    loopback.answer(lambda seen: (200, {}, {"orders": []}))
    assert main(["invoke", "shop_list_orders", "{}", "--config", str(config)]) == 0
    assert [s.headers["x-api-key"] for s in loopback.seen] == ["my-own-key-42"]
    assert main(["connect", "openapi:nothing", "--config", str(config)]) == 2
    assert "takes no one's own credentials here" in capsys.readouterr().err


def test_over_http_two_principals_each_reach_the_api_with_their_own_key(
    tmp_path: Path, loopback: Loopback
) -> None:
    key = new_key()
    vault = SqliteVault(tmp_path / "data" / "vault.sqlite3", VaultKeys([key]))
    for principal, secret in KEYS.items():
        vault.put(Grant(principal, "openapi:shop", kind="api_key", api_key=secret))
    vault.close()
    spec = write_spec(tmp_path, _spec(loopback.url))
    tokens = {
        "alice": "alice-bearer-token-000111",
        "bob": "bob-bearer-token-222333",
        "carol": "carol-bearer-444555",
    }
    entries = "".join(
        f'[[serve.tokens]]\nprincipal = "{p}"\nsha256 = "{hashlib.sha256(t.encode()).hexdigest()}"\n'
        for p, t in tokens.items()
    )
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\ncatalogs = []\n'
        f'[[openapi]]\nname = "shop"\nspec = "{spec}"\nauth = {{ type = "api_key", per_principal = true }}\n'
        + entries
    )
    loopback.answer(lambda seen: (200, {}, {"orders": []}))

    async def call(url: str, token: str) -> Any:
        async with http_client(url, token) as client:
            return text_of(
                await client.call_tool("invoke_tool", {"tool_name": "shop_list_orders", "parameters": {}})
            )

    with http_server(config, env={"GATEWAY_VAULT_KEYS": key}) as server:
        assert anyio.run(call, server.url, tokens["bob"]) == {"orders": []}
        assert anyio.run(call, server.url, tokens["alice"]) == {"orders": []}
        refused = anyio.run(call, server.url, tokens["carol"])
    assert refused["error"]["code"] == "not_connected"
    assert [s.headers["x-api-key"] for s in loopback.seen] == [KEYS["bob"], KEYS["alice"]]
    lines = [json.loads(line) for line in (tmp_path / "data" / "audit.jsonl").read_text().splitlines()]
    calls = [
        (r["principal"], r["outcome"], r.get("error_code")) for r in lines if r["tool"] == "shop_list_orders"
    ]
    assert calls == [
        ("bob", "executed", None),
        ("alice", "executed", None),
        ("carol", "failed", "not_connected"),
    ]
    assert not any(secret in json.dumps(lines) for secret in KEYS.values())
