"""The host's side of the confirmation gate at a terminal: ask, list what waits, approve or deny."""

from __future__ import annotations

import argparse
import contextlib
import getpass
import shutil
import sys
import textwrap
import time

from ..context import PendingConfirmation
from ..engine import Gateway
from ..errors import UserError
from ..gate.confirmation import DecidedBy
from ..gate.plans import is_plan, writes_of
from ..rendering import shown, to_jsonable
from .messages import NO_TERMINAL, answered_yes
from .output import dump


def wrapped(text: str, first: str = "    ", indent: str = "    ") -> str:
    """`text` in full, wrapped to the terminal's width: nothing cut, every character kept.

    The text is a preview, whose control characters are escaped already (`confirmation.preview`).
    """
    width = max(40, shutil.get_terminal_size().columns - 1)
    return textwrap.fill(
        text,
        width,
        initial_indent=first,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
        drop_whitespace=False,
    )


def terminal_operator() -> DecidedBy:
    """Who decides at this terminal: the terminal channel and the user signed in to it."""
    return DecidedBy("terminal", getpass.getuser())


class TerminalApprover:
    """Asks the person at the terminal about each destructive call; remembers when nobody could be asked."""

    def __init__(self, assume_yes: bool) -> None:
        self.assume_yes = assume_yes
        self.asked_nobody = False
        self.stdin_taken = False
        """The call's parameters came on stdin: the question goes to the terminal itself (/dev/tty)."""
        self.decided_by = terminal_operator()

    def __call__(self, pending: PendingConfirmation) -> bool:
        first, *more = pending.preview.split("\n")  # a plan: its summary, then each write on its own line
        print(wrapped(first, "gateway: confirmation needed: ", "gateway:   "), file=sys.stderr)
        for line in more:
            print(wrapped(line, "gateway:   ", "gateway:       "), file=sys.stderr)
        if self.assume_yes:
            print("gateway: approved by --yes.", file=sys.stderr)
            return True
        if sys.stdin.isatty():
            return answered_yes("gateway: run it? [y/N] ")  # Ctrl-C declines at once
        if self.stdin_taken:
            with contextlib.suppress(OSError), open("/dev/tty", encoding="utf-8", errors="replace") as tty:
                return answered_yes("gateway: run it? [y/N] ", tty)
        self.asked_nobody = True
        print(f"gateway: {NO_TERMINAL.rstrip('.')}; pass --yes to approve.", file=sys.stderr)
        return False


def terminal_approver(assume_yes: bool) -> TerminalApprover:
    return TerminalApprover(assume_yes)


def list_pending(gw: Gateway, args: argparse.Namespace) -> int:
    """The calls waiting for a human, oldest first: what each will do, its id, who made it and through
    which toolsets (those the caller was confined to: an endpoint's, a bound token's)."""
    waiting = gw.gate.pending()
    if args.json:
        print(
            dump(
                [
                    {
                        "pending_id": p.pending_id,
                        "tool": p.tool,
                        "preview": p.preview,
                        "parameters": to_jsonable(p.parameters),
                        "principal": p.principal,
                        "toolsets": list(p.toolsets),
                        "expires_at": p.expires_at,
                        "plan": p.plan,
                    }
                    for p in waiting
                ]
            )
        )
        return 0
    if not waiting:
        print("No call is waiting for approval.")
    for p in waiting:
        if p.plan is not None and not is_plan(p):  # a write of a plan: listed, numbered, under its plan
            continue
        left = max(0, round(p.expires_at - time.time()))
        who = shown(p.principal)
        if p.toolsets:  # the endpoint's or the bound token's: what the caller could see and do
            who += f", through toolset{'s' if len(p.toolsets) > 1 else ''} {shown(', '.join(p.toolsets))}"
        print(f"{p.pending_id}  {shown(p.tool)}  (for {who}, expires in {left} s)\n{previewed(p)}")
        if is_plan(p):  # and the program that will run, as the person approving should read it
            print("    the program:")
            print("\n".join(f"      {shown(line)}" for line in str(p.parameters.get("code", "")).split("\n")))
    return 0


def previewed(p: PendingConfirmation, indent: str = "    ") -> str:
    """A pending call's preview in full, wrapped; a plan's line by line (its summary, then each write)."""
    if not is_plan(p):
        return wrapped(p.preview, indent, indent)
    return "\n".join(wrapped(line, indent, indent + "    ") for line in p.preview.split("\n"))


def decide(gw: Gateway, args: argparse.Namespace) -> int:
    """`gateway approve ID` / `gateway deny ID`: the host's answer, from a terminal the model cannot use."""
    waiting = {p.pending_id: p for p in gw.gate.pending()}
    found = waiting.get(args.pending_id)
    approve = args.command == "approve"
    who = terminal_operator()  # the decision goes to the audit log with it, as the console's do
    try:
        done = (
            gw.approve(args.pending_id, decided_by=who, only=getattr(args, "only", None))
            if approve
            else gw.deny(args.pending_id, decided_by=who)
        )
    except UserError as exc:  # not allowed here, its own caller, or --only naming no write of the plan
        print(f"gateway: {exc}", file=sys.stderr)
        return 1
    if not done or found is None:
        print(
            f"gateway: no call {args.pending_id!r} is waiting (unknown, expired or decided)", file=sys.stderr
        )
        return 1
    if is_plan(found):
        print(plan_decided(found, approve, getattr(args, "only", None)))
        return 0
    verb = "approved: it runs when the agent calls again with this id" if approve else "denied"
    print(f"{shown(found.tool)} {verb}\n{previewed(found)}")
    return 0


def plan_decided(plan: PendingConfirmation, approve: bool, only: list[int] | None) -> str:
    writes = len(writes_of(plan))
    if not approve:
        verb = f"denied: none of its {writes} writes will run"
    elif only is None:
        verb = f"approved: its {writes} writes run when the agent runs the plan"
    else:
        kept = sorted(set(only))
        left = [n for n in range(1, writes + 1) if n not in kept]
        verb = (
            f"approved in part: write{'s' if len(kept) > 1 else ''} {', '.join(map(str, kept))} run "
            f"when the agent runs the plan; {', '.join(map(str, left)) or 'none'} declined"
        )
    return f"plan {verb}\n{previewed(plan)}"
