"""A loopback HTTP server that records requests and answers as scripted, and small specs written here."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

import gateway.runtime
from gateway.toolset import load_provider


@dataclass
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    raw_path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Answer = tuple[int, dict[str, str], bytes | str | dict[str, Any] | list[Any]]
Route = Callable[[Seen], Answer]


@dataclass
class Loopback:
    url: str
    seen: list[Seen] = field(default_factory=list)
    routes: list[Route] = field(default_factory=list)

    def answer(self, route: Route) -> None:
        """Answer the next requests with `route` (the last one given is asked first)."""
        self.routes.insert(0, route)


def _handler(server: Loopback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            split = urlsplit(self.path)
            seen = Seen(
                self.command,
                split.path,
                self.path,
                parse_qsl(split.query, keep_blank_values=True),
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(length) if length else b"",
            )
            server.seen.append(seen)
            headers: dict[str, str]
            status, headers, body = 200, {}, b"{}"
            for route in server.routes:
                status, headers, payload = route(seen)
                body = (
                    payload
                    if isinstance(payload, bytes)
                    else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
                )
                if not isinstance(payload, bytes | str):
                    headers = {"Content-Type": "application/json", **headers}
                break
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    yield from _serve()


@pytest.fixture
def elsewhere() -> Iterator[Loopback]:
    """A second server: another origin (another port) than `loopback`'s."""
    yield from _serve()


def _serve() -> Iterator[Loopback]:
    state = Loopback("")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(autouse=True)
def openapi_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime loads the `openapi` entry point; until this checkout is installed with it, the
    same provider is loaded by its module path (the entry point names exactly this function)."""
    if any(ep.name == "openapi" for ep in entry_points(group="metatool_gateway.catalogs")):
        return
    original = load_provider  # the function `gateway.runtime` imports and calls
    monkeypatch.setattr(
        gateway.runtime,
        "load_provider",
        lambda spec: (
            load_provider("gateway.openapi.provider:provide") if spec == "openapi" else original(spec)
        ),
    )


def write_spec(directory: Path, doc: dict[str, Any], name: str = "spec.json") -> Path:
    path = directory / name
    if name.endswith((".yaml", ".yml")):
        import yaml

        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    else:
        path.write_text(json.dumps(doc))
    return path


def op(operation_id: str, **more: Any) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "summary": f"Calls {operation_id}.",
        "responses": {"200": {"description": "ok"}},
        **more,
    }
