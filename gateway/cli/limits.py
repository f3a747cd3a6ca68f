"""`gateway limits`: each configured rate limit and quota, and what is left of it for each principal."""

from __future__ import annotations

import argparse
import math

from ..errors import UserError
from ..limits import LimitState, Unreachable
from ..rendering import shown
from ..runtime import limiter_from, principal_from
from ..settings.loading import Settings
from .messages import note
from .output import dump


def run(settings: Settings, args: argparse.Namespace) -> int:
    """Print each limit's state for the configured principals (the default one, [principals], tokens)
    and for the others its store holds counts of."""
    if not settings.limits:
        print("no limits are configured ([[limits]] in the configuration file: docs/limits.md)")
        return 0
    if settings.limiter.store == "memory":
        note("limiter.store is 'memory': each process counts its own calls, so this one shows full budgets")
    ids = {settings.principal, *settings.principals, *(t.principal for t in settings.serve.tokens)}
    limiter = limiter_from(settings.limits, settings.limiter)
    try:
        states = limiter.states([principal_from(settings, pid) for pid in sorted(ids)])
    except Unreachable as exc:
        raise UserError(f"the limits' store cannot be reached: {exc}") from None
    finally:
        limiter.close()
    if args.json:
        print(dump([_row(s) for s in states]))
        return 0
    print(f"{'limit':<20} {'allowance':<20} {'principal':<16} {'left':>6}  next call")
    for s in states:
        wait = "now" if s.left > 0 else f"in {math.ceil(s.retry_after)} s"
        row = f"{shown(s.limit.name):<20} {s.limit.allowance:<20} {shown(s.subject):<16} {s.left:>6}  {wait}"
        print(row)
    return 0


def _row(s: LimitState) -> dict[str, object]:
    return {
        "limit": s.limit.name,
        "kind": s.limit.kind,
        "allowance": s.limit.allowance,
        "principal": s.subject,
        "left": s.left,
        "retry_after_seconds": 0 if s.left > 0 else math.ceil(s.retry_after),
    }
