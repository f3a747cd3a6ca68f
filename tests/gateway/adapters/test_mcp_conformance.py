"""The official MCP conformance suite and the MCP Inspector CLI against `gateway serve --transport http`.

Both are npm packages pinned by `tests/conformance/package-lock.json` (`python -m tests.mcp_clients`
installs them; CI does). Every server scenario that applies to a server exposing its own tools runs,
with sessions and without; docs/mcp.md says why the others do not apply.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests import mcp_clients

from .mcp_server_support import http_server, server_env, write_config

pytestmark = pytest.mark.skipif(mcp_clients.missing() is not None, reason=str(mcp_clients.missing()))

BOTH = [
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "dns-rebinding-protection",
]
WITH_SESSIONS = [*BOTH, "server-sse-multiple-streams"]  # its first check is that a session id is given
NO_SESSIONS = {"GATEWAY_SERVE_SESSIONS": "false"}
NODE_SECONDS = 120


def _checks(output: Path) -> list[dict[str, object]]:
    return [check for path in sorted(output.glob("*/checks.json")) for check in json.loads(path.read_text())]


@pytest.mark.parametrize(
    ("scenarios", "env"), [(WITH_SESSIONS, {}), (BOTH, NO_SESSIONS)], ids=["sessions", "stateless"]
)
def test_every_conformance_scenario_that_applies_passes(
    tmp_path: Path, scenarios: list[str], env: dict[str, str]
) -> None:
    with http_server(write_config(tmp_path / "gw"), env=env) as server:
        for scenario in scenarios:
            output = tmp_path / "results" / scenario
            run = subprocess.run(
                [
                    *mcp_clients.command(
                        "conformance", "server", "--url", server.url, "--scenario", scenario
                    ),
                    "-o",
                    str(output),
                ],
                check=False,
                capture_output=True,
                text=True,
                timeout=NODE_SECONDS,
                env=server_env({"HOME": str(tmp_path)}),
            )
            checks = _checks(output)
            failed = [c for c in checks if c.get("status") not in ("SUCCESS", "INFO")]
            assert run.returncode == 0 and checks and not failed, (scenario, failed, run.stdout[-3000:])


def test_the_inspector_cli_lists_the_meta_tools_and_calls_one_over_http(tmp_path: Path) -> None:
    def inspector(url: str, *args: str) -> dict[str, object]:
        run = subprocess.run(
            mcp_clients.command("inspector", "--cli", url, "--transport", "http", *args),
            check=False,
            capture_output=True,
            text=True,
            timeout=NODE_SECONDS,
            env=server_env({"HOME": str(tmp_path)}),
        )
        assert run.returncode == 0, run.stderr[-3000:]
        answer: dict[str, object] = json.loads(run.stdout)
        return answer

    with http_server(write_config(tmp_path / "gw")) as server:
        listed = inspector(server.url, "--method", "tools/list")
        found = inspector(
            server.url,
            "--method",
            "tools/call",
            "--tool-name",
            "discover_tools",
            "--tool-arg",
            "query=delete a note",
        )
    assert [tool["name"] for tool in listed["tools"]] == ["discover_tools", "get_tool_schema", "invoke_tool"]  # type: ignore[attr-defined]
    assert found["structuredContent"]["tools"][0]["name"] == "notes_delete"  # type: ignore[index]
