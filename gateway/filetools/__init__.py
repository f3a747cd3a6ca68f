"""Tools defined as files: a Markdown definition beside an executable script.

Owns the file format (`definition`: front matter, description, JSON schema, problems with file and
line), whole tool directories as a catalog provider with reloading and the `gateway tools new`
scaffold (`directories`), and the sandboxed run of a script (`scripts`). It may import the core
(`gateway.catalog`, `definition`, `errors`, `names`, `policy`, `schema_params`, `toolset`) and
nothing else of the gateway. PyYAML and jsonschema come with the `files` extra, so the names below
are loaded on first use: `import gateway.filetools` works without the extra.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .definition import DefinitionProblem, FileToolDefinition, load_definition
    from .directories import FileTools, provide, scaffold

__all__ = ["DefinitionProblem", "FileToolDefinition", "FileTools", "load_definition", "provide", "scaffold"]

_HOME = {
    "DefinitionProblem": "definition",
    "FileToolDefinition": "definition",
    "load_definition": "definition",
    "FileTools": "directories",
    "provide": "directories",
    "scaffold": "directories",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
