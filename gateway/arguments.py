"""A call's arguments: read from JSON, size-capped, checked against the tool's params model.

Also the JSON schema a model sees for a params model: the single source of both.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import CoreSchema, to_json

from .context import Problem


class _CleanSchema(GenerateJsonSchema):
    """JSON schema without the noisy auto-generated titles."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: Any) -> dict[str, Any]:
        # An optional field is simply omitted; "anyOf [T, null]" only costs the model tokens.
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: Any) -> dict[str, Any]:
        result = super().default_schema(schema)
        if result.get("default", 0) is None:
            result.pop("default")
        return result

    def generate(self, schema: CoreSchema, mode: JsonSchemaMode = "validation") -> dict[str, Any]:
        result = super().generate(schema, mode)
        result.pop("title", None)
        for sub in result.get("$defs", {}).values():
            sub.pop("title", None)
        return result


def params_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model sees for a params model."""
    return model.model_json_schema(schema_generator=_CleanSchema)


def required_fields(model: type[BaseModel]) -> tuple[str, ...]:
    """The names `params_schema(model)` lists as required, read from the model's fields without
    generating the schema (by alias, as the schema names them). A model that carries its own JSON
    schema says them itself (`SchemaParams.required_fields`)."""
    own = getattr(model, "required_fields", None)
    if callable(own):
        return tuple(own())
    return tuple(
        info.validation_alias if isinstance(info.validation_alias, str) else info.alias or name
        for name, info in model.model_fields.items()
        if info.is_required()
    )


def validate_arguments(model: type[BaseModel], arguments: Mapping[str, Any]) -> BaseModel:
    """Check a call's arguments as what they are, JSON, against a params model.

    In JSON mode a string still becomes a date, a datetime, an enum member or a UUID where the
    schema says string; with `PARAMS_CONFIG` (strict) nothing else is guessed: "10" is not an
    integer, "yes" and 1 are not booleans (an integer is still a fine number).

    Raises:
        ValidationError: the arguments do not fit the model.
        PydanticSerializationError: an argument is not JSON data (a host's mistake; a model sends JSON).
    """
    return model.model_validate_json(to_json(dict(arguments)))


MAX_DEPTH = 64
"""Deepest nesting of objects and arrays a call's arguments may have (real tools need a handful)."""

MAX_NUMBER_DIGITS = 100
"""Most digits an integer in a call's arguments may have (past 4,300, Python refuses to read one)."""


class Unusable(Exception):
    """Arguments that cannot be read as a JSON object of a size the gateway takes."""

    def __init__(self, problem: Problem, *, too_large: int | None = None) -> None:
        super().__init__(problem.msg)
        self.problem = problem
        self.too_large = too_large


def load_json(text: str) -> Any:
    """JSON text as data, refusing what would crash the parser or what reads it next.

    A text nested thousands of levels deep raises `RecursionError` in `json.loads`, a
    5,000-digit integer `ValueError`; both become a problem the caller can send back.

    Raises:
        json.JSONDecodeError: not JSON.
        Unusable: nested deeper than `MAX_DEPTH`, or an integer longer than `MAX_NUMBER_DIGITS`.
    """
    try:
        value = json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        raise Unusable(_TOO_DEEP) from None
    except _LongNumber:
        raise Unusable(_TOO_LONG) from None
    check_shape(value)
    return value


def check_shape(value: Any) -> int | None:
    """Refuse data nested deeper than `MAX_DEPTH` or holding an integer longer than `MAX_NUMBER_DIGITS`.

    Walks without recursion, so a structure too deep for Python's stack (or one that contains
    itself) is refused rather than crashing whatever serialises it next.

    Returns:
        At least as many bytes as `json.dumps(value)` writes (every character of a string counted
        as a 12-byte escaped surrogate pair), so a small value's size needs no serialising; None
        when it holds something other than JSON data, whose text is not known before it is written.

    Raises:
        Unusable: the first of the two problems found.
    """
    bound: int | None = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            size = 12 * len(item) + 2
        elif isinstance(item, Mapping):
            if depth >= MAX_DEPTH:
                raise Unusable(_TOO_DEEP)
            size = 2 + 4 * len(item)  # the braces, then `": "` and `", "` for each member
            for key, child in item.items():
                if not isinstance(key, str):
                    bound = None
                elif bound is not None:
                    size += 12 * len(key) + 2
                stack.append((child, depth + 1))
        elif isinstance(item, list | tuple):
            if depth >= MAX_DEPTH:
                raise Unusable(_TOO_DEEP)
            size = 2 + 2 * len(item)
            stack.extend((child, depth + 1) for child in item)
        elif item is None or isinstance(item, bool):
            size = 5
        elif isinstance(item, int):
            if abs(item) >= _LIMIT:
                raise Unusable(_TOO_LONG)
            size = MAX_NUMBER_DIGITS + 1
        elif isinstance(item, float):
            size = 32  # repr of a float: at most 24 characters; Infinity and NaN fewer
        else:
            bound = None
            continue
        if bound is not None:
            bound += size
    return bound


class _LongNumber(Exception):
    pass


_TOO_DEEP = Problem("parameters", f"Nested more than {MAX_DEPTH} levels deep; send flatter arguments")
_TOO_LONG = Problem("parameters", f"Holds an integer of more than {MAX_NUMBER_DIGITS} digits")
_LIMIT = 10**MAX_NUMBER_DIGITS


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _LongNumber
    return int(text)


def read_arguments(raw: Any, max_bytes: int) -> dict[str, Any]:
    """Arguments as a dict: a mapping, a JSON string, or nothing (an empty object).

    Raises:
        Unusable: not JSON, not an object, nested too deep, an integer too long, or more than
            `max_bytes` (its `too_large` says how many).
    """
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        size = len(raw.encode())
        if size > max_bytes:
            raise Unusable(Problem("parameters", "too large"), too_large=size)
        try:
            raw = load_json(raw)
        except json.JSONDecodeError as exc:
            raise Unusable(
                Problem("parameters", f"Not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
            ) from None
        bound = None
    else:
        bound = check_shape(raw)
    if not isinstance(raw, Mapping):
        raise Unusable(Problem("parameters", f"Must be a JSON object, got {type(raw).__name__}"))
    if bound is None or bound > max_bytes:  # only then can its text be too large
        size = len(json.dumps(raw, default=str).encode())
        if size > max_bytes:
            raise Unusable(Problem("parameters", "too large"), too_large=size)
    return dict(raw)
