"""`gateway catalog --findability`: the report at a terminal, as JSON, and as a check with --min-found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.cli import main


@pytest.fixture
def findable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config serving tests/gateway/search/findable_tools.py, its data and caches under `tmp_path`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = tmp_path / "gateway.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\ncatalogs = ["tests.gateway.search.findable_tools:provide"]\n'
    )
    monkeypatch.setenv("GATEWAY_CONFIG", str(config))
    return config


def test_the_report_names_the_tool_never_found_and_the_summaries_no_word_tells_apart(
    findable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "--findability"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Findability of 13 tools (a request finds its tool in the first 5):\n")
    assert "  found by one of its requests: 12 (92.3%)\n" in out
    assert "Never found (1):\n  notes_the\n" in out
    assert "  files_folder_copy: every word is in files_drive_copy's\n" in out


def test_json_lists_every_tool_and_min_found_fails_below_the_share(
    findable: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "--findability", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["tools"] == len(report["per_tool"]) == 13
    assert report["never_found"] == ["notes_the"] and report["found"] == 12
    assert main(["catalog", "--findability", "--min-found", "0.92"]) == 0
    capsys.readouterr()
    assert main(["catalog", "--findability", "--min-found", "0.93"]) == 1
    assert "gateway: 92.3% of the tools are found, below --min-found 93.0%" in capsys.readouterr().err


def test_the_workspace_is_found_whole_and_a_bad_threshold_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "gateway.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    monkeypatch.setenv("GATEWAY_CONFIG", str(tmp_path / "gateway.toml"))
    assert main(["catalog", "--findability", "--json", "--min-found", "1.0"]) == 0
    assert json.loads(capsys.readouterr().out)["found_share"] == 1.0
    with pytest.raises(SystemExit) as exited:
        main(["catalog", "--findability", "--min-found", "95"])
    assert exited.value.code == 2
    assert "'95' is not a share from 0 to 1" in capsys.readouterr().err
    assert main(["catalog", "--min-found", "0.5"]) != 0
    assert "--min-found is the threshold of --findability" in capsys.readouterr().err
