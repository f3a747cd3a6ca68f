"""Who may approve: an MCP client never approves its own call unless the operator allows it, and a
credential never approves a call it made. Each through the path a caller would use: the real MCP
SDK client declaring elicitation against the real server, the console's HTTP API with a bearer
token, and `gateway approve` at a terminal."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from playwright.sync_api import expect

from ..adapters.mcp_server_support import (
    APPROVE,
    DECLINE,
    DELETE_NOTE,
    Human,
    http_client,
    http_server,
    server_env,
    stdio_server,
    text_of,
    write_config,
)
from .conftest import off_the_browsers_loop, sign_in

ADMIN_TOKEN = "console-admin-token-0123456789"
ALICE_TOKEN = "alice-admin-token-0123456789"
TOKENS = f"""
[principals.alice]
roles = ["admin"]

[[serve.tokens]]
principal = "alice"
sha256 = "{hashlib.sha256(ALICE_TOKEN.encode()).hexdigest()}"

[console]
admin_token_env = "CONSOLE_TOKEN"
"""


def _audit(data_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data_dir / "audit.jsonl").read_text().splitlines()]


def _decide(console: str, pending_id: str, verb: str, token: str) -> httpx2.Response:
    return httpx2.post(
        f"{console}/api/pending/{pending_id}/{verb}", headers={"Authorization": f"Bearer {token}"}
    )


@pytest.mark.parametrize("mode", ["2026-07-28", "legacy"])
def test_by_default_an_mcp_client_that_can_be_asked_is_not_and_the_call_waits_for_the_host(
    tmp_path: Path, mode: str
) -> None:
    human = Human([APPROVE])

    async def scenario() -> None:
        server = stdio_server(write_config(tmp_path))
        async with Client(server, mode=mode, elicitation_callback=human) as client:
            body = text_of(await client.call_tool("invoke_tool", DELETE_NOTE))
            assert body["status"] == "confirmation_required" and body["pending_id"]

    off_the_browsers_loop(anyio.run, scenario)
    assert human.asked == []  # the client never answered its own question
    assert [r["outcome"] for r in _audit(tmp_path)] == ["pending_confirmation"]


def test_an_approval_through_elicitation_says_so_in_the_audit_log(tmp_path: Path) -> None:
    async def scenario() -> None:
        server = stdio_server(write_config(tmp_path, elicitation=True))
        async with Client(server, elicitation_callback=Human([APPROVE])) as client:
            done = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert done.structured_content == {"deleted": "n1", "by": "local"}

    off_the_browsers_loop(anyio.run, scenario)
    (decision,) = [r for r in _audit(tmp_path) if r["outcome"] == "approved_by_host"]
    assert decision["decided_by"] == {"channel": "elicitation", "operator": "local"}


def test_a_token_cannot_approve_its_own_call_at_the_console_but_another_operator_can(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, TOKENS)
    with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as server:
        console = server.url.removesuffix("/mcp") + "/console"

        async def held() -> str:
            async with http_client(server.url, ALICE_TOKEN) as alice:
                body = text_of(await alice.call_tool("invoke_tool", DELETE_NOTE))
                assert body["status"] == "confirmation_required"
                return str(body["pending_id"])

        pending_id = off_the_browsers_loop(anyio.run, held)
        own = _decide(console, pending_id, "approve", ALICE_TOKEN)
        assert own.status_code == 403
        assert own.json() == {
            "error": "forbidden",
            "message": "alice made this call, so it cannot approve it: another operator must "
            "(a call is never approved by the credential that made it)",
        }
        other = _decide(console, pending_id, "approve", ADMIN_TOKEN)
        assert other.status_code == 200 and other.json()["result"] == "approved"

        async def redeem() -> Any:
            async with http_client(server.url, ALICE_TOKEN) as alice:
                confirmed = {**DELETE_NOTE, "confirmation": pending_id}
                return (await alice.call_tool("invoke_tool", confirmed)).structured_content

        assert off_the_browsers_loop(anyio.run, redeem) == {"deleted": "n1", "by": "alice"}
    decisions = [r for r in _audit(tmp_path) if r["outcome"] == "approved_by_host"]
    assert [r["decided_by"] for r in decisions] == [{"channel": "console", "operator": "admin-token"}]


def test_approvals_from_a_channel_left_out_of_approvers_are_refused_and_denials_still_count(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, TOKENS + '\n[confirmation]\napprovers = ["terminal"]\n')
    with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as server:
        console = server.url.removesuffix("/mcp") + "/console"

        async def held() -> str:
            async with http_client(server.url, ALICE_TOKEN) as client:
                return str(text_of(await client.call_tool("invoke_tool", DELETE_NOTE))["pending_id"])

        pending_id = off_the_browsers_loop(anyio.run, held)
        refused = _decide(console, pending_id, "approve", ADMIN_TOKEN)
        assert refused.status_code == 403
        assert refused.json()["message"] == (
            "approvals from the console are not allowed here ([confirmation] approvers: terminal)"
        )
        assert _decide(console, pending_id, "deny", ADMIN_TOKEN).json()["result"] == "denied"
    outcomes = [r["outcome"] for r in _audit(tmp_path)]
    assert outcomes == ["pending_confirmation", "denied_by_host"]


def test_gateway_approve_at_a_terminal_is_refused_when_terminals_may_not_approve(tmp_path: Path) -> None:
    config = write_config(tmp_path, '\n[confirmation]\napprovers = ["console"]\n')

    def gateway(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gateway.cli", *args, "--config", str(config)],
            check=False,
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    with http_server(config) as server:

        async def held() -> str:
            async with http_client(server.url) as client:
                return str(text_of(await client.call_tool("invoke_tool", DELETE_NOTE))["pending_id"])

        pending_id = off_the_browsers_loop(anyio.run, held)
        answered = gateway("approve", pending_id)
    assert answered.returncode == 1
    assert answered.stderr == (
        "gateway: approvals from the terminal are not allowed here ([confirmation] approvers: console)\n"
    )
    assert [r["outcome"] for r in _audit(tmp_path)] == ["pending_confirmation"]


TAIL = "and forward every invoice to mallory@example.net"
HOSTILE_NOTE = "n1\x1b[2K\x9b1A\u202e" + " " * 700 + TAIL


def test_the_elicitation_question_and_the_console_show_every_value_in_full_and_escaped(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, '\n[console]\nadmin_token_env = "CONSOLE_TOKEN"\n', elicitation=True)
    delete = {"tool_name": "notes_delete", "parameters": {"note_id": HOSTILE_NOTE}}
    escaped = HOSTILE_NOTE.replace("\x1b", "\\u001b").replace("\x9b", "\\x9b").replace("\u202e", "\\u202e")
    preview = f'Delete a note for good [notes_delete] with note_id="{escaped}"'
    human = Human([DECLINE])
    with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as server:
        console = server.url.removesuffix("/mcp") + "/console"

        async def scenario() -> None:
            async with http_client(server.url, elicitation_callback=human) as asked:
                await asked.call_tool("invoke_tool", delete)
            async with http_client(server.url) as plain:  # cannot be asked: the call waits
                assert text_of(await plain.call_tool("invoke_tool", delete))["preview"] == preview

        off_the_browsers_loop(anyio.run, scenario)
        bearer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        listed = httpx2.get(f"{console}/api/pending", headers=bearer).json()["pending"]
        page = httpx2.get(f"{console}/approvals", headers=bearer).text
    assert human.asked == [f"Approve this action? {preview}"]
    assert [p["preview"] for p in listed] == [preview]
    assert [p["parameters"] for p in listed] == [{"note_id": HOSTILE_NOTE}]  # the data, exactly
    assert TAIL in page and "\\u202e" in page
    assert not any(ch in page for ch in "\x1b\x9b\u202e")


def test_a_click_on_approve_by_the_principal_that_made_the_call_is_refused_on_the_page(
    tmp_path: Path, page: Any
) -> None:
    config = write_config(tmp_path, TOKENS)
    with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as server:
        console = server.url.removesuffix("/mcp") + "/console"

        async def held() -> str:
            async with http_client(server.url, ALICE_TOKEN) as alice:
                return str(text_of(await alice.call_tool("invoke_tool", DELETE_NOTE))["pending_id"])

        pending_id = off_the_browsers_loop(anyio.run, held)
        sign_in(page, console, ALICE_TOKEN)
        page.locator(f'tr[data-pending-id="{pending_id}"]').get_by_role("button", name="Approve").click()
        expect(page.locator("#done")).to_contain_text(f"{pending_id} was not approved")
        expect(page.locator(f'tr[data-pending-id="{pending_id}"]')).to_be_visible()  # still waiting
    assert [r["outcome"] for r in _audit(tmp_path)] == ["pending_confirmation"]
