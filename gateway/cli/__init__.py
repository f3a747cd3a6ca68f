"""The `gateway` command line: where the program is assembled from its rooms.

Owns the grammar (`parser`), the commands that read the catalog or run a tool (`commands`), the
host's side of approvals at a terminal (`approvals`), the demo (`demo`), the terminal chat (`chat`)
and what is printed (`output`). As the program's composition root it may import any room of the
gateway, the optional ones (the MCP server, file tools, vendor adapters) only when a command needs
them; nothing imports it.

Exit codes: 0 success, 1 the tool call failed, 2 usage or configuration error,
3 a destructive call was not approved, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Sequence
from contextlib import suppress
from typing import NoReturn

from ..audit import AuditLogUnavailable, JsonlAuditLog
from ..context import ToolContext
from ..engine import run_sync
from ..errors import UserError
from ..gate.stores import resolve_auto_store
from ..rendering import shown
from ..runtime import open_gateway, principal_from
from ..settings.loading import Settings
from . import approvals, chat, commands, console, demo, limits, model, openapi, rules, usage, vault
from .messages import for_a_person, note, progress_on_stderr
from .output import print_result
from .parser import build_parser, settings_from

__all__ = ["end", "main", "run"]


INTERRUPTED = 130
"""The status of a command stopped by Ctrl-C (SIGINT), as shells report it: 128 + the signal's number."""

ENCODING = frozenset({"index", "chat"})
"""Commands that encode a large catalog's dense vectors when none are cached (`gateway index` waits
for them; a chat lives long enough to use them); the others never start an encoding they would not
see end. A server encodes in the background too."""

READ_ONLY = frozenset({"discover", "schema", "catalog", "index", "tools", "pending", "usage"})
"""Commands that write no audit record: they go on, with a notice, when the audit log cannot be written."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # what a worker of `serve --workers` runs
    try:
        with progress_on_stderr():
            return _command(args)
    except UserError as exc:
        print(f"gateway: {shown(exc, lines=True)}", file=sys.stderr)
        return 2


def _command(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    if args.command == "serve":
        return _serve(settings, args)
    if args.command == "tools" and args.verb == "new":
        return commands.tools_new(settings, args)
    if args.command == "auth":
        return commands.auth(settings, args)
    if args.command == "demo":
        return demo.run(settings)
    if args.command == "openapi":
        return openapi.run(settings, args)
    if args.command == "model":
        return model.run(settings, args)
    if args.command == "console":
        return console.run(settings, args)
    if args.command == "limits":
        return limits.run(settings, args)
    if args.command == "vault":
        return vault.run(settings, args)
    if args.command == "connect":
        return vault.connect(settings, args)
    if args.command in ("pending", "approve", "deny", "rules"):
        if settings.confirmation.store == "memory":
            raise UserError(
                "confirmation.store is 'memory': a pending call lives only in the process that asked "
                "for it. Use the default store ('auto', a served gateway's data directory) or sqlite "
                "or redis with a secret, as the serving gateway does (docs/mcp.md)"
            )
        settings = resolve_auto_store(settings, shared=True)
    notice = None
    if args.command in READ_ONLY:
        settings, notice = _without_an_unwritable_audit_log(settings, args.command)
    if args.command == "tools" and args.verb == "check":  # its report lists each skipped definition once
        logging.getLogger("gateway.filetools").setLevel(logging.ERROR)  # restored by progress_on_stderr
    principal = principal_from(settings, toolset=getattr(args, "toolset", None))  # a bad name: said first
    approver = approvals.terminal_approver(args.yes) if args.command == "invoke" else None
    with open_gateway(settings, approver=approver) as gw:
        if args.command not in ENCODING:  # it ends before a large catalog's vectors would be ready
            gw.indexes.dense_background = False
        if notice:  # only once the gateway opened: a data directory that is unusable says so instead
            note(notice)
        ctx = ToolContext(principal=principal, session_id="cli")
        if args.command == "discover":
            return commands.discover(gw, ctx, args)
        if args.command == "schema":
            result = run_sync(gw.call("get_tool_schema", {"tool_name": args.tool_name}, ctx))
            if not args.json:  # --json: exactly what the model reads
                result = for_a_person(result, gw, ctx.principal, tool_name=args.tool_name)
            return print_result(result)
        if args.command == "invoke":
            return commands.invoke(gw, ctx, args, approver)
        if args.command == "catalog":
            return commands.catalog(gw, ctx, args, settings)
        if args.command == "index":
            return commands.index(gw, args)
        if args.command == "chat":
            return chat.run_chat(gw, ctx, args)
        if args.command == "usage":
            return usage.run(gw, args)
        if args.command == "pending":
            return approvals.list_pending(gw, args)
        if args.command in ("approve", "deny"):
            return approvals.decide(gw, args)
        if args.command == "rules":
            return rules.run(gw, settings, args)
        if args.command == "tools" and args.verb == "check":
            return commands.tools_check(gw, settings, args)
        if args.command == "tools":
            return commands.tool_definitions(gw, args.format)
        raise AssertionError(f"unhandled command {args.command!r}")


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    try:
        from ..adapters.mcp_server import serve  # the MCP SDK is an optional extra
    except ImportError as exc:
        raise UserError(
            f"gateway serve needs the mcp extra: pip install 'metatool-gateway[mcp]' ({exc.name} is missing)"
        ) from None
    if (args.transport or settings.serve.transport) == "stdio" and sys.stdin.isatty():
        note(
            "serving MCP (JSON-RPC) on stdin and stdout for an MCP client to start, not for typing; "
            "see docs/mcp.md to add it to a client. End with Ctrl-D."
        )
    if args.toolset is not None:
        from ..adapters.mcp_toolsets import AT_TOOLSET

        principal_from(settings, toolset=args.toolset)  # an unknown name is said before anything starts
        AT_TOOLSET.set(frozenset({args.toolset}))  # every request is served in it, at every endpoint
    http = (args.transport or settings.serve.transport) == "http"
    mount = console.mountable(settings) if http else None
    worker = None
    if args.worker_pipes is not None:
        from ..adapters.mcp_workers import Worker

        worker = Worker.parse(args.worker_pipes)
    return serve(
        settings,
        transport=args.transport,
        host=args.host,
        port=args.port,
        console=mount,
        argv=args.argv,
        worker=worker,
    )


def _without_an_unwritable_audit_log(settings: Settings, command: str) -> tuple[Settings, str | None]:
    """`settings` without the audit log when it cannot be written, and the notice that says so."""
    if not settings.audit.enabled:
        return settings, None
    try:
        JsonlAuditLog(settings.audit_path).close()
    except AuditLogUnavailable as exc:
        audit = settings.audit.model_copy(update={"enabled": False})
        return settings.model_copy(update={"audit": audit}), (
            f"{exc}. '{command}' writes no audit record, so it goes on without the log."
        )
    return settings, None


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
    except KeyboardInterrupt:  # Ctrl-C: the caches are written whole or not at all, so none is torn
        print("gateway: interrupted", file=sys.stderr)
        code = INTERRUPTED
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
