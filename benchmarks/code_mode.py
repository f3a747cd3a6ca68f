"""Code mode against the three meta-tools: tokens the model reads and model turns, on six workspace tasks.

    python -m benchmarks.code_mode

Each task is played twice in the same run, on a fresh local workspace each time (the demo data,
Europe/Berlin, the clock at Monday 2026-11-23 09:00), with scripted model turns: once with the three
meta-tools (discover, read the schemas, invoke; independent calls in one turn, as a good model
batches them) and once with code mode (a program that asks discover() for the two best tools of
each step of the plan, which it gives as Python signatures, then a program that does the work and
returns only what the answer needs). No turn names a tool or a parameter before a result has shown
it to the model: `Play` refuses such a turn.
Destructive calls are approved by the host as they come, so neither play spends turns on approvals.

What the model reads is counted in cl100k_base tokens (bpe-openai ships the vocabulary): at each
model turn, its whole context (the tool definitions, the request, every earlier call and result),
summed over the turns; separately, the results alone; and of those, the results of the work, once
the tools are found and their parameters read (in code mode, after the first program). The
target: at least 5x fewer tokens on the tasks that take five or more calls. Both plays must leave
the workspace in the same state, which the run checks.

Then the overhead of code mode itself: starting a program that makes 10 calls of a tool that does
nothing, the median of 50 runs (target: under 50 ms).

The tasks and their scripted plays are in `benchmarks/code_mode_tasks.py`; this module plays them on
fresh workspaces, checks that both plays end alike, measures the overhead and prints the figures.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from gateway import PARAMS_CONFIG, Catalog, Gateway, run_sync, tool
from gateway.client_settings import CodeSettings
from gateway.code import enable
from gateway.config import Settings
from gateway.runtime import open_gateway

from .code_mode_tasks import TASKS, Play

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))


@contextmanager
def workspace(code: bool) -> Iterator[Gateway]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            timezone="Europe/Berlin",
            catalogs=["workspace"],
            seed_demo=True,
            usage={"enabled": False},  # type: ignore[arg-type]
            audit={"enabled": False},  # type: ignore[arg-type]
            search={"dense": {"mode": "off"}},  # type: ignore[arg-type]
            code=CodeSettings(enabled=code),
        )
        with open_gateway(settings, clock=lambda: NOW, approver=lambda pending: True) as gw:
            yield gw


def state(gw: Gateway) -> Any:
    """What the workspace holds after a play, to check both plays did the same."""
    reads = [
        ("calendar_list_events", {"start": "2026-11-23", "end": "2026-12-07", "max_results": 100}),
        ("gmail_search_messages", {"query": "in:anywhere", "max_results": 100}),
        ("tasks_list_tasks", {}),
    ]
    return [run_sync(gw.invoke(n, a)).output for n, a in reads]


def _without_ids(value: Any) -> Any:
    """Ids are random, and so is the order of items made at the same instant: compared as sets."""
    if isinstance(value, dict):
        return {
            k: _without_ids(v)
            for k, v in value.items()
            if not k.endswith("id") and k not in ("updated", "parent")
        }
    if isinstance(value, list):
        return sorted((_without_ids(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


@dataclass(frozen=True)
class Figures:
    task: str
    meta: Play
    code: Play


def run_tasks() -> list[Figures]:
    rows = []
    for name, (request, play_task) in TASKS.items():
        plays = []
        ends = []
        for code in (False, True):
            with workspace(code) as gw:
                play = Play(gw, request)
                play.start()
                play_task(play, code)
                ends.append(_without_ids(state(gw)))
                play.gw = None  # type: ignore[assignment]
                plays.append(play)
        if ends[0] != ends[1]:
            a, b = (json.dumps(e, indent=1, sort_keys=True).splitlines() for e in ends)
            print("\n".join(difflib.unified_diff(a, b, lineterm="", n=1)))
            raise AssertionError(f"{name}: the two plays left the workspace in different states")
        rows.append(Figures(name, plays[0], plays[1]))
    return rows


class _NoParams(BaseModel):
    model_config = PARAMS_CONFIG


@tool(category="bench", action="read", read_only=True)
def noop(params: _NoParams) -> int:
    """Does nothing."""
    return 0


def overhead(runs: int = 50) -> list[float]:
    """Milliseconds to run a program that makes 10 calls of a tool that does nothing."""
    gw = Gateway(Catalog([noop]))
    programs = enable(gw, CodeSettings(enabled=True))
    code = "n = 0\nfor i in range(10):\n    n += call('noop', {})\nn"

    async def measure() -> list[float]:
        times = []
        for _ in range(runs + 3):
            start = time.perf_counter()
            result = await gw.call("run_code", {"code": code})
            assert result.ok, result
            times.append((time.perf_counter() - start) * 1000)
        return times[3:]  # the first start the pool's worker

    try:
        return asyncio.run(measure())
    finally:
        programs.close()


def main() -> None:
    rows = run_tasks()
    side = f"{'calls':>5} {'turns':>5} {'read':>6} {'results':>7} {'work':>5}"
    print(f"{'':<17} {'three meta-tools':^32} | {'code mode':^32} | {'fewer tokens':^20}")
    print(f"{'task':<17} {side} | {side} | {'read':>6} {'results':>7} {'work':>5}")
    for r in rows:
        m, c = r.meta, r.code
        cells = [
            f"{p.calls:>5} {p.turns:>5} {p.read:>6,} {p.results:>7,} {p.results - p.finding:>5,}"
            for p in (m, c)
        ]
        work = (m.results - m.finding) / (c.results - c.finding)
        print(
            f"{r.task:<17} {cells[0]} | {cells[1]} | {m.read / c.read:>5.1f}x {m.results / c.results:>6.1f}x "
            f"{work:>4.1f}x"
        )
    long = [r for r in rows if r.meta.calls >= 5]
    for label, ratio in (
        ("read (whole context, each turn)", lambda r: r.meta.read / r.code.read),
        ("results", lambda r: r.meta.results / r.code.results),
        (
            "work results (after finding the tools)",
            lambda r: (r.meta.results - r.meta.finding) / (r.code.results - r.code.finding),
        ),
    ):
        ratios = [ratio(r) for r in long]
        verdict = "meets" if min(ratios) >= 5 else "misses"
        print(
            f"{label}: {min(ratios):.1f}x to {max(ratios):.1f}x fewer tokens on the {len(long)} tasks of five or more calls; {verdict} the 5x target"
        )
    times = overhead()
    print(
        f"a program making 10 no-op calls: median {statistics.median(times):.1f} ms, "
        f"p90 {sorted(times)[int(len(times) * 0.9)]:.1f} ms over {len(times)} runs (target: under 50 ms)"
    )


if __name__ == "__main__":
    main()
