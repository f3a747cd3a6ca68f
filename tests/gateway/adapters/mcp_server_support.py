"""Helpers for the `gateway serve` tests: configs, server processes, a real redis-server, clients.

Servers run as real subprocesses (`python -m gateway.cli serve`) and are reached with the real
MCP SDK client. Start-up is awaited by reading the process's own "serving"/"ready" line, with a
deadline, never by sleeping.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = Path(__file__).resolve().parents[3]
SECRET = "s" * 16 + "0123456789abcdef0123456789abcdef"
START_SECONDS = 30.0
DELETE_NOTE = {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}


ELICITATION_APPROVES = 'approvers = ["elicitation", "console", "terminal", "host"]'
"""The [confirmation] line that lets an MCP client's user approve through elicitation (off by default)."""


def initialize(request_id: int | str = 1, version: str = "2025-06-18") -> dict[str, Any]:
    """A raw JSON-RPC `initialize` request, as a client opens a session with it."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }


def write_config(
    directory: Path, extra: str = "", *, data_dir: Path | None = None, elicitation: bool = False
) -> Path:
    """A config on the sample catalog, its data (and audit log) in `data_dir` (default: `directory`).

    `elicitation`: approvals through MCP elicitation are allowed too.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "config.toml"
    body = f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{data_dir or directory}"\n'
    if elicitation and "[confirmation]\n" in extra:
        extra = extra.replace("[confirmation]\n", f"[confirmation]\n{ELICITATION_APPROVES}\n", 1)
    elif elicitation:
        extra += f"\n[confirmation]\n{ELICITATION_APPROVES}\n"
    path.write_text(body + extra)
    return path


def audit_outcomes(data_dir: Path, tool: str | None = None) -> list[str]:
    """Outcomes in the audit log of `data_dir`, oldest first."""
    path = data_dir / "audit.jsonl"
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [r["outcome"] for r in records if tool is None or r["tool"] == tool]


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra or {})
    return env


def stdio_server(config: Path, *args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "gateway.cli", "serve", "--config", str(config), *args],
        env=server_env(env),
        cwd=str(ROOT),
    )


def _wait_for_line(
    proc: subprocess.Popen[bytes], stream: Any, marker: str, what: str
) -> tuple[str, list[str], threading.Thread]:
    """Read `stream` until a line containing `marker` (within a deadline); then drain it in a thread.

    Reads the raw descriptor, so nothing hides in a buffer that `select` cannot see.
    """
    fd = stream.fileno()
    output: list[str] = []
    pending = b""
    end = time.monotonic() + START_SECONDS
    while True:
        ready, _, _ = select.select([fd], [], [], max(end - time.monotonic(), 0))
        if not ready:
            proc.kill()
            raise AssertionError(f"{what} did not start within {START_SECONDS:g}s:\n{''.join(output)}")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise AssertionError(f"{what} exited ({proc.wait()}) before starting:\n{''.join(output)}")
        pending += chunk
        *lines, pending = pending.split(b"\n")
        output.extend(line.decode(errors="replace") + "\n" for line in lines)
        found = [line for line in output if marker in line]
        if found:
            break

    def drain() -> None:
        while chunk := os.read(fd, 65536):
            output.append(chunk.decode(errors="replace"))

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return found[0].strip(), output, thread


def _stop(proc: subprocess.Popen[bytes], drain: threading.Thread | None = None) -> None:
    """SIGTERM, then wait; the output pipe is closed once its reader is done."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if drain is not None:
        drain.join(timeout=START_SECONDS)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@dataclass
class HttpServer:
    url: str
    proc: subprocess.Popen[bytes]
    output: list[str]
    killed: bool = False

    def kill(self) -> None:
        """SIGKILL, as the OOM killer does: the process ends at once, with no clean stop."""
        self.killed = True
        self.proc.kill()
        self.proc.wait()


@contextmanager
def http_server(config: Path | None, *args: str, env: dict[str, str] | None = None) -> Iterator[HttpServer]:
    """`gateway serve --transport http` on a free loopback port; stopped (SIGTERM) on exit.

    With `config` None no file is named: give `env` an empty XDG_CONFIG_HOME for no configuration.
    """
    command = [sys.executable, "-m", "gateway.cli", "serve"]
    command += [] if config is None else ["--config", str(config)]
    command += ["--transport", "http", "--host", "127.0.0.1", "--port", "0", *args]
    proc = subprocess.Popen(
        command, cwd=ROOT, env=server_env(env), stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    )
    drain = None
    try:
        line, output, drain = _wait_for_line(proc, proc.stderr, "serving MCP on", "gateway serve")
        server = HttpServer(line.split()[-1], proc, output)
        yield server
    finally:
        _stop(proc, drain)
    assert proc.returncode == 0 or server.killed, "".join(output)
    assert "Traceback" not in "".join(output), "".join(output)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def find_redis_server() -> str | None:
    found = shutil.which("redis-server")
    if found:
        return found
    for candidate in ("/usr/bin/redis-server", "/usr/sbin/redis-server", "/usr/local/bin/redis-server"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


@contextmanager
def redis_server(directory: Path) -> Iterator[str]:
    """A throwaway redis-server on loopback, no persistence; yields its URL."""
    binary = find_redis_server()
    if binary is None:
        pytest.skip("no redis-server binary found (install the Debian package: apt-get install redis-server)")
    directory.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
    command += ["--dir", str(directory), "--logfile", ""]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    drain = None
    try:
        _, _, drain = _wait_for_line(proc, proc.stdout, "Ready to accept connections", "redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        _stop(proc, drain)


@dataclass
class Human:
    """Answers elicitations as scripted and remembers what it was asked."""

    answers: list[types.ElicitResult] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        self.asked.append(params.message)
        return self.answers.pop(0)


APPROVE = types.ElicitResult(action="accept", content={"approve": True})
DECLINE = types.ElicitResult(action="decline")


@asynccontextmanager
async def http_client(
    url: str, token: str | None = None, *, statuses: list[int] | None = None, **options: Any
) -> AsyncIterator[Client]:
    """The SDK client over Streamable HTTP, sending `token` as a bearer token when given.

    HTTP status codes of the responses are appended to `statuses` when given.
    """
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    async with create_mcp_http_client(headers=headers) as http:
        if statuses is not None:

            async def record(response: httpx2.Response) -> None:
                statuses.append(response.status_code)

            http.event_hooks["response"].append(record)
        async with Client(streamable_http_client(url, http_client=http), **options) as client:
            yield client


def innermost(error: BaseException) -> BaseException:
    """The first leaf of nested exception groups (the SDK client raises from task groups)."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def text_of(result: types.CallToolResult) -> Any:
    """The JSON the model reads in the result's text."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


THREE_DELETES = (
    "done = []\n"
    "for n in ['n1', 'n2', 'n3']:\n"
    "    try:\n"
    "        call('notes_delete', {'note_id': n})\n"
    "        done.append(n)\n"
    "    except Declined:\n"
    "        done.append('kept ' + n)\n"
    "done"
)
"""A program of three destructive writes, each of which the person may decline."""


def gateway_cli(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    """`gateway ARGS --config CONFIG` in a process of its own, as a person at a terminal runs it."""
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args, "--config", str(config)],
        env=server_env(),
        capture_output=True,
        text=True,
        check=False,
    )
