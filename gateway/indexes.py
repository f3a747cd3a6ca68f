"""The search indexes a gateway ranks with: the catalog's own, and a few over narrower visible sets.

Every step of ranking sees only the tools a principal may see (their words, their statistics,
whether anything matched and how many did). A principal who sees every tool shares the catalog's
index; others get an index of their own visible set, kept for the few sets in use.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Literal

from .definition import ToolDefinition
from .search import SearchIndex, dense_available, semantic_available

MAX_PARTIAL_INDEXES = 8  # indexes of visible sets narrower than the catalog, kept at once


class Indexes:
    """The catalog's index, rebuilt when the catalog changes, and the last few narrower ones.

    Args:
        cache_dir: where the index of a large catalog is cached (None: the user's cache directory;
            False: never cached). See `SearchIndex.load_or_build`.
        dense: rank with the sentence encoder's layer too (None: decided by the first search, when
            the `dense` extra is installed).
    """

    def __init__(self, cache_dir: str | os.PathLike[str] | Literal[False] | None, dense: bool | None) -> None:
        self.cache_dir = cache_dir
        self.dense = dense
        self.dense_background = True
        """Encode a large catalog's dense vectors in the background when none are cached (a one-shot
        command turns it off: it would end before they are ready; `gateway index` encodes them)."""
        self._whole: tuple[int, SearchIndex] | None = None
        # id of a visible tuple -> (that tuple, its names, the index of those tools)
        self._partial: dict[int, tuple[tuple[ToolDefinition, ...], tuple[str, ...], SearchIndex]] = {}

    def whole(self, tools: Iterable[ToolDefinition], version: int) -> SearchIndex:
        """The index of every tool of the catalog at `version`."""
        if self._whole is None or self._whole[0] != version:
            self._whole = (version, self.build(tools))
            self._partial.clear()
        return self._whole[1]

    def narrower(self, visible: tuple[ToolDefinition, ...]) -> SearchIndex:
        """The index of `visible`, a set narrower than the catalog (kept for the few sets in use)."""
        # `visible` is the same tuple for the same principal and catalog: found by identity first.
        found = self._partial.pop(id(visible), None)
        if found is None or found[0] is not visible:
            names = tuple(d.name for d in visible)
            same = next((f for f in self._partial.values() if f[1] == names), None)
            found = (visible, names, same[2] if same is not None else self.build(visible))
        self._partial[id(visible)] = found  # most recently used last
        while len(self._partial) > MAX_PARTIAL_INDEXES:
            del self._partial[next(iter(self._partial))]
        return found[2]

    def build(self, tools: Iterable[ToolDefinition]) -> SearchIndex:
        """The search index of `tools`: from the disk cache when their text is unchanged, else built (and cached)."""
        if self.dense is None:  # the first search decides: without a search, no model is loaded
            self.dense = semantic_available() and dense_available()
        background = self.dense_background
        if self.cache_dir is False:
            return SearchIndex(tools, dense=self.dense, dense_background=background)
        # A large catalog's index comes from the disk cache when its text is unchanged.
        return SearchIndex.load_or_build(tools, self.cache_dir, dense=self.dense, dense_background=background)
