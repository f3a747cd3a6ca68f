"""Who may use the console: the admin token, admin principals' bearer tokens, sealed sessions."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from gateway.admin import ADMIN_NAME as TOKEN_ADMIN
from gateway.console.auth import AdminTokens, Sessions
from gateway.errors import ConfigError, UserError
from gateway.settings.loading import load_settings


def _settings(tmp_path: Path, text: str) -> object:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_settings(path, environ={})


def test_the_console_token_and_admin_principals_tokens_sign_in_and_nobody_else(tmp_path: Path) -> None:
    alice = hashlib.sha256(b"alice-token").hexdigest()
    settings = _settings(
        tmp_path,
        f"""
[console]
admin_token_env = "CONSOLE_TOKEN"
[principals.alice]
roles = ["admin"]
[principals.bob]
roles = ["guest"]
[[serve.tokens]]
principal = "alice"
sha256 = "{alice}"
[[serve.tokens]]
principal = "bob"
env = "BOB_TOKEN"
""",
    )
    tokens = AdminTokens.from_settings(settings, {"CONSOLE_TOKEN": "console-token", "BOB_TOKEN": "bob-token"})  # type: ignore[arg-type]
    assert tokens.who("console-token") == TOKEN_ADMIN
    assert tokens.who("alice-token") == "alice"
    assert tokens.who("bob-token") is None and tokens.who("") is None


def test_a_console_token_variable_that_is_not_set_is_said(tmp_path: Path) -> None:
    settings = _settings(tmp_path, '[console]\nadmin_token_env = "CONSOLE_TOKEN"\n')
    with pytest.raises(UserError, match="environment variable CONSOLE_TOKEN is not set"):
        AdminTokens.from_settings(settings, {})  # type: ignore[arg-type]


def test_both_token_sources_at_once_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not both"):
        _settings(tmp_path, f'[console]\nadmin_token_env = "X"\nadmin_token_sha256 = "{"0" * 64}"\n')


def test_a_session_cookie_cannot_be_forged_or_outlive_its_expiry() -> None:
    now = [1000.0]
    sessions = Sessions(b"k" * 32, clock=lambda: now[0])
    cookie = sessions.issue("alice")
    session = sessions.read(cookie)
    assert session is not None and session.who == "alice"
    payload, _, mac = cookie.rpartition(".")
    assert sessions.read(f"{payload}x.{mac}") is None
    assert Sessions(b"o" * 32, clock=lambda: now[0]).read(cookie) is None  # another key
    assert Sessions.valid(sessions.csrf(session), sessions.csrf(session))
    assert not Sessions.valid(sessions.csrf(session), None)
    now[0] += 9 * 3600
    assert sessions.read(cookie) is None
