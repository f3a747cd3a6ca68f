"""`gateway serve --workers N`: real worker processes on one port, supervised by a real parent.

What is checked through the real server: calls on many connections all answered and audited
once, `/metrics` counting every worker's calls whichever worker a scrape reaches, a worker killed
(SIGKILL) replaced while the others keep answering, SIGTERM stopping every worker, a parent
killed outright taking its workers with it, and each configuration that one process's memory
would make behave differently refused before anything starts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from gateway.adapters.mcp_workers import refusal
from gateway.settings.loading import load_settings

from .mcp_server_support import (
    ROOT,
    SECRET,
    audit_outcomes,
    http_client,
    http_server,
    server_env,
    text_of,
    write_config,
)

STATELESS = "[serve]\nsessions = false\n[telemetry]\nmetrics_open = true\n"
SEARCH = {"tool_name": "notes_search", "parameters": {"title": "milk"}}
DEADLINE = 30.0


def _children(parent: int) -> set[int]:
    """The ids of the live processes whose parent is `parent` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if int(fields[1]) == parent and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _until(condition: object, what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():  # type: ignore[operator]
        if time.monotonic() > end:
            raise AssertionError(f"not within {DEADLINE:g}s: {what}")
        time.sleep(0.05)


def _workers_line(output: list[str]) -> list[int]:
    (line,) = [line for line in "".join(output).splitlines() if "workers share the port" in line]
    return [int(pid) for pid in line.rpartition("(pids ")[2].rstrip(")").split(", ")]


def _invoked(metrics: str) -> float:
    """The count of executed `notes_search` calls a scrape reports."""
    for line in metrics.splitlines():
        if line.startswith("gateway_calls_total{") and 'tool="notes_search"' in line and '"executed"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def _calls(url: str, count: int) -> None:
    """`count` calls, each from a client of its own (a connection of its own)."""
    for _ in range(count):
        async with http_client(url) as client:
            result = await client.call_tool("invoke_tool", SEARCH)
            assert not result.is_error and text_of(result) == ["milk"]


def test_workers_share_the_port_the_store_the_audit_log_and_the_metrics(tmp_path: Path) -> None:
    config = write_config(tmp_path, STATELESS)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    with http_server(config, "--workers", "2", env={"TMPDIR": str(temporary)}) as server:
        workers = _workers_line(server.output)
        assert len(workers) == 2 and set(workers) == _children(server.proc.pid)
        anyio.run(_calls, server.url, 12)
        metrics_url = server.url.rsplit("/", 1)[0] + "/metrics"
        scrapes = []
        for _ in range(8):  # a connection each, so the kernel spreads them over the workers
            with httpx2.Client() as http:
                scrapes.append(_invoked(http.get(metrics_url).text))
        assert scrapes == [12.0] * 8  # each worker's scrape counts every worker's calls

        killed = workers[0]
        os.kill(killed, signal.SIGKILL)
        _until(lambda: "starting another" in "".join(server.output), "the parent restarts the worker")
        _until(lambda: "listens again" in "".join(server.output), "the new worker listens")
        now = _children(server.proc.pid)
        assert killed not in now and workers[1] in now
        anyio.run(_calls, server.url, 4)  # a new connection reaches a live worker, never the dead one
        with httpx2.Client() as http:
            assert _invoked(http.get(metrics_url).text) == 16.0  # the dead worker's counts stay
    assert audit_outcomes(tmp_path, "notes_search") == ["executed"] * 16
    assert server.proc.returncode == 0
    assert not any(_alive(pid) for pid in now), "SIGTERM stops every worker"
    assert list(temporary.iterdir()) == []  # the workers' metrics files went with them


def test_a_parent_killed_outright_takes_its_workers_with_it(tmp_path: Path) -> None:
    config = write_config(tmp_path, STATELESS)
    with http_server(config, "--workers", "2") as server:
        workers = _workers_line(server.output)
        server.kill()
        _until(lambda: not any(_alive(pid) for pid in workers), "the workers stop once the parent is gone")


def test_a_pending_call_asked_on_one_worker_is_approved_and_run_once_on_any(tmp_path: Path) -> None:
    """The confirmations are the data directory's SQLite store: every worker reads the same one."""
    config = write_config(tmp_path, STATELESS)
    delete = {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}}

    def gateway(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "gateway.cli", *args, "--config", str(config)]
        return subprocess.run(command, check=False, env=server_env(), capture_output=True, text=True)

    async def scenario(url: str) -> None:
        async with http_client(url) as client:
            pending_id = text_of(await client.call_tool("invoke_tool", delete))["pending_id"]
        approved = await anyio.to_thread.run_sync(lambda: gateway("approve", pending_id))
        assert approved.returncode == 0, approved.stderr
        confirmed = {**delete, "confirmation": pending_id}
        answers = []
        for _ in range(4):  # new connections, spread over both workers
            async with http_client(url) as client:
                answers.append(text_of(await client.call_tool("invoke_tool", confirmed)))
        assert answers[0] == {"deleted": "n1", "by": "local"}, answers[0]
        assert [a["error"]["code"] for a in answers[1:]] == ["confirmation_used"] * 3

    with http_server(config, "--workers", "2") as server:
        anyio.run(scenario, server.url)
    assert audit_outcomes(tmp_path, "notes_delete").count("executed") == 1


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("[serve]\nsessions = true\n", "MCP sessions live in the process that opened them"),
        ("[serve]\nsessions = false\n[code]\nenabled = true\n", "code mode"),
        ("[serve]\nsessions = false\n[confirmation]\nstore = 'memory'\n", "confirmation.store 'memory'"),
        (
            "[serve]\nsessions = false\n[[limits]]\nname = 'l'\nquota = 5\nwindow = 'minute'\n",
            "limiter.store 'memory'",
        ),
        ("[serve]\nsessions = false\n[usage]\nstore = 'memory'\n", "usage.store 'memory'"),
    ],
)
def test_what_one_process_keeps_in_memory_is_refused_before_anything_starts(
    tmp_path: Path, extra: str, reason: str
) -> None:
    config = write_config(tmp_path, extra)
    assert reason in (refusal(load_settings(config, environ={}), "http") or "")
    command = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config), "--transport", "http"]
    done = subprocess.run(
        [*command, "--port", "0", "--workers", "2"],
        check=False,
        cwd=ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and reason in done.stderr, done.stderr
    assert "serving MCP" not in done.stderr


def test_what_workers_can_share_is_not_refused(tmp_path: Path) -> None:
    shared = (
        "[serve]\nsessions = false\n[confirmation]\nstore = 'sqlite'\n"
        f"secret = '{SECRET}'\n[limiter]\nstore = 'redis'\n"
        "[[limits]]\nname = 'l'\nquota = 5\nwindow = 'minute'\n"
    )
    settings = load_settings(write_config(tmp_path, shared), environ={})
    assert refusal(settings, "http") is None
    assert "over stdio" in (refusal(settings, "stdio") or "")


def test_workers_are_a_setting_and_an_environment_variable_too(tmp_path: Path) -> None:
    config = write_config(tmp_path, "[serve]\nworkers = 3\n")
    assert load_settings(config, environ={}).serve.workers == 3
    assert load_settings(config, environ={"GATEWAY_SERVE_WORKERS": "4"}).serve.workers == 4
    assert load_settings(write_config(tmp_path / "none"), environ={}).serve.workers == 1
