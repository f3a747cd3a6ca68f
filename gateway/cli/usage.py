"""`gateway usage`: what the gateway learned from use: stats, export, import, forget."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..engine import Gateway
from ..errors import UserError
from ..rendering import shown
from ..usage import IMPORT_PRINCIPAL
from .messages import answered_yes
from .output import dump

MAX_IMPORT_BYTES = 200 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("verb", choices=["stats", "export", "import", "forget"], help="what to do")
    parser.add_argument(
        "target",
        nargs="?",
        help="export, import: the JSONL file; forget: a principal, to forget only what it taught",
    )
    parser.add_argument("--top", type=int, default=10, help="stats: how many queries a list shows")
    parser.add_argument("--yes", action="store_true", help="forget: without asking (needed with no terminal)")


def run(gw: Gateway, args: argparse.Namespace) -> int:
    usage = gw.usage
    if usage is None:
        raise UserError("learning from use is off ([usage] enabled = false, or its store cannot be opened)")
    if args.verb == "stats":
        stats = usage.stats(args.top)
        if args.json:
            print(dump(stats))
            return 0
        print(f"{stats['pairs']} learned pairs over {stats['tools']} tools")
        for title, key, unit in (
            ("top queries", "top_queries", "invocations"),
            ("queries that found nothing", "found_nothing", "searches"),
            ("queries never followed by a call", "never_followed", "searches"),
        ):
            print(f"{title}:")
            for item in stats[key] or [{"query": "(none)", unit: 0}]:
                print(f"  {item[unit]:>6}  {shown(item['query'])}")
        return 0
    if args.verb in ("export", "import"):
        if args.target is None:
            raise UserError(f"usage: gateway usage {args.verb} FILE.jsonl")
        args.file = Path(args.target)
    if args.verb == "export":
        rows = usage.export()
        with args.file.open("w", encoding="utf-8") as out:
            for row in rows:
                out.write(dump_line(row))
        _say(
            args,
            {"exported": len(rows), "file": str(args.file)},
            f"{len(rows)} queries written to {args.file}",
        )
        return 0
    if args.verb == "import":
        return _import(gw, args)
    if not args.yes and not _confirmed(args.target):
        return 3  # as a destructive call that was not approved
    gone = usage.forget(args.target)
    who = f"taught by {args.target}" if args.target else "learned"
    _say(args, {"forgotten": gone, "principal": args.target}, f"{gone} pairs {who} forgotten")
    return 0


def _import(gw: Gateway, args: argparse.Namespace) -> int:
    assert gw.usage is not None
    try:
        if args.file.stat().st_size > MAX_IMPORT_BYTES:
            raise UserError(f"{args.file} is larger than {MAX_IMPORT_BYTES // 2**20} MiB")
        lines = args.file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}") from None
    unknown: set[str] = set()
    recorded, problems = gw.usage.import_lines(
        lines, principal=IMPORT_PRINCIPAL, known=gw.catalog.by_name, unknown=unknown
    )
    for problem in problems[:20]:
        print(f"gateway: {args.file}: {shown(problem)}", file=sys.stderr)
    summary = {"imported": recorded, "problems": len(problems), "unknown_tools": sorted(unknown)[:50]}
    text = f"{recorded} pairs imported from {args.file}"
    if unknown:
        text += f"; {len(unknown)} tool names this catalog does not have were skipped"
    _say(args, summary, text)
    return 1 if problems else 0


def _confirmed(principal: str | None) -> bool:
    """Whether the person at the terminal agrees to forget; with no terminal, `--yes` is needed."""
    what = f"what {principal} taught" if principal else "everything learned from use"
    if not sys.stdin.isatty():
        raise UserError(f"gateway usage forget deletes {what}: pass --yes to confirm")
    if answered_yes(f"Forget {shown(what)}? [y/N] "):
        return True
    print("Nothing forgotten.", file=sys.stderr)
    return False


def dump_line(row: object) -> str:
    return json.dumps(row, ensure_ascii=False) + "\n"


def _say(args: argparse.Namespace, payload: dict[str, object], text: str) -> None:
    print(dump(payload) if args.json else text)
