"""The container image: built by `scripts/image` from the repository, run by podman, answering MCP.

`scripts/image --rootfs DIR` builds it (debootstrap's Debian root file system, the locked wheels by
their hashes, buildah) and leaves its root file system in DIR. The test reads the image's
configuration, then runs it with podman as an operator would (read-only root, the data directory as
a volume, SIGTERM to stop) and reaches it with the real MCP SDK client. Where podman cannot run a
container on the machine, the same root file system is run with chroot as the image's user, and
the test says so in its output. Needs root and Debian's debootstrap, buildah, podman and runc, and
what the image builds from fetched (`python -m tests.prepare` does both: `scripts/image --fetch`);
the test itself downloads nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client

from tests.prepare import IMAGE_TOOLS, image_fetched

ROOT = Path(__file__).resolve().parents[1]
VERSIONED = "localhost/metatool-gateway:latest"
STORAGE = ["--storage-driver", "vfs"]
PODMAN = ["podman", *STORAGE, "--runtime", "runc", "--cgroup-manager", "cgroupfs"]
READY_SECONDS = 120.0


def _tools_here() -> None:
    if os.geteuid() != 0:
        pytest.skip("building an image needs root (debootstrap, buildah's storage)")
    missing = [t for t in IMAGE_TOOLS if not (shutil.which(t) or Path(f"/usr/sbin/{t}").exists())]
    if missing:
        pytest.skip(f"no {', '.join(missing)} (sudo apt-get install {' '.join(IMAGE_TOOLS)})")
    if not image_fetched():  # the test itself downloads nothing
        pytest.skip("what the image builds from is not fetched (scripts/image --fetch, as root)")


def _wait_ready(url: str, process: subprocess.Popen[bytes] | None = None) -> None:
    end = time.monotonic() + READY_SECONDS
    while time.monotonic() < end:
        try:
            if httpx2.get(url, timeout=2).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server ended ({process.returncode}) before it was ready")
        time.sleep(0.2)
    raise AssertionError(f"not ready within {READY_SECONDS:g}s: {url}")


def _text(result: types.CallToolResult) -> Any:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


async def _use(url: str) -> list[str]:
    async with Client(url) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        found = await client.call_tool("discover_tools", {"query": "send an email"})
        assert _text(found)["tools"][0]["name"] == "gmail_send_message"
        tasks = await client.call_tool("invoke_tool", {"tool_name": "tasks_list_tasks"})
        assert not tasks.is_error and "tasks" in _text(tasks)
    return listed


def _build(root: Path) -> None:
    """The image, built from this checkout; its root file system copied out to `root`."""
    built = subprocess.run(
        [str(ROOT / "scripts" / "image"), "--rootfs", str(root)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert built.returncode == 0, built.stdout + built.stderr


def _check_configuration(image: Path) -> None:
    """Its own user, the data directory as a volume, the server as its entry point, a probe."""
    inspected = subprocess.run(
        ["buildah", *STORAGE, "inspect", "--type", "image", VERSIONED],
        capture_output=True,
        text=True,
        check=True,
    )
    config = json.loads(inspected.stdout)["Docker"]["config"]
    assert config["User"] == "10001:10001"
    assert "/data" in config["Volumes"]
    assert config["Entrypoint"] == ["gateway", "serve"]
    assert "GATEWAY_SERVE_TRANSPORT=http" in config["Env"] and "GATEWAY_DATA_DIR=/data" in config["Env"]
    assert "/readyz" in json.dumps(config["Healthcheck"])
    assert (image / "opt" / "gateway" / "venv" / "bin" / "gateway").exists()
    assert not (image / "opt" / "gateway" / "wheels").exists()  # removed once installed
    assert (image / "data").stat().st_uid == 10001


@contextmanager
def _served(image: Path, tmp: Path) -> Iterator[tuple[str, str, subprocess.Popen[bytes] | None]]:
    """The image's server, by podman where it can run here, else by chroot: (url, how, process)."""
    port = 18000 + os.getpid() % 1000
    env = ["-e", "GATEWAY_SERVE_ALLOWED_HOSTS=127.0.0.1,localhost", "-e", "GATEWAY_SERVE_SESSIONS=false"]
    name = f"gateway-test-{os.getpid()}"
    volume = tmp / "data"
    volume.mkdir(mode=0o700)
    os.chown(volume, 10001, 10001)
    # This machine's hard limits are below podman's defaults, so the test asks for less.
    run = [*PODMAN, "run", "-d", "--name", name, "--read-only", "--ulimit", "nofile=4096:4096"]
    run += ["--ulimit", "nproc=4096:4096"]
    run += ["-v", f"{volume}:/data", "-p", f"127.0.0.1:{port}:8765", *env, VERSIONED]
    started = subprocess.run(run, capture_output=True, text=True, check=False)
    if started.returncode == 0:
        try:
            yield f"http://127.0.0.1:{port}/mcp", f"podman:{name}", None
        finally:
            subprocess.run([*PODMAN, "rm", "--force", "--time", "0", name], capture_output=True, check=False)
        return
    print(
        f"podman cannot run a container here ({started.stderr.strip()[-300:]}); running the root file system with chroot"
    )
    data = image / "data"
    command = [
        shutil.which("chroot") or "/usr/sbin/chroot",
        "--userspec=10001:10001",
        str(image),
        "/opt/gateway/venv/bin/gateway",
        "serve",
    ]
    command += ["--port", str(port), "--host", "127.0.0.1"]
    environment = {
        "PATH": "/opt/gateway/venv/bin:/usr/bin:/bin",
        "HOME": "/data",
        "GATEWAY_DATA_DIR": "/data",
    }
    environment |= {"GATEWAY_SERVE_TRANSPORT": "http", "GATEWAY_SERVE_SESSIONS": "false"}
    environment |= {"GATEWAY_SERVE_ALLOWED_HOSTS": "127.0.0.1,localhost"}
    process = subprocess.Popen(command, env=environment, stderr=subprocess.DEVNULL)
    try:
        yield f"http://127.0.0.1:{port}/mcp", "chroot", process
    finally:
        process.terminate()
        process.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)


def test_the_image_builds_runs_as_its_user_serves_mcp_and_stops_cleanly(tmp_path: Path) -> None:
    _tools_here()
    image = tmp_path / "rootfs"
    _build(image)
    try:
        _check_configuration(image)
        with _served(image, tmp_path) as (url, how, process):
            _wait_ready(url.replace("/mcp", "/readyz"), process)
            assert anyio.run(_use, url) == ["discover_tools", "get_tool_schema", "invoke_tool"]
            if how.startswith("podman:"):
                name = how.split(":", 1)[1]
                stopped = subprocess.run(
                    [*PODMAN, "stop", "--time", "30", name], check=False, capture_output=True, text=True
                )
                assert stopped.returncode == 0, stopped.stderr
                state = subprocess.run(
                    [*PODMAN, "inspect", "--format", "{{.State.ExitCode}}", name],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                assert state.stdout.strip() == "0"  # SIGTERM: a clean stop
                written = (tmp_path / "data" / "audit.jsonl").read_text()
            else:
                assert process is not None
                process.terminate()
                assert process.wait(timeout=30) == 0
                written = (image / "data" / "audit.jsonl").read_text()
        assert json.loads(written.splitlines()[-1])["tool"] == "tasks_list_tasks"  # the volume kept it
    finally:
        listed = subprocess.run(
            ["buildah", *STORAGE, "images", "-q", VERSIONED], capture_output=True, text=True, check=False
        )
        for image_id in set(listed.stdout.split()):  # every tag of it: the vfs store keeps whole copies
            subprocess.run(
                ["buildah", *STORAGE, "rmi", "--force", image_id], capture_output=True, check=False
            )
