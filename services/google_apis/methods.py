"""One catalog entry per discovery method: its name, action, flags, summary and search words.

- Name: the method id with '.' as '_' and camelCase split, through `gateway.names.to_name`
  (`calendar.events.quickAdd` -> `calendar_events_quick_add`). A name over 64 characters keeps the API,
  the innermost resources and the verb, plus a hash of the whole id (`tool_name`). A version other than
  its family's default is named after the API (`compute_beta_instances_insert`). Two methods with one
  name (the same id in two documents, e.g. webmasters' methods inside searchconsole) are told apart by
  API and version; the API the id starts with keeps the plain name (`assign_names`).
- Action: the method's verb (`insert`, `getIamPolicy`, `batchDelete`) mapped onto the vocabulary;
  the raw verb is kept.
- Flags: GET is read-only; DELETE and verbs such as delete, clear, trash, emptyTrash, batchDelete, purge
  and obliterate are destructive; every other method is a write.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from gateway.actions import normalize_action
from gateway.names import MAX_NAME_LENGTH, to_name
from gateway.rendering import cut

from . import text
from .context import Context
from .documents import DocumentRef

DESTRUCTIVE_WORDS = frozenset(
    ("delete", "clear", "trash", "purge", "obliterate", "erase", "destroy", "wipe", "remove", "send")
)
"""A write whose verb has one of these words is destructive (it needs the user's confirmation): what
it does cannot be taken back, and a sent message least of all (`gmail.users.messages.send`)."""

# Verbs of the long tail the shared vocabulary does not know, as Google uses them.
_MORE_VERBS = {
    "undelete": "update",
    "mutate": "update",
    "resize": "update",
    "upgrade": "update",
    "rollback": "update",
    "activate": "update",
    "deactivate": "update",
    "approve": "update",
    "reject": "update",
    "write": "update",
    "wait": "read",
    "submit": "send",
    "subscribe": "create",
    "unsubscribe": "delete",
    "resume": "execute",
    "pause": "execute",
    "complete_query": "search",
    "autocomplete": "search",
    "custombatch": "execute",
}
_MODIFIERS = frozenset(("batch", "bulk", "async", "custom"))
_BY_HTTP = {"GET": "read", "DELETE": "delete", "PUT": "update", "PATCH": "update"}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")

MEDIA_UPLOAD = "upload"
MEDIA_DOWNLOAD = "download"
MEDIA_DOWNLOAD_ONLY = "download_only"
"""The method answers with file content only (no JSON): listed, but refused when called."""

MEDIA_NOTES = {
    MEDIA_UPLOAD: "Uploading file content is not supported here: only the request's metadata is sent.",
    MEDIA_DOWNLOAD: "Downloading file content is not supported here: the call returns the item's metadata.",
    MEDIA_DOWNLOAD_ONLY: "Not callable here: its result is file content, which the gateway does not download.",
}


@dataclass(frozen=True, slots=True)
class Api:
    """One discovery document served as tools."""

    name: str
    version: str
    title: str
    category: str
    default: bool
    """Whether this is the newest stable version of its family (the one served by default)."""

    @property
    def ref(self) -> DocumentRef:
        return DocumentRef(self.name, self.version)


class Method(NamedTuple):
    """Everything the catalog knows about one method without reading its document again.

    A named tuple rather than a dataclass: fourteen thousand of them are made at every start.
    """

    name: str
    api: Api
    method_id: str
    path: tuple[str, ...]
    """The discovery keys of its resources, then its own key: ("events", "insert")."""
    verb: str
    action: str
    http_method: str
    url: str
    summary: str
    description: str
    search_text: str
    """Its parameters' names and the names of the schemas it takes and returns."""
    context: str
    """What its document says around it: the API, the resources, their schemas (`context.py`)."""
    read_only: bool
    destructive: bool
    media: str
    scopes: tuple[str, ...]
    required: tuple[str, ...]
    """Its required parameters' names, as its params model names them: what search reads of the
    schema without building it (`ToolDefinition.required_params`)."""


def required_parameters(method: dict[str, Any]) -> tuple[str, ...]:
    """The keys of a method's required parameters, the names its params model gives them (aliases):
    `params.ParamsFactory.model` makes each `required` parameter a required field, and the body
    optional."""
    parameters = method.get("parameters") or {}
    return tuple(k for k, p in parameters.items() if isinstance(p, dict) and p.get("required"))


def words(identifier: str) -> list[str]:
    """Lowercase words of a camelCase or dashed identifier."""
    return [w.lower() for w in _WORD.findall(identifier)]


def action_for(verb: str, http_method: str) -> str:
    """The vocabulary action of a verb: the verb itself, without batch/bulk, its first or last word,
    else what its HTTP method says."""
    parts = words(verb)
    while len(parts) > 1 and parts[0] in _MODIFIERS:
        parts = parts[1:]
    for candidate in (verb, "_".join(words(verb)), "_".join(parts), *parts[:1], *parts[-1:]):
        found = normalize_action(candidate) or _MORE_VERBS.get(candidate)
        if found:
            return found
    return _BY_HTTP.get(http_method, "execute")


def is_destructive(verb: str, http_method: str) -> bool:
    return http_method != "GET" and (http_method == "DELETE" or not DESTRUCTIVE_WORDS.isdisjoint(words(verb)))


def _media(method: dict[str, Any]) -> str:
    if method.get("supportsMediaDownload"):
        return MEDIA_DOWNLOAD if "response" in method else MEDIA_DOWNLOAD_ONLY
    if method.get("supportsMediaUpload"):
        return MEDIA_UPLOAD
    return ""


def _walk(
    node: dict[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    for key, method in sorted(node.get("methods", {}).items()):
        yield (*path, key), method
    for key, resource in sorted(node.get("resources", {}).items()):
        yield from _walk(resource, (*path, key))


def find(doc: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The description of the method at `path` in a document."""
    node = doc
    for key in path[:-1]:
        node = node["resources"][key]
    method: dict[str, Any] = node["methods"][path[-1]]
    return method


def api_of(ref: DocumentRef, doc: dict[str, Any], default: bool) -> Api:
    title = text.clean(doc.get("title")) or ref.name
    return Api(ref.name, ref.version, title, to_name(ref.name), default)


def methods_of(api: Api, doc: dict[str, Any], *, context: bool = True) -> list[Method]:
    """Every method of a document, named provisionally (`assign_names` makes names unique).

    Without `context`, a method's search words are its own only (the catalog as it was indexed before
    the text around a method was added; `benchmarks.google_apis --requests` compares both).
    """
    found = []
    known = text.identifiers(doc)
    walked = list(_walk(doc))
    around = Context(doc, api.title, known, walked) if context else None
    for path, m in walked:
        method_id = m.get("id") or ".".join((api.name, *path))
        verb = path[-1]
        http_method = str(m.get("httpMethod", "GET")).upper()
        where = ".".join(path[:-1]) or api.name
        described = text.cleaned(m.get("description"), known)
        description = described.text
        fallback = f"Calls {verb} on {where} ({api.title})."
        media = _media(m)
        long = cut(description, text.MAX_DESCRIPTION) or fallback
        if media:
            long = f"{long} {MEDIA_NOTES[media]}"
        schemas = [m.get(k, {}).get("$ref", "") for k in ("request", "response")]
        found.append(
            Method(
                name=tool_name(method_id, None if api.default else api.version),
                api=api,
                method_id=method_id,
                path=path,
                verb=verb,
                action=action_for(verb, http_method),
                http_method=http_method,
                url=str(m.get("flatPath") or m.get("path", "")),
                summary=text.summary(described, fallback),
                description=long,
                search_text=" ".join([*sorted(m.get("parameters", {})), *filter(None, schemas)]),
                context=around.of(path, m) if around else "",
                read_only=http_method == "GET",
                destructive=is_destructive(verb, http_method),
                media=media,
                scopes=tuple(m.get("scopes", ())),
                required=required_parameters(m),
            )
        )
    return found


def tool_name(method_id: str, version: str | None = None) -> str:
    """The method id as a tool name; a version that is not its family's default goes after the API.

    A name over 64 characters keeps the API, the verb and as many of the innermost resources as fit
    (they say most: `projects_locations` says little), plus a hash of the whole id, so it stays unique.
    """
    segments = method_id.split(".")
    if version:
        segments[0] = f"{segments[0]}.{version}"
    parts = [to_name(segment) for segment in segments]
    if len("_".join(parts)) <= MAX_NAME_LENGTH or len(parts) < 2:
        return to_name(".".join(segments))
    head, *middle, verb = segments
    first, last = to_name(head), to_name(verb)
    digest = hashlib.sha256(f"{method_id}/{version or ''}".encode()).hexdigest()[:8]
    budget = MAX_NAME_LENGTH - len(first) - len(last) - len(digest) - 3
    inner = to_name(".".join(middle)) if middle else ""
    if budget < len(inner):
        start = len(inner) - budget
        if budget <= 0:
            inner = ""
        elif inner[start - 1] == "_":
            inner = inner[start:]
        else:  # whole words only
            inner = inner[start:].partition("_")[2]
    shortened = "_".join(p for p in (first, inner, last, digest) if p)
    if len(shortened) <= MAX_NAME_LENGTH:
        return shortened
    return to_name(".".join(segments))  # a very long verb: the head and a hash


def assign_names(methods: list[Method]) -> list[Method]:
    """The same methods with unique names; deterministic whatever the input order."""
    groups: dict[str, list[Method]] = {}
    for m in methods:
        groups.setdefault(m.name, []).append(m)
    named: dict[tuple[str, str, str], str] = {}
    taken = set(groups)  # a new name must not take one a later group has
    for name, group in sorted(groups.items()):
        if len(group) == 1:
            named[_key(group[0])] = name
            continue
        # The API the id belongs to (its first word) keeps the name; the default version before others.
        ranked = sorted(
            group, key=lambda m: (m.method_id.split(".")[0] != m.api.name, not m.api.default, _key(m))
        )
        named[_key(ranked[0])] = name
        for m in ranked[1:]:
            candidate = to_name(f"{m.method_id}.{m.api.name}.{m.api.version}")
            if candidate in taken:
                candidate = _hashed(candidate, "/".join(_key(m)))
            taken.add(candidate)
            named[_key(m)] = candidate
    return [_renamed(m, named[_key(m)]) for m in methods]


def _key(m: Method) -> tuple[str, str, str]:
    return (m.api.name, m.api.version, ".".join(m.path))


def _hashed(name: str, key: str) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME_LENGTH - 9].rstrip('_')}_{digest}"


def _renamed(m: Method, name: str) -> Method:
    return m if m.name == name else m._replace(name=name)
