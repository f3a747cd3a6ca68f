"""The OAuth scopes a selection of Google APIs needs, worked out from their discovery documents.

Each discovery method lists the scopes any one of which authorises it. For the APIs named in
`[google_apis] apis`, `scopes = "auto"` asks at sign-in for the fewest scopes that authorise every one
of their methods, `"read"` for the fewest read-only scopes that authorise their read-only methods
(a write, or one of the few reads that only a broader scope authorises, is then refused before it is
sent, naming the scope it needs), and `"none"` for nothing beyond `[google] extra_scopes`. The whole surface (no `apis` list) adds nothing automatically: a consent screen asking
for hundreds of scopes helps no one, so those operators pick theirs with `extra_scopes`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from .methods import Method

ScopeMode = Literal["auto", "read", "none"]

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
_READ_ONLY = re.compile(r"[._-]read[-_]?only$")


def is_read_only_scope(scope: str) -> bool:
    """`drive.readonly`, `cloud-platform.read-only`, `devstorage.read_only`: Google spells it three ways."""
    return _READ_ONLY.search(scope) is not None


def covering_scopes(methods: Iterable[Method], *, read_only: bool = False) -> list[str]:
    """The fewest scopes such that every method has one of them.

    With `read_only`, only read-only methods and read-only scopes count: a read that only a broader
    scope authorises stays uncovered rather than widen the grant.

    Greedy set cover, API by API, so that each API is covered by its own scopes: the scope that
    authorises the most methods still uncovered is taken first; on a tie a scope of the API itself
    beats `cloud-platform` (which authorises every Cloud API), then the spelling decides (the result
    never depends on the order the methods come in).
    """
    by_api: dict[str, list[frozenset[str]]] = {}
    for m in methods:
        if read_only and not m.read_only:
            continue
        scopes = frozenset(s for s in m.scopes if not read_only or is_read_only_scope(s))
        if scopes:
            by_api.setdefault(m.api.name, []).append(scopes)
    chosen: list[str] = []
    for api in sorted(by_api):
        pending = by_api[api]
        while pending:
            counts = Counter(s for scopes in pending for s in scopes)
            best = min(
                counts,
                key=lambda s: (-counts[s], s.startswith(CLOUD_PLATFORM), s),
            )
            if best not in chosen:
                chosen.append(best)
            pending = [scopes for scopes in pending if best not in scopes]
    return chosen


def selection_scopes(methods: Iterable[Method], mode: ScopeMode, *, selected: bool) -> list[str]:
    """The scopes to ask for at sign-in for the served methods (nothing unless `selected`: an `apis` list)."""
    if mode == "none" or not selected:
        return []
    return covering_scopes(methods, read_only=mode == "read")
