"""Reading an OpenAPI description: JSON or YAML, 3.0 or 3.1, its content hash, and its references.

A description is refused whole only when nothing can be served from it (not JSON or YAML, not an
OpenAPI 3 document, Swagger 2.0, no paths) or when reading it could exhaust the gateway (larger
than `MAX_DESCRIPTION_BYTES`, nested deeper than `MAX_DEPTH`, YAML aliases that expand past
`MAX_ALIAS_NODES`); a broken part (a dangling `$ref`, an invalid schema
keyword) is a `Problem` of the spec, with its JSON pointer, and the gateway works around it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..errors import UserError

MAX_DESCRIPTION_BYTES = 64 * 1024 * 1024
"""A larger description is refused (GitHub's, among the largest published, is 13 MB)."""
MAX_DEPTH = 100
"""Nesting a description may have (published ones nest at most 31 levels)."""
MAX_ALIAS_NODES = 100_000
"""Nodes YAML aliases may add to a description once expanded (a "billion laughs" adds billions)."""
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
SWAGGER_ADVICE = (
    "Swagger 2.0 is not served: convert it to OpenAPI 3 first, e.g. with "
    "`npx swagger2openapi SPEC -o openapi.json` (or the converter of your API's publisher)"
)


class SpecError(UserError):
    """The description cannot be served at all (the operator's to fix)."""


@dataclass(frozen=True)
class Problem:
    """Something wrong in the description, where it is, and what the gateway does about it."""

    pointer: str
    message: str
    action: str

    def as_dict(self) -> dict[str, str]:
        return {"pointer": self.pointer, "message": self.message, "action": self.action}


class Dangling(Exception):
    """A `$ref` whose target is not in the document."""

    def __init__(self, ref: str, reason: str) -> None:
        self.ref = ref
        self.reason = reason
        super().__init__(f"{ref}: {reason}")


def read_bytes(path: Path) -> bytes:
    """Raises: SpecError: unreadable, or larger than `MAX_DESCRIPTION_BYTES`."""
    try:
        size = path.stat().st_size
        data = path.read_bytes() if size <= MAX_DESCRIPTION_BYTES else b""
    except OSError as exc:
        raise SpecError(f"cannot read the OpenAPI description {path}: {exc.strerror or exc}") from None
    _check_size(data, path, size)
    return data


def _check_size(data: bytes, path: Path, size: int = 0) -> None:
    if max(size, len(data)) > MAX_DESCRIPTION_BYTES:
        raise SpecError(
            f"{path} is larger than {MAX_DESCRIPTION_BYTES:,} bytes, the most the gateway reads of a description"
        )


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse(data: bytes, path: Path) -> dict[str, Any]:
    """The document as JSON data (YAML's dates stay strings, its keys become strings).

    Raises:
        SpecError: neither JSON nor YAML, or not a mapping.
    """
    _check_size(data, path)
    head = data.lstrip()[:1]
    try:
        if head in (b"{", b"["):
            doc: Any = json.loads(data)
            _check_depth(doc, path)
        else:
            doc = _yaml(data, path)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path} is not valid JSON or YAML: {str(exc)[:300]}") from None
    except RecursionError:
        raise SpecError(_too_deep(path)) from None
    if not isinstance(doc, dict):
        raise SpecError(f"{path} is not an OpenAPI description (its top level is not a mapping)")
    return doc


def _too_deep(path: Path) -> str:
    return f"{path} nests deeper than {MAX_DEPTH} levels; the gateway does not read it"


def _check_depth(doc: Any, path: Path) -> None:
    """Raises: SpecError: nested deeper than `MAX_DEPTH` (level by level: no recursion)."""
    level, depth = [doc], 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            raise SpecError(_too_deep(path))
        level = [
            v
            for node in level
            for v in (node.values() if isinstance(node, dict) else node)
            if isinstance(v, dict | list)
        ]


def _check_aliases(doc: Any, path: Path) -> None:
    """YAML aliases share one object; copying them out (`_string_keys`) repeats it, so a few
    hundred bytes of nested aliases ("billion laughs") would make billions of nodes. This counts the
    nodes the aliases add, without expanding them.

    Raises:
        SpecError: aliases add more than `MAX_ALIAS_NODES`, refer to themselves, or nest too deep.
    """
    sizes: dict[int, int] = {}  # a container's size with every alias in it expanded
    open_: set[int] = set()
    written = 0  # nodes as the document writes them: each container and its scalars once

    def size(node: Any, depth: int) -> int:
        nonlocal written
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_:
            raise SpecError(f"{path}: a YAML alias refers to itself; the gateway does not read it")
        if depth > MAX_DEPTH:
            raise SpecError(_too_deep(path))
        open_.add(key)
        keys = len(node) if isinstance(node, dict) else 0
        total = 1 + keys
        for child in node.values() if isinstance(node, dict) else node:
            if isinstance(child, dict | list):
                total += size(child, depth + 1)
            else:
                total += 1
                written += 1
        written += 1 + keys
        open_.discard(key)
        sizes[key] = total
        if total - written > MAX_ALIAS_NODES:
            raise SpecError(
                f"{path}: its YAML aliases expand to more than {MAX_ALIAS_NODES:,} further nodes (an alias "
                "bomb); the gateway does not read it"
            )
        return total

    if isinstance(doc, dict | list):
        size(doc, 1)


def _yaml(data: bytes, path: Path) -> Any:
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class _Loader(base):  # type: ignore[misc]
        """Safe loading, with timestamps kept as the strings JSON would have."""

    _Loader.yaml_implicit_resolvers = {
        key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for key, resolvers in base.yaml_implicit_resolvers.items()
    }
    try:
        loaded = yaml.load(data, Loader=_Loader)  # a safe loader, without timestamps
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None
    _check_aliases(loaded, path)
    return _string_keys(loaded)


def _string_keys(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): _string_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_string_keys(v) for v in node]
    return node


def version_of(doc: dict[str, Any], path: Path) -> str:
    """'3.0' or '3.1'.

    Raises:
        SpecError: Swagger 2.0 (with how to convert it), another version, or no paths.
    """
    if "swagger" in doc:
        raise SpecError(f"{path} is Swagger {doc.get('swagger')}. {SWAGGER_ADVICE}")
    raw = str(doc.get("openapi", ""))
    if raw.startswith("3.0"):
        version = "3.0"
    elif raw.startswith("3.1"):
        version = "3.1"
    else:
        found = f"'openapi: {raw}'" if raw else "no 'openapi' version field"
        raise SpecError(f"{path} is not an OpenAPI 3.0 or 3.1 description ({found})")
    if not isinstance(doc.get("paths"), dict) or not doc["paths"]:
        raise SpecError(f"{path} describes no operations (its 'paths' are missing or empty)")
    return version


def pointer(*parts: object) -> str:
    """A JSON pointer in URI fragment form: '#/paths/~1repos~1{owner}/get'."""
    escaped = (str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    return "#/" + "/".join(escaped) if parts else "#"


def resolve(doc: dict[str, Any], ref: object) -> Any:
    """The target of a local `$ref` ('#/components/schemas/Pet').

    Raises:
        Dangling: not a string, not local (another file or a URL), or nothing there.
    """
    if not isinstance(ref, str):
        raise Dangling(str(ref), "the reference is not a string")
    if not ref.startswith("#"):
        raise Dangling(ref, "references to other files or URLs are not followed")
    node: Any = doc
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise Dangling(ref, "nothing in the document has this pointer")
    return node


def follow(doc: dict[str, Any], node: Any, limit: int = 16) -> tuple[Any, list[str]]:
    """A node with its `$ref` chain followed (parameters, request bodies); the refs passed through.

    Raises:
        Dangling: a reference in the chain is dangling or the chain loops.
    """
    seen: list[str] = []
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen or len(seen) >= limit:
            raise Dangling(str(ref), "the reference refers to itself")
        seen.append(ref)
        node = resolve(doc, ref)
    return node, seen


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(path, method, operation, path item) for every operation, in the document's order."""
    for path, raw in doc.get("paths", {}).items():
        try:
            item, _ = follow(doc, raw)
        except Dangling:
            continue
        if not isinstance(item, dict):
            continue
        for method in HTTP_METHODS:
            op = item.get(method)
            if isinstance(op, dict):
                yield str(path), method, op, item
