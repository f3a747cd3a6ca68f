"""The screenshots of docs/console.md, taken from a real served gateway in Debian's chromium.

python -m tests.gateway.console.screenshots
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from ..adapters.mcp_server_support import http_server, write_config
from .conftest import ADMIN_TOKEN, CHROMIUM, CHROMIUM_ARGS, CONFIG, Served, sign_in

DOCS = Path(__file__).resolve().parents[3] / "docs"


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        config = write_config(Path(directory), CONFIG)
        with http_server(config, env={"CONSOLE_TOKEN": ADMIN_TOKEN}) as server:
            served = Served(server, Path(directory))
            served.call("discover_tools", {"query": "delete a note"})
            served.call("invoke_tool", {"tool_name": "notes_create", "parameters": {"title": "Buy milk"}})
            served.call("invoke_tool", {"tool_name": "files_read", "parameters": {"path": "/etc/passwd"}})
            served.call("invoke_tool", {"tool_name": "notes_delete", "parameters": {"note_id": "n1"}})
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(f"{served.console}/login")
                page.screenshot(path=DOCS / "console-login.png")
                sign_in(page, served.console)
                shots = {
                    "approvals": "/approvals",
                    "activity": "/activity",
                    "discovery": "/discovery?query=remove+a+note",
                    "catalog": "/catalog",
                    "tool": "/catalog/tools/notes_delete",
                }
                for name, path in shots.items():
                    page.goto(served.console + path)
                    page.screenshot(path=DOCS / f"console-{name}.png", full_page=True)
                page.goto(served.console + "/activity")
                page.click("text=detail")
                page.screenshot(path=DOCS / "console-activity-detail.png", full_page=True)
                browser.close()


if __name__ == "__main__":
    main()
