"""A tool description with a bidi override or an escape sequence is shown escaped by the console.

HTML escaping leaves U+202E as it is, and a browser then shows the rest of the text reversed;
the console's templates print it as a visible `\\u202e` instead.
"""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx
from starlette.applications import Starlette
from starlette.routing import Mount

from gateway import Catalog, Gateway
from gateway.console import console_app
from gateway.settings.loading import load_settings

from ..loopback_http import loopback
from ..terminal_tools import CATALOG_TOOLS

TOKEN = "console-admin-token-0123456789"


def test_a_bidi_override_in_a_description_is_shown_escaped_on_the_tool_page(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path}"\n[console]\nadmin_token_env = "CONSOLE_TOKEN"\n')
    settings = load_settings(config, environ={})
    app = console_app(Gateway(Catalog(CATALOG_TOOLS)), settings, environ={"CONSOLE_TOKEN": TOKEN})
    with loopback(Starlette(routes=[Mount("/console", app=app)])) as url:
        page = httpx.get(
            f"{url}/console/catalog/tools/files_peek", headers={"authorization": f"Bearer {TOKEN}"}
        )
    assert page.status_code == 200
    assert "\u202e" not in page.text and "\x1b" not in page.text
    assert "Peeks at a file \\u202eexe.txt\\x1b[2J now" in page.text
