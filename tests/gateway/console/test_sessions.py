"""Console sessions end on the server: at sign-out, when idle too long, at their absolute lifetime.

A real uvicorn serves the console on a loopback port and a real httpx client signs in with the
form, as a browser does; the clock is injected, so time passes without sleeping.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from gateway import Catalog, Gateway
from gateway.console import console_app
from gateway.console.auth import SESSION_COOKIE
from gateway.settings.loading import load_settings

from ..loopback_http import loopback
from ..sample_tools import ALL_TOOLS

TOKEN = "console-admin-token-0123456789"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _console(tmp_path: Path, clock: Clock, extra: str = "") -> Starlette:
    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path}"\n[console]\nadmin_token_env = "CONSOLE_TOKEN"\n{extra}')
    settings = load_settings(config, environ={})
    app = console_app(Gateway(Catalog(ALL_TOOLS)), settings, environ={"CONSOLE_TOKEN": TOKEN}, clock=clock)
    return Starlette(routes=[Mount("/console", app=app)])


@pytest.fixture
def console(tmp_path: Path, clock: Clock) -> Iterator[str]:
    with loopback(_console(tmp_path, clock)) as url:
        yield f"{url}/console"


def sign_in(client: httpx.Client, console: str) -> str:
    """Sign in with the form, as a browser does; returns the session cookie's value."""
    form = client.get(f"{console}/login")
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', form.text)
    assert csrf is not None
    signed_in = client.post(f"{console}/login", data={"token": TOKEN, "csrf": csrf.group(1), "next": ""})
    assert signed_in.status_code == 303
    return client.cookies[SESSION_COOKIE]


def page_status(console: str, cookie: str) -> int:
    """The status of the approvals page for a client holding only `cookie` (303: sent to sign in)."""
    with httpx.Client(cookies={SESSION_COOKIE: cookie}) as other:
        return other.get(f"{console}/approvals").status_code


def test_after_sign_out_a_copy_of_the_old_cookie_is_refused(console: str) -> None:
    with httpx.Client() as browser:
        cookie = sign_in(browser, console)
        assert page_status(console, cookie) == 200
        page = browser.get(f"{console}/approvals")
        csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert csrf is not None
        assert browser.post(f"{console}/logout", data={"csrf": csrf.group(1)}).status_code == 303

    assert page_status(console, cookie) == 303
    with httpx.Client(cookies={SESSION_COOKIE: cookie}) as other:
        assert other.get(f"{console}/api/pending").status_code == 401


def test_a_session_left_idle_past_its_timeout_is_refused(console: str, clock: Clock) -> None:
    with httpx.Client() as browser:
        cookie = sign_in(browser, console)
        clock.now += 29 * 60
        assert page_status(console, cookie) == 200
        clock.now += 2 * 60
        assert page_status(console, cookie) == 303


def test_using_a_session_keeps_it_alive_until_its_absolute_lifetime(console: str, clock: Clock) -> None:
    with httpx.Client() as browser:
        sign_in(browser, console)
        for _ in range(19):  # a page every 25 minutes: never idle, 7 h 55 min in all
            clock.now += 25 * 60
            assert browser.get(f"{console}/approvals").status_code == 200
        clock.now += 10 * 60  # past 8 h
        assert browser.get(f"{console}/approvals").status_code == 303


def test_the_approvals_poll_does_not_count_as_use(console: str, clock: Clock) -> None:
    with httpx.Client() as browser:
        sign_in(browser, console)
        for _ in range(3):  # polled for 30 minutes, nothing else
            clock.now += 10 * 60
            assert browser.get(f"{console}/approvals/rows").status_code == 200
        clock.now += 60
        assert browser.get(f"{console}/approvals/rows").status_code == 303


def test_the_idle_timeout_and_lifetime_are_configurable(tmp_path: Path, clock: Clock) -> None:
    with loopback(_console(tmp_path, clock, "session_idle_minutes = 5\n")) as url, httpx.Client() as browser:
        cookie = sign_in(browser, f"{url}/console")
        clock.now += 6 * 60
        assert page_status(f"{url}/console", cookie) == 303
