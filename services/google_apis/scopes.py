"""The OAuth scopes a selection of Google APIs needs, worked out from their discovery documents.

Each discovery method lists the scopes any one of which authorises it. For the APIs named in
`[google_apis] apis`, `gateway auth google` asks (with `scopes = "auto"`, the default) for the fewest
scopes that authorise every served method, except full Gmail access (`https://mail.google.com/`),
which only permanent deletion needs and which is asked for only when `[google] allow_permanent_delete`
is on. With `read_only = true` only read-only methods are served, and only read-only scopes are asked
for. `scopes = "none"` asks for nothing beyond `[google] extra_scopes`.

The whole surface (no `apis` list) adds nothing automatically: a consent screen asking for hundreds of
scopes helps no one, so those operators pick theirs with `extra_scopes`. These scopes are asked for at
sign-in only, never required of a token: a call that the token's scopes do not authorise is refused
before it is sent, naming a scope that would.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable
from typing import Literal

from .methods import Method

ScopeMode = Literal["auto", "none"]

CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
FULL_GMAIL = "https://mail.google.com/"
_READ_ONLY = re.compile(r"[._-]read[-_]?only$")


def is_read_only_scope(scope: str) -> bool:
    """`drive.readonly`, `cloud-platform.read-only`, `devstorage.read_only`: Google spells it three ways."""
    return _READ_ONLY.search(scope) is not None


def covering_scopes(
    methods: Iterable[Method], *, read_only: bool = False, withheld: Collection[str] = ()
) -> list[str]:
    """The fewest scopes (greedily) such that every method has one of them.

    With `read_only`, only read-only methods and read-only scopes count. A scope in `withheld` is never
    chosen. Either way a method that no allowed scope authorises stays uncovered rather than widen
    the grant.

    Greedy set cover, API by API (in name order): methods a scope already chosen covers are done;
    then the scope that authorises the most methods still uncovered is taken; on a tie a scope of
    the API itself beats `cloud-platform` (which authorises every Cloud API; it is still taken
    where it covers more), then the spelling decides. The result never depends on the order the
    methods come in.
    """
    by_api: dict[str, list[frozenset[str]]] = {}
    for m in methods:
        if read_only and not m.read_only:
            continue
        scopes = frozenset(
            s for s in m.scopes if s not in withheld and (not read_only or is_read_only_scope(s))
        )
        if scopes:
            by_api.setdefault(m.api.name, []).append(scopes)
    chosen: list[str] = []
    for api in sorted(by_api):
        pending = [scopes for scopes in by_api[api] if scopes.isdisjoint(chosen)]
        while pending:
            counts = Counter(s for scopes in pending for s in scopes)
            best = min(counts, key=lambda s: (-counts[s], s.startswith(CLOUD_PLATFORM), s))
            chosen.append(best)
            pending = [scopes for scopes in pending if best not in scopes]
    return chosen


def selection_scopes(
    methods: Iterable[Method],
    mode: ScopeMode,
    *,
    selected: bool,
    read_only: bool = False,
    allow_permanent_delete: bool = False,
) -> list[str]:
    """The scopes to ask for at sign-in for the served methods (nothing unless `selected`: an `apis` list)."""
    if mode == "none" or not selected:
        return []
    withheld = () if allow_permanent_delete else (FULL_GMAIL,)
    return covering_scopes(methods, read_only=read_only, withheld=withheld)
