"""The Google API catalog on a scripted Google: the real client, the shipped documents, `HttpMockSequence`.

The index is built once per test session (into a temporary cache directory). `Google` queues answers and
records every request as method, host, path, query (repeated parameters as lists) and JSON body.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from googleapiclient.http import HttpMockSequence  # type: ignore[import-untyped]

from gateway import Gateway
from gateway.confirmation import ConfirmationGate
from services.google.client import GoogleClient
from services.google_apis import CatalogOptions, catalog_toolset
from services.google_apis.index import Index, load_index
from services.google_apis.invoke import Connection, Session

APIS = ("calendar", "gmail", "tasks", "drive", "secretmanager")
"""The APIs most tests serve: small enough to index in a blink, varied enough to cover every shape."""


@dataclass(frozen=True)
class Sent:
    """One request as it went out."""

    method: str
    host: str
    path: str
    query: dict[str, list[str]]
    body: Any


@dataclass
class Google:
    """Queues answers for, and records requests from, one `GoogleClient`."""

    responses: list[tuple[dict[str, str], str]] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.http = HttpMockSequence(self.responses)  # pops from our list, so answers can be queued later
        self.client = GoogleClient(lambda: self.http, sleep=self.sleeps.append, rand=lambda: 1.0)

    def reply(self, body: Any = None, *, status: int = 200) -> Google:
        self.responses.append(({"status": str(status)}, "" if body is None else json.dumps(body)))
        return self

    def fail(self, status: int, reason: str, message: str = "", location: str | None = None) -> Google:
        error: dict[str, Any] = {"reason": reason, "message": message}
        if location is not None:
            error["location"] = location
        return self.reply({"error": {"code": status, "message": message, "errors": [error]}}, status=status)

    @property
    def sent(self) -> list[Sent]:
        found = []
        for uri, method, body, _headers in self.http.request_sequence:
            parts = urlsplit(uri)
            query = {k: v for k, v in parse_qs(parts.query).items() if k != "alt"}
            found.append(Sent(method, parts.netloc, parts.path, query, json.loads(body) if body else None))
        return found

    def only(self) -> Sent:
        (request,) = self.sent
        return request


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the session's index is cached."""
    return tmp_path_factory.mktemp("google-apis-index")


@pytest.fixture(scope="session")
def index(index_dir: Path) -> Index:
    """The full catalog's index (newest versions), built once for the session."""
    return load_index(index_dir, "newest")


@pytest.fixture
def google() -> Google:
    return Google()


MakeGateway = Callable[..., Gateway]


@pytest.fixture
def make_gateway(index: Index, google: Google) -> MakeGateway:
    """A gateway over some APIs of the catalog, calling the scripted Google with `scopes` granted."""

    def make(
        *apis: str, scopes: frozenset[str] | None = None, connect: Callable[[], Connection] | None = None
    ) -> Gateway:
        session = Session(connect or (lambda: Connection(google.client, scopes)))
        toolset = catalog_toolset(CatalogOptions(apis=apis or APIS), session, index=index)
        return Gateway(toolset.catalog, gate=ConfirmationGate("host"), search_cache_dir=False)

    return make


@pytest.fixture
def gw(make_gateway: MakeGateway) -> Gateway:
    return make_gateway()
