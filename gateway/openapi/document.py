"""Reading an OpenAPI description: JSON or YAML, 3.0 or 3.1, its content hash, and its references.

A description is refused whole only when nothing can be served from it (not JSON or YAML, not an
OpenAPI 3 document, Swagger 2.0, no paths); a broken part (a dangling `$ref`, an invalid schema
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
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SpecError(f"cannot read the OpenAPI description {path}: {exc.strerror or exc}") from None


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse(data: bytes, path: Path) -> dict[str, Any]:
    """The document as JSON data (YAML's dates stay strings, its keys become strings).

    Raises:
        SpecError: neither JSON nor YAML, or not a mapping.
    """
    head = data.lstrip()[:1]
    try:
        if head in (b"{", b"["):
            doc: Any = json.loads(data)
        else:
            doc = _yaml(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path} is not valid JSON or YAML: {str(exc)[:300]}") from None
    if not isinstance(doc, dict):
        raise SpecError(f"{path} is not an OpenAPI description (its top level is not a mapping)")
    return doc


def _yaml(data: bytes) -> Any:
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
