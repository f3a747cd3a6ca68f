"""Every params model of the whole catalog yields a valid JSON schema (about a minute: 13,800 models)."""

from __future__ import annotations

import json
import re
from typing import Any

from jsonschema import Draft202012Validator

from gateway.arguments import params_schema
from services.google_apis.documents import DocumentCache, documents_dir
from services.google_apis.index import Index
from services.google_apis.params import ParamsFactory
from services.google_apis.provider import params_model

_REF = re.compile(r'"\$ref": "([^"]*)"')


def test_every_generated_schema_is_a_valid_json_schema_whose_references_resolve(index: Index) -> None:
    documents, factory = DocumentCache(documents_dir()), ParamsFactory()
    checked: set[str] = set()
    problems: list[str] = []
    # One document after another, so each is read once.
    for method in sorted(index.methods, key=lambda m: (m.api.name, m.api.version, m.path)):
        found = params_schema(params_model(method, documents, factory))
        defs: dict[str, Any] = found.get("$defs", {})
        # A schema is valid when its root and each definition are; the methods of a document share most
        # definitions, so each distinct one is checked once.
        for part in ({k: v for k, v in found.items() if k != "$defs"}, *defs.values()):
            text = json.dumps(part, sort_keys=True)
            if text not in checked:
                Draft202012Validator.check_schema(part)
                checked.add(text)
        dangling = {
            ref for ref in _REF.findall(json.dumps(found)) if ref.removeprefix("#/$defs/") not in defs
        }
        if dangling or found.get("type") != "object" or found.get("additionalProperties") is not False:
            problems.append(f"{method.name}: {sorted(dangling)}")
    assert problems == []
    assert len(checked) > len(index.methods)
