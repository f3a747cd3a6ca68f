"""The catalog: every registered tool, indexed by name, category and action."""

from __future__ import annotations

import gc
import threading
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from types import MappingProxyType
from typing import Any

from .definition import ToolDefinition, definition_from_function, definition_problems
from .errors import RegistrationError

Registrable = ToolDefinition | Callable[..., Any] | object
"""A definition or an @tool function. Typed as wide as `object` because mypy types a list of
functions with different signatures (`TOOLS = [notes_create, notes_delete]`) as `list[function]`,
which no Callable admits; what is not a tool is refused at registration, with every problem named."""


@contextmanager
def bulk_allocation(*, freeze: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector while a large catalog is built.

    A catalog of ~14,000 tools is about a million long-lived objects made in one go and none freed; the
    collector would scan them again and again for nothing (it doubles the start-up time). With
    `freeze`, what exists afterwards is also set aside from later collections (`gc.freeze`); the caller
    undoes that with `gc.unfreeze()` when it lets the catalog go.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


# Definitions are frozen: one that passed the checks once (merging catalogs registers thousands
# again) need not be checked again.
_CHECKED: weakref.WeakSet[ToolDefinition] = weakref.WeakSet()


class Catalog:
    """A set of tool definitions with deterministic, sorted indexes.

    `by_name`, `by_category` and `by_action` are read-only maps rebuilt on each
    registration, sorted by key and, within a key, by tool name.
    """

    def __init__(self, tools: Iterable[Registrable] = ()) -> None:
        self._tools: dict[str, ToolDefinition] = {}
        self.by_name: Mapping[str, ToolDefinition] = MappingProxyType({})
        self.by_category: Mapping[str, tuple[str, ...]] = MappingProxyType({})
        self.by_action: Mapping[str, tuple[str, ...]] = MappingProxyType({})
        self.version = 0
        # Live catalogs are swapped from other threads (refreshed servers, watched tool folders).
        self._lock = threading.RLock()
        self.register(*tools)

    def register(self, *items: Registrable) -> None:
        """Add tools (definitions or @tool functions). All or nothing.

        Raises:
            RegistrationError: listing every problem in every item; nothing was added.
        """
        self.replace((), items)

    def replace(self, remove: Iterable[str], add: Iterable[Registrable] = ()) -> None:
        """Swap a group of tools in one step (a refreshed server): drop `remove`, then add `add`.

        All or nothing, one new version; readers never see the group half-swapped.

        Raises:
            RegistrationError: listing every problem in every item; nothing changed.
        """
        problems: list[str] = []
        built: list[ToolDefinition] = []
        for item in add:
            if isinstance(item, ToolDefinition):
                found = [] if item in _CHECKED else definition_problems(item)
                definition = None if found else item
            elif callable(item):
                definition, found = definition_from_function(item)
            else:
                definition, found = (
                    None,
                    [f"{repr(item)[:60]}: neither a ToolDefinition nor an @tool function"],
                )
            problems.extend(found)
            if definition is not None:
                built.append(definition)
        gone = set(remove)
        with self._lock:
            tools = {name: d for name, d in self._tools.items() if name not in gone}
            counts = Counter(d.name for d in built)
            for name, n in sorted(counts.items()):
                if n > 1:
                    problems.append(f"{name}: defined {n} times")
                elif name in tools:
                    problems.append(f"{name}: already registered")
            if problems:
                raise RegistrationError(problems)
            for d in built:
                tools[d.name] = d
                _CHECKED.add(d)
            self._tools = tools
            self._reindex()

    def _reindex(self) -> None:
        ordered = dict(sorted(self._tools.items()))
        by_category: dict[str, list[str]] = {}
        by_action: dict[str, list[str]] = {}
        for name, d in ordered.items():
            by_category.setdefault(d.category, []).append(name)
            by_action.setdefault(d.action, []).append(name)
        self.by_name = MappingProxyType(ordered)
        self.by_category = MappingProxyType({k: tuple(v) for k, v in sorted(by_category.items())})
        self.by_action = MappingProxyType({k: tuple(v) for k, v in sorted(by_action.items())})
        self.version += 1

    def get(self, name: str) -> ToolDefinition | None:
        """The tool named `name`, or None (policy is not applied here: `Gateway.visible` does)."""
        return self._tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[ToolDefinition]:
        return iter(self.by_name.values())

    def __len__(self) -> int:
        return len(self._tools)

    def merge(self, other: Catalog) -> None:
        """Add every tool of another catalog (all or nothing).

        Its tools were checked as it took them, so only names that clash are looked for: a catalog of
        tens of thousands of tools is taken in one step, not tool by tool.

        Raises:
            RegistrationError: every name both catalogs hold; nothing changed.
        """
        with other._lock:
            theirs = dict(other._tools)
            maps = (other.by_name, other.by_category, other.by_action)
        with self._lock:
            if not self._tools:  # the first catalog of a gateway: its checked maps are taken as they are
                self._tools = theirs
                self.by_name, self.by_category, self.by_action = maps
                self.version += 1
                return
            clashes = sorted(name for name in theirs if name in self._tools)
            if clashes:
                raise RegistrationError([f"{name}: already registered" for name in clashes])
            self._tools = {**self._tools, **theirs}
            self._reindex()
