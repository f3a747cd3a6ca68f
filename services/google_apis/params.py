"""Params models of discovery methods, made on first use.

A method's model has its path and query parameters (types, enums, patterns, bounds, required flags;
repeated parameters are arrays) and, when it takes one, `body`: the request schema from the document,
its `$ref`s resolved breadth-first to `MAX_REF_DEPTH` levels. Each schema becomes one model, however
often it is referred to (a recursive schema refers to its own model); a schema further away is an open
object, described as such. Every model forbids unknown fields, so a misspelt field is an error the
model can fix, not a value Google silently drops.

Field names are Google's (`calendarId`, `maxResults`) as aliases; the Python names only differ where
Google's are not identifiers (`options.requestedPolicyVersion`). Body models are shared by the methods
of a document that send the same schema (insert, update and patch), a bounded number kept.
"""

from __future__ import annotations

import keyword
import re
import threading
from collections import OrderedDict, deque
from typing import Annotated, Any, ForwardRef, Literal, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, create_model

from gateway.rendering import cut

from . import text

MAX_REF_DEPTH = 2
"""Levels of schemas that become models: the request body's own and those it refers to directly. A
schema further away is an open object."""
MAX_SHARED_BODIES = 256
"""Body models kept for reuse; the least recently used are dropped beyond this."""
_KNOWN_DOCUMENTS = 8  # documents whose identifiers are kept (see `text.identifiers`)

MODEL_CONFIG = ConfigDict(
    extra="forbid",
    serialize_by_alias=True,
    coerce_numbers_to_str=True,  # int64 values are strings in Google's JSON; 42 is as good as "42"
    regex_engine="python-re",  # Google's patterns are Python-compatible, not all are Rust-compatible
    protected_namespaces=(),
)

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "any": Any}
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _optional(annotation: Any) -> Any:
    # Not `annotation | None`: a ForwardRef cannot be joined with `|`.
    return Optional[annotation]  # noqa: UP045


def _a(name: str) -> str:
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _as_list(value: Any) -> Any:
    """A repeated parameter also takes one value."""
    return value if isinstance(value, list) else [value]


def field_name(key: str, taken: set[str]) -> str:
    """A Python name for a Google field: the key itself when it can be one."""
    name = key
    if (
        not _IDENTIFIER.match(key)
        or keyword.iskeyword(key)
        or hasattr(BaseModel, key)
        or key.startswith("model_")
    ):
        name = "f_" + re.sub(r"\W", "_", key).strip("_")
    while name in taken:
        name += "_"
    taken.add(name)
    return name


class _Builder:
    """Makes the models of one request schema (and the schemas it refers to) in one document."""

    def __init__(self, schemas: dict[str, Any], root: str, known: frozenset[str] = frozenset()) -> None:
        self.schemas = schemas
        self.known = known
        self.level: dict[str, int] = {root: 0}
        self.queue: deque[str] = deque([root])
        self.models: dict[str, type[BaseModel]] = {}
        self.namespace: dict[str, Any] = {}
        self.class_names: set[str] = set()

    def build(self) -> type[BaseModel]:
        root = self.queue[0]
        while self.queue:
            name = self.queue.popleft()
            schema = self.schemas.get(name, {})
            model = self.models[name] = self._object(name, schema, self.level[name])
            self.namespace[self._key_of(name)] = model
        # Resolves every reference reachable from the root, cycles included, in one pass.
        self.models[root].model_rebuild(_types_namespace=self.namespace)
        return self.models[root]

    def _object(self, name: str, schema: dict[str, Any], level: int) -> type[BaseModel]:
        class_name = re.sub(r"\W", "_", name) or "Object"
        while class_name in self.class_names:
            class_name += "_"
        self.class_names.add(class_name)
        taken: set[str] = set()
        fields: dict[str, Any] = {}
        for key, prop in schema.get("properties", {}).items():
            if prop.get("deprecated"):
                continue
            annotation, note = self._type(prop, level, class_name + key[:1].upper() + key[1:])
            description = _describe(prop.get("description"), self.known, brief=level > 0)
            description = " ".join(filter(None, (description, note))) or f"The {key} field."
            fields[field_name(key, taken)] = (
                _optional(annotation),
                Field(None, alias=key, description=description),
            )
        model = create_model(
            class_name,
            __config__=MODEL_CONFIG,
            __doc__=_describe(schema.get("description"), self.known, brief=True) or None,
            **fields,
        )
        return model

    def _key_of(self, name: str) -> str:
        return "_m_" + re.sub(r"\W", "_", name)

    def _type(self, schema: dict[str, Any], level: int, inline_name: str, depth: int = 0) -> tuple[Any, str]:
        """The annotation of a property, and a note for its description (what an open object stands for)."""
        ref = schema.get("$ref")
        if ref is not None:
            return self._reference(ref, level, depth)
        kind = schema.get("type", "any")
        if kind == "string" and schema.get("enum"):
            return Literal[tuple(schema["enum"])], ""
        if kind == "array":
            item, note = self._type(schema.get("items", {}), level, inline_name, depth + 1)
            return list[item], note  # type: ignore[valid-type]
        if kind == "object":
            if "properties" in schema:  # an inline object: a model of its own, at its parent's level
                inline = self._object(inline_name, schema, level)
                return inline, ""
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                value, note = self._type(extra, level, inline_name, depth + 1)
                return dict[str, value], note  # type: ignore[valid-type]
            return dict[str, Any], ""
        return _SCALARS.get(kind, Any), ""

    def _reference(self, name: str, level: int, depth: int) -> tuple[Any, str]:
        target = self.schemas.get(name)
        if target is None:
            return dict[str, Any], ""
        if target.get("type", "object") != "object" or "properties" not in target:
            if depth > MAX_REF_DEPTH:  # a schema that is an array or map of itself
                return Any, ""
            return self._type(target, level, name, depth + 1)
        if name not in self.level:
            if level + 1 >= MAX_REF_DEPTH:
                return dict[str, Any], f"({_a(name)} object.)"
            self.level[name] = level + 1
            self.queue.append(name)
        return ForwardRef(self._key_of(name)), ""


def _describe(raw: str | None, known: frozenset[str], *, brief: bool = False) -> str:
    """A field's description; `brief`: its first sentence (schemas further in cost tokens on every call).

    `known`: the document's identifiers (`text.identifiers`), to split words its text fused.
    """
    cleaned = text.cleaned(raw, known)
    if brief:
        return text.summary(cleaned, "")
    return cut(cleaned.text, text.MAX_FIELD_DESCRIPTION)


def body_model(schemas: dict[str, Any], root: str, known: frozenset[str] = frozenset()) -> type[BaseModel]:
    """The model of a request body whose schema is `schemas[root]`; `known` as for `_describe`."""
    return _Builder(schemas, root, known).build()


def _parameter(key: str, spec: dict[str, Any], known: frozenset[str]) -> tuple[Any, Any]:
    kind = spec.get("type", "string")
    annotation: Any
    if spec.get("enum"):
        annotation = Literal[tuple(spec["enum"])]
    elif kind == "string" and spec.get("pattern") and _compiles(spec["pattern"]):
        annotation = Annotated[str, StringConstraints(pattern=spec["pattern"])]
    else:
        annotation = _SCALARS.get(kind, str)
    constraints: dict[str, Any] = {}
    if kind == "integer":
        for bound, name in (("minimum", "ge"), ("maximum", "le")):
            if str(spec.get(bound, "")).lstrip("-").isdigit():
                constraints[name] = int(spec[bound])
    if spec.get("repeated"):
        if constraints:
            annotation = Annotated[annotation, Field(**constraints)]
            constraints = {}
        annotation = Annotated[list[annotation], BeforeValidator(_as_list)]
    description = _describe(spec.get("description"), known) or f"The {key} parameter."
    if spec.get("required"):
        return annotation, Field(alias=key, description=description, **constraints)
    return _optional(annotation), Field(None, alias=key, description=description, **constraints)


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


class ParamsFactory:
    """Makes params models for methods of documents, sharing body models between a document's methods."""

    def __init__(self) -> None:
        self._bodies: OrderedDict[tuple[str, str], type[BaseModel]] = OrderedDict()
        self._known: OrderedDict[str, frozenset[str]] = OrderedDict()
        self._lock = threading.Lock()

    def model(self, name: str, doc_key: str, doc: dict[str, Any], method: dict[str, Any]) -> type[BaseModel]:
        """The params model of `method` (a method description of `doc`); `name` names the model."""
        parameters: dict[str, Any] = method.get("parameters", {})
        order = [k for k in method.get("parameterOrder", []) if k in parameters]
        order += sorted(k for k in parameters if k not in order)
        taken: set[str] = {"body"}
        fields: dict[str, Any] = {}
        known = self._identifiers(doc_key, doc)
        for key in order:
            fields[field_name(key, taken)] = _parameter(key, parameters[key], known)
        request = method.get("request")
        root = request.get("$ref") if request else None
        if root and root in doc.get("schemas", {}):
            body = self._body(doc_key, doc["schemas"], root, known)
            fields["body"] = (
                _optional(body),
                Field(None, description=f"The request body: {_a(root)} object."),
            )
        elif request:  # a free-form body written out in the method (a few do that)
            fields["body"] = (
                dict[str, Any] | None,
                Field(None, description="The request body: a JSON object."),
            )
        return create_model(name, __config__=MODEL_CONFIG, **fields)

    def _identifiers(self, doc_key: str, doc: dict[str, Any]) -> frozenset[str]:
        with self._lock:
            found = self._known.get(doc_key)
            if found is not None:
                self._known.move_to_end(doc_key)
                return found
        found = text.identifiers(doc)
        with self._lock:
            self._known[doc_key] = found
            while len(self._known) > _KNOWN_DOCUMENTS:
                self._known.popitem(last=False)
        return found

    def _body(
        self, doc_key: str, schemas: dict[str, Any], root: str, known: frozenset[str]
    ) -> type[BaseModel]:
        key = (doc_key, root)
        with self._lock:
            found = self._bodies.get(key)
            if found is not None:
                self._bodies.move_to_end(key)
                return found
        built = body_model(schemas, root, known)
        with self._lock:
            self._bodies[key] = built
            while len(self._bodies) > MAX_SHARED_BODIES:
                self._bodies.popitem(last=False)
        return built
