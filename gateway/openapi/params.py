"""The parameters of one operation: a JSON schema for the model, and where each argument goes.

- Path, query, header and cookie parameters are properties under their own names (`owner`,
  `per_page`, `X-GitHub-Api-Version`); a name used in two places is told apart by its place
  (`header_id`). Path parameters are required. `Accept`, `Content-Type` and `Authorization` headers
  (and `Host`, `Content-Length`, `Transfer-Encoding`, `Connection`, `Cookie`), and the API key the
  gateway sends itself, are never asked of the model.
- The request body: a JSON (or form) object whose properties clash with no parameter is flattened,
  its properties beside the parameters (GitHub's merge takes `owner`, `repo`, `pull_number`,
  `commit_title`, `merge_method`), required when the body is. Any other body (an array, a `oneOf`,
  a map, a clash) is one `body` property. Flattened, only the declared properties are accepted.
- A body only in another media type (multipart, binary) is not offered; the description says so, and
  an operation that requires one refuses calls before anything is sent.

The model is made when a schema or a call first needs it (`ToolDefinition.params` is lazy) and is
validated by `jsonschema` (`gateway.schema_params`), so the schema the model reads is the one that checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..rendering import cut
from . import text
from .document import Dangling, follow, pointer
from .schemas import Converter

# OpenAPI's three, and those that would change where or how the request travels (Host on a shared
# server, the framing) or carry the cookies the gateway builds itself.
_IGNORED_HEADERS = frozenset(
    (
        "accept",
        "content-type",
        "authorization",
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "cookie",
    )
)
_JSON = "application/json"
_FORM = "application/x-www-form-urlencoded"
_LOCATIONS = ("path", "query", "header", "cookie")


@dataclass(frozen=True)
class Slot:
    """Where one argument goes in the request."""

    key: str
    """The argument's name in the params schema."""
    name: str
    """Its name in the request (the parameter's, or the body field's)."""
    location: str
    """path, query, header, cookie, body (the whole body) or field (one property of a flattened body)."""
    style: str = ""
    explode: bool = False
    as_json: bool = False
    """A parameter described by `content` (a JSON value serialised as a string)."""


@dataclass(frozen=True)
class Layout:
    """An operation's params schema and how to turn arguments into a request."""

    schema: dict[str, Any]
    slots: tuple[Slot, ...]
    media_type: str | None = None
    body_required: bool = False
    unsupported_body: str | None = None
    """The media type of a required body the gateway cannot send (calls are refused)."""
    notes: tuple[str, ...] = field(default=())
    deep_fields: frozenset[str] = frozenset()
    """Form fields whose arrays are sent indexed (`expand[0]=a`, the `deepObject` encoding)."""


def _default_style(location: str) -> str:
    return {"query": "form", "cookie": "form"}.get(location, "simple")


def _parameters(
    converter: Converter, op: dict[str, Any], item: dict[str, Any], where: str
) -> list[tuple[dict[str, Any], str]]:
    """The operation's parameters, the path item's included unless the operation redefines them."""
    found: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
    path_where = where.rsplit("/", 1)[0]
    for base, raw_list in ((path_where, item.get("parameters")), (where, op.get("parameters"))):
        if not isinstance(raw_list, list):
            continue
        for i, raw in enumerate(raw_list):
            at = f"{base}/parameters/{i}"
            try:
                param, refs = follow(converter.doc, raw)
            except Dangling as exc:
                converter.problem(
                    f"{at}/$ref",
                    f"parameter $ref {cut(text.strip_unsafe(exc.ref), 200)!r} cannot be resolved: {exc.reason}",
                    "the parameter is not offered",
                )
                continue
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                converter.problem(at, "a parameter without a name", "the parameter is not offered")
                continue
            location = param.get("in")
            if location not in _LOCATIONS:
                converter.problem(
                    f"{at}/in", f"parameter location {location!r} is unknown", "the parameter is not offered"
                )
                continue
            found[(param["name"], location)] = (param, refs[-1] if refs else at)
    return list(found.values())


def layout(
    converter: Converter,
    path: str,
    method: str,
    hidden: Iterable[tuple[str, str]] = (),
) -> Layout:
    """The layout of the operation at `paths[path][method]`; `hidden`: (location, lowercase name) the
    gateway fills in itself (an API key)."""
    item, _ = follow(converter.doc, converter.doc["paths"][path])
    op = item[method.lower()]
    where = pointer("paths", path, method.lower())
    skip = set(hidden)
    properties: dict[str, Any] = {}
    required: list[str] = []
    slots: list[Slot] = []
    for param, at in _parameters(converter, op, item, where):
        name, location = param["name"], param["in"]
        if (location == "header" and name.lower() in _IGNORED_HEADERS) or (location, name.lower()) in skip:
            continue
        schema, as_json = _parameter_schema(converter, param, at)
        key = name if name not in properties else f"{location}_{name}"
        while key in properties:
            key += "_"
        properties[key] = schema
        if location == "path" or param.get("required") is True:
            required.append(key)
        explode = param.get("explode", _default_style(location) == "form")
        style = str(param.get("style") or _default_style(location))
        slots.append(Slot(key, name, location, style, bool(explode), as_json))
    media_type, body_required, unsupported, notes = _body(
        converter, op, where, properties=properties, required=required, slots=slots
    )
    schema_out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema_out["required"] = required
    return Layout(
        schema_out,
        tuple(slots),
        media_type,
        body_required,
        unsupported,
        notes,
        _deep_fields(converter.doc, op, media_type),
    )


def _deep_fields(doc: dict[str, Any], op: dict[str, Any], media_type: str | None) -> frozenset[str]:
    if media_type is None:
        return frozenset()
    try:
        body, _ = follow(doc, op.get("requestBody"))
    except Dangling:
        return frozenset()
    media = body.get("content", {}).get(media_type) if isinstance(body, dict) else None
    encoding = media.get("encoding") if isinstance(media, dict) else None
    if not isinstance(encoding, dict):
        return frozenset()
    return frozenset(
        str(k) for k, v in encoding.items() if isinstance(v, dict) and v.get("style") == "deepObject"
    )


def _parameter_schema(converter: Converter, param: dict[str, Any], at: str) -> tuple[dict[str, Any], bool]:
    as_json = False
    raw = param.get("schema")
    if raw is None and isinstance(param.get("content"), dict) and param["content"]:
        media = next(iter(param["content"].values()))
        raw = media.get("schema") if isinstance(media, dict) else None
        as_json = True
    schema = converter.convert(raw, f"{at}/schema") if raw is not None else {"type": "string"}
    described = text.field_description(param.get("description"))
    if param.get("deprecated") is True:
        described = f"Deprecated. {described}".strip()
    if described:
        schema = {**schema, "description": described}
    return schema, as_json


def _body(
    converter: Converter,
    op: dict[str, Any],
    where: str,
    *,
    properties: dict[str, Any],
    required: list[str],
    slots: list[Slot],
) -> tuple[str | None, bool, str | None, tuple[str, ...]]:
    """Adds the body's properties (or `body`); returns (media type, required, unsupported type, notes)."""
    raw = op.get("requestBody")
    if raw is None:
        return None, False, None, ()
    try:
        body, refs = follow(converter.doc, raw)
    except Dangling as exc:
        converter.problem(
            f"{where}/requestBody/$ref",
            f"request body $ref {cut(text.strip_unsafe(exc.ref), 200)!r} cannot be resolved: {exc.reason}",
            "the operation is served without a body",
        )
        return None, False, None, ()
    at = refs[-1] if refs else f"{where}/requestBody"
    content = body.get("content") if isinstance(body, dict) else None
    is_required = isinstance(body, dict) and body.get("required") is True
    if not isinstance(content, dict) or not content:
        return None, False, None, ()
    media_type = _choose(content)
    if media_type is None:
        listed = ", ".join(sorted(map(str, content)))[:120]
        note = f"Its request body ({listed}) cannot be sent through the gateway."
        return None, is_required, listed if is_required else None, (note,)
    media = content[media_type] if isinstance(content[media_type], dict) else {}
    at = f"{at}/content/{pointer(media_type)[2:]}/schema"
    schema = converter.convert(media.get("schema", {}), at) if "schema" in media else {}
    described = text.field_description(body.get("description"))
    props = schema.get("properties")
    flat = (
        isinstance(props, dict)
        and props
        and schema.get("type", "object") in ("object", ["object"], ["object", "null"])
        and not any(k in schema for k in ("oneOf", "anyOf", "allOf", "not", "patternProperties"))
        and not isinstance(schema.get("additionalProperties"), dict)
        and not set(props) & set(properties)
    )
    if flat:
        assert isinstance(props, dict)
        for key, sub in props.items():
            properties[key] = sub
            slots.append(Slot(key, key, "field"))
        if is_required:
            required.extend(k for k in schema.get("required", ()) if k in props)
        return media_type, is_required, None, ()
    key = "body" if "body" not in properties else "request_body"
    if described and "description" not in schema:
        schema = {**schema, "description": described}
    schema.setdefault("description", "The request body.")
    properties[key] = schema
    slots.append(Slot(key, key, "body"))
    if is_required:
        required.append(key)
    return media_type, is_required, None, ()


def _choose(content: dict[str, Any]) -> str | None:
    """The media type to send: JSON first, then a form, then plain text."""
    types = [str(t) for t in content]
    lowered = [t.split(";")[0].strip().lower() for t in types]
    ranks = [_rank(t) for t in lowered]
    best = min(ranks, default=9)
    return types[ranks.index(best)] if best < 9 else None


def _rank(media: str) -> int:
    if media == _JSON:
        return 0
    if media.endswith("+json") or media in {"*/*", "application/*"}:
        return 1
    return {_FORM: 2, "text/plain": 3}.get(media, 9)
