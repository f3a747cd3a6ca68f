"""Fixtures for the agent tests: a replay server per test, and a gateway over the sample catalog plus the probe tools.

Named so they do not shadow the package-wide `gw` fixture other adapter tests here rely on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from gateway import Catalog, Gateway, MemoryAuditLog

from ..sample_tools import ALL_TOOLS
from .probe_tools import PROBE_TOOLS, Probe
from .replay import Replay, serve


@pytest.fixture
def replay() -> Iterator[Replay]:
    yield from serve()


@pytest.fixture
def probe() -> type[Probe]:
    Probe.log = []
    Probe.barrier = asyncio.Barrier(2)
    return Probe


@pytest.fixture
def agent_gateway(audit: MemoryAuditLog) -> Gateway:
    return Gateway(Catalog([*ALL_TOOLS, *PROBE_TOOLS]), audit=audit)
