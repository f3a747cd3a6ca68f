"""Toolsets: how a service package hands its tools and resources to a gateway.

A toolset provider is a function `provide(options) -> Toolset`, named in the
`metatool_gateway.catalogs` entry-point group or by a "module:function" path in the
configuration. The gateway never imports a service package by name.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import entry_points
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .catalog import Catalog
from .errors import UserError

ENTRY_POINT_GROUP = "metatool_gateway.catalogs"


@dataclass(frozen=True)
class ProviderOptions:
    """What a provider may need to build its resources."""

    data_dir: Path
    timezone: str = "UTC"
    backend: str = "local"
    seed_demo: bool = True
    clock: Callable[[], datetime] | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Toolset:
    """A catalog plus the resources its handlers `require` from the call context."""

    catalog: Catalog
    resources: Mapping[type, object] = field(default_factory=lambda: MappingProxyType({}))
    close: Callable[[], None] | None = None


Provider = Callable[[ProviderOptions], Toolset]


def load_provider(spec: str) -> Provider:
    """Resolve 'workspace' (an entry point) or 'package.module:function' to a provider."""
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
            provider: Provider = getattr(module, attr)
        except (ImportError, AttributeError) as exc:
            raise UserError(f"cannot load catalog provider {spec!r}: {exc}") from exc
        return provider
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            loaded: Provider = ep.load()
            return loaded
    known = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    raise UserError(f"unknown catalog {spec!r}; installed catalogs: {', '.join(known) or 'none'}")
