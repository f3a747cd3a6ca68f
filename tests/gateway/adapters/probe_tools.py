"""Tools that record when they start and finish, to prove how a turn's calls were scheduled."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from pydantic import BaseModel, Field

from gateway import PARAMS_CONFIG, tool
from gateway.agent import Image, content


class Probe:
    """Shared state, reset for each test by the `probe` fixture."""

    log: ClassVar[list[str]] = []
    # Two concurrent calls both reach the barrier; run one after the other, the first would wait forever
    # (the tool's timeout turns that into an error result instead of a hung test).
    barrier: ClassVar[asyncio.Barrier | None] = None


class Word(BaseModel):
    model_config = PARAMS_CONFIG
    word: str = Field(description="Any word.")


@tool(category="probe", action="read", read_only=True, concurrency_safe=True, timeout=10)
async def probe_together(params: Word) -> str:
    """Wait until a second call is running too (read-only, concurrency-safe)."""
    Probe.log.append(f"start {params.word}")
    assert Probe.barrier is not None
    await Probe.barrier.wait()
    Probe.log.append(f"end {params.word}")
    return params.word


@tool(category="probe", action="read", read_only=True)
async def probe_alone(params: Word) -> str:
    """Yield once in the middle (read-only, not concurrency-safe)."""
    Probe.log.append(f"start {params.word}")
    await asyncio.sleep(0)
    Probe.log.append(f"end {params.word}")
    return params.word


@tool(category="probe", action="read", read_only=True, concurrency_safe=True)
def probe_chart(params: Word) -> dict[str, object]:
    """Answer with a caption and an image."""
    return content(f"Chart of {params.word}", Image(b"\x89PNG", "image/png"))


PROBE_TOOLS = [probe_together, probe_alone, probe_chart]
