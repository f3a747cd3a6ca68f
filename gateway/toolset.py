"""Toolsets: how a service package hands its tools and resources to a gateway.

A toolset provider is a function `provide(options) -> Toolset`, named in the
`metatool_gateway.catalogs` entry-point group or by a "module:function" path in the
configuration. The gateway never imports a service package by name.
"""

from __future__ import annotations

import importlib
import inspect
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
    """Resolve 'workspace' (an entry point) or 'package.module:function' to a provider.

    Raises:
        UserError: nothing of that name is installed, or what the name leads to is not a provider
            (a function of one argument).
    """
    if ":" in spec:
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
            found: object = getattr(module, attr)
        except (ImportError, AttributeError) as exc:
            raise UserError(f"cannot load catalog provider {spec!r}: {exc}") from exc
        return _checked(spec, found)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            return _checked(spec, ep.load())
    known = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    raise UserError(f"unknown catalog {spec!r}; installed catalogs: {', '.join(known) or 'none'}")


_NOT_A_PROVIDER = "a catalog is an installed name (e.g. workspace) or a function provide(options) -> Toolset"


def _checked(spec: str, found: Any) -> Provider:
    """`found` itself, refused before it is called when it cannot be a provider."""
    if not callable(found):
        raise UserError(f"catalog {spec!r} is a {type(found).__name__}, not a provider: {_NOT_A_PROVIDER}")
    try:
        inspect.signature(found).bind(None)
    except TypeError:
        raise UserError(
            f"catalog {spec!r} does not take one argument, so it is not a provider: {_NOT_A_PROVIDER}"
        ) from None
    except ValueError:  # some built-ins have no signature to inspect: the call will tell
        pass
    provider: Provider = found  # callable with one argument: as close to a provider as can be checked unrun
    return provider
