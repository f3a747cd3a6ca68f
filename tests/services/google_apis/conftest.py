"""The Google API catalog on a scripted Google: the real client, the shipped documents, `HttpMockSequence`.

The index is built once per test session (into a temporary cache directory). `Google` (shared with the
Google backend's tests) queues answers and records every request as method, host, path, query and body.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gateway import Gateway
from gateway.gate.confirmation import ConfirmationGate
from services.google_apis import CatalogOptions, catalog_toolset
from services.google_apis.index import Index, load_index
from services.google_apis.invoke import Connection, Session

from ..google.conftest import Google

APIS = ("calendar", "gmail", "tasks", "drive", "secretmanager")
"""The APIs most tests serve: small enough to index in a blink, varied enough to cover every shape."""


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
