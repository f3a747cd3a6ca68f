"""`gateway catalog --findability`: which tools of the served catalogs a request can find.

The report (`search.findability`) ranks each tool's own requests against every tool the principal
sees; `--min-found SHARE` makes it a check a catalog author runs in CI (status 1 below it).
"""

from __future__ import annotations

import argparse
import sys

from ..context import ToolContext
from ..engine import Gateway
from ..rendering import shown
from ..search.findability import Findability, report
from .output import dump

SHOWN = 20
"""Tools listed under each heading of the text report (`--json` lists them all)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`gateway catalog`'s options of the report."""
    parser.add_argument(
        "--findability",
        action="store_true",
        help="rank each tool's own requests against the catalog: the tools no request finds in the first 5",
    )
    parser.add_argument(
        "--min-found",
        metavar="SHARE",
        type=share,
        help="with --findability: exit 1 when fewer than this share (0 to 1) of the tools are found",
    )


def share(value: str) -> float:
    """`--min-found`: a share of the tools, from 0 to 1."""
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0.0 <= number <= 1.0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a share from 0 to 1 (0.95: 95% of the tools)")
    return number


def run(gw: Gateway, ctx: ToolContext, args: argparse.Namespace) -> int:
    tools = gw.visible(ctx.principal)
    big = len(tools) >= 5000

    def progress(done: int, total: int) -> None:
        if big and done % 5000 == 0:
            print(f"gateway: {done:,} of {total:,} tools ranked", file=sys.stderr, flush=True)

    if big:
        print(f"gateway: ranking the requests of {len(tools):,} tools...", file=sys.stderr, flush=True)
    found = report(gw.index(ctx.principal), tools, progress=progress)
    if args.json:
        print(dump(found.as_dict()))
    else:
        _print(found)
    minimum = args.min_found
    if minimum is not None and found.found_share < minimum:
        print(
            f"gateway: {found.found_share:.1%} of the tools are found, below --min-found {minimum:.1%}",
            file=sys.stderr,
        )
        return 1
    return 0


def _print(found: Findability) -> None:
    n = len(found.tools)
    print(f"Findability of {n:,} tools (a request finds its tool in the first {found.depth}):")
    print(f"  found by one of its requests: {found.found:,} ({found.found / max(n, 1):.1%})")
    print(f"  first for one of its requests: {found.first:,} ({found.first / max(n, 1):.1%})")
    for kind, (asked, hit) in found.by_kind().items():
        print(f"  {kind} requests: {hit:,} of {asked:,} find their tool ({hit / asked:.1%})")
    _listed("Never found", [t.name for t in found.never_found])
    _listed(
        "Always ranked below another tool",
        [f"{t.name}: below {t.shadowed_by}" for t in found.shadowed],
    )
    _listed(
        "No word of its own in its summary",
        [f"{t.name}: every word is in {t.twin}'s" for t in found.indistinct],
    )


def _listed(heading: str, lines: list[str]) -> None:
    print(f"{heading} ({len(lines):,}):")
    for line in lines[:SHOWN]:
        print(f"  {shown(line)}")
    if len(lines) > SHOWN:
        print(f"  ... and {len(lines) - SHOWN:,} more (--json lists them all)")
