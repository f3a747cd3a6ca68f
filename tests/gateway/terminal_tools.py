"""A catalog whose extra tool's description carries an escape sequence and a bidi override."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, Catalog, Toolset, tool

from .sample_tools import ALL_TOOLS

REVERSED = "Peeks at a file \u202eexe.txt\x1b[2J now"


class PeekParams(BaseModel):
    model_config = PARAMS_CONFIG
    path: str = Field(description="Which file.")


@tool(category="files", action="read", read_only=True, description=REVERSED)
def files_peek(params: PeekParams) -> str:
    """Peeks at a file \u202eexe.txt\x1b[2J now."""
    return params.path


CATALOG_TOOLS = [*ALL_TOOLS, files_peek]


def provide(options: Any) -> Toolset:
    return Toolset(catalog=Catalog(CATALOG_TOOLS))
