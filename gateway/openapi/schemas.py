"""OpenAPI schemas made JSON schemas (draft 2020-12) a validator and a model can use.

- `$ref`s are resolved in place, keeping the description written beside a reference (else the
  target's). A reference to a schema already being expanded (recursion), one more than `MAX_REF_DEPTH`
  references deep, or past the node budget of one schema becomes an open value whose description names
  what it stands for ("A Team object (recursive: not expanded here).").
- A dangling or external reference is the spec's problem, reported with its JSON pointer; it becomes
  an open value described as unresolved.
- `allOf` parts are merged into one schema when they agree (properties, required, one type); parts that
  clash stay an `allOf`. `oneOf`, `anyOf` and `not` are kept. 3.0's `nullable` becomes a type array (3.1
  writes one itself), 3.0's boolean `exclusiveMinimum` the 2020-12 number.
- Descriptions inside referenced schemas are cut to their first sentence (schemas stay small).
- Enums, formats, defaults, bounds and patterns are kept; a keyword whose value is invalid (a pattern
  Python cannot compile, a negative length) is dropped and reported. Properties marked `readOnly` are
  left out of requests. Titles, examples, discriminators and extensions are dropped (tokens for nothing).
"""

from __future__ import annotations

import re
from typing import Any

from ..rendering import cut
from . import text
from .document import Dangling, Problem, pointer, resolve

MAX_REF_DEPTH = 3
"""References expanded inside one another; the next one is an open value with a description."""
NODE_BUDGET = 500
"""Schema nodes expanded for one schema; references past it are open values (huge bodies stay usable)."""
MAX_ENUM = 200
"""An enum longer than this is left out of the schema; the description names a few values."""

_TYPES = frozenset(("string", "number", "integer", "boolean", "array", "object", "null"))
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties")
_NUMBERS = ("minimum", "maximum")
_SINGLE = ("additionalProperties", "not", "propertyNames", "contains", "unevaluatedProperties")
_FIELD_NAME = re.compile(r"^[^\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]{1,200}$")


def _name_of(ref: str) -> str:
    return ref.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~") or "referenced"


def _a(name: str) -> str:
    return f"{'An' if name[:1].lower() in 'aeiou' else 'A'} {name}"


class Converter:
    """Converts the schemas of one description; problems are collected once per pointer."""

    def __init__(self, doc: dict[str, Any], version: str) -> None:
        self.doc = doc
        self.version = version
        self.problems: dict[tuple[str, str], Problem] = {}
        self._nodes = 0

    def problem(self, where: str, message: str, action: str) -> None:
        self.problems.setdefault((where, message), Problem(where, message, action))

    def convert(self, node: Any, where: str) -> dict[str, Any]:
        """The JSON schema of the request-side schema `node` found at `where` (a JSON pointer)."""
        self._nodes = 0
        return self._convert(node, where, ())

    # -- one node ------------------------------------------------------------------------------

    def _convert(self, node: Any, where: str, stack: tuple[str, ...]) -> dict[str, Any]:
        self._nodes += 1
        if node is True or node is None:
            return {}
        if node is False:
            return {"not": {}}
        if not isinstance(node, dict):
            self.problem(where, "a schema that is not an object", "any value is accepted here")
            return {}
        if "$ref" in node:
            return self._reference(node, where, stack)
        out: dict[str, Any] = {}
        self._type(node, where, out)
        self._scalars(node, where, out, brief=bool(stack))
        self._children(node, where, stack, out)
        if "allOf" in node:
            self._all_of(node, where, stack, out)
        for key in ("oneOf", "anyOf"):
            parts = node.get(key)
            if isinstance(parts, list) and parts:
                out[key] = [self._convert(p, f"{where}/{key}/{i}", stack) for i, p in enumerate(parts)]
        if "description" not in out and isinstance(node.get("title"), str):
            described = text.field_description(node["title"])
            if described:
                out["description"] = described
        return out

    def _reference(self, node: dict[str, Any], where: str, stack: tuple[str, ...]) -> dict[str, Any]:
        ref = node["$ref"]
        name = _name_of(str(ref))
        own = text.field_description(node.get("description")) if node.get("description") else ""
        try:
            target = resolve(self.doc, ref)
        except Dangling as exc:
            self.problem(
                f"{where}/$ref",
                f"$ref {cut(text.strip_unsafe(exc.ref), 200)!r} cannot be resolved: {exc.reason}",
                "any value is accepted here; its description says it is unresolved",
            )
            described = own or f"{_a(name)} value (its definition is missing from the API description)."
            return {"description": described}
        if ref in stack or len(stack) >= MAX_REF_DEPTH or self._nodes > NODE_BUDGET:
            why = "recursive" if ref in stack else "nested too deep"
            described = f"{_a(name)} object ({why}: not expanded here)."
            if own:
                described = f"{own} {described}"
            looks_object = isinstance(target, dict) and (
                target.get("type") == "object" or "properties" in target or "allOf" in target
            )
            return (
                {"type": "object", "description": described} if looks_object else {"description": described}
            )
        out = self._convert(target, str(ref), (*stack, str(ref)))
        # Beside a $ref, 3.1 applies the siblings; 3.0 ignores them, but `nullable` there is common intent.
        if node.get("nullable") is True and out.get("type") and "null" not in _types(out):
            out["type"] = [*_types(out), "null"]
        for key in ("default", "readOnly", "writeOnly", "deprecated"):
            if key in node and self.version == "3.1":
                out[key] = node[key]
        if own:
            out = {**out, "description": own}
        return out

    def _type(self, node: dict[str, Any], where: str, out: dict[str, Any]) -> None:
        raw = node.get("type")
        if raw is not None:
            kinds = raw if isinstance(raw, list) else [raw]
            kinds = ["string" if k == "file" else k for k in kinds]
            valid = [k for k in dict.fromkeys(kinds) if isinstance(k, str) and k in _TYPES]
            if len(valid) != len(kinds):
                self.problem(
                    f"{where}/type", f"type {raw!r} is not a JSON schema type", "the type is left out"
                )
            if valid:
                out["type"] = valid[0] if len(valid) == 1 else valid
        if node.get("nullable") is True or node.get("x-nullable") is True:
            if "type" in out:
                out["type"] = [*_types(out), "null"] if "null" not in _types(out) else out["type"]
            if isinstance(node.get("enum"), list) and None not in node["enum"]:
                out["_null_enum"] = True

    def _scalars(self, node: dict[str, Any], where: str, out: dict[str, Any], *, brief: bool) -> None:
        if isinstance(node.get("description"), str):
            # inside a referenced schema, the first sentence: those descriptions repeat on every call
            raw = node["description"]
            described = text.summary(raw, "") if brief else text.field_description(raw)
            if described:
                out["description"] = described
        enum = node.get("enum")
        if enum is not None:
            if not isinstance(enum, list) or not enum:
                self.problem(f"{where}/enum", "enum is not a non-empty list", "the enum is left out")
            elif len(enum) > MAX_ENUM:
                shown = ", ".join(cut(text.strip_unsafe(v), 40) for v in enum[:8])
                note = f"One of {len(enum)} values, such as {shown}."
                out["description"] = f"{out.get('description', '')} {note}".strip()
            else:
                out["enum"] = [*enum, None] if out.pop("_null_enum", False) else list(enum)
        out.pop("_null_enum", None)
        for key in ("const", "default", "format", "uniqueItems", "deprecated", "readOnly", "writeOnly"):
            if key in node:
                out[key] = node[key]
        if not isinstance(out.get("format", ""), str):
            out.pop("format")
        for key in ("uniqueItems", "deprecated", "readOnly", "writeOnly"):
            if key in out and not isinstance(out[key], bool):
                out.pop(key)
        for key in _COUNTS:
            if key in node:
                value = node[key]
                if (
                    isinstance(value, bool)
                    or not isinstance(value, int | float)
                    or value < 0
                    or value != int(value)
                ):
                    self.problem(
                        f"{where}/{key}", f"{key} is not a non-negative integer", f"{key} is left out"
                    )
                else:
                    out[key] = int(value)
        self._bounds(node, where, out)
        pattern = node.get("pattern")
        if pattern is not None:
            if _compiles(pattern):
                out["pattern"] = pattern
            else:
                self.problem(
                    f"{where}/pattern",
                    "pattern is not a regular expression Python can use",
                    "the pattern is not checked",
                )

    def _bounds(self, node: dict[str, Any], where: str, out: dict[str, Any]) -> None:
        def number(value: Any) -> bool:
            return isinstance(value, int | float) and not isinstance(value, bool)

        for key in _NUMBERS:
            if key in node:
                if number(node[key]):
                    out[key] = node[key]
                else:
                    self.problem(f"{where}/{key}", f"{key} is not a number", f"{key} is left out")
        if "multipleOf" in node:
            if number(node["multipleOf"]) and node["multipleOf"] > 0:
                out["multipleOf"] = node["multipleOf"]
            else:
                self.problem(
                    f"{where}/multipleOf", "multipleOf is not a positive number", "multipleOf is left out"
                )
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            value = node.get(key)
            if value is True and bound in out:  # 3.0: a flag on the bound
                out[key] = out.pop(bound)
            elif number(value):
                out[key] = value

    def _children(
        self, node: dict[str, Any], where: str, stack: tuple[str, ...], out: dict[str, Any]
    ) -> None:
        props = node.get("properties")
        if isinstance(props, dict):
            converted: dict[str, Any] = {}
            for key, sub in props.items():
                if not _FIELD_NAME.match(str(key)):
                    self.problem(
                        f"{where}/properties",
                        "a property name with control characters",
                        "the property is left out",
                    )
                    continue
                schema = self._convert(sub, f"{where}/properties/{pointer(key)[2:]}", stack)
                if schema.get("readOnly") is True:
                    continue  # the server's to set: never sent
                converted[str(key)] = schema
            out["properties"] = converted
        required = node.get("required")
        if isinstance(required, list):
            names = [r for r in dict.fromkeys(required) if isinstance(r, str)]
            if "properties" in out:
                names = [n for n in names if n in out["properties"] or n not in (props or {})]
            if names:
                out["required"] = names
        for key in _SINGLE:
            if key in node and isinstance(node[key], dict | bool):
                out[key] = (
                    self._convert(node[key], f"{where}/{key}", stack)
                    if isinstance(node[key], dict)
                    else node[key]
                )
        patterns = node.get("patternProperties")
        if isinstance(patterns, dict):
            out["patternProperties"] = {
                p: self._convert(s, f"{where}/patternProperties", stack)
                for p, s in patterns.items()
                if _compiles(p)
            }
        items = node.get("items")
        if isinstance(items, list):  # the tuple form of older drafts
            out["prefixItems"] = [self._convert(s, f"{where}/items/{i}", stack) for i, s in enumerate(items)]
        elif isinstance(items, dict | bool):
            out["items"] = self._convert(items, f"{where}/items", stack)
        prefix = node.get("prefixItems")
        if isinstance(prefix, list) and prefix:
            out["prefixItems"] = [
                self._convert(s, f"{where}/prefixItems/{i}", stack) for i, s in enumerate(prefix)
            ]

    def _all_of(self, node: dict[str, Any], where: str, stack: tuple[str, ...], out: dict[str, Any]) -> None:
        raw = node["allOf"]
        if not isinstance(raw, list) or not raw:
            return
        parts = [self._convert(p, f"{where}/allOf/{i}", stack) for i, p in enumerate(raw)]
        merged = merge(out, parts)
        if merged is None:
            out["allOf"] = parts
        else:
            out.clear()
            out.update(merged)


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    return list(kind) if isinstance(kind, list) else [kind] if isinstance(kind, str) else []


def _compiles(pattern: object) -> bool:
    if not isinstance(pattern, str):
        return False
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def merge(own: dict[str, Any], parts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The parts of an `allOf` (and the schema holding it) as one schema, or None when they clash."""
    out = dict(own)
    for part in parts:
        for key, value in part.items():
            if key == "properties":
                props = dict(out.get("properties", {}))
                for name, schema in value.items():
                    if name in props and props[name] != schema:
                        joined = merge(props[name], [schema])
                        props[name] = joined if joined is not None else {"allOf": [props[name], schema]}
                    else:
                        props[name] = schema
                out["properties"] = props
            elif key == "required":
                out["required"] = list(dict.fromkeys([*out.get("required", []), *value]))
            elif key == "description":
                out.setdefault("description", value)
            elif key == "type" and "type" in out:
                both = [t for t in _types(out) if t in _types(part)]
                if not both:
                    return None
                out["type"] = both[0] if len(both) == 1 else both
            elif key in out and out[key] != value:
                return None
            else:
                out[key] = value
    return out
