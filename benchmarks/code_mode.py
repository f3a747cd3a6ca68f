"""Code mode against the three meta-tools: tokens the model reads and model turns, on six workspace tasks.

    python -m benchmarks.code_mode

Each task is played three times in the same run, on a fresh local workspace each time (the demo
data, Europe/Berlin, the clock at Monday 2026-11-23 09:00), with scripted model turns: once with the
three meta-tools (discover, read the schemas, invoke; independent calls in one turn, as a good model
batches them), once with code mode (a program that asks discover() for the two best tools of each
step of the plan, which it gives as Python signatures, then a program that does the work and
returns only what the answer needs), and once with run_code alone (`[code] only`: the same
programs, with one tool definition to read at each turn instead of four). No turn names a tool or a parameter before a result has shown
it to the model: `Play` refuses such a turn.
Destructive calls are approved by the host as they come, so neither play spends turns on approvals.

What the model reads is counted in cl100k_base tokens (bpe-openai ships the vocabulary): at each
model turn, its whole context (the tool definitions, the request, every earlier call and result),
summed over the turns; separately, the results alone; and of those, the results of the work, once
the tools are found and their parameters read (in code mode, after the first program). The
target: at least 5x fewer tokens on the tasks that take five or more calls. Every play must leave
the workspace in the same state, which the run checks.

Then the overhead of code mode itself: starting a program that makes 10 calls of a tool that does
nothing, the median of 50 runs (target: under 50 ms).

The tasks and their scripted plays are in `benchmarks/code_mode_tasks.py`; this module plays them on
fresh workspaces, checks that the plays end alike, measures the overhead and prints the figures.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from gateway import PARAMS_CONFIG, Catalog, Gateway, run_sync, tool
from gateway.code import enable
from gateway.runtime import open_gateway
from gateway.settings.loading import Settings
from gateway.settings.sections import CodeSettings

from .code_mode_tasks import TASKS, Play

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))


MODES = ("meta", "code", "only")
"""The plays: the three meta-tools, code mode (four tools), run_code alone."""


@contextmanager
def workspace(mode: str, *, at_once: bool = True) -> Iterator[Gateway]:
    """A fresh workspace whose gateway offers the tools of `mode` (one of `MODES`); `at_once`: the
    host approves each destructive call as it comes (else they wait for `Gateway.approve`)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp),
            timezone="Europe/Berlin",
            catalogs=["workspace"],
            seed_demo=True,
            usage={"enabled": False},  # type: ignore[arg-type]
            audit={"enabled": False},  # type: ignore[arg-type]
            search={"dense": {"mode": "off"}},  # type: ignore[arg-type]
            code=CodeSettings(enabled=mode != "meta", only=mode == "only"),
        )
        approver = (lambda pending: True) if at_once else None
        with open_gateway(settings, clock=lambda: NOW, approver=approver) as gw:
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
    only: Play


def run_tasks() -> list[Figures]:
    rows = []
    for name, (request, play_task) in TASKS.items():
        plays = []
        ends = []
        for mode in MODES:
            with workspace(mode) as gw:
                play = Play(gw, request)
                play.start()
                play_task(play, mode != "meta")  # run_code alone plays code mode's programs
                ends.append(_without_ids(state(gw)))
                play.gw = None  # type: ignore[assignment]
                plays.append(play)
        for mode, end in zip(MODES[1:], ends[1:], strict=True):
            if end != ends[0]:
                a, b = (json.dumps(e, indent=1, sort_keys=True).splitlines() for e in (ends[0], end))
                print("\n".join(difflib.unified_diff(a, b, lineterm="", n=1)))
                raise AssertionError(f"{name}: the {mode} play left the workspace unlike the meta-tools'")
        rows.append(Figures(name, *plays))
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


def _work(p: Play) -> int:
    return p.results - p.finding


READINGS: tuple[tuple[str, Callable[[Play], int]], ...] = (
    ("read (whole context, each turn)", lambda p: p.read),
    ("results", lambda p: p.results),
    ("work results (after finding the tools)", _work),
)


def main() -> None:
    rows = run_tasks()
    side = f"{'calls':>5} {'turns':>5} {'read':>6} {'results':>7} {'work':>5}"
    fewer = f"{'read':>6} {'results':>7} {'work':>5}"
    heads = ["three meta-tools", "code mode", "run_code alone"]
    print(
        f"{'':<17} "
        + " | ".join(f"{h:^32}" for h in heads)
        + f" | {'code mode: fewer':^20} | {'alone: fewer':^20}"
    )
    print(f"{'task':<17} {side} | {side} | {side} | {fewer} | {fewer}")
    for r in rows:
        cells = [
            f"{p.calls:>5} {p.turns:>5} {p.read:>6,} {p.results:>7,} {_work(p):>5,}"
            for p in (r.meta, r.code, r.only)
        ]
        m = r.meta
        ratios = [
            f"{m.read / p.read:>5.1f}x {m.results / p.results:>6.1f}x {_work(m) / _work(p):>4.1f}x"
            for p in (r.code, r.only)
        ]
        print(f"{r.task:<17} {' | '.join(cells)} | {' | '.join(ratios)}")
    long = [r for r in rows if r.meta.calls >= 5]
    for label, reading in READINGS:
        for play, pick in (("code mode", lambda r: r.code), ("run_code alone", lambda r: r.only)):
            ratios = [reading(r.meta) / reading(pick(r)) for r in long]
            verdict = "meets" if min(ratios) >= 5 else "misses"
            print(
                f"{label}, {play}: {min(ratios):.1f}x to {max(ratios):.1f}x fewer tokens on the "
                f"{len(long)} tasks of five or more calls; {verdict} the 5x target"
            )
    times = overhead()
    print(
        f"a program making 10 no-op calls: median {statistics.median(times):.1f} ms, "
        f"p90 {sorted(times)[int(len(times) * 0.9)]:.1f} ms over {len(times)} runs (target: under 50 ms)"
    )


if __name__ == "__main__":
    main()
