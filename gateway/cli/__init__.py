"""The `gateway` command line: where the program is assembled from its rooms.

Owns the grammar (`parser`), the commands that read the catalog or run a tool (`commands`), the
host's side of approvals at a terminal (`approvals`), the demo (`demo`), the terminal chat (`chat`)
and what is printed (`output`). As the program's composition root it may import any room of the
gateway, the optional ones (the MCP server, file tools, vendor adapters) only when a command needs
them; nothing imports it.

Exit codes: 0 success, 1 the tool call failed, 2 usage or configuration error,
3 a destructive call was not approved.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import NoReturn

from ..context import ToolContext
from ..engine import run_sync
from ..errors import UserError
from ..runtime import open_gateway, principal_from
from ..stores import resolve_auto_store
from . import approvals, chat, commands, demo, openapi
from .output import print_result
from .parser import build_parser, settings_from

__all__ = ["end", "main", "run"]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from(args)
        if args.command == "serve":
            from ..adapters.mcp_server import serve  # the MCP SDK is an optional extra

            return serve(settings, transport=args.transport, host=args.host, port=args.port)
        if args.command == "tools" and args.verb == "new":
            return commands.tools_new(settings, args)
        if args.command == "demo":
            return demo.run(settings)
        if args.command == "auth":
            return commands.auth(settings, args)
        if args.command == "openapi":
            return openapi.run(settings, args)
        if args.command in ("pending", "approve", "deny"):
            if settings.confirmation.store == "memory":
                raise UserError(
                    "confirmation.store is 'memory': a pending call lives only in the process that asked "
                    "for it. Use the default store ('auto', a served gateway's data directory) or sqlite "
                    "or redis with a secret, as the serving gateway does (docs/mcp.md)"
                )
            settings = resolve_auto_store(settings, shared=True)
        approver = approvals.terminal_approver(args.yes) if args.command == "invoke" else None
        with open_gateway(settings, approver=approver) as gw:
            ctx = ToolContext(principal=principal_from(settings), session_id="cli")
            if args.command == "discover":
                return commands.discover(gw, ctx, args)
            if args.command == "schema":
                return print_result(run_sync(gw.call("get_tool_schema", {"tool_name": args.tool_name}, ctx)))
            if args.command == "invoke":
                return print_result(run_sync(gw.invoke(args.tool_name, args.parameters, context=ctx)))
            if args.command == "catalog":
                return commands.catalog(gw, ctx, args, settings.backend)
            if args.command == "chat":
                return chat.run_chat(gw, ctx, args)
            if args.command == "pending":
                return approvals.list_pending(gw, args)
            if args.command in ("approve", "deny"):
                return approvals.decide(gw, args)
            if args.command == "tools" and args.verb == "check":
                return commands.tools_check(gw, settings, args)
            if args.command == "tools":
                return commands.tool_definitions(gw, args.format)
            raise AssertionError(f"unhandled command {args.command!r}")
    except UserError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 2


def run() -> NoReturn:
    """The `gateway` program: `main()`, then an exit that does not free memory object by object.

    A catalog of the Google APIs is about a million objects; freeing them one by one as the
    interpreter shuts down takes longer than the command itself. Once output is flushed and
    logging shut down, the process ends at once, unless a thread other than daemons is still at
    work (then the usual exit waits for it).
    """
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `gateway discover ... | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        code = 1
    end(code)


def end(code: int) -> NoReturn:
    """Exit with `code` now: flush, shut logging down, and skip freeing memory (see `run`)."""
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError):
            stream.flush()
    logging.shutdown()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    os._exit(code)
