"""Params models for tools described by a JSON schema instead of a Pydantic model (fronted MCP tools).

The schema stays the single source: `model_json_schema` returns it and validation runs it
with `jsonschema`, so nothing is lost in a translation to Pydantic fields. Problems are
raised as a Pydantic `ValidationError` with one `{loc, msg}` per problem, so the gateway's
validation path and error rendering treat these tools like every other. Messages never echo
the rejected value.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Literal

from jsonschema import Draft202012Validator, SchemaError
from jsonschema.exceptions import ValidationError as SchemaViolation
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import BaseModel, PrivateAttr, ValidationError, model_serializer, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import InitErrorDetails, PydanticCustomError, to_json

from .definition import PARAMS_CONFIG

MAX_PROBLEMS = 20
_MAX_LISTED = 12


class SchemaParams(BaseModel):
    """Arguments checked against a JSON schema; see `schema_params` for how a model is made."""

    model_config = PARAMS_CONFIG

    input_schema: ClassVar[dict[str, Any]] = {"type": "object"}
    json_validator: ClassVar[Validator] = Draft202012Validator({"type": "object"})
    _arguments: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def arguments(self) -> dict[str, Any]:
        """The validated arguments, as given."""
        return copy.deepcopy(self._arguments)

    @model_validator(mode="wrap")
    @classmethod
    def _check_against_schema(cls, data: Any, handler: Any) -> Any:
        if isinstance(data, cls):
            return data
        errors = list(cls.json_validator.iter_errors(data))
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, _problems(errors))
        instance = handler({})
        instance._arguments = copy.deepcopy(dict(data))
        return instance

    @model_serializer(mode="plain")
    def _dump(self) -> dict[str, Any]:
        return copy.deepcopy(self._arguments)

    @classmethod
    def required_fields(cls) -> tuple[str, ...]:
        """The schema's required property names (`arguments.required_fields`), without a copy."""
        return required_properties(cls.input_schema)

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = None,
        ref_template: str = "#/$defs/{model}",
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        *,
        union_format: Literal["any_of", "primitive_type_array"] = "any_of",
    ) -> dict[str, Any]:
        """The downstream schema itself (a copy)."""
        return copy.deepcopy(cls.input_schema)


def schema_problems(schema: object) -> list[str]:
    """Why a tool's input schema cannot be used; empty when it can."""
    if not isinstance(schema, Mapping):
        return ["input schema must be a JSON object"]
    if schema.get("type") != "object":
        return ["input schema must have type 'object' at the root"]
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(dict(schema))
    except SchemaError as exc:
        return [f"input schema is not a valid JSON schema: {exc.message[:200]}"]
    return []


def schema_params(model_name: str, schema: Mapping[str, Any]) -> type[SchemaParams]:
    """A params model validating against `schema`.

    Raises:
        ValueError: the schema is unusable (see `schema_problems`).
    """
    problems = schema_problems(schema)
    if problems:
        raise ValueError("; ".join(problems))
    frozen = copy.deepcopy(dict(schema))
    validator_class = validator_for(frozen, default=Draft202012Validator)
    namespace = {
        "__module__": __name__,
        "__doc__": f"Arguments of {model_name}, checked against its JSON schema.",
        "input_schema": frozen,
        # No remote $ref is ever fetched: the default registry resolves nothing outside the schema.
        "json_validator": validator_class(frozen),
    }
    return type(model_name, (SchemaParams,), namespace)


def lazy_schema_params(model_name: str, schema: Mapping[str, Any]) -> Callable[[], type[SchemaParams]]:
    """`schema_params` deferred to the tool's first use (a `ToolDefinition`'s lazy `params`).

    Check the schema with `schema_problems` first: a source of thousands of tools then costs one
    check a tool as it is read, and a model only for the tools asked for.
    """

    def params() -> type[SchemaParams]:
        return schema_params(model_name, schema)

    return params


def arguments_check(model_name: str, schema: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], None]:
    """Checks arguments against a usable `schema` as its model would (as JSON, the same problems
    raised as a `ValidationError`) without making the model: for a lazy tool's example calls.

    Raises (the check):
        ValidationError: the arguments do not fit the schema.
        PydanticSerializationError: an argument is not JSON data.
    """
    validator = validator_for(schema, default=Draft202012Validator)(dict(schema))

    def check(arguments: Mapping[str, Any]) -> None:
        errors = list(validator.iter_errors(json.loads(to_json(dict(arguments)))))
        if errors:
            raise ValidationError.from_exception_data(model_name, _problems(errors))

    return check


def required_properties(schema: Mapping[str, Any]) -> tuple[str, ...]:
    """The property names a schema lists as required (a lazy tool's `required_params`)."""
    required = schema.get("required")
    return tuple(r for r in required if isinstance(r, str)) if isinstance(required, list) else ()


def params_model_name(tool_name: str) -> str:
    """`weather_lookup` -> `WeatherLookupParams`: the class name of a schema-described tool's model."""
    return "".join(part.title() for part in tool_name.split("_") if part) + "Params"


def _problems(errors: Iterable[SchemaViolation]) -> list[InitErrorDetails]:
    found: dict[tuple[tuple[str | int, ...], str], None] = {}
    for error in sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.validator)):
        for loc, msg in _describe(error):
            found.setdefault((loc, msg))
    return [
        InitErrorDetails(
            type=PydanticCustomError("json_schema", "{reason}", {"reason": msg}), loc=loc, input=None
        )
        for loc, msg in list(found)[:MAX_PROBLEMS]
    ]


def _listed(values: Iterable[Any]) -> str:
    items = [str(v) for v in values]
    more = f", ... ({len(items) - _MAX_LISTED} more)" if len(items) > _MAX_LISTED else ""
    return ", ".join(items[:_MAX_LISTED]) + more


_WORDING: dict[str, str] = {
    "type": "Must be of type {listed}",
    "enum": "Must be one of: {listed}",
    "const": "Must be exactly {value}",
    "minimum": "Must be at least {value}",
    "maximum": "Must be at most {value}",
    "exclusiveMinimum": "Must be greater than {value}",
    "exclusiveMaximum": "Must be less than {value}",
    "multipleOf": "Must be a multiple of {value}",
    "minLength": "Must have at least {value} characters",
    "maxLength": "Must have at most {value} characters",
    "pattern": "Must match the pattern {value}",
    "format": "Must be a valid {value}",
    "minItems": "Must have at least {value} items",
    "maxItems": "Must have at most {value} items",
    "uniqueItems": "Items must be unique",
    "minProperties": "Must have at least {value} properties",
    "maxProperties": "Must have at most {value} properties",
    "anyOf": "Must match one of the allowed shapes",
    "oneOf": "Must match exactly one of the allowed shapes",
    "not": "Is not allowed here",
}


def _describe(error: SchemaViolation) -> list[tuple[tuple[str | int, ...], str]]:
    """One error as (loc, msg) pairs, worded without the rejected value."""
    path = tuple(error.absolute_path)
    kind = str(error.validator)
    expected: Any = error.validator_value
    instance: Any = error.instance
    schema: Any = error.schema if isinstance(error.schema, Mapping) else {}
    if kind == "required" and isinstance(instance, Mapping):
        return [((*path, name), "Required parameter is missing") for name in expected if name not in instance]
    if kind == "additionalProperties" and isinstance(instance, Mapping):
        known = [str(k) for k in schema.get("properties") or {}]
        patterns = [str(p) for p in schema.get("patternProperties") or {}]
        extras = [k for k in instance if k not in known and not any(re.search(p, str(k)) for p in patterns)]
        allowed = _listed(known) or "none"
        return [((*path, k), f"Unknown parameter; allowed parameters: {allowed}") for k in extras]
    listed = _listed(expected) if isinstance(expected, list) else str(expected)
    template = _WORDING.get(kind, "Breaks the schema rule '{kind}'")
    return [(path, template.format(value=expected, listed=listed, kind=kind))]
