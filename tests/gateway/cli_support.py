"""What the in-process command-line tests share: a configuration on the sample catalog, and a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.cli import main


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configuration serving the sample catalog from a fresh data directory, made the default."""
    path = tmp_path / "config.toml"
    path.write_text(f'catalogs = ["tests.gateway.sample_tools:provide"]\ndata_dir = "{tmp_path}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(path))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`gateway ARGV...` in this process: its status, standard output and standard error."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
