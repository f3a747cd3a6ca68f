"""`python -m benchmarks.deployment`: the fault test of replicas behind HAProxy on one Redis."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.deployment import APPROVALS, QUOTA, Client, Deployment, Outcomes, checks
from benchmarks.mcp_wire import Script

ROOT = Path(__file__).resolve().parents[1]


def _needs(binary: str, package: str) -> None:
    if shutil.which(binary) is None and not Path(f"/usr/sbin/{binary}").exists():
        pytest.skip(f"no {binary} (install the Debian package: sudo apt-get install {package})")


def test_a_short_run_passes_every_check_through_the_real_router() -> None:
    _needs("redis-server", "redis-server")
    _needs("haproxy", "haproxy")
    command = [
        sys.executable,
        "-m",
        "benchmarks.deployment",
        "--replicas",
        "2",
        "--clients",
        "5",
        "--seconds",
        "8",
    ]
    done = subprocess.run(
        command,
        check=False,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = [line for line in done.stdout.splitlines() if line.startswith(("ok ", "FAIL"))]
    assert len(results) == 6 and all(line.startswith("ok ") for line in results), done.stdout
    assert "replica killed at" in done.stdout and "redis back at" in done.stdout


def _audit(root: Path, index: int, lines: list[tuple[str, str]]) -> None:
    folder = root / f"replica-{index}"
    folder.mkdir()
    records = [{"tool": tool, "outcome": "executed", "params": {"mark": mark}} for tool, mark in lines]
    (folder / "audit.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_each_check_fails_on_what_it_guards_against(tmp_path: Path) -> None:
    """A lost audit line, a call run twice, a program run after its process died, a quota passed,
    a replica's learning lost and a client left idle each turn their check to a failure."""
    marks = [f"a{i}" for i in range(APPROVALS)]
    _audit(
        tmp_path,
        0,
        [
            ("deploy_echo", "c1"),
            *(("deploy_delete", m) for m in marks),
            ("deploy_delete", "a0"),
            ("deploy_delete", "p0"),
        ]
        + [("deploy_counted", f"q{k}") for k in range(QUOTA + 1)],
    )
    _audit(tmp_path, 1, [])
    agent = Client("http://127.0.0.1:1/mcp", Script([], None, True), 0)  # type: ignore[arg-type]
    agent.answered = ["c1", "c2"]  # c2 has no audit line
    seen = Outcomes(pending={m: f"p-{m}" for m in marks}, paused_refusal="approved", quota=Counter())
    seen.redeemed = {m: {"deleted": m} for m in marks}
    seen.again = {m: {"error": {"code": "confirmation_used"}} for m in marks}
    seen.faults = {"redis back": 10.0}
    agent.last_answer = 5.0  # not answered after the last fault
    results = checks(Deployment(tmp_path, 2), [agent], seen, queries={"probe words for replica 0"})
    assert [holds for _, holds, _ in results] == [False] * 6, results
