"""A catalog of one slow tool and its controls, for progress and cancellation over MCP.

`slow_wait` waits until `slow_release` is called; if cancelled first, it says so to `slow_report`
(which waits for that) and never reaches the line after its wait. Events, not sleeps: the server
runs one event loop, so the three share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic import BaseModel

from gateway import PARAMS_CONFIG, tool

WAIT_SECONDS = 30.0


class NoParams(BaseModel):
    model_config = PARAMS_CONFIG


@dataclass
class _State:
    started: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)
    finished: bool = False


_STATE: list[_State] = []


def _state() -> _State:
    if not _STATE:  # made in the server's event loop, on first use
        _STATE.append(_State())
    return _STATE[0]


@tool(category="slow", action="read", read_only=True)
async def slow_wait(params: NoParams) -> dict[str, Any]:
    """Wait until released."""
    state = _state()
    state.started.set()
    try:
        await state.release.wait()
    except anyio.get_cancelled_exc_class():
        state.cancelled.set()
        raise
    state.finished = True
    return {"released": True}


@tool(category="slow", action="update", read_only=True)
async def slow_release(params: NoParams) -> dict[str, Any]:
    """Release the waiting call."""
    _state().release.set()
    return {"released": True}


@tool(category="slow", action="read", read_only=True)
async def slow_started(params: NoParams) -> dict[str, Any]:
    """Wait until the waiting call is running."""
    with anyio.fail_after(WAIT_SECONDS):
        await _state().started.wait()
    return {"started": True}


@tool(category="slow", action="read", read_only=True)
async def slow_report(params: NoParams) -> dict[str, Any]:
    """Wait until the waiting call has seen its cancellation; say whether it ever finished."""
    state = _state()
    with anyio.fail_after(WAIT_SECONDS):
        await state.cancelled.wait()
    return {"cancelled": True, "finished": state.finished}


def provide(options: Any) -> Any:
    from gateway import Catalog, Toolset

    return Toolset(catalog=Catalog([slow_wait, slow_release, slow_started, slow_report]))
