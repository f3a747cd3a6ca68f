"""`gateway serve` over Streamable HTTP: the real SDK client against real server processes.

Covers the meta-tools and elicitation as over stdio, bearer-token authentication, and two
replicas sharing pending confirmations through a SQLite file and through a real redis-server.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from gateway.adapters.mcp_elicitation import CONFIRM_KEY
from gateway.gate.stores import SECRET_FILE
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from .mcp_server_support import (
    APPROVE,
    DECLINE,
    DELETE_NOTE,
    SECRET,
    Human,
    audit_outcomes,
    http_client,
    http_server,
    innermost,
    redis_server,
    server_env,
    text_of,
    write_config,
)


def test_meta_tools_and_elicitation_over_http(tmp_path: Path) -> None:
    human = Human([APPROVE, DECLINE])

    async def scenario(url: str) -> None:
        async with http_client(url, elicitation_callback=human) as client:
            assert [t.name for t in (await client.list_tools()).tools] == [
                "discover_tools",
                "get_tool_schema",
                "invoke_tool",
            ]
            found = await client.call_tool("discover_tools", {"query": "delete a note"})
            assert found.structured_content["tools"][0]["name"] == "notes_delete"
            schema = await client.call_tool("get_tool_schema", {"tool_name": "notes_delete"})
            assert "Destructive" in schema.structured_content["note"]
            approved = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert approved.structured_content == {"deleted": "n1", "by": "local"}
            declined = await client.call_tool("invoke_tool", DELETE_NOTE)
            assert text_of(declined)["error"]["code"] == "declined"

    with http_server(write_config(tmp_path, elicitation=True)) as server:
        anyio.run(scenario, server.url)
    assert len(human.asked) == 2
    assert audit_outcomes(tmp_path, "notes_delete") == [
        "pending_confirmation",
        "approved_by_host",
        "approved",
        "attempt",
        "executed",
        "pending_confirmation",
        "denied_by_host",
        "declined",
    ]


def test_clients_that_cannot_be_asked_get_the_gates_fallback(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        async with http_client(url) as plain:
            body = text_of(await plain.call_tool("invoke_tool", DELETE_NOTE))
            assert body["status"] == "confirmation_required"
        # A handshake-era client in a session could be asked, but elicitation is not an approver here.
        async with http_client(url, mode="legacy", elicitation_callback=Human([APPROVE])) as legacy:
            body = text_of(await legacy.call_tool("invoke_tool", DELETE_NOTE))
            assert body["status"] == "confirmation_required"

    with http_server(write_config(tmp_path)) as server:
        anyio.run(scenario, server.url)
    assert audit_outcomes(tmp_path) == ["pending_confirmation", "pending_confirmation"]


# -- authentication ------------------------------------------------------------------------

ALICE_TOKEN = "alice-token-0123456789"
BOB_TOKEN = "bob-token-9876543210"

AUTH_CONFIG = f"""
[principals.alice]
roles = ["admin"]

[principals.bob]
roles = ["guest"]

[[policy.rules]]
effect = "deny"
categories = ["files"]
roles = ["guest"]

[[serve.tokens]]
principal = "alice"
sha256 = "{hashlib.sha256(ALICE_TOKEN.encode()).hexdigest()}"

[[serve.tokens]]
principal = "bob"
env = "BOB_GATEWAY_TOKEN"
"""


@pytest.fixture
def authed_url(tmp_path: Path) -> Iterator[str]:
    config = write_config(tmp_path, AUTH_CONFIG)
    with http_server(config, env={"BOB_GATEWAY_TOKEN": BOB_TOKEN}) as server:
        yield server.url
    assert ALICE_TOKEN not in "".join(server.output) and BOB_TOKEN not in "".join(server.output)


def test_tokens_map_to_principals_and_their_roles(authed_url: str, tmp_path: Path) -> None:
    async def scenario() -> None:
        async with http_client(authed_url, ALICE_TOKEN, mode="2026-07-28") as alice:
            seen = await alice.call_tool("discover_tools", {})
            assert [c["name"] for c in seen.structured_content["categories"]] == ["files", "notes"]
            body = text_of(await alice.call_tool("invoke_tool", {**DELETE_NOTE}))
            assert body["status"] == "confirmation_required"
        async with http_client(authed_url, BOB_TOKEN, mode="2026-07-28") as bob:
            seen = await bob.call_tool("discover_tools", {})
            assert [c["name"] for c in seen.structured_content["categories"]] == ["notes"]
            hidden = await bob.call_tool("get_tool_schema", {"tool_name": "files_read"})
            assert text_of(hidden)["error"]["code"] == "unknown_tool"

    anyio.run(scenario)
    principals = [line for line in (tmp_path / "audit.jsonl").read_text().splitlines() if '"alice"' in line]
    assert len(principals) == 1


def test_instructions_only_name_categories_every_token_holder_may_see(authed_url: str) -> None:
    async def scenario() -> None:
        async with http_client(authed_url, BOB_TOKEN) as bob:
            assert bob.instructions is not None
            assert bob.instructions.endswith("Categories (tools): notes (4).")

    anyio.run(scenario)


@pytest.mark.parametrize("token", [None, "wrong-token", ALICE_TOKEN + "x"])
def test_a_missing_or_wrong_token_is_refused(authed_url: str, token: str | None) -> None:
    statuses: list[int] = []

    async def scenario() -> None:
        with pytest.raises(Exception) as caught:  # the SDK raises it from nested task groups
            async with http_client(authed_url, token, statuses=statuses) as client:
                await client.call_tool("discover_tools", {})
        assert isinstance(innermost(caught.value), MCPError)

    anyio.run(scenario)
    assert statuses and set(statuses) == {401}


# -- replicas sharing confirmations ------------------------------------------------------------


def _replica_config(root: Path, name: str, store: str) -> Path:
    directory = root / name
    extra = f'\n[confirmation]\n{store}\n\n[audit]\npath = "{directory / "audit.jsonl"}"\n'
    return write_config(directory, extra, data_dir=root / "shared", elicitation=True)


@pytest.fixture(params=["sqlite", "redis"])
def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The [confirmation] lines of a store both replicas share."""
    if request.param == "sqlite":
        yield f'store = "sqlite"\npath = "{tmp_path / "shared" / "confirmations.sqlite3"}"'
        return
    with redis_server(tmp_path / "redis") as url:
        yield f'store = "redis"\nredis_url = "{url}"'


REPLICA_ENV = {"GATEWAY_CONFIRMATION_SECRET": SECRET}


def test_a_second_round_on_another_replica_completes_the_elicitation(
    tmp_path: Path, shared_store: str
) -> None:
    """The question is asked on replica a; the answer, with the sealed state, lands on replica b."""

    async def scenario(url_a: str, url_b: str) -> None:
        async with (
            http_client(url_a, elicitation_callback=Human()) as a,
            http_client(url_b, elicitation_callback=Human()) as b,
        ):
            await a.list_tools()
            await b.list_tools()
            asked = await a.session.call_tool("invoke_tool", DELETE_NOTE, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult) and asked.input_requests is not None
            question = asked.input_requests[CONFIRM_KEY]
            assert isinstance(question, types.ElicitRequest)
            assert question.params.message.startswith("Approve this action? Delete a note for good")
            assert asked.request_state is not None and "pending_id" not in asked.request_state  # sealed
            done = await b.session.call_tool(
                "invoke_tool",
                DELETE_NOTE,
                input_responses={CONFIRM_KEY: APPROVE},
                request_state=asked.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult)
            assert done.structured_content == {"deleted": "n1", "by": "local"}

    with (
        http_server(_replica_config(tmp_path, "a", shared_store), env=REPLICA_ENV) as a,
        http_server(_replica_config(tmp_path, "b", shared_store), env=REPLICA_ENV) as b,
    ):
        anyio.run(scenario, a.url, b.url)
    assert audit_outcomes(tmp_path / "a") == ["pending_confirmation"]
    assert audit_outcomes(tmp_path / "b") == ["approved_by_host", "approved", "attempt", "executed"]


def test_a_call_approved_by_the_host_runs_once_on_any_replica(tmp_path: Path, shared_store: str) -> None:
    """No elicitation: replica a leaves the call pending, the host approves it, replica b runs it."""
    config_a = _replica_config(tmp_path, "a", shared_store)

    async def scenario(url_a: str, url_b: str) -> None:
        async with http_client(url_a) as a, http_client(url_b) as b:
            pending = text_of(await a.call_tool("invoke_tool", DELETE_NOTE))
            pending_id = pending["pending_id"]
            with open_gateway(load_settings(config_a, environ=REPLICA_ENV)) as host:
                assert [p.pending_id for p in host.gate.pending()] == [pending_id]
                assert host.approve(pending_id) is not None
            confirmed = {**DELETE_NOTE, "confirmation": pending_id}
            done = await b.call_tool("invoke_tool", confirmed)
            assert done.structured_content == {"deleted": "n1", "by": "local"}
            again = await a.call_tool("invoke_tool", confirmed)
            assert text_of(again)["error"]["code"] == "confirmation_used"

    with (
        http_server(config_a, env=REPLICA_ENV) as a,
        http_server(_replica_config(tmp_path, "b", shared_store), env=REPLICA_ENV) as b,
    ):
        anyio.run(scenario, a.url, b.url)
    # The host's decision is in the log of the process that made it (here the host's own, unaudited).
    assert audit_outcomes(tmp_path / "b") == ["approved", "attempt", "executed"]


def test_replicas_with_in_process_stores_do_not_share_confirmations(tmp_path: Path) -> None:
    config = '\n[confirmation]\nmode = "model"\n'

    async def scenario(url_a: str, url_b: str) -> None:
        async with http_client(url_a) as a, http_client(url_b) as b:
            pending = text_of(await a.call_tool("invoke_tool", DELETE_NOTE))
            refused = await b.call_tool("invoke_tool", {**DELETE_NOTE, "confirmation": pending["pending_id"]})
            assert text_of(refused)["error"]["code"] == "confirmation_invalid"

    with (
        http_server(write_config(tmp_path / "a", config)) as a,
        http_server(write_config(tmp_path / "b", config)) as b,
    ):
        anyio.run(scenario, a.url, b.url)


def test_a_second_round_with_forged_state_or_other_arguments_is_refused(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        async with http_client(url, elicitation_callback=Human()) as client:
            await client.list_tools()
            asked = await client.session.call_tool("invoke_tool", DELETE_NOTE, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult) and asked.request_state is not None
            other_note = {"tool_name": "notes_delete", "parameters": {"note_id": "n2"}}
            forged = asked.request_state[:-4] + (
                "AAAA" if not asked.request_state.endswith("AAAA") else "BBBB"
            )
            for arguments, state in ((DELETE_NOTE, forged), (other_note, asked.request_state)):
                with pytest.raises(MCPError, match="Invalid or expired requestState"):
                    await client.session.call_tool(
                        "invoke_tool",
                        arguments,
                        input_responses={CONFIRM_KEY: APPROVE},
                        request_state=state,
                        allow_input_required=True,
                    )

    with http_server(write_config(tmp_path, elicitation=True)) as server:
        anyio.run(scenario, server.url)
    assert audit_outcomes(tmp_path) == ["pending_confirmation"]


def test_a_served_gateway_is_approvable_from_a_second_terminal_with_no_configuration(tmp_path: Path) -> None:
    """The README's command: `gateway serve --transport http`, then `gateway approve ID` elsewhere."""
    data = tmp_path / "data"
    env = {"XDG_CONFIG_HOME": str(tmp_path / "no-config"), "HOME": str(tmp_path)}

    def gateway(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "gateway.cli", *args, "--data-dir", str(data)]
        return subprocess.run(
            command, check=False, env=server_env(env), capture_output=True, text=True, timeout=120
        )

    async def scenario(url: str) -> None:
        async with http_client(url) as client:
            listed = text_of(await client.call_tool("invoke_tool", {"tool_name": "tasks_list_tasks"}))
            task = listed["tasks"][0]
            delete = {"tool_name": "tasks_delete_task", "parameters": {"task_id": task["id"]}}
            pending = text_of(await client.call_tool("invoke_tool", delete))
            pending_id = pending["pending_id"]
            waiting = gateway("pending", "--json")
            assert waiting.returncode == 0, waiting.stderr
            assert [p["pending_id"] for p in json.loads(waiting.stdout)] == [pending_id]
            answered = await anyio.to_thread.run_sync(lambda: gateway("approve", pending_id))
            assert answered.returncode == 0, answered.stderr
            confirmed = {**delete, "confirmation": pending_id}
            done = await client.call_tool("invoke_tool", confirmed)
            assert not done.is_error, text_of(done)
            again = text_of(await client.call_tool("invoke_tool", confirmed))
            assert again["error"]["code"] == "confirmation_used"

    with http_server(None, "--data-dir", str(data), env=env) as server:
        anyio.run(scenario, server.url)
        hint = "".join(server.output)
    assert f"`gateway approve ID --data-dir {data}`" in hint
    assert oct((data / SECRET_FILE).stat().st_mode & 0o777) == "0o600"
    decisions = [json.loads(line) for line in (data / "audit.jsonl").read_text().splitlines()]
    (decided,) = [d["decided_by"] for d in decisions if d["outcome"] == "approved_by_host"]
    assert decided["channel"] == "terminal" and decided["operator"]
    assert audit_outcomes(data, "tasks_delete_task") == [
        "pending_confirmation",
        "approved_by_host",  # the terminal's decision, with who made it
        "approved",
        "attempt",
        "executed",
        "refused",
    ]
