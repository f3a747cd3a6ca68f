"""Load an evaluation dataset folder (`tools.jsonl`, `queries.jsonl`) the way a user imports tools.

Each JSON tool definition becomes a real `ToolDefinition` registered in a `Catalog`: a valid name
made by `gateway.names.to_name`, an action inferred from the tool's own verb, a pydantic params model
built from its JSON schema. The mapping back to the dataset's names is kept so rankings can be scored.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, create_model

from gateway import PARAMS_CONFIG, Catalog, ToolDefinition, normalize_action
from gateway.definition import MAX_SUMMARY_LENGTH
from gateway.names import to_name

_WORDS = re.compile(r"[A-Za-z]+")
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s")
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Dataset:
    """A dataset loaded into a catalog, with the raw records and the name mappings."""

    path: Path
    tools: list[dict[str, Any]]
    queries: list[dict[str, Any]]
    catalog: Catalog
    to_source: Mapping[str, str]
    """catalog name -> dataset name"""
    to_catalog: Mapping[str, str]
    """dataset name -> catalog name"""


FILES = ("tools.jsonl", "queries.jsonl")
WHERE_FROM = (
    "The evaluation data is not part of this repository: a dataset is a folder holding tools.jsonl "
    "(one tool a line: name, description, parameters as a JSON schema or null, category or null) and "
    "queries.jsonl (one request a line: query, gold: the names of the tools that answer it, and "
    "optionally gold_groups: lists of names of which any one counts); docs/discovery.md measures three "
    "public benchmarks converted to it (MetaTool, LiveMCPBench, BFCL)."
)


def missing(root: Path, files: Sequence[str] = FILES) -> str | None:
    """What keeps `root` from being a dataset folder, or None when it is one."""
    absent = [name for name in files if not (root / name).is_file()]
    if not absent:
        return None
    return f"no dataset at {root}: {' and '.join(absent)} not found. {WHERE_FROM}"


def require(roots: Sequence[Path], program: str, hint: str = "", files: Sequence[str] = FILES) -> None:
    """Exit with status 2 and one clear message when a dataset folder is not there (nothing has run yet)."""
    for root in roots:
        problem = missing(root, files)
        if problem is not None:
            print(f"{program}: {problem}{hint}", file=sys.stderr)
            raise SystemExit(2)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _handler(params: BaseModel) -> None:
    """Imported tools are only searched here, never run."""


def _summary(description: str, fallback: str) -> str:
    text = " ".join(description.split())
    if not text:
        return fallback
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) > MAX_SUMMARY_LENGTH:
        first = first[: MAX_SUMMARY_LENGTH - 3].rsplit(" ", 1)[0] + "..."
    return first


def infer_verb(raw_name: str, description: str) -> tuple[str, str]:
    """(action, verb): the first word of the name, else of the description, that maps onto the vocabulary."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", raw_name)
    for source in (_WORDS.findall(spaced), _WORDS.findall(description)[:1]):
        for word in source:
            action = normalize_action(word.lower())
            if action is not None:
                return action, word.lower()
    return "execute", "execute"


def params_model(model_name: str, schema: Mapping[str, Any] | None) -> type[BaseModel]:
    """A params model with one described field per JSON-schema property."""
    properties: Mapping[str, Any] = (schema or {}).get("properties") or {}
    required = set((schema or {}).get("required") or ())
    fields: dict[str, Any] = {}
    for i, (prop, raw_spec) in enumerate(properties.items()):
        spec: Mapping[str, Any] = raw_spec if isinstance(raw_spec, Mapping) else {}
        description = str(spec.get("description") or "").strip() or f"{prop} ({spec.get('type', 'any')})"
        ident = prop if _IDENTIFIER.match(prop) and not keyword.iskeyword(prop) else f"p{i}_{to_name(prop)}"
        if ident in ("model_config", "model_fields") or ident.startswith("model_"):
            ident = f"p_{ident}"
        default = ... if prop in required else None
        fields[ident] = (Any, Field(default, alias=prop, description=description))
    model: type[BaseModel] = create_model(model_name, __config__=PARAMS_CONFIG, **fields)
    return model


def definition(record: Mapping[str, Any], name: str) -> ToolDefinition:
    """The ToolDefinition a user would register for one JSON tool record."""
    raw_name = str(record["name"])
    description = str(record.get("description") or "").strip()
    human = " ".join(re.split(r"[_.\-]+", raw_name))
    action, verb = infer_verb(raw_name, description)
    category = to_name(str(record["category"])) if record.get("category") else "general"
    return ToolDefinition(
        name=name,
        category=category,
        action=action,
        verb=verb,
        summary=_summary(description, human),
        description=description or human,
        params=params_model(f"Params_{name}", record.get("parameters")),
        handler=_handler,
        read_only=action in ("search", "list", "read"),
        metadata={"source_name": raw_name},
    )


def load(path: str | Path) -> Dataset:
    """Read a dataset folder and register its tools in a Catalog."""
    root = Path(path)
    tools = read_jsonl(root / "tools.jsonl")
    queries = read_jsonl(root / "queries.jsonl")
    to_source: dict[str, str] = {}
    to_catalog: dict[str, str] = {}
    definitions = []
    for record in tools:
        raw = str(record["name"])
        name = base = to_name(raw)
        n = 1
        while name in to_source:  # two dataset names that normalise to one: keep both, stably
            n += 1
            name = f"{base[:60]}_{n}"
        to_source[name] = raw
        to_catalog[raw] = name
        definitions.append(definition(record, name))
    return Dataset(root, tools, queries, Catalog(definitions), to_source, to_catalog)


def baseline_text(record: Mapping[str, Any]) -> str:
    """What the plain BM25 baseline indexes: name, description, category and parameter text."""
    parts = [str(record["name"]), str(record.get("description") or ""), str(record.get("category") or "")]
    schema = record.get("parameters") or {}
    for prop, spec in (schema.get("properties") or {}).items():
        parts.append(prop)
        if isinstance(spec, Mapping):
            parts.append(str(spec.get("description") or ""))
    return " ".join(parts)


def load_openapi(path: str | Path, entry: str, spec: Path) -> Dataset:
    """A folder's `queries.jsonl` over the tools an `[[openapi]]` entry serves (no `tools.jsonl`).

    The tools are the OpenAPI provider's own definitions (names, summaries, search words, rank
    weight), as a gateway configured with that entry serves them; gold names are tool names. Each
    record the baseline reads holds what a terse REST catalog says of an operation: its tool name,
    category and one-line summary.

    Raises:
        UserError: the entry or the description cannot be served.
        SpecError: the description cannot be read.
    """
    from gateway.openapi import OpenApi
    from gateway.openapi.provider import parse_entries

    root = Path(path)
    (settings,) = parse_entries([{"name": entry, "spec": spec}])
    api = OpenApi(settings, None)
    try:
        definitions = api.definitions()
    finally:
        api.close()
    tools = [
        {"name": d.name, "description": d.summary, "parameters": None, "category": d.category}
        for d in definitions
    ]
    same = {d.name: d.name for d in definitions}
    return Dataset(root, tools, read_jsonl(root / "queries.jsonl"), Catalog(definitions), same, same)
