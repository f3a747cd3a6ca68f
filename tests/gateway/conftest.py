"""Fixtures over the sample catalog."""

from __future__ import annotations

import pytest

from gateway import Catalog, Gateway, MemoryAuditLog

from .dense_support import real_model, tiny_model, tiny_model_dir, verified_record
from .sample_tools import ALL_TOOLS, CALLS, Calls

__all__ = ["real_model", "tiny_model", "tiny_model_dir", "verified_record"]  # the dense layer's models


@pytest.fixture
def calls() -> Calls:
    CALLS.clear()
    return CALLS


@pytest.fixture
def catalog() -> Catalog:
    return Catalog(ALL_TOOLS)


@pytest.fixture
def audit() -> MemoryAuditLog:
    return MemoryAuditLog()


@pytest.fixture
def gw(catalog: Catalog, audit: MemoryAuditLog) -> Gateway:
    return Gateway(catalog, audit=audit)
