"""`gateway rules`: standing approvals a person makes, lists and revokes at a terminal the model cannot use.

gateway rules                                   # those in force
gateway rules add gmail_send_message --principal alice --for 30m --domain to=example.com
gateway rules add calendar_update_event --principal alice --until 18:00 --equals calendar_id=primary
gateway rules revoke RULE_ID
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from dateutil import parser as dateparser

from ..engine import Gateway
from ..errors import UserError
from ..gate.rules import KINDS, Kind, Rule, parse_constraints
from ..rendering import shown
from ..settings.loading import Settings
from .approvals import terminal_operator
from .output import dump

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("verb", nargs="?", choices=["list", "add", "revoke"], default="list")
    parser.add_argument("target", nargs="?", help="the tool (add) or the rule's id (revoke)")
    parser.add_argument("--session", help="only in this session of the principal (add)")
    parser.add_argument("--for", dest="lasting", metavar="DURATION", help="how long: 30m, 2h, 1d (add)")
    parser.add_argument("--until", metavar="TIME", help="until when: 18:00, 'friday 17:00' (add)")
    for kind in KINDS:
        parser.add_argument(
            f"--{kind.replace('_', '-')}",
            dest=kind,
            action="append",
            default=[],
            metavar="PARAM=VALUE",
            help={
                "equals": "the parameter is exactly this (JSON, or the text)",
                "one_of": "the parameter is one of these, comma-separated",
                "domain": "every address in the parameter is at this domain (or below it)",
                "prefix": "the parameter (each item of a list) starts with this",
            }[kind],
        )


def run(gw: Gateway, settings: Settings, args: argparse.Namespace) -> int:
    if args.verb == "add":
        return _add(gw, settings, args)
    if args.verb == "revoke":
        if not args.target:
            raise UserError("gateway rules revoke RULE_ID: which rule (gateway rules lists them)")
        revoked = gw.revoke_rule(args.target, decided_by=terminal_operator())
        if revoked is None:
            print(
                f"gateway: no rule {args.target!r} is in force (unknown, expired or revoked)", file=sys.stderr
            )
            return 1
        print(f"revoked {revoked.rule_id}: {revoked.describe()}")
        return 0
    rules = gw.gate.rules()
    if args.json:
        print(dump([r.as_view() for r in rules]))
        return 0
    if not rules:
        print("No standing approval is in force.")
    for r in rules:
        print(_line(r, settings))
    return 0


def _add(gw: Gateway, settings: Settings, args: argparse.Namespace) -> int:
    if not args.target:
        raise UserError("gateway rules add TOOL --for 30m ...: which tool the rule is for")
    specs: list[tuple[Kind, str]] = [(kind, spec) for kind in KINDS for spec in getattr(args, kind)]
    rule = gw.add_rule(
        args.target,
        principal=settings.principal,  # --principal, as for every command: whose calls it lets through
        expires_at=_expiry(args, settings),
        constraints=parse_constraints(specs),
        session=args.session,
        agent=args.agent,  # --agent, as for every command: only for that agent of the principal
        decided_by=terminal_operator(),
    )
    print(f"made {_line(rule, settings)}")
    return 0


def _expiry(args: argparse.Namespace, settings: Settings) -> float:
    if (args.lasting is None) == (args.until is None):
        raise UserError("a standing approval needs one expiry: --for 30m (or 2h, 1d), or --until 18:00")
    if args.lasting is not None:
        match = _DURATION.match(args.lasting)
        if match is None:
            raise UserError(f"--for {args.lasting!r}: write a duration such as 30m, 2h or 1d")
        return time.time() + float(match.group(1)) * _UNIT[match.group(2)]
    now = _now(settings)
    try:
        until = dateparser.parse(args.until, default=now.replace(second=0, microsecond=0))
    except (ValueError, OverflowError):
        raise UserError(f"--until {args.until!r}: write a time such as 18:00 or 'friday 17:00'") from None
    if until.tzinfo is None:
        until = until.replace(tzinfo=now.tzinfo)
    return until.timestamp()


def _now(settings: Settings, at: float | None = None) -> datetime:
    """`at` (default: now) in the gateway's time zone, or the machine's."""
    moment = datetime.fromtimestamp(time.time() if at is None else at, UTC)
    return moment.astimezone(ZoneInfo(settings.timezone)) if settings.timezone else moment.astimezone()


def _line(r: Rule, settings: Settings) -> str:
    until = _now(settings, r.expires_at).strftime("%Y-%m-%d %H:%M %Z")
    return f"{r.rule_id}  {r.describe()}, until {until} (made by {shown(r.made_by)})"
