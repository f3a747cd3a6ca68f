"""The `gateway` command line, built on the public API only.

Exit codes: 0 success, 1 the tool call failed, 2 usage or configuration error,
3 a destructive call was not approved.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from contextlib import suppress
from typing import Any, NoReturn

from .agent import chat
from .config import Settings, load_settings
from .context import PendingConfirmation, ToolContext, ToolResult
from .engine import Gateway, run_sync
from .errors import UserError
from .rendering import result_payload, to_jsonable
from .runtime import open_gateway, principal_from

# Output format -> (adapter module, function); imported only when `gateway tools` runs.
FORMATS = {
    "anthropic": ("anthropic", "tools"),
    "openai-chat": ("openai", "chat_tools"),
    "openai-responses": ("openai", "responses_tools"),
}

# Requests the demo plays, as a user might type them; each is resolved by discovery, not by name.
DEMO_REQUESTS = (
    "what's on my calendar this week",
    "find unread email",
    "add a task to my list",
    "clear completed tasks",
)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", help="TOML config file (default: the per-user config file)")
    common.add_argument("--data-dir", help="where the local workspace and audit log live")
    common.add_argument("--timezone", help="IANA time zone for dates, e.g. Europe/Berlin")
    common.add_argument("--backend", choices=["local", "google"], help="service backend")
    common.add_argument("--confirmation-mode", choices=["host", "model", "deny"])
    common.add_argument("--audit-log", help="audit log path (JSONL)")
    common.add_argument("--principal", help="who is calling (for policy and roles)")
    common.add_argument("--agent", help="the agent identity calls are made for (file tools may require one)")
    common.add_argument(
        "--tools-dir", action="append", metavar="DIR", help="a directory of file-defined tools (repeatable)"
    )
    common.add_argument(
        "--catalog",
        action="append",
        metavar="NAME",
        help="serve this catalog, e.g. workspace or google-apis (repeatable; replaces the configured catalogs)",
    )
    common.add_argument("--json", action="store_true", help="machine-readable output with stable keys")

    parser = argparse.ArgumentParser(
        prog="gateway", description="A large tool catalog behind three meta-tools."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    discover = sub.add_parser("discover", parents=[common], help="find tools")
    discover.add_argument("query", nargs="?", help="free-text request")
    discover.add_argument("-c", "--category", action="append", help="only this category (repeatable)")
    discover.add_argument("-a", "--action", action="append", help="only this action (repeatable)")
    discover.add_argument("--limit", type=int, default=10)
    discover.add_argument("--cursor")
    schema = sub.add_parser("schema", parents=[common], help="show one tool's schema")
    schema.add_argument("tool_name")
    invoke = sub.add_parser("invoke", parents=[common], help="run one tool")
    invoke.add_argument("tool_name")
    invoke.add_argument("parameters", nargs="?", default="{}", help="parameters as a JSON object")
    invoke.add_argument("--yes", action="store_true", help="approve a destructive call without asking")
    sub.add_parser("catalog", parents=[common], help="tool counts by category and action")
    tools = sub.add_parser(
        "tools",
        parents=[common],
        help="the meta-tool definitions the model receives; 'tools new NAME' scaffolds a file tool, "
        "'tools check' reports broken definitions",
    )
    tools.add_argument("--format", choices=sorted(FORMATS), default="anthropic")
    tools.add_argument("verb", nargs="?", choices=["new", "check"], help="scaffold or check file tools")
    tools.add_argument("name", nargs="?", help="the new tool's name (tools new)")
    tools.add_argument(
        "--category", help="the new tool's category (tools new; default: its name's first word)"
    )
    sub.add_parser(
        "pending", parents=[common], help="destructive calls waiting for approval (on a shared store)"
    )
    for verb, what in (("approve", "approve a pending call: it runs when redeemed"), ("deny", "decline it")):
        sub.add_parser(verb, parents=[common], help=what).add_argument("pending_id")
    sub.add_parser("demo", parents=[common], help="play an agent-shaped session on the workspace")
    auth = sub.add_parser("auth", parents=[common], help="connect an account, e.g. gateway auth google")
    auth.add_argument("service", choices=["google"], help="whose sign-in to run")
    auth.add_argument("--no-browser", action="store_true", help="print the sign-in address, open nothing")
    serve = sub.add_parser("serve", parents=[common], help="serve the meta-tools to MCP clients")
    serve.add_argument("--transport", choices=["stdio", "http"], help="default: stdio")
    serve.add_argument("--host", help="HTTP address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP port (default 8765; 0 picks a free one)")
    chat.add_arguments(
        sub.add_parser("chat", parents=[common], help="chat with an agent that uses the gateway")
    )
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(
        args.config,
        overrides={
            "data_dir": args.data_dir,
            "timezone": args.timezone,
            "backend": args.backend,
            "confirmation.mode": args.confirmation_mode,
            "audit.path": args.audit_log,
            "principal": args.principal,
            "agent": args.agent,
            "tools_dirs": args.tools_dir,
            "catalogs": args.catalog,
        },
    )


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _terminal_approver(assume_yes: bool) -> Any:
    def approve(pending: PendingConfirmation) -> bool:
        print(f"Confirmation needed: {pending.preview}", file=sys.stderr)
        if assume_yes:
            print("Approved by --yes.", file=sys.stderr)
            return True
        if not sys.stdin.isatty():
            print("Not approved: no terminal to ask on; pass --yes to approve.", file=sys.stderr)
            return False
        answer = input("Run it? [y/N] ").strip().lower()
        return answer in {"y", "yes"}

    return approve


def _print_result(result: ToolResult) -> int:
    payload = result_payload(result)
    print(_dump(payload))
    if result.status == "ok":
        return 0
    if result.status == "confirmation_required" or (result.error and result.error.code == "declined"):
        return 3
    return 1


def _discover(gw: Gateway, ctx: ToolContext, args: argparse.Namespace) -> int:
    arguments = {
        "query": args.query,
        "categories": args.category,
        "actions": args.action,
        "limit": args.limit,
        "cursor": args.cursor,
    }
    result = run_sync(gw.call("discover_tools", {k: v for k, v in arguments.items() if v}, ctx))
    if args.json and result.status == "ok":
        for hit in result.output.get("tools", []):  # e.g. the Google method a generated tool calls
            found = gw.catalog.get(hit["name"])
            if found is not None and "method_id" in found.metadata:
                hit["method_id"] = found.metadata["method_id"]
    if args.json or result.status != "ok" or "tools" not in result.output:
        return _print_result(result)
    out = result.output
    for hit in out["tools"]:
        flags = f" ({', '.join(hit['flags'])})" if hit["flags"] else ""
        print(f"{hit['name']:<32} {hit['category']}/{hit['action']}{flags}\n    {hit['summary']}")
    if not out["tools"]:
        print(out.get("message", "No tool matched."))
        print(_dump(out.get("suggestions", {})))
    if "next_cursor" in out:
        print(f"more: --cursor {out['next_cursor']}")
    return 0


def _catalog(gw: Gateway, ctx: ToolContext, args: argparse.Namespace, backend: str = "local") -> int:
    overview = gw.overview(ctx.principal)
    if args.json:
        print(_dump({k: v for k, v in overview.items() if k != "next_step"}))
        return 0
    print(f"{overview['total_tools']} tools (backend: {backend})")
    for cat in overview["categories"]:
        actions = ", ".join(f"{a} {n}" for a, n in cat["actions"].items())
        print(f"  {cat['name']:<16} {cat['tools']:>5}  ({actions})")
    return 0


def _demo(gw: Gateway, ctx: ToolContext) -> int:
    """Each request: discover -> get_tool_schema -> invoke_tool with the tool's example."""

    def step(tool_name: str, arguments: dict[str, Any]) -> ToolResult:
        print(f"\n>>> {tool_name}({json.dumps(arguments, ensure_ascii=False)})")
        result = run_sync(gw.call(tool_name, arguments, ctx))
        text = _dump(result_payload(result))
        print(text if len(text) < 1500 else text[:1500] + "\n    ...")
        return result

    step("discover_tools", {})
    for request in DEMO_REQUESTS:
        print(f"\n=== user: {request!r}")
        found = step("discover_tools", {"query": request, "limit": 3})
        if not found.ok or not found.output.get("tools"):
            continue
        name = found.output["tools"][0]["name"]
        schema = step("get_tool_schema", {"tool_name": name})
        example = schema.output.get("example") if schema.ok else None
        if example is None:
            continue
        result = step("invoke_tool", example)
        if result.status == "confirmation_required" and result.pending is not None:
            print(f"\n--- host: the user approves {result.pending.pending_id} (outside the model's channel)")
            gw.approve(result.pending.pending_id)
            step("invoke_tool", {**example, "confirmation": result.pending.pending_id})
    return 0


def _tools_new(settings: Settings, args: argparse.Namespace) -> int:
    from .tooldirs import scaffold  # file tools are an optional extra

    if not args.name or not settings.tools_dirs:
        raise UserError("usage: gateway tools new NAME --tools-dir DIR (or set GATEWAY_TOOLS_DIR)")
    for path in scaffold(settings.tools_dirs[0], args.name, args.category):
        print(path)
    return 0


def _tools_check(gw: Gateway, settings: Settings, args: argparse.Namespace) -> int:
    """Every skipped definition with its file and line; exit 1 when there is one."""
    from .tooldirs import FileTools

    tools = gw.resources.get(FileTools)
    if not isinstance(tools, FileTools):
        raise UserError("no tools directory: pass --tools-dir DIR or set GATEWAY_TOOLS_DIR")
    problems = tools.problems
    if args.json:
        listed = [{"path": str(p.path), "line": p.line, "message": p.message} for p in problems]
        print(_dump({"tools": list(tools.names), "problems": listed}))
    else:
        for problem in problems:
            print(problem)
        print(f"{len(tools.names)} tools loaded, {len(problems)} problems")
    return 1 if problems else 0


def _pending(gw: Gateway, args: argparse.Namespace) -> int:
    """The calls waiting for a human, oldest first: what each will do, and its id."""
    waiting = gw.gate.pending()
    if args.json:
        print(
            _dump(
                [
                    {
                        "pending_id": p.pending_id,
                        "tool": p.tool,
                        "preview": p.preview,
                        "parameters": to_jsonable(p.parameters),
                        "principal": p.principal,
                        "expires_at": p.expires_at,
                    }
                    for p in waiting
                ]
            )
        )
        return 0
    if not waiting:
        print("No call is waiting for approval.")
    for p in waiting:
        left = max(0, round(p.expires_at - time.time()))
        print(f"{p.pending_id}  {p.tool}  (for {p.principal}, expires in {left} s)\n    {p.preview}")
    return 0


def _decide(gw: Gateway, args: argparse.Namespace) -> int:
    """`gateway approve ID` / `gateway deny ID`: the host's answer, from a terminal the model cannot use."""
    waiting = {p.pending_id: p for p in gw.gate.pending()}
    found = waiting.get(args.pending_id)
    done = gw.approve(args.pending_id) if args.command == "approve" else gw.deny(args.pending_id)
    if not done or found is None:
        print(
            f"gateway: no call {args.pending_id!r} is waiting (unknown, expired or decided)", file=sys.stderr
        )
        return 1
    verb = (
        "approved: it runs when the agent calls again with this id" if args.command == "approve" else "denied"
    )
    print(f"{found.tool} {verb}\n    {found.preview}")
    return 0


def _auth(settings: Settings, args: argparse.Namespace) -> int:
    """A service's sign-in, registered by the service package in the `metatool_gateway.auth` entry points."""
    from importlib.metadata import entry_points

    from .toolset import ProviderOptions

    found = [ep for ep in entry_points(group="metatool_gateway.auth") if ep.name == args.service]
    if not found:
        raise UserError(
            f"no sign-in for {args.service!r} is installed; pip install 'metatool-gateway[google]'"
        )
    options = ProviderOptions(
        data_dir=settings.data_dir,
        timezone=settings.timezone,
        backend=args.service,
        # The service's own section, and what is served (a catalog can need more access at sign-in).
        extra={
            args.service: getattr(settings, args.service).model_dump(),
            "catalogs": tuple(settings.catalogs),
            "google_apis": settings.google_apis.model_dump(),
        },
    )
    print(found[0].load()(options, open_browser=not args.no_browser))
    print(f"active backend: {settings.backend}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = _settings(args)
        if args.command == "serve":
            from .adapters.mcp_server import serve  # the MCP SDK is an optional extra

            return serve(settings, transport=args.transport, host=args.host, port=args.port)
        if args.command == "tools" and args.verb == "new":
            return _tools_new(settings, args)
        if args.command == "auth":
            return _auth(settings, args)
        if args.command in ("pending", "approve", "deny") and settings.confirmation.store == "memory":
            raise UserError(
                "confirmation.store is 'memory': a pending call lives only in the process that asked for "
                "it. Set confirmation.store to sqlite (or redis) and a secret in the serving gateway's "
                "configuration to approve from here (docs/mcp.md)"
            )
        approver = _terminal_approver(args.yes) if args.command == "invoke" else None
        with open_gateway(settings, approver=approver) as gw:
            ctx = ToolContext(principal=principal_from(settings), session_id="cli")
            if args.command == "discover":
                return _discover(gw, ctx, args)
            if args.command == "schema":
                return _print_result(run_sync(gw.call("get_tool_schema", {"tool_name": args.tool_name}, ctx)))
            if args.command == "invoke":
                return _print_result(run_sync(gw.invoke(args.tool_name, args.parameters, context=ctx)))
            if args.command == "catalog":
                return _catalog(gw, ctx, args, settings.backend)
            if args.command == "chat":
                return chat.run_chat(gw, ctx, args)
            if args.command == "pending":
                return _pending(gw, args)
            if args.command in ("approve", "deny"):
                return _decide(gw, args)
            if args.command == "tools" and args.verb == "check":
                return _tools_check(gw, settings, args)
            if args.command == "tools":
                module, function = FORMATS[args.format]
                emit = getattr(importlib.import_module(f".adapters.{module}", __package__), function)
                print(_dump(emit(gw.meta)))
                return 0
            return _demo(gw, ctx)
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


if __name__ == "__main__":
    run()
