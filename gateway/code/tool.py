"""`run_code`, the fourth meta-tool: its params model and its definition, added to a gateway's meta-tools."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field

from ..catalog import Catalog
from ..context import ToolContext, ToolResult
from ..definition import ToolDefinition
from ..meta_tools import _CONFIG, _unlisted
from . import text
from .programs import Programs

MAX_CODE_CHARS = 20_000


class RunCodeParams(BaseModel):
    model_config = _CONFIG

    code: str | None = Field(
        None,
        max_length=MAX_CODE_CHARS,
        description=text.CODE_DESCRIPTION,
        json_schema_extra=_unlisted("maxLength"),
    )
    confirmation: str | None = Field(
        None,
        max_length=200,
        description=text.CONFIRMATION_DESCRIPTION,
        json_schema_extra=_unlisted("maxLength"),
    )
    plan: bool = Field(False, description=text.PLAN_DESCRIPTION)


def run_code_definition(programs: Programs, *, alone: bool = False) -> ToolDefinition:
    """run_code, bound to `programs`; `alone`: offered without the three meta-tools, so its
    description says everything the model needs to find and call tools."""

    async def run_code(params: RunCodeParams, ctx: ToolContext) -> ToolResult:
        return await programs.run(params.code, params.confirmation, ctx, plan=params.plan)

    return ToolDefinition(
        name=text.NAME,
        category="gateway",
        action="execute",
        summary="Run a program that calls tools.",
        description=text.ALONE_DESCRIPTION if alone else text.DESCRIPTION,
        params=RunCodeParams,
        handler=run_code,
        # The gate applies to each call the program makes, not to run_code itself.
        destructive=False,
        # Its own limits bound it (wall time, execution time, calls).
        timeout=math.inf,
    )


def with_run_code(meta: Catalog, programs: Programs) -> Catalog:
    """The meta-tools with run_code after them (the three are unchanged)."""
    return Catalog([*meta, run_code_definition(programs)])


def run_code_alone(programs: Programs) -> Catalog:
    """run_code as the only meta-tool: discover, schema and call happen inside programs."""
    return Catalog([run_code_definition(programs, alone=True)])
