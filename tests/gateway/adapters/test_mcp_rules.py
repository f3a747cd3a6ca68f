"""Standing approvals made and revoked at a terminal (`gateway rules`, another process on the served
gateway's store), used by the real MCP client's calls over stdio and over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import Client

from .mcp_server_support import gateway_cli, http_client, http_server, stdio_server, text_of, write_config


def _delete(note_id: str) -> dict[str, object]:
    return {"tool_name": "notes_delete", "parameters": {"note_id": note_id}}


def test_over_stdio_a_rule_made_at_the_terminal_lets_only_its_calls_through(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    made = gateway_cli(
        "rules", "add", "notes_delete", "--for", "30m", "--one-of", "note_id=n1,n2", config=config
    )
    assert made.returncode == 0, made.stderr
    assert 'notes_delete for local where note_id one of "n1", "n2"' in made.stdout
    rule_id = made.stdout.split()[1]

    async def scenario() -> None:
        async with Client(stdio_server(config)) as client:
            ran = text_of(await client.call_tool("invoke_tool", _delete("n1")))
            assert ran == {"deleted": "n1", "by": "local"}
            held = text_of(await client.call_tool("invoke_tool", _delete("n3")))
            assert held["status"] == "confirmation_required"  # outside the rule: asked about

    anyio.run(scenario)
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    approved = [r for r in lines if r["outcome"] == "approved"]
    assert [r["decided_by"] for r in approved] == [
        {"channel": "rule", "operator": approved[0]["decided_by"]["operator"], "rule": rule_id}
    ]
    made_line = next(r for r in lines if r["outcome"] == "rule_added")
    assert made_line["decided_by"]["channel"] == "terminal"


def test_over_http_a_rule_revoked_at_the_terminal_stops_at_once(tmp_path: Path) -> None:
    config = write_config(tmp_path)

    async def call(url: str, note_id: str) -> dict[str, object]:
        async with http_client(url) as client:
            answer = text_of(await client.call_tool("invoke_tool", _delete(note_id)))
            assert isinstance(answer, dict)
            return answer

    with http_server(config) as server:
        made = gateway_cli("rules", "add", "notes_delete", "--until", "23:59", config=config)
        if made.returncode != 0:  # run just before midnight: the time has passed today
            made = gateway_cli("rules", "add", "notes_delete", "--for", "1h", config=config)
        assert made.returncode == 0, made.stderr
        rule_id = made.stdout.split()[1]
        listed = gateway_cli("rules", "--json", config=config)
        assert [r["rule_id"] for r in json.loads(listed.stdout)] == [rule_id]
        assert json.loads(listed.stdout)[0]["free"] == ["note_id"]  # no argument named: all left free
        assert anyio.run(call, server.url, "n1") == {"deleted": "n1", "by": "local"}
        revoked = gateway_cli("rules", "revoke", rule_id, config=config)
        assert revoked.returncode == 0 and f"revoked {rule_id}" in revoked.stdout
        assert anyio.run(call, server.url, "n2")["status"] == "confirmation_required"
        again = gateway_cli("rules", "revoke", rule_id, config=config)
        assert again.returncode == 1 and "no rule" in again.stderr
    refused = gateway_cli("rules", "add", "notes_search", "--for", "5m", config=config)
    assert refused.returncode != 0 and "never waits for an approval" in refused.stderr
    no_expiry = gateway_cli("rules", "add", "notes_delete", config=config)
    assert no_expiry.returncode != 0 and "needs one expiry" in no_expiry.stderr
