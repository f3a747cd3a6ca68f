"""The `gateway` program, stopped or misconfigured, says so in one line: run as a real subprocess.

Ctrl-C is SIGINT sent to the process, at a point it reports (never after a sleep); the approval
prompt is asked on a pseudo-terminal, as a person sees it.
"""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..interrupting_tools import MANY, STALL_LOADING, WAITING

ROOT = Path(__file__).resolve().parents[3]
DEADLINE = 60.0
PROGRAM = [sys.executable, "-m", "gateway.cli"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A config on the interrupting catalog, its data and caches under `tmp_path`."""
    config = tmp_path / "config.toml"
    config.write_text(f'catalogs = ["tests.gateway.interrupting_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    return tmp_path


def _env(home: Path, first: Path | None = None, **extra: str) -> dict[str, str]:
    """The program's environment; `first` goes first on the module path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    path = [str(first)] if first is not None else []
    env.update(
        PYTHONPATH=os.pathsep.join([*path, str(ROOT)]),
        GATEWAY_CONFIG=str(home / "config.toml"),
        GATEWAY_DENSE="off",
        XDG_CACHE_HOME=str(home / "cache"),
    )
    env.update(extra)
    return env


def _read_until(fd: int, marker: str, seen: bytearray, *, line: bool = True) -> None:
    """Read `fd` into `seen` until `marker` is in it, in a whole line unless `line` is False."""
    end = time.monotonic() + DEADLINE
    while not any(
        marker.encode() in part for part in seen.splitlines(keepends=True) if part.endswith(b"\n") or not line
    ):
        ready, _, _ = select.select([fd], [], [], max(end - time.monotonic(), 0))
        assert ready, f"no {marker!r} within {DEADLINE:g}s: {seen.decode(errors='replace')}"
        chunk = os.read(fd, 65536)
        assert chunk, f"ended before {marker!r}: {seen.decode(errors='replace')}"
        seen += chunk


def _interrupted(command: list[str], env: dict[str, str], marker: str) -> tuple[int, str]:
    """Run `command`, send SIGINT once it printed `marker` on stderr; its status and whole stderr."""
    with subprocess.Popen(
        [*PROGRAM, *command],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stderr is not None
        seen = bytearray()
        try:
            _read_until(process.stderr.fileno(), marker, seen)
            process.send_signal(signal.SIGINT)
            seen += process.stderr.read()
            code = process.wait(timeout=DEADLINE)
        finally:
            process.kill()
    return code, seen.decode()


def _after(err: str, marker: str) -> list[str]:
    """The lines of `err` after the line with `marker`."""
    lines = err.splitlines()
    return lines[next(i for i, line in enumerate(lines) if marker in line) + 1 :]


def _files(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


def _run(home: Path, *command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PROGRAM, *command],
        cwd=ROOT,
        env=env or _env(home),
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_ctrl_c_during_a_tool_call_ends_in_one_line_with_status_130_and_the_caches_intact(home: Path) -> None:
    first = _run(home, "discover", "filler record")
    assert first.returncode == 0, first.stderr
    cached = _files(home / "cache")
    assert any(name.startswith("metatool-gateway/search-index/") for name in cached), cached

    code, err = _interrupted(["invoke", "wait_here", "{}"], _env(home), WAITING)

    assert (code, _after(err, WAITING)) == (130, ["gateway: interrupted"]), err
    assert _files(home / "cache") == cached  # nothing torn, nothing half-written left behind


def test_ctrl_c_while_the_catalogs_load_ends_in_one_line_with_status_130(home: Path) -> None:
    code, err = _interrupted(["catalog"], {**_env(home), STALL_LOADING: "1"}, WAITING)
    assert (code, _after(err, WAITING)) == (130, ["gateway: interrupted"]), err


def test_ctrl_c_while_the_search_index_builds_stops_the_build(home: Path) -> None:
    """The first Ctrl-C ends a `discover` that is building a large index: the build does not run to its
    end (nothing is cached) and the command says one line."""
    building = "Building the search index of"
    code, err = _interrupted(["discover", "filler record"], {**_env(home), MANY: "60000"}, building)
    assert (code, _after(err, building)) == (130, ["gateway: interrupted"]), err
    index = home / "cache" / "metatool-gateway" / "search-index"
    assert not index.exists() or not any(index.iterdir()), sorted(index.iterdir())


def test_ctrl_c_stops_a_served_gateway_with_one_line_and_status_130(home: Path) -> None:
    command = ["serve", "--transport", "http", "--host", "127.0.0.1", "--port", "0"]
    code, err = _interrupted(command, _env(home), "serving MCP on")
    assert code == 130 and "gateway: interrupted" in _after(err, "serving MCP on"), err
    assert "Traceback" not in err, err


def test_ctrl_c_stops_the_console_with_one_line_and_status_130(home: Path) -> None:
    code, err = _interrupted(["console", "--port", "0"], _env(home), "console on")
    assert (code, _after(err, "console on")) == (130, ["gateway: interrupted"]), err


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as held:
        yield held.getsockname()[1]


@pytest.mark.parametrize(
    ("command", "setting"),
    [(["serve", "--transport", "http"], "[serve] port"), (["console"], "[console] port")],
)
def test_a_port_in_use_is_one_line_with_status_2(
    home: Path, taken_port: int, command: list[str], setting: str
) -> None:
    done = _run(home, *command, "--host", "127.0.0.1", "--port", str(taken_port))
    assert (done.returncode, done.stderr.splitlines()) == (
        2,
        [
            f"gateway: 127.0.0.1:{taken_port} is already in use (another gateway serve or console?): "
            f"stop it, or pass --port with another port ({setting}; 0 picks a free one)"
        ],
    )


def test_the_google_api_catalog_without_its_extra_names_the_extra_in_one_line(home: Path) -> None:
    missing = home / "without"  # markdown_it as it is when the google extra is not installed
    missing.mkdir()
    (missing / "markdown_it.py").write_text(
        'raise ModuleNotFoundError("no markdown_it", name="markdown_it")\n'
    )
    done = _run(home, "discover", "--catalog", "google-apis", "list calendars", env=_env(home, missing))
    assert (done.returncode, done.stderr.splitlines()) == (
        2,
        [
            "gateway: the google-apis catalog needs the google extra: "
            "pip install 'metatool-gateway[google]' (markdown_it is missing)"
        ],
    )


def test_the_dense_layer_turned_on_without_its_extra_is_one_line(home: Path) -> None:
    missing = home / "without"  # the dense extra's tokenizers as when it is not installed
    missing.mkdir()
    (missing / "sitecustomize.py").write_text("import sys\nsys.modules['tokenizers'] = None\n")
    done = _run(home, "discover", "filler", env=_env(home, missing, GATEWAY_DENSE="on"))
    assert (done.returncode, done.stderr.splitlines()) == (
        2,
        [
            "gateway: search.dense is 'on' (GATEWAY_DENSE) but the dense extra is not installed: "
            "pip install 'metatool-gateway[dense]', or set it to 'auto'"
        ],
    )


def _read_to_end(fd: int, seen: bytearray) -> None:
    """Read what is left on a pseudo-terminal whose other end has closed."""
    while select.select([fd], [], [], 0)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other end is closed and all is read
            return
        if not chunk:
            return
        seen += chunk


def _wait_until_blocked(pid: int) -> None:
    """Wait until process `pid` sleeps in a system call (Linux's /proc: state S)."""
    end = time.monotonic() + DEADLINE
    while Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "S":
        assert time.monotonic() < end, "the program never waited for an answer"
        select.select([], [], [], 0.01)  # a poll interval, not a wait for the program


def test_ctrl_c_at_the_approval_prompt_declines_at_once(home: Path) -> None:
    main, child = pty.openpty()
    with subprocess.Popen(
        [*PROGRAM, "invoke", "clear_everything", "{}"],
        cwd=ROOT,
        env=_env(home),
        stdin=child,
        stdout=child,
        stderr=child,
    ) as process:
        os.close(child)
        seen = bytearray()
        try:
            _read_until(main, "gateway: run it? [y/N] ", seen, line=False)  # input() asks: no newline yet
            _wait_until_blocked(process.pid)  # reading the answer, as a person takes time to type
            process.send_signal(signal.SIGINT)  # what Ctrl-C at the terminal sends
            code = process.wait(timeout=DEADLINE)  # and nobody presses Enter
            _read_to_end(main, seen)
        finally:
            process.kill()
            os.close(main)
    out = seen.decode(errors="replace")
    assert code == 3, out
    assert '"code": "declined"' in out, out
    assert "Traceback" not in out and "CancelledError" not in out, out


@pytest.mark.parametrize(("answer", "left"), [(b"n\n", 1), (b"\x03", 1), (b"y\n", 0)])
def test_usage_forget_asks_at_a_terminal_and_keeps_everything_unless_told_yes(
    home: Path, answer: bytes, left: int
) -> None:
    history = home / "history.jsonl"
    history.write_text('{"query": "get filler one", "tools": ["filler_1"]}\n')
    assert _run(home, "usage", "import", str(history)).returncode == 0
    main, child = pty.openpty()
    with subprocess.Popen(
        [*PROGRAM, "usage", "forget"], cwd=ROOT, env=_env(home), stdin=child, stdout=child, stderr=child
    ) as process:
        os.close(child)
        seen = bytearray()
        try:
            _read_until(main, "Forget everything learned from use? [y/N] ", seen, line=False)
            if answer == b"\x03":
                _wait_until_blocked(process.pid)
                process.send_signal(signal.SIGINT)  # Ctrl-C
            else:
                os.write(main, answer)
            code = process.wait(timeout=DEADLINE)
            _read_to_end(main, seen)
        finally:
            process.kill()
            os.close(main)
    assert code == (0 if answer == b"y\n" else 3), seen.decode(errors="replace")
    stats = _run(home, "usage", "stats", "--json")
    assert json.loads(stats.stdout)["pairs"] == left
