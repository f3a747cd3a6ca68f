"""Approving a program's writes: a person's decisions and the model's tokens, call by call, as a plan,
or under a standing approval, on the code-mode tasks and two with 10 and 20 writes.

    python -m benchmarks.approvals

Each task's code-mode play (`benchmarks/code_mode_tasks.py`) runs three times in the same run, each
on a fresh local workspace (the demo data, Europe/Berlin, Monday 2026-11-23 09:00), with no
approver that answers at once, as over MCP without elicitation: a scripted person decides through
`Gateway.approve`, as the console and `gateway approve` do.

- **single calls**: every destructive call pauses the program; the person approves each, and the
  model resumes the program once for each (`run_code` with the pending id).
- **plan**: the work program runs with `plan` set; the person approves the plan once, and the
  model runs it (`run_code` with the plan's id).
- **standing rule**: before the request, the person makes one rule for each destructive tool the
  task writes with (found from the single-call play's pauses), for this principal, for 30 minutes;
  the program runs through.

A decision is one thing a person approves: a paused call, a plan, a rule. "asks" is the number of
calls the single-call gate asks about (the destructive ones); a plan holds every write, including
those that need no approval of their own (moving a task, creating an event), so it asks once
where single calls asked nothing. The model's tokens are
counted as `benchmarks.code_mode` counts them (cl100k_base): its whole context at each turn, summed
over its turns. Every play must leave the workspace in the same state, which the run checks.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from gateway.gate.confirmation import DecidedBy

from .code_mode import _without_ids, state, workspace
from .code_mode_tasks import TASKS, Calls, Play, code_start, program

REGIMES = ("single", "plan", "rule")
PERSON = DecidedBy("console", "person")


@dataclass
class Gated(Play):
    """A code-mode play whose destructive calls a person decides, in one regime (`REGIMES`)."""

    regime: str = "single"
    decisions: int = 0
    paused_tools: set[str] = field(default_factory=set)

    def turn(self, calls: Calls) -> list[Any]:
        if self.regime == "plan":
            calls = [
                (n, {**a, "plan": True}) if n == "run_code" and "code" in a else (n, a) for n, a in calls
            ]
        out = super().turn(calls)
        while waiting := [r["pending_id"] for r in out if isinstance(r, dict) and "pending_id" in r]:
            for pending_id in waiting:  # the person reads each and approves it
                record = self.gw.gate.store.get(pending_id)
                if record is not None:
                    self.paused_tools.add(record.pending.tool)
                self.gw.approve(pending_id, decided_by=PERSON)
                self.decisions += 1
            out = super().turn([("run_code", {"confirmation": p}) for p in waiting])
        return out


def remind_each(addresses: list[str]) -> Any:
    """A task of `len(addresses)` writes: a separate note to each of the people the request names."""

    def play_task(play: Play, code: bool) -> None:
        code_start(play, ["send an email"])
        play.turn(
            [
                program(
                    "sent = []\n"
                    f"for a in {addresses!r}:\n"
                    "    call('gmail_send_message', {'to': [a], 'subject': 'Thank you',\n"
                    "         'body': 'Thank you for helping at the fair on Saturday.'})\n"
                    "    sent.append(a)\n"
                    "len(sent)"
                )
            ]
        )
        play.answer(f"Sent {len(addresses)} thank-you notes.")

    people = ", ".join(addresses)
    return (f"Send each of these people a thank-you note for helping at the fair: {people}.", play_task)


def _people(n: int) -> list[str]:
    return [f"helper{i:02d}@example.com" for i in range(1, n + 1)]


ALL_TASKS: dict[str, tuple[str, Any]] = {
    **TASKS,
    "thank ten": remind_each(_people(10)),
    "thank twenty": remind_each(_people(20)),
}


@dataclass(frozen=True)
class Row:
    task: str
    plays: dict[str, Gated]
    rules: int


def run_tasks(names: list[str] | None = None) -> list[Row]:
    rows = []
    for name, (request, play_task) in ALL_TASKS.items():
        if names is not None and name not in names:
            continue
        plays: dict[str, Gated] = {}
        ends = []
        tools: set[str] = set()
        for regime in REGIMES:
            with workspace("code", at_once=False) as gw:  # decisions wait for a person
                if regime == "rule":  # the person's rules, made before the request
                    for tool in sorted(tools):
                        gw.add_rule(
                            tool, principal="local", expires_at=gw.gate.now() + 1800, decided_by=PERSON
                        )
                play = Gated(gw, request, regime=regime)
                play.start()
                play_task(play, True)
                if regime == "single":
                    tools = set(play.paused_tools)
                if regime == "rule":
                    play.decisions = len(tools)
                ends.append(_without_ids(state(gw)))
                play.gw = None  # type: ignore[assignment]
                plays[regime] = play
        for regime, end in zip(REGIMES[1:], ends[1:], strict=True):
            if end != ends[0]:
                a, b = (json.dumps(e, indent=1, sort_keys=True).splitlines() for e in (ends[0], end))
                print("\n".join(difflib.unified_diff(a, b, lineterm="", n=1)))
                raise AssertionError(
                    f"{name}: the {regime} play left the workspace unlike the single-call one"
                )
        rows.append(Row(name, plays, len(tools)))
    return rows


def main() -> None:
    rows = run_tasks()
    heads = ("single calls", "plan", "standing rule")
    print(f"{'':<17} {'':>6} | " + " | ".join(f"{h:^24}" for h in heads))
    cell = f"{'decide':>6} {'turns':>5} {'read':>9}"
    print(f"{'task':<17} {'asks':>6} | " + " | ".join(cell for _ in heads))
    for r in rows:
        writes = r.plays["single"].decisions
        cells = [f"{p.decisions:>6} {p.turns:>5} {p.read:>9,}" for p in r.plays.values()]
        print(f"{r.task:<17} {writes:>6} | " + " | ".join(cells))
    writing = [r for r in rows if r.plays["single"].decisions >= 2]
    for regime in ("plan", "rule"):
        decided = [r.plays["single"].decisions / max(1, r.plays[regime].decisions) for r in writing]
        read = [r.plays["single"].read / r.plays[regime].read for r in writing]
        print(
            f"{regime}: {min(decided):.0f}x to {max(decided):.0f}x fewer decisions and "
            f"{min(read):.1f}x to {max(read):.1f}x fewer tokens read than single calls, "
            f"on the {len(writing)} tasks of two or more writes"
        )


if __name__ == "__main__":
    main()
