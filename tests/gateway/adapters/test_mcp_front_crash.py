"""A fronted server that crashes as it starts, as a person meets it at the command line: each line
is the gateway's, names the server's own log file, and the gateway's folders stay its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _discover(home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    env.update(PYTHONPATH=str(ROOT), GATEWAY_CONFIG=str(home / "config.toml"), GATEWAY_DENSE="off")
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "discover", "send an email"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_server_that_crashes_at_start_is_said_with_its_log_file_and_leaves_no_open_folder(
    tmp_path: Path,
) -> None:
    crash = "import sys; print('crashy: no API key in CRASHY_KEY', file=sys.stderr); sys.exit(3)"
    servers = {"mcpServers": {"crashy": {"command": sys.executable, "args": ["-c", crash]}}}
    (tmp_path / "servers.json").write_text(json.dumps(servers))
    data = tmp_path / "data"
    (tmp_path / "config.toml").write_text(
        f'data_dir = "{data}"\nmcp_servers = "{tmp_path / "servers.json"}"\n'
    )
    first, second = _discover(tmp_path), _discover(tmp_path)
    log = data / "mcp" / "logs" / "crashy.stderr.log"
    for done in (first, second):
        assert done.returncode == 0 and done.stdout.startswith("gmail_send_message"), done.stderr
        lines = done.stderr.splitlines()
        assert lines and all(line.startswith("gateway: ") for line in lines), lines
        assert any("crashy could not be started" in line and str(log) in line for line in lines), lines
    assert "readable by" not in second.stderr  # the folders it made are its own, from the first
    assert "crashy: no API key in CRASHY_KEY" in log.read_text()
    for folder in (data, data / "mcp", data / "mcp" / "logs"):
        assert folder.stat().st_mode & 0o077 == 0, folder
