"""Named toolsets served over MCP: `/mcp/<toolset>`, tokens bound to one, `gateway serve --toolset`, through a
real server and the real SDK client.

Each check is made the way a client confined to a toolset would try to reach a tool outside it:
discovery, schema and invocation through the meta-tools, the server's instructions, another endpoint.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from .mcp_server_support import (
    ROOT,
    HttpServer,
    audit_outcomes,
    http_client,
    http_server,
    server_env,
    stdio_server,
    text_of,
    write_config,
)
from .oauth_support import Issuer, rsa_key, serve_issuer
from .test_learning_signal import _pairs, session_client

OPS_TOKEN = "ops-token-0123456789abcdef"
BOT_TOKEN = "bot-token-0123456789abcdef"

CONFIG = """
[[toolsets]]
name = "notes"
categories = ["notes"]

[[toolsets]]
name = "reading"
tools = ["files_*", "notes_search"]

[[serve.tokens]]
principal = "ops"
sha256 = "{ops}"

[[serve.tokens]]
principal = "bot"
sha256 = "{bot}"
toolset = "reading"
"""


@pytest.fixture
def served(tmp_path: Path) -> Iterator[HttpServer]:
    digest = {k: hashlib.sha256(t.encode()).hexdigest() for k, t in (("ops", OPS_TOKEN), ("bot", BOT_TOKEN))}
    with http_server(write_config(tmp_path, CONFIG.format(**digest))) as server:
        yield server


async def _seen(url: str, token: str) -> dict[str, Any]:
    """What a client at `url` learns: the instructions, the categories, a schema and a call outside."""
    async with http_client(url, token) as client:
        overview = text_of(await client.call_tool("discover_tools", {}))
        found = text_of(await client.call_tool("discover_tools", {"query": "read a file"}))
        schema = text_of(await client.call_tool("get_tool_schema", {"tool_name": "files_read"}))
        invoked = text_of(
            await client.call_tool(
                "invoke_tool", {"tool_name": "files_read", "parameters": {"path": "/srv/files/a"}}
            )
        )
        return {
            "instructions": client.instructions or "",
            "categories": {c["name"]: c["tools"] for c in overview["categories"]},
            "found": [t["name"] for t in found.get("tools", [])],
            "schema": schema.get("error", {}).get("code", "shown"),
            "invoked": invoked["error"]["code"]
            if isinstance(invoked, dict) and "error" in invoked
            else "ran",
        }


def test_each_toolset_is_served_at_its_own_path_and_hides_the_rest(
    served: HttpServer, tmp_path: Path
) -> None:
    whole = anyio.run(_seen, served.url, OPS_TOKEN)
    assert whole["categories"] == {"files": 2, "notes": 4}
    assert whole["schema"] == "shown" and whole["invoked"] != "unknown_tool"
    assert "files (2)" in whole["instructions"]
    notes = anyio.run(_seen, f"{served.url}/notes", OPS_TOKEN)
    assert notes["categories"] == {"notes": 4}
    assert notes["found"] == [] or all(name.startswith("notes_") for name in notes["found"])
    assert notes["schema"] == "unknown_tool" and notes["invoked"] == "unknown_tool"
    # The instructions count the toolset's tools only: no category outside it is named.
    assert "notes (4)" in notes["instructions"] and "files" not in notes["instructions"]
    assert audit_outcomes(tmp_path, "files_read")[-1] == "denied"


def test_a_token_bound_to_a_toolset_sees_only_it_and_a_path_narrows_it_further(served: HttpServer) -> None:
    bot = anyio.run(_seen, served.url, BOT_TOKEN)
    assert bot["categories"] == {"files": 2, "notes": 1}
    assert bot["schema"] == "shown"
    assert "files (2)" in bot["instructions"] and "notes (1)" in bot["instructions"]

    async def delete() -> Any:
        async with http_client(served.url, BOT_TOKEN) as client:
            args = {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}
            return text_of(await client.call_tool("invoke_tool", args))

    assert anyio.run(delete)["error"]["code"] == "unknown_tool"
    # At another toolset's path it never gains anything: it sees what both hold.
    narrowed = anyio.run(_seen, f"{served.url}/notes", BOT_TOKEN)
    assert narrowed["categories"] == {"notes": 1}
    assert narrowed["schema"] == "unknown_tool" and narrowed["invoked"] == "unknown_tool"


def test_an_unknown_toolset_path_is_a_clear_404(served: HttpServer) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {OPS_TOKEN}",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    for suffix in ("/nosuch", "/notes/more", "/"):
        answer = httpx2.post(f"{served.url}{suffix}", json=body, headers=headers)
        assert answer.status_code == 404, suffix
    answer = httpx2.post(f"{served.url}/nosuch", json=body, headers=headers)
    assert answer.json() == {
        "error": "not_found",
        "message": "No toolset named 'nosuch' is served here; the whole catalog is at /mcp.",
    }
    # Known paths still need a token.
    assert (
        httpx2.post(f"{served.url}/notes", json=body, headers={"Accept": headers["Accept"]}).status_code
        == 401
    )


def test_each_audit_line_names_the_toolsets_the_call_came_through(served: HttpServer, tmp_path: Path) -> None:
    async def search(url: str, token: str) -> None:
        async with http_client(url, token) as client:
            args = {"tool_name": "notes_search", "parameters": {"title": "eggs"}}
            assert not (await client.call_tool("invoke_tool", args)).is_error

    anyio.run(search, served.url, OPS_TOKEN)
    anyio.run(search, f"{served.url}/notes", OPS_TOKEN)
    anyio.run(search, served.url, BOT_TOKEN)
    anyio.run(search, f"{served.url}/notes", BOT_TOKEN)
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    seen = [
        (r["principal"], r.get("toolsets")) for r in map(json.loads, lines) if r["tool"] == "notes_search"
    ]
    assert seen == [
        ("ops", None),  # the whole catalog: no key at all
        ("ops", ["notes"]),  # the endpoint
        ("bot", ["reading"]),  # the token
        ("bot", ["notes", "reading"]),  # both, sorted
    ]


def test_a_terminals_decision_on_a_confined_callers_call_names_its_toolsets_in_the_audit(
    served: HttpServer, tmp_path: Path
) -> None:
    """`gateway approve` and `gateway deny` decide in another process: the toolsets travel with the pending call."""

    def gateway(*args: str) -> None:
        command = [sys.executable, "-m", "gateway.cli", *args, "--config", str(tmp_path / "config.toml")]
        done = subprocess.run(
            command, check=False, env=server_env(), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr

    async def decide() -> None:
        async with http_client(f"{served.url}/notes", OPS_TOKEN) as client:
            for note, verb in (("n1", "approve"), ("n2", "deny")):
                args = {"tool_name": "notes_delete", "parameters": {"note_id": note}}
                pending = text_of(await client.call_tool("invoke_tool", args))
                await anyio.to_thread.run_sync(gateway, verb, pending["pending_id"])

    anyio.run(decide)
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    decided = [(r["outcome"], r.get("toolsets")) for r in records if r["outcome"].endswith("_by_host")]
    assert decided == [("approved_by_host", ["notes"]), ("denied_by_host", ["notes"])]


def test_gateway_pending_shows_the_toolsets_a_waiting_call_came_through(
    served: HttpServer, tmp_path: Path
) -> None:
    """The person deciding at a terminal sees which endpoint or bound token confined the caller."""

    def pending(*args: str) -> str:
        command = [
            sys.executable,
            "-m",
            "gateway.cli",
            "pending",
            *args,
            "--config",
            str(tmp_path / "config.toml"),
        ]
        done = subprocess.run(
            command, check=False, env=server_env(), capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    async def hold() -> list[str]:
        held = []
        for url, token, note in ((f"{served.url}/notes", OPS_TOKEN, "n1"), (served.url, OPS_TOKEN, "n2")):
            async with http_client(url, token) as client:
                args = {"tool_name": "notes_delete", "parameters": {"note_id": note}}
                held.append(text_of(await client.call_tool("invoke_tool", args))["pending_id"])
        return held

    confined, free = anyio.run(hold)
    listed = {p["pending_id"]: p["toolsets"] for p in json.loads(pending("--json"))}
    assert listed == {confined: ["notes"], free: []}
    text = pending()
    assert f"{confined}  notes_delete  (for ops, through toolset notes, expires in " in text
    assert f"{free}  notes_delete  (for ops, expires in " in text


OAUTH_CONFIG = """
[[toolsets]]
name = "notes"
categories = ["notes"]
clients = ["notes-bot"]

[[toolsets]]
name = "reading"
tools = ["files_*", "notes_search"]
scopes = ["toolset:reading"]

[serve.oauth]
issuer = "{issuer}"
scopes = ["mcp:tools"]
"""


@pytest.fixture
def oauth_served(tmp_path: Path) -> Iterator[tuple[HttpServer, Issuer]]:
    with (
        serve_issuer(rsa_key("k1")) as issuer,
        http_server(write_config(tmp_path, OAUTH_CONFIG.format(issuer=issuer.url))) as server,
    ):
        yield server, issuer


def _categories(url: str, token: str) -> dict[str, int]:
    async def scenario() -> dict[str, int]:
        async with http_client(url, token) as client:
            overview = text_of(await client.call_tool("discover_tools", {}))
            return {c["name"]: c["tools"] for c in overview["categories"]}

    return anyio.run(scenario)


def test_each_toolset_endpoint_is_a_protected_resource_of_its_own(
    oauth_served: tuple[HttpServer, Issuer],
) -> None:
    server, issuer = oauth_served
    origin = server.url.removesuffix("/mcp")
    for path in ("/mcp", "/mcp/notes", "/mcp/reading"):
        refused = httpx2.post(f"{origin}{path}", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        metadata_url = f"{origin}/.well-known/oauth-protected-resource{path}"
        assert f'resource_metadata="{metadata_url}"' in refused.headers["www-authenticate"]
        metadata = httpx2.get(metadata_url).json()
        assert metadata["resource"] == f"{origin}{path}"
        assert metadata["authorization_servers"] == [issuer.url]
        assert metadata["scopes_supported"] == ["mcp:tools"]
    assert httpx2.get(f"{origin}/.well-known/oauth-protected-resource/mcp/nosuch").status_code == 404


def test_a_token_issued_for_a_toolset_endpoint_is_confined_to_it_wherever_it_is_used(
    oauth_served: tuple[HttpServer, Issuer],
) -> None:
    server, issuer = oauth_served
    for_notes = issuer.sign(issuer.claims(f"{server.url}/notes"))
    assert _categories(f"{server.url}/notes", for_notes) == {"notes": 4}
    assert _categories(server.url, for_notes) == {"notes": 4}  # never the whole catalog
    assert _categories(f"{server.url}/reading", for_notes) == {"notes": 1}
    # A token for another server's toolset endpoint is refused as before.
    stranger = issuer.sign(issuer.claims("http://127.0.0.1:1/mcp/notes"))
    assert (
        httpx2.post(server.url, json={}, headers={"Authorization": f"Bearer {stranger}"}).status_code == 401
    )
    # A token for the whole catalog works at every endpoint, narrowed there.
    whole = issuer.sign(issuer.claims(server.url))
    assert _categories(server.url, whole) == {"files": 2, "notes": 4}
    assert _categories(f"{server.url}/reading", whole) == {"files": 2, "notes": 1}


def test_an_oauth_client_or_scope_bound_to_a_toolset_confines_its_tokens(
    oauth_served: tuple[HttpServer, Issuer],
) -> None:
    server, issuer = oauth_served
    by_client = issuer.sign(issuer.claims(server.url, client_id="notes-bot"))
    assert _categories(server.url, by_client) == {"notes": 4}
    by_azp = issuer.sign(issuer.claims(server.url, client_id=None, azp="notes-bot"))
    assert _categories(server.url, by_azp) == {"notes": 4}
    by_scope = issuer.sign(issuer.claims(server.url, scope="mcp:tools toolset:reading"))
    assert _categories(server.url, by_scope) == {"files": 2, "notes": 1}
    both = issuer.sign(issuer.claims(server.url, client_id="notes-bot", scope="mcp:tools toolset:reading"))
    assert _categories(server.url, both) == {"notes": 1}  # bound twice: only what both hold


WORDS = "remember the gazebo errand"  # words no tool's text uses


def test_a_search_at_a_toolset_endpoint_never_pairs_with_a_call_outside_it(tmp_path: Path) -> None:
    async def scenario(url: str) -> None:
        async with session_client(f"{url}/notes", None, "conversation-1") as confined:
            await confined.call_tool("discover_tools", {"query": WORDS})
            # Outside the toolset from its endpoint: unknown, teaches nothing.
            read = {"tool_name": "files_read", "parameters": {"path": "/srv/files/a"}}
            assert text_of(await confined.call_tool("invoke_tool", read))["error"]["code"] == "unknown_tool"
        async with session_client(url, None, "conversation-1") as whole:
            # The same session id at the whole catalog's endpoint: another session, so no pair.
            assert not (await whole.call_tool("invoke_tool", read)).is_error
        async with session_client(f"{url}/notes", None, "conversation-1") as confined:
            note = {"tool_name": "notes_create", "parameters": {"title": "eggs"}}
            assert not (await confined.call_tool("invoke_tool", note)).is_error

    config = write_config(tmp_path, '[[toolsets]]\nname = "notes"\ncategories = ["notes"]\n')
    with http_server(config) as server:
        anyio.run(scenario, server.url)
    assert _pairs(tmp_path) == [{"query": WORDS, "tools": ["notes_create"]}]


def test_gateway_serve_over_http_with_a_toolset_confines_every_endpoint_to_it(tmp_path: Path) -> None:
    """`--toolset notes` serves notes to every client: another toolset's endpoint narrows it further."""
    digest = {k: hashlib.sha256(t.encode()).hexdigest() for k, t in (("ops", OPS_TOKEN), ("bot", BOT_TOKEN))}
    config = write_config(tmp_path, CONFIG.format(**digest))
    with http_server(config, "--toolset", "notes") as server:
        whole = anyio.run(_seen, server.url, OPS_TOKEN)
        elsewhere = anyio.run(_seen, f"{server.url}/reading", OPS_TOKEN)
    assert whole["categories"] == {"notes": 4} and whole["invoked"] == "unknown_tool"
    assert elsewhere["categories"] == {"notes": 1}  # notes_search: in both
    assert elsewhere["schema"] == "unknown_tool" and elsewhere["invoked"] == "unknown_tool"
    assert "files" not in elsewhere["instructions"]


def test_gateway_serve_with_a_toolset_serves_only_its_tools_over_stdio(tmp_path: Path) -> None:
    config = write_config(tmp_path, '[[toolsets]]\nname = "notes"\ncategories = ["notes"]\n')

    async def scenario() -> dict[str, Any]:
        async with Client(stdio_server(config, "--toolset", "notes")) as client:
            overview = text_of(await client.call_tool("discover_tools", {}))
            read = {"tool_name": "files_read", "parameters": {"path": "/srv/files/a"}}
            invoked = text_of(await client.call_tool("invoke_tool", read))
            return {
                "instructions": client.instructions or "",
                "categories": {c["name"]: c["tools"] for c in overview["categories"]},
                "invoked": invoked["error"]["code"],
            }

    seen = anyio.run(scenario)
    assert seen["categories"] == {"notes": 4} and seen["invoked"] == "unknown_tool"
    assert "notes (4)" in seen["instructions"] and "files" not in seen["instructions"]
    command = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config), "--toolset", "nosuch"]
    done = subprocess.run(
        command, check=False, cwd=ROOT, env=server_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr == "gateway: no toolset named 'nosuch'; the configured ones: notes\n"


def test_gateway_serve_refuses_a_toolset_scope_that_every_token_must_carry(tmp_path: Path) -> None:
    bound = '[[toolsets]]\nname = "support"\ntools = ["notes_*"]\nscopes = ["mcp:tools"]\n'
    config = write_config(tmp_path, OAUTH_CONFIG.format(issuer="https://id.example.com") + bound)
    command = [sys.executable, "-m", "gateway.cli", "serve", "--transport", "http", "--config", str(config)]
    done = subprocess.run(
        command, check=False, cwd=ROOT, env=server_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"gateway: {config}: toolset scopes that serve.oauth.scopes requires of every token: support "
        "(mcp:tools); every OAuth token would be confined to them. Give each toolset a scope of its own "
        "(e.g. toolset:NAME) that only its clients' tokens carry\n"
    )


def test_a_program_run_at_a_toolsets_endpoint_reaches_nothing_outside_it(tmp_path: Path) -> None:
    digest = {k: hashlib.sha256(t.encode()).hexdigest() for k, t in (("ops", OPS_TOKEN), ("bot", BOT_TOKEN))}
    config = write_config(tmp_path, CONFIG.format(**digest) + "\n[code]\nenabled = true\n")
    program = (
        "found = [t['name'] for t in discover('read a file')['tools']]\n"
        "try:\n    call('files_read', {'path': '/srv/files/a'})\n    outside = 'ran'\n"
        "except ToolError as e:\n    outside = str(e)\n"
        "try:\n    schema('files_read')\n    described = 'shown'\nexcept ToolError as e:\n    described = str(e)\n"
        "[found, outside, described]"
    )

    async def run(url: str) -> Any:
        async with http_client(url, OPS_TOKEN) as client:
            return (await client.call_tool("run_code", {"code": program})).structured_content

    with http_server(config) as server:
        found, outside, described = anyio.run(run, f"{server.url}/notes")["result"]
    assert not [name for name in found if not name.startswith("notes_")]
    assert "unknown_tool" in outside and "unknown_tool" in described
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(r["outcome"], r.get("toolsets")) for r in records if r["tool"] == "files_read"] == [
        ("denied", ["notes"])
    ]
