"""run_code over MCP, stdio and HTTP, driven by the real MCP SDK client: the same pause and resume."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client

from gateway.adapters.mcp_elicitation import CONFIRM_KEY
from gateway.gate.confirmation import ApprovalRefused
from gateway.gate.stores import resolve_auto_store
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
    server_env,
    stdio_server,
    text_of,
    write_config,
)
from .oauth_support import rsa_key, serve_issuer

TWO_DELETES = (
    "done = []\n"
    "for n in ['n1', 'n2']:\n"
    "    try:\n"
    "        done.append(call('notes_delete', {'note_id': n})['deleted'])\n"
    "    except Declined:\n"
    "        done.append('kept ' + n)\n"
    "done"
)


def test_serve_with_code_lists_run_code_after_the_three_meta_tools(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with Client(stdio_server(write_config(tmp_path), "--code")) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == [
                "discover_tools",
                "get_tool_schema",
                "invoke_tool",
                "run_code",
            ]
            assert listed[3].title == "Run a program"
            assert (
                client.instructions is not None
                and "use run_code: a first program finds the tools" in client.instructions
            )
            ran = await client.call_tool(
                "run_code", {"code": "call('notes_create', {'title': 'milk'})['id']"}
            )
            assert not ran.is_error and ran.structured_content == {"result": "n1", "calls": 1}

    anyio.run(scenario)
    assert audit_outcomes(tmp_path) == ["attempt", "executed", "executed"]  # notes_create, then the program


def test_each_pause_of_a_program_is_asked_through_elicitation_and_resumes_it(tmp_path: Path) -> None:
    human = Human([APPROVE, DECLINE])

    async def scenario() -> None:
        server = stdio_server(write_config(tmp_path, elicitation=True), "--code")
        async with Client(server, elicitation_callback=human) as client:
            result = await client.call_tool("run_code", {"code": TWO_DELETES})
            assert not result.is_error and result.structured_content == {
                "result": ["n1", "kept n2"],
                "calls": 1,
            }

    anyio.run(scenario)
    assert human.asked == [
        'Approve this action? Delete a note for good [notes_delete] with note_id="n1"',
        'Approve this action? Delete a note for good [notes_delete] with note_id="n2"',
    ]
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


def test_a_handshake_era_client_is_asked_for_each_pause_too(tmp_path: Path) -> None:
    human = Human([DECLINE, APPROVE])

    async def scenario() -> None:
        server = stdio_server(write_config(tmp_path, elicitation=True), "--code")
        async with Client(server, mode="legacy", elicitation_callback=human) as client:
            result = await client.call_tool("run_code", {"code": TWO_DELETES})
            assert result.structured_content == {"result": ["kept n1", "n2"], "calls": 1}

    anyio.run(scenario)
    assert len(human.asked) == 2


def test_over_http_a_program_waits_for_the_host_and_resumes_once_approved(tmp_path: Path) -> None:
    config = write_config(tmp_path, "\n[code]\nenabled = true\n")
    # The approving process shares the server's store, as `gateway approve ID` does.
    host_settings = resolve_auto_store(load_settings(config, environ=server_env()), shared=True)

    async def scenario(url: str) -> None:
        async with http_client(url) as client:
            paused = text_of(await client.call_tool("run_code", {"code": TWO_DELETES}))
            assert paused["status"] == "confirmation_required"
            assert paused["preview"] == 'Delete a note for good [notes_delete] with note_id="n1"'
            early = text_of(await client.call_tool("run_code", {"confirmation": paused["pending_id"]}))
            assert early["error"]["code"] == "confirmation_pending"
            # The person approves from another process (as `gateway approve ID` does).
            with open_gateway(host_settings) as host:
                assert host.approve(paused["pending_id"]) is not None
            second = text_of(await client.call_tool("run_code", {"confirmation": paused["pending_id"]}))
            assert second["status"] == "confirmation_required"
            assert second["preview"].endswith('note_id="n2"')
            with open_gateway(host_settings) as host:
                assert host.deny(second["pending_id"])
            done = await client.call_tool("run_code", {"confirmation": second["pending_id"]})
            assert done.structured_content == {"result": ["n1", "kept n2"], "calls": 1}

    with http_server(config) as server:
        anyio.run(scenario, server.url)
    assert audit_outcomes(tmp_path, "notes_delete") == [
        "pending_confirmation",
        "refused",  # the early resume: not approved yet, so the program stayed paused
        "approved_by_host",  # the host's process writes to the same log
        "approved",
        "attempt",
        "executed",
        "pending_confirmation",
        "denied_by_host",
        "declined",
    ]


def test_over_http_each_pause_is_asked_through_elicitation(tmp_path: Path) -> None:
    human = Human([APPROVE, APPROVE])

    async def scenario(url: str) -> None:
        async with http_client(url, elicitation_callback=human) as client:
            result = await client.call_tool("run_code", {"code": TWO_DELETES})
            assert result.structured_content == {"result": ["n1", "n2"], "calls": 2}

    with http_server(write_config(tmp_path, "\n[code]\nenabled = true\n", elicitation=True)) as server:
        anyio.run(scenario, server.url)
    assert len(human.asked) == 2


def test_a_paused_program_resumes_only_on_its_replica_and_another_says_program_ended(tmp_path: Path) -> None:
    """Replicas share pending confirmations; the paused program itself stays in the process that ran it."""
    store = f'\n[confirmation]\nstore = "sqlite"\npath = "{tmp_path / "confirmations.sqlite3"}"\n'
    config_a, config_b = (
        write_config(tmp_path / name, "\n[code]\nenabled = true\n" + store) for name in ("a", "b")
    )
    env = {"GATEWAY_CONFIRMATION_SECRET": SECRET}

    async def scenario(url_a: str, url_b: str) -> None:
        async with http_client(url_a) as a, http_client(url_b) as b:
            paused = text_of(
                await a.call_tool("run_code", {"code": "call('notes_delete', {'note_id': 'n1'})"})
            )
            assert paused["status"] == "confirmation_required"
            with open_gateway(load_settings(config_b, environ=env)) as host:  # any replica's host may approve
                assert host.approve(paused["pending_id"]) is not None
            elsewhere = text_of(await b.call_tool("run_code", {"confirmation": paused["pending_id"]}))
            assert elsewhere["error"]["code"] == "program_ended"
            assert "lives only in the process that ran it" in elsewhere["error"]["message"]
            assert "another replica" in elsewhere["error"]["message"]
            done = await a.call_tool("run_code", {"confirmation": paused["pending_id"]})
            assert done.structured_content == {"result": {"deleted": "n1", "by": "local"}, "calls": 1}

    with (
        http_server(config_a, env=env) as a,
        http_server(config_b, env=env) as b,
    ):
        anyio.run(scenario, a.url, b.url)
    assert audit_outcomes(tmp_path / "a", "notes_delete") == [
        "pending_confirmation",
        "approved",
        "attempt",
        "executed",
    ]
    assert audit_outcomes(tmp_path / "b", "notes_delete") == ["approved_by_host"]  # and nothing ran there


def test_one_principals_pauses_never_end_another_principals_paused_program(tmp_path: Path) -> None:
    """With the paused programs at `max_paused`, a principal that pauses more ends its own oldest."""
    tokens = {"alice": "alice-token-0123456789abcdef", "mallory": "mallory-token-0123456789abcdef"}
    entries = "".join(
        f'\n[[serve.tokens]]\nprincipal = "{who}"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n'
        for who, token in tokens.items()
    )
    config = write_config(tmp_path, "\n[code]\nenabled = true\nmax_paused = 2\n" + entries)
    host_settings = resolve_auto_store(load_settings(config, environ=server_env()), shared=True)

    async def scenario(url: str) -> None:
        async with http_client(url, tokens["alice"]) as alice, http_client(url, tokens["mallory"]) as mallory:
            hers = text_of(
                await alice.call_tool("run_code", {"code": "call('notes_delete', {'note_id': 'a'})"})
            )
            mine = []
            for n in range(3):
                code = f"call('notes_delete', {{'note_id': 'm{n}'}})"
                mine.append(text_of(await mallory.call_tool("run_code", {"code": code}))["pending_id"])
            with open_gateway(host_settings) as host:
                assert host.approve(hers["pending_id"]) is not None
                assert [p.pending_id for p in host.gate.pending()] == mine[2:]  # mallory ended her own
            done = await alice.call_tool("run_code", {"confirmation": hers["pending_id"]})
            assert done.structured_content == {"result": {"deleted": "a", "by": "alice"}, "calls": 1}

    with http_server(config) as server:
        anyio.run(scenario, server.url)


def test_each_paused_program_ended_before_it_resumed_leaves_an_audit_line_saying_why(tmp_path: Path) -> None:
    """Over HTTP: one program ended to make room under `max_paused`, the others when the server stops."""
    tokens = {"alice": "alice-token-0123456789abcdef", "mallory": "mallory-token-0123456789abcdef"}
    entries = "".join(
        f'\n[[serve.tokens]]\nprincipal = "{who}"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n'
        for who, token in tokens.items()
    )
    config = write_config(tmp_path, "\n[code]\nenabled = true\nmax_paused = 2\n" + entries)

    async def scenario(url: str) -> None:
        async with http_client(url, tokens["alice"]) as alice, http_client(url, tokens["mallory"]) as mallory:
            await alice.call_tool("run_code", {"code": "call('notes_delete', {'note_id': 'a'})"})
            for n in range(2):
                await mallory.call_tool("run_code", {"code": f"call('notes_delete', {{'note_id': 'm{n}'}})"})

    with http_server(config) as server:
        anyio.run(scenario, server.url)  # then the server stops (SIGTERM)
    lines = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    ended = [
        (r["principal"], r["params"], r["error_code"])
        for r in lines
        if r["tool"] == "notes_delete" and r["outcome"] == "refused"
    ]
    assert ended == [
        ("mallory", {"note_id": "m0"}, "max_paused"),  # mallory held the most: her own oldest made room
        ("alice", {"note_id": "a"}, "gateway_stopping"),
        ("mallory", {"note_id": "m1"}, "gateway_stopping"),
    ]


def test_a_principal_whose_token_roles_changed_cannot_resume_its_program_until_they_are_as_before(
    tmp_path: Path,
) -> None:
    """A change of roles may be a revocation: the program resumes only with the roles it ran with."""
    with serve_issuer(rsa_key("k1")) as issuer:
        oauth = (
            f'\n[code]\nenabled = true\n\n[serve.oauth]\nissuer = "{issuer.url}"\nscopes = ["mcp:tools"]\n'
        )
        config = write_config(tmp_path, oauth)
        host_settings = resolve_auto_store(load_settings(config, environ=server_env()), shared=True)

        async def scenario(url: str) -> None:
            admin = issuer.sign(issuer.claims(url, roles=["admin"]))
            reader = issuer.sign(issuer.claims(url, roles=["reader"]))
            async with http_client(url, admin) as client:
                paused = text_of(
                    await client.call_tool("run_code", {"code": "call('notes_delete', {'note_id': 'n1'})"})
                )
            with open_gateway(host_settings) as host:
                assert host.approve(paused["pending_id"]) is not None
            async with http_client(url, reader) as client:
                refused = text_of(await client.call_tool("run_code", {"confirmation": paused["pending_id"]}))
                assert refused["error"]["code"] == "program_principal_changed"
            async with http_client(url, admin) as client:
                done = await client.call_tool("run_code", {"confirmation": paused["pending_id"]})
                assert done.structured_content == {"result": {"deleted": "n1", "by": "alice"}, "calls": 1}

        with http_server(config) as server:
            anyio.run(scenario, server.url)
    assert audit_outcomes(tmp_path, "notes_delete") == [
        "pending_confirmation",
        "approved_by_host",
        "approved",
        "attempt",
        "executed",
    ]


def test_a_call_paused_by_a_killed_process_is_declined_by_the_next_one_never_by_a_live_replica(
    tmp_path: Path,
) -> None:
    """SIGKILL leaves no chance to decline: the restarted process does it, and writes the audit line."""
    store = f'\n[confirmation]\nstore = "sqlite"\npath = "{tmp_path / "confirmations.sqlite3"}"\n'
    console = '\n[console]\nadmin_token_env = "CONSOLE_TOKEN"\n'
    config_a, config_b = (
        write_config(tmp_path / name, "\n[code]\nenabled = true\n" + store + console) for name in ("a", "b")
    )
    env = {"GATEWAY_CONFIRMATION_SECRET": SECRET, "CONSOLE_TOKEN": "console-admin-token-0123456789"}

    async def pause(url: str) -> str:
        async with http_client(url) as client:
            code = "call('notes_delete', {'note_id': 'n1'})"
            paused = text_of(await client.call_tool("run_code", {"code": code}))
            assert paused["status"] == "confirmation_required"
            return str(paused["pending_id"])

    async def after_restart(url: str, pending_id: str) -> None:
        async with http_client(url) as client:
            resumed = text_of(await client.call_tool("run_code", {"confirmation": pending_id}))
            assert resumed["error"]["code"] == "program_ended"
            direct = text_of(
                await client.call_tool("invoke_tool", {**DELETE_NOTE, "confirmation": pending_id})
            )
            assert direct["error"]["code"] == "program_ended"  # nor does it run outside a program

    with http_server(config_b, env=env) as b:
        with http_server(config_a, env=env) as a:
            pending_id = anyio.run(pause, a.url)
            # A host's process starts on the same store while `a` runs, code mode on as in `b`:
            # neither takes `a`'s program for one whose process ended.
            with open_gateway(load_settings(config_b, environ=env)) as host:
                assert [p.pending_id for p in host.gate.pending()] == [pending_id]
            a.kill()
        assert audit_outcomes(tmp_path / "a", "notes_delete") == ["pending_confirmation"]  # nothing said why
        # The operator at the live replica's console is told why, before any process declined it.
        approving = httpx2.post(
            f"{b.url.removesuffix('/mcp')}/console/api/pending/{pending_id}/approve",
            headers={"Authorization": f"Bearer {env['CONSOLE_TOKEN']}"},
        )
        assert approving.status_code == 403
        assert "ended with its gateway process" in approving.json()["message"]

    with http_server(config_a, env=env) as restarted:  # the same data directory, a new process
        lines = [json.loads(line) for line in (tmp_path / "a" / "audit.jsonl").read_text().splitlines()]
        paused_line, ended_line = (r for r in lines if r["tool"] == "notes_delete")
        assert (ended_line["outcome"], ended_line["error_code"]) == ("refused", "process_ended")
        assert ended_line["call_id"] == paused_line["call_id"]  # the paused call's own line
        assert ended_line["params"] == {"note_id": "n1"}
        approving_by_cli = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "approve", pending_id, "--config", str(config_b)],
            env=server_env(env),
            capture_output=True,
            text=True,
            check=False,
        )
        assert approving_by_cli.returncode == 1
        assert "ended with its gateway process" in approving_by_cli.stderr
        assert "nothing will run, even if approved" in approving_by_cli.stderr
        with open_gateway(load_settings(config_b, environ=env)) as host:
            with pytest.raises(ApprovalRefused, match="ended with its gateway process"):
                host.approve(pending_id)
            assert host.gate.pending() == []
        anyio.run(after_restart, restarted.url, pending_id)
    assert "executed" not in audit_outcomes(tmp_path / "a", "notes_delete")
    assert audit_outcomes(tmp_path / "b", "notes_delete") == []


def test_a_second_round_reaching_a_replica_after_the_programs_process_was_killed_answers_program_ended(
    tmp_path: Path,
) -> None:
    """The client's user approves on replica b a pause whose process (a) was killed meanwhile."""
    store = f'\n[confirmation]\nstore = "sqlite"\npath = "{tmp_path / "confirmations.sqlite3"}"\n'
    config_a, config_b = (
        write_config(tmp_path / name, "\n[code]\nenabled = true\n" + store, elicitation=True)
        for name in ("a", "b")
    )
    env = {"GATEWAY_CONFIRMATION_SECRET": SECRET}
    code = {"code": "call('notes_delete', {'note_id': 'n1'})"}

    async def ask(url: str) -> types.InputRequiredResult:
        async with http_client(url, elicitation_callback=Human()) as a:
            asked = await a.session.call_tool("run_code", code, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult) and asked.request_state is not None
            return asked

    async def answer(url: str, asked: types.InputRequiredResult) -> None:
        async with http_client(url, elicitation_callback=Human()) as b:
            done = await b.session.call_tool(
                "run_code",
                code,
                input_responses={CONFIRM_KEY: APPROVE},
                request_state=asked.request_state,
                allow_input_required=True,
            )
            assert isinstance(done, types.CallToolResult) and done.structured_content is not None
            assert done.structured_content["error"]["code"] == "program_ended"

    with http_server(config_b, env=env) as b:
        with http_server(config_a, env=env) as a:
            asked = anyio.run(ask, a.url)
            a.kill()
        anyio.run(answer, b.url, asked)
    assert "executed" not in audit_outcomes(tmp_path / "a", "notes_delete")
    assert audit_outcomes(tmp_path / "b", "notes_delete") == []
