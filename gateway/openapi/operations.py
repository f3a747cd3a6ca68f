"""One catalog entry per operation: its name, category, action, flags, summary and search words.

- Name: the `operationId` (else the method and path) made a tool name by `gateway.names.to_name`, after
  the entry's name (`pulls/merge` in the `github` entry is `github_pulls_merge`), at most 64 characters
  (a longer one ends with a hash of the whole id). Two operations with one name (duplicate or
  near-duplicate ids) are told apart by a hash of their method and path; the first keeps the plain name.
  Names depend on the description only, never on the filters, so they are stable.
- Category: the entry's name and the operation's first tag (`github_pulls`); without a tag, the first
  segment of its path.
- Action: the operation id's verb (`merge`, `list-for-org`, `getTasksForProject`) mapped onto the
  vocabulary, else the HTTP method (GET on a collection lists, POST creates, ...). An id that starts
  with `post` (`PostCustomers`, `chat.postMessage`) is read without it (post is not "send" there).
- Description: the summary, which is what discovery ranks (a whole reference text in the ranked
  description buried the operation a request names); the operation's description is kept as
  `details`, shown with the schema.
- Flags are set by the provider from the method (see `provider.flags`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from ..actions import normalize_action
from ..names import MAX_NAME_LENGTH, to_name
from ..rendering import cut
from . import text
from .document import Problem, operations, pointer

SAFE_METHODS = frozenset(("GET", "HEAD", "OPTIONS"))
"""HTTP's safe methods: served as read-only, retried on 429 and 503."""

# REST verbs the shared vocabulary does not know.
_MORE_VERBS = {
    "merge": "update",
    "lock": "update",
    "unlock": "update",
    "close": "update",
    "reopen": "update",
    "approve": "update",
    "reject": "update",
    "assign": "update",
    "dismiss": "update",
    "transition": "update",
    "upsert": "update",
    "put": "update",
    "retrieve": "read",
    "count": "read",
    "exists": "read",
    "download": "read",
    "unassign": "delete",
    "unfollow": "delete",
    "unstar": "delete",
    "unsubscribe": "delete",
    "subscribe": "create",
    "follow": "create",
    "star": "create",
    "refund": "create",
    "capture": "execute",
    "confirm": "execute",
    "rerun": "execute",
    "retry": "execute",
    "trigger": "execute",
    "dispatch": "execute",
    "test": "execute",
    "ping": "execute",
}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")


class Operation(NamedTuple):
    """What the catalog needs of one operation before any call."""

    name: str
    operation_id: str
    method: str
    path: str
    tags: tuple[str, ...]
    category: str
    action: str
    verb: str
    summary: str
    details: str
    """The operation's description (cleaned, cut): shown with its schema, not searched."""
    search_text: str
    server: str
    """The operation's or its path's own first server URL, when it has one."""
    required: tuple[str, ...] = ()
    """Its params model's required properties (`params.layout`, before the gateway hides a key it
    fills in itself): what search reads of the schema without building the model."""


def words(identifier: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(identifier)]


def action_for(operation_id: str, method: str, path: str) -> tuple[str, str]:
    """(action, verb): the operation id's first known verb, else what the HTTP method does."""
    segments = [s for s in re.split(r"[/.]", operation_id) if s]
    ordered = [words(s) for s in reversed(segments)] if segments else []
    for part in ordered:
        if part and part[0] == "post" and method == "POST":
            part.pop(0)  # 'PostCustomers', 'postMessage': the method, not "send"
        for i, word in enumerate(part):
            for key in (f"{word}_{part[i + 1]}" if i + 1 < len(part) else "", word):
                found = normalize_action(key) or _MORE_VERBS.get(key) if key else None
                if found:
                    return found, key
    on_item = path.rstrip("/").rsplit("/", 1)[-1].startswith("{")
    if method == "GET":
        return ("read" if on_item else "list"), "get"
    if method == "POST" and on_item:
        return "update", "post"  # POST /customers/{id} changes the item
    fallback = {"POST": "create", "PUT": "update", "PATCH": "update", "DELETE": "delete"}
    return fallback.get(method, "read"), method.lower()


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()[:8]


def _fit(name: str, raw: str) -> str:
    if len(name) <= MAX_NAME_LENGTH:
        return name
    return f"{name[: MAX_NAME_LENGTH - 9].rstrip('_')}_{_hash(raw)}"


def tool_name(entry: str, operation_id: str, method: str, path: str) -> str:
    raw = operation_id or f"{method} {path}"
    base = to_name(re.sub(r"\{([^}]*)\}", r"\1", raw))
    name = base if base == entry or base.startswith(f"{entry}_") else f"{entry}_{base}"
    return _fit(name, raw)


def category_for(entry: str, tags: tuple[str, ...], path: str) -> str:
    static = [s for s in path.split("/") if s and not s.startswith("{")]
    topic = tags[0] if tags else (static[0] if static else "")
    sub = to_name(topic) if topic else ""
    return _fit(f"{entry}_{sub}" if sub and sub != entry else entry, f"{entry} {topic}")


def _server(op: dict[str, Any], item: dict[str, Any]) -> str:
    for node in (op, item):
        servers = node.get("servers")
        if isinstance(servers, list) and servers and isinstance(servers[0], dict):
            return str(servers[0].get("url", ""))
    return ""


def operations_of(entry: str, doc: dict[str, Any]) -> tuple[list[Operation], list[Problem]]:
    """Every operation of a description, uniquely named, and the problems met on the way."""
    found: list[Operation] = []
    problems: list[Problem] = []
    ids: dict[str, str] = {}
    for path, method_lower, op, item in operations(doc):
        method = method_lower.upper()
        where = pointer("paths", path, method_lower)
        if method == "TRACE":
            problems.append(Problem(where, "a TRACE operation", "not served (it can echo credentials)"))
            continue
        operation_id = op.get("operationId")
        if not isinstance(operation_id, str) or not operation_id.strip():
            operation_id = ""
        elif operation_id in ids:
            problems.append(
                Problem(
                    f"{where}/operationId",
                    f"operationId {cut(text.clean(operation_id), 80)!r} is also used at {ids[operation_id]}",
                    "both are served; this one's tool name ends with a hash of its method and path",
                )
            )
        else:
            ids[operation_id] = where
        tags = tuple(str(t) for t in op.get("tags", ()) if isinstance(t, str) and t.strip())
        action, verb = action_for(operation_id, method, path)
        fallback = f"{method} {path}"
        summary = text.summary(op.get("summary") or op.get("description"), fallback)
        long = " ".join(
            dict.fromkeys(filter(None, (text.clean(op.get("summary")), text.clean(op.get("description")))))
        )
        if op.get("deprecated") is True:
            summary = cut(f"Deprecated. {summary}", text.MAX_SUMMARY)
            long = f"Deprecated. {long}"
        details = cut(long, text.MAX_DESCRIPTION)
        # The operation id's words; the path's when there is none. Parameter names, path words and
        # long reference texts made ranking worse on published descriptions (docs/openapi.md).
        search = words(operation_id) or [s for s in path.split("/") if s and not s.startswith("{")]
        found.append(
            Operation(
                name=tool_name(entry, operation_id, method, path),
                operation_id=operation_id,
                method=method,
                path=path,
                tags=tags,
                category=category_for(entry, tags, path),
                action=action,
                verb=verb,
                summary=summary,
                details="" if details == summary else details,
                search_text=cut(text.strip_unsafe(" ".join(search)), 500),
                server=_server(op, item),
            )
        )
    return unique(found), problems


def unique(found: Iterable[Operation]) -> list[Operation]:
    """The operations with unique names: a repeated name gets a hash of its method and path."""
    taken: set[str] = set()
    out = []
    for op in found:
        name = op.name
        if name in taken:
            raw = f"{op.method} {op.path}"
            name = f"{name[: MAX_NAME_LENGTH - 9].rstrip('_')}_{_hash(raw)}"
        taken.add(name)
        out.append(op._replace(name=name))
    return out
