"""Code mode: the model writes a short program over the catalog, and every call in it passes the same gate.

Owns `run_code` (`tool.py`), the fourth meta-tool, off unless `[code] enabled` or `gateway serve
--code` (the only one with `[code] only` or `--code-only`); running, pausing and resuming programs
(`programs.py`), whose every call goes through the gateway's own `invoke`, `discover` and `schema`;
the paused programs, each its principal's, within bounds (`paused.py`); the sandbox the programs run
in, pydantic-monty's worker processes (`sandbox.py`, the only module that imports `pydantic_monty`,
and only when a program runs); and the texts the model reads about a program (`text.py`). See docs/code-mode.md.

May import: the core (never the engine or the runtime: the gateway is a `Backend` here); no other room.
"""

from __future__ import annotations

from typing import Any

from ..settings.sections import CodeSettings
from .programs import Backend, Programs
from .tool import RunCodeParams, run_code_alone, run_code_definition, with_run_code

__all__ = [
    "Backend",
    "Programs",
    "RunCodeParams",
    "enable",
    "run_code_alone",
    "run_code_definition",
    "with_run_code",
]


def enable(gateway: Any, settings: CodeSettings) -> Programs:
    """Add run_code to `gateway`'s meta-tools; close the returned `Programs` when the gateway stops.

    With `settings.only`, run_code replaces the three meta-tools: the model finds, reads and calls
    tools inside programs, through the same `Gateway.discover`, `schema` and `invoke`.

    Raises:
        UserError: the sandbox (the `code` extra) is not installed.
    """
    programs = Programs(gateway, settings)
    programs.sandbox.check()
    gateway.meta = run_code_alone(programs) if settings.only else with_run_code(gateway.meta, programs)
    return programs
