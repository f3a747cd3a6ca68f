"""The settings `gateway serve` adds: the serve section, shared confirmation stores, the secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.cli import main
from gateway.errors import ConfigError
from gateway.settings.loading import Settings, load_settings

SECRET = "0123456789abcdef0123456789abcdef"


def _load(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> Settings:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_settings(path, environ=environ or {})


def test_serve_defaults_to_stdio_and_loopback(tmp_path: Path) -> None:
    serve = _load(tmp_path, "").serve
    assert (serve.transport, serve.host, serve.port, serve.path, serve.tokens) == (
        "stdio",
        "127.0.0.1",
        8765,
        "/mcp",
        [],
    )


def test_the_environment_sets_the_store_the_secret_and_the_http_address(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        "",
        {
            "GATEWAY_CONFIRMATION_STORE": "redis",
            "GATEWAY_CONFIRMATION_SECRET": SECRET,
            "GATEWAY_REDIS_URL": "redis://127.0.0.1:6390/2",
            "GATEWAY_SERVE_TRANSPORT": "http",
            "GATEWAY_SERVE_PORT": "9000",
        },
    )
    confirmation = settings.confirmation
    assert confirmation.store == "redis" and confirmation.redis_url == "redis://127.0.0.1:6390/2"
    assert confirmation.secret is not None and confirmation.secret.get_secret_value() == SECRET
    assert SECRET not in repr(settings)
    assert settings.serve.transport == "http" and settings.serve.port == 9000


def test_a_shared_store_without_a_shared_secret_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="GATEWAY_CONFIRMATION_SECRET"):
        _load(tmp_path, '[confirmation]\nstore = "sqlite"\n')


def test_a_short_secret_is_refused_without_being_echoed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, "", {"GATEWAY_CONFIRMATION_SECRET": "tooshort-xyz"})
    assert "confirmation.secret" in str(caught.value) and "tooshort-xyz" not in str(caught.value)


def test_the_sqlite_store_lives_in_the_data_dir_by_default(tmp_path: Path) -> None:
    settings = _load(tmp_path, f'data_dir = "{tmp_path}"\n')
    assert settings.confirmation_path == tmp_path / "confirmations.sqlite3"


@pytest.mark.parametrize(
    "entry",
    [
        'principal = "a"',
        'principal = "a"\nenv = "X"\nsha256 = "' + "0" * 64 + '"',
        'principal = "a"\nsha256 = "not-a-digest"',
    ],
)
def test_a_token_needs_exactly_one_well_formed_source(tmp_path: Path, entry: str) -> None:
    with pytest.raises(ConfigError, match=r"serve\.tokens"):
        _load(tmp_path, f"[[serve.tokens]]\n{entry}\n")


def test_serve_stops_with_a_usage_error_when_a_token_variable_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_GATEWAY_TOKEN", raising=False)
    path = tmp_path / "config.toml"
    path.write_text('[[serve.tokens]]\nprincipal = "bob"\nenv = "NOT_SET_GATEWAY_TOKEN"\n')
    assert main(["serve", "--config", str(path), "--transport", "http"]) == 2
    assert "NOT_SET_GATEWAY_TOKEN (for bob) is not set" in capsys.readouterr().err
