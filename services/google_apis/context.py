"""What a discovery document says around a method, for search: its API, its resources, its schemas.

A method's own text rarely uses the words of the people who ask for it: `compute.instances.start`
"Starts an instance that was stopped", while they ask to "start a stopped virtual machine". The
document says it elsewhere: the API's title and description ("Creates and runs virtual machines"),
the resources the method sits in, and the description of the resource's schema ("An instance is a
virtual machine") and of the schemas the method takes and returns. `Context.of` gathers that text;
the catalog indexes it at a lower weight than the method's own words (see `provider.definition`).

The resource's schema is what its `get` method returns (else the schema named after the resource,
`instances` -> `Instance`). Schemas that say nothing about one resource are left out: the ones used by
methods of three resources or more (`Operation`, `Policy`) and the well-known generic ones (`Empty`,
long-running operations, IAM requests), whatever their use.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from gateway.rendering import cut

from . import text

MAX_PART = 300
"""Each description (the API's, a schema's) is cut here: its first sentences say what it is."""
SHARED_BY = 3
"""A schema taken or returned by methods of this many resources is not about any one of them."""
_GENERIC = re.compile(  # bare or in Google's shared packages (GoogleIamV1Policy); not AlertPolicy
    r"^(?:Google(?:Iam|Longrunning|Protobuf|Rpc)(?:V\d+)?)?(?:Empty|Operation|Status|Policy"
    r"|(?:Set|Get)IamPolicyRequest|TestIamPermissions(?:Request|Response)|ListOperationsResponse)$"
)


class Context:
    """The text around each method of one document (descriptions cleaned once per schema)."""

    def __init__(
        self,
        doc: dict[str, Any],
        title: str,
        known: frozenset[str],
        methods: Iterable[tuple[tuple[str, ...], dict[str, Any]]],
    ) -> None:
        self._known = known
        self._schemas: dict[str, Any] = doc.get("schemas") or {}
        self._described: dict[str, str] = {}
        self._around: dict[tuple[str, ...], str] = {}
        users: defaultdict[str, set[tuple[str, ...]]] = defaultdict(set)
        self._getters: dict[tuple[str, ...], str] = {}
        for path, method in methods:
            for key in ("request", "response"):
                ref = _ref(method.get(key))
                if ref:
                    users[ref].add(path[:-1])
            if path[-1] == "get" and _ref(method.get("response")):
                self._getters[path[:-1]] = _ref(method.get("response"))
        self._generic = {name for name, where in users.items() if len(where) >= SHARED_BY}
        self.api = " ".join(filter(None, (title, _plain(doc.get("description"), known))))
        """The API's title and description: the same for every method of the document."""

    def of(self, path: tuple[str, ...], method: dict[str, Any]) -> str:
        """The API's, the resources' and the schemas' text for the method at `path`."""
        resource = path[:-1]
        around = self._around.get(resource)
        if around is None:
            words = " ".join(resource)
            around = self._around[resource] = " ".join(
                filter(None, (self.api, words, self._description(self._resource_schema(resource))))
            )
        own = [self._description(_ref(method.get(key))) for key in ("request", "response")]
        extra = [part for part in dict.fromkeys(own) if part and part not in around]
        return " ".join((around, *extra))

    def _resource_schema(self, resource: tuple[str, ...]) -> str:
        if not resource:
            return ""
        found = self._getters.get(resource)
        if found:
            return found
        key = resource[-1]
        singular = re.sub(r"ies$", "y", key) if key.endswith("ies") else re.sub(r"(?<!s)s$", "", key)
        name = singular[:1].upper() + singular[1:]
        return name if name in self._schemas else ""

    def _description(self, name: str) -> str:
        if not name or name in self._generic or _GENERIC.search(name):
            return ""
        found = self._described.get(name)
        if found is None:
            schema = self._schemas.get(name)
            raw = schema.get("description") if isinstance(schema, dict) else None
            found = self._described[name] = _plain(raw, self._known)
        return found


def _plain(raw: Any, known: frozenset[str]) -> str:
    cleaned = text.clean(raw if isinstance(raw, str) else None, known)
    return cut(" ".join(cleaned.split()), MAX_PART)


def _ref(node: Any) -> str:
    ref = node.get("$ref") if isinstance(node, dict) else None
    return ref if isinstance(ref, str) else ""
