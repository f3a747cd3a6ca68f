"""Configuration: file < environment < flags; a broken file is refused with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway import ConfigError
from gateway.runtime import policy_from, principal_from
from gateway.settings.loading import load_settings

GOOD = """
data_dir = "/tmp/ws"
timezone = "Europe/Berlin"
catalogs = ["workspace"]
principal = "alice"

[principals.alice]
roles = ["reader"]

[confirmation]
mode = "deny"
ttl_seconds = 60

[audit]
path = "/tmp/audit.jsonl"

[policy]
default = "deny"

[[policy.rules]]
effect = "allow"
actions = ["read", "search"]
roles = ["reader"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_a_config_file_sets_every_section(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, GOOD), environ={})
    assert s.data_dir == Path("/tmp/ws") and s.timezone == "Europe/Berlin"
    assert s.confirmation.mode == "deny" and s.confirmation.ttl_seconds == 60
    assert s.audit_path == Path("/tmp/audit.jsonl")
    principal = principal_from(s)
    assert principal.id == "alice" and principal.roles == frozenset({"reader"})
    policy = policy_from(s)
    assert policy.default == "deny" and policy.rules[0].actions == ("read", "search")


def test_environment_beats_the_file_and_flags_beat_both(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    env = {"GATEWAY_TIMEZONE": "Asia/Tokyo", "GATEWAY_CONFIRMATION_MODE": "model", "GATEWAY_CATALOGS": "a, b"}
    s = load_settings(path, environ=env)
    assert (s.timezone, s.confirmation.mode, s.catalogs) == ("Asia/Tokyo", "model", ["a", "b"])
    s = load_settings(path, environ=env, overrides={"timezone": "UTC", "confirmation.mode": None})
    assert (s.timezone, s.confirmation.mode) == ("UTC", "model")


def test_the_config_path_can_come_from_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, 'timezone = "America/New_York"\n')
    assert load_settings(environ={"GATEWAY_CONFIG": str(path)}).timezone == "America/New_York"


def test_without_a_file_defaults_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    s = load_settings(environ={})
    assert s.backend == "local" and s.confirmation.mode == "host" and s.catalogs == ["workspace"]


def test_invalid_toml_is_refused_with_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'timezone = "UTC"\n\n[audit\npath = 1\n')
    with pytest.raises(ConfigError) as info:
        load_settings(path, environ={})
    assert info.value.line == 3 and "line 3" in str(info.value)


def test_an_invalid_value_is_refused_with_its_line_and_nothing_is_applied(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace('mode = "deny"', 'mode = "yolo"'))
    with pytest.raises(ConfigError) as info:
        load_settings(path, environ={})
    assert info.value.line == GOOD.splitlines().index('mode = "deny"') + 1
    assert "confirmation.mode" in str(info.value)


def test_unknown_keys_and_time_zones_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="colour"):
        load_settings(write(tmp_path, 'colour = "red"\n'), environ={})
    with pytest.raises(ConfigError, match="unknown time zone"):
        load_settings(write(tmp_path, 'timezone = "Mars/Olympus"\n'), environ={})


def test_a_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(tmp_path / "nope.toml", environ={})
