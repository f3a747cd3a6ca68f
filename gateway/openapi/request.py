"""Validated arguments made an HTTP request, as the description says to serialise them.

- Path parameters are percent-encoded whole: `../admin` is the one segment `..%2Fadmin`, and a value
  of `.` or `..` is encoded too, so no argument can climb out of its path. An empty one is refused.
- Query parameters follow their style: `form` (repeated keys when exploded, the default; commas when
  not), `spaceDelimited`, `pipeDelimited` and `deepObject` (`filter[state]=open`); headers and path
  parameters `simple` (commas), `label` and `matrix`; cookies `form`, percent-encoded (a `;` in a
  value cannot add a cookie). Booleans are `true`/`false`. A header value with a control character
  (CR, LF, NUL...) or outside ASCII is refused before anything is sent.
- A JSON body is sent as JSON; a form body URL-encoded, nested objects and indexed arrays in brackets
  (`metadata[plan]=pro`, `items[0][price]=p_1`) as APIs with form bodies expect; a text body as text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ..errors import ToolInputError
from .params import Layout, Slot

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass
class Parts:
    """A request before authentication and sending."""

    path: str
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    json_body: Any = None
    form_body: list[tuple[str, str]] | None = None
    text_body: str | None = None
    has_body: bool = False
    content_type: str | None = None


def scalar(value: Any) -> str:
    """One value as text: booleans as `true`/`false`, structures as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def _segment(value: str) -> str:
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if set(value) <= {"."} else encoded


def _pairs(value: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), scalar(v)) for k, v in value.items() if v is not None]


def _simple(value: Any, explode: bool, encode: Callable[[str], str]) -> str:
    if isinstance(value, list):
        return ",".join(encode(scalar(v)) for v in value)
    if isinstance(value, dict):
        pairs = _pairs(value)
        if explode:
            return ",".join(f"{encode(k)}={encode(v)}" for k, v in pairs)
        return ",".join(f"{encode(k)},{encode(v)}" for k, v in pairs)
    return encode(scalar(value))


def _cookie(value: str) -> str:
    # RFC 6570 form style, as OpenAPI says: '; sid=x' stays inside its own cookie's value
    return quote(value, safe="")


def _header_value(slot: Slot, value: str) -> str:
    """Raises: ToolInputError: a control character (a CR or LF would start another header) or
    a character a header cannot carry."""
    if not value.isascii() or _CONTROL.search(value):
        raise ToolInputError(
            f"{slot.key} is sent as an HTTP header: use printable ASCII text, without line breaks or "
            "control characters",
            field=slot.key,
        )
    return value


def _path_value(slot: Slot, value: Any) -> str:
    if value in ("", [], {}) or value is None:
        raise ToolInputError(
            f"{slot.key} must not be empty: it is part of the request's path", field=slot.key
        )
    if slot.as_json:
        return _segment(scalar(value if not isinstance(value, str) else json.dumps(value)))
    if slot.style == "label":
        sep = "." if slot.explode else ","
        body = _simple(value, slot.explode, _segment)
        return "." + (body.replace(",", sep) if isinstance(value, list) else body)
    if slot.style == "matrix":
        name = _segment(slot.name)
        if isinstance(value, list) and slot.explode:
            return "".join(f";{name}={_segment(scalar(v))}" for v in value)
        if isinstance(value, dict) and slot.explode:
            return "".join(f";{_segment(k)}={_segment(v)}" for k, v in _pairs(value))
        return f";{name}={_simple(value, False, _segment)}"
    return _simple(value, slot.explode, _segment)


def _query(slot: Slot, value: Any) -> list[tuple[str, str]]:
    name = slot.name
    if slot.as_json:
        return [(name, json.dumps(value, separators=(",", ":"), ensure_ascii=False))]
    if slot.style == "deepObject" and isinstance(value, dict):
        return _brackets(name, value)
    if isinstance(value, list):
        if slot.style in ("spaceDelimited", "pipeDelimited"):
            sep = " " if slot.style == "spaceDelimited" else "|"
            return [(name, sep.join(scalar(v) for v in value))]
        if slot.explode:
            return [(name, scalar(v)) for v in value]
        return [(name, ",".join(scalar(v) for v in value))]
    if isinstance(value, dict):
        if slot.explode:
            return _pairs(value)
        return [(name, ",".join(f"{k},{v}" for k, v in _pairs(value)))]
    return [(name, scalar(value))]


def _brackets(prefix: str, value: Any, *, index_lists: bool = True) -> list[tuple[str, str]]:
    """Nested values as bracketed keys: `a[b][0]=c`."""
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out += _brackets(f"{prefix}[{k}]", v)
        return out
    if isinstance(value, list):
        if not index_lists:
            return [(prefix, scalar(v)) for v in value]
        out = []
        for i, v in enumerate(value):
            out += _brackets(f"{prefix}[{i}]", v)
        return out
    return [] if value is None else [(prefix, scalar(value))]


def form(fields: Mapping[str, Any], deep: frozenset[str]) -> list[tuple[str, str]]:
    """A form body: top-level lists of values as repeated keys unless encoded as deepObject."""
    out: list[tuple[str, str]] = []
    for key, value in fields.items():
        if isinstance(value, list) and key not in deep and all(not isinstance(v, dict | list) for v in value):
            out += [(key, scalar(v)) for v in value]
        else:
            out += _brackets(key, value)
    return out


def build(layout: Layout, path: str, arguments: Mapping[str, Any]) -> Parts:
    """The request parts for validated `arguments`.

    Raises:
        ToolInputError: an empty path parameter, or a header value that cannot be sent.
    """
    parts = Parts(path)
    fields: dict[str, Any] = {}
    body: Any = None
    for slot in layout.slots:
        if slot.key not in arguments or arguments[slot.key] is None:
            continue
        value = arguments[slot.key]
        if slot.location == "path":
            parts.path = parts.path.replace("{" + slot.name + "}", _path_value(slot, value))
        elif slot.location == "query":
            parts.query += _query(slot, value)
        elif slot.location == "header":
            parts.headers[slot.name] = _header_value(slot, _simple(value, slot.explode, str))
        elif slot.location == "cookie":
            parts.cookies[_cookie(slot.name)] = _simple(value, False, _cookie)
        elif slot.location == "field":
            fields[slot.name] = value
        else:
            body = value
    if fields and body is None:
        body = fields
    if layout.media_type is not None and (body is not None or layout.body_required):
        media = layout.media_type.split(";")[0].strip().lower()
        parts.has_body = True
        parts.content_type = layout.media_type if "*" not in media else "application/json"
        if media == "application/x-www-form-urlencoded":
            parts.form_body = form(body or {}, layout.deep_fields) if isinstance(body, Mapping) else []
        elif media == "text/plain":
            parts.text_body = scalar(body if body is not None else "")
        else:
            parts.json_body = body if body is not None else {}
    return parts
