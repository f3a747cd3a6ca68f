"""Params models from the schemas `params` makes: validated by jsonschema, never unusable.

Every schema the converter writes should be a valid draft 2020-12 schema (the tests check every
operation of several published descriptions). Should one still not be, the property whose schema
is broken takes any value, with a description saying so, and the rest of the operation keeps its
checks: a bad corner of a description costs one parameter's validation, not the tool.
"""

from __future__ import annotations

import logging
from typing import Any

from jsonschema import Draft202012Validator, SchemaError

from ..schema_params import SchemaParams, schema_params

_log = logging.getLogger("gateway.openapi")


def problems(schema: dict[str, Any]) -> list[str]:
    """Why `schema` is not a valid draft 2020-12 schema (empty when it is)."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        return [f"{where or '(root)'}: {exc.message[:200]}"]
    return []


def repaired(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each property whose schema is invalid replaced by an open, described one."""
    if not problems(schema):
        return schema
    properties = dict(schema.get("properties", {}))
    for key, sub in properties.items():
        if problems(sub if isinstance(sub, dict) else {}):
            _log.warning("openapi: the schema of %r is invalid; it takes any value", key)
            properties[key] = {"description": "Any value (its schema in the API description is invalid)."}
    return {**schema, "properties": properties}


def params_model(name: str, schema: dict[str, Any]) -> type[SchemaParams]:
    return schema_params(name, repaired(schema))
