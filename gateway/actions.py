"""The action vocabulary: the small set of verbs every tool's own verb maps onto.

Filtering by action lets a model ask for "every tool that deletes something" without
knowing how each service spells it.
"""

from __future__ import annotations

from typing import Final

ACTIONS: Final[dict[str, str]] = {
    "search": "find items matching a query",
    "list": "enumerate items in a container",
    "read": "fetch one item or a value",
    "create": "make a new item",
    "update": "change an existing item",
    "delete": "remove an item, usually for good",
    "send": "deliver something to someone else",
    "execute": "run an operation that fits no other verb",
}

_VERBS: Final[dict[str, str]] = {
    # search
    "search": "search",
    "find": "search",
    "query": "search",
    "lookup": "search",
    "look_up": "search",
    "filter": "search",
    "match": "search",
    # list
    "list": "list",
    "enumerate": "list",
    "browse": "list",
    "show": "list",
    "aggregated_list": "list",
    # read
    "read": "read",
    "get": "read",
    "fetch": "read",
    "view": "read",
    "describe": "read",
    "inspect": "read",
    "download": "read",
    "export": "read",
    "check": "read",
    "status": "read",
    "watch": "read",
    # create
    "create": "create",
    "add": "create",
    "insert": "create",
    "new": "create",
    "make": "create",
    "schedule": "create",
    "import": "create",
    "upload": "create",
    "draft": "create",
    "copy": "create",
    "quick_add": "create",
    "quickadd": "create",
    "register": "create",
    "generate": "create",
    # update
    "update": "update",
    "patch": "update",
    "edit": "update",
    "modify": "update",
    "change": "update",
    "set": "update",
    "rename": "update",
    "move": "update",
    "mark": "update",
    "label": "update",
    "archive": "update",
    "complete": "update",
    "replace": "update",
    "reschedule": "update",
    "restore": "update",
    "untrash": "update",
    "enable": "update",
    "disable": "update",
    # delete
    "delete": "delete",
    "remove": "delete",
    "erase": "delete",
    "destroy": "delete",
    "purge": "delete",
    "clear": "delete",
    "trash": "delete",
    "empty_trash": "delete",
    "batch_delete": "delete",
    "cancel": "delete",
    "obliterate": "delete",
    "drop": "delete",
    "revoke": "delete",
    # send
    "send": "send",
    "reply": "send",
    "forward": "send",
    "post": "send",
    "publish": "send",
    "notify": "send",
    "invite": "send",
    "share": "send",
    "email": "send",
    "message": "send",
    # execute
    "execute": "execute",
    "run": "execute",
    "start": "execute",
    "stop": "execute",
    "call": "execute",
    "invoke": "execute",
    "compute": "execute",
    "calculate": "execute",
    "convert": "execute",
    "translate": "execute",
    "batch": "execute",
}


def normalize_action(verb: str) -> str | None:
    """Map a tool's own verb ('insert', 'quickAdd', 'Remove') onto the vocabulary, or None."""
    key = verb.strip().replace("-", "_").replace(" ", "_")
    key = "".join(f"_{c.lower()}" if c.isupper() else c for c in key).strip("_")
    if key in ACTIONS:
        return key
    return _VERBS.get(key)
