"""The command line's grammar: options every command takes, then one parser per command.

The options every command takes are accepted before the command (`gateway --backend google catalog`)
and after it (`gateway catalog --backend google`); when both are given, the one after the command wins.
"""

from __future__ import annotations

import argparse
from importlib.metadata import PackageNotFoundError, version

from ..discovery import MAX_DISCOVER_LIMIT
from ..settings.loading import Settings, load_settings
from . import chat, console, findability, model, openapi, rules, usage, vault
from .commands import FORMATS


def _version() -> str:
    try:
        return version("metatool-gateway")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _common_options(parser: argparse.ArgumentParser) -> None:
    common = parser
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
    common.add_argument(
        "--openapi",
        action="append",
        metavar="NAME=SPEC",
        help="serve a REST API from its OpenAPI description as catalog NAME (repeatable; docs/openapi.md)",
    )
    common.add_argument("--json", action="store_true", help="machine-readable output with stable keys")


def _page_size(text: str) -> int:
    """A `--limit`: a whole number the page can hold (0 is refused, not taken for the default)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_DISCOVER_LIMIT:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number from 1 to {MAX_DISCOVER_LIMIT}")
    return value


def _numbers(text: str) -> list[int]:
    """An `--only`: write numbers, comma-separated (`1,3`), each 1 or more."""
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        numbers = []
    if not numbers or min(numbers) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of write numbers such as 1,3")
    return numbers


def _approvals(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    """`gateway pending`, `gateway approve ID [--only N,M]`, `gateway deny ID`."""
    sub.add_parser(
        "pending", parents=[common], help="destructive calls waiting for approval (on a shared store)"
    )
    for verb, what in (
        ("approve", "approve a pending call or a program's plan: it runs when redeemed"),
        ("deny", "decline it (a plan: every write of it)"),
    ):
        sub.add_parser(verb, parents=[common], help=what).add_argument("pending_id")
    rules.add_arguments(
        sub.add_parser(
            "rules",
            parents=[common],
            help="standing approvals: list, add (a tool, for whom, until when, on which arguments), revoke",
        )
    )
    vault.add_arguments(
        sub.add_parser(
            "vault", parents=[common], help="each person's own grants to services: key, list, rotate, forget"
        )
    )
    connect = sub.add_parser(
        "connect",
        parents=[common],
        help="your own key, token or account for a service that takes each caller's",
    )
    connect.add_argument("service", help="openapi:NAME, or google")
    connect.add_argument(
        "--no-browser", action="store_true", help="google: print the address instead of opening it"
    )
    sub.choices["approve"].add_argument(
        "--only",
        type=_numbers,
        metavar="N,M",
        help="of a plan, approve only these writes (numbered as `gateway pending` lists them); decline the rest",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gateway", description="A large tool catalog behind three meta-tools."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    _common_options(parser)
    # After the command, the same options; SUPPRESS keeps a value given before the command
    # from being reset to the default when the option is not repeated after it.
    common = argparse.ArgumentParser(add_help=False, argument_default=argparse.SUPPRESS)
    _common_options(common)
    sub = parser.add_subparsers(dest="command", required=True)
    discover = sub.add_parser("discover", parents=[common], help="find tools")
    discover.add_argument("query", nargs="?", help="free-text request")
    discover.add_argument("-c", "--category", action="append", help="only this category (repeatable)")
    discover.add_argument("-a", "--action", action="append", help="only this action (repeatable)")
    discover.add_argument(
        "--limit",
        type=_page_size,
        default=10,
        help=f"tools per page, 1 to {MAX_DISCOVER_LIMIT} (default: 10)",
    )
    discover.add_argument("--cursor")
    discover.add_argument("--toolset", metavar="NAME", help="only the tools of this [[toolsets]] entry")
    schema = sub.add_parser("schema", parents=[common], help="show one tool's schema")
    schema.add_argument("tool_name")
    schema.add_argument("--toolset", metavar="NAME", help="as a client confined to this toolset")
    invoke = sub.add_parser("invoke", parents=[common], help="run one tool")
    invoke.add_argument("tool_name")
    invoke.add_argument("parameters", nargs="?", default="{}", help="parameters as a JSON object")
    invoke.add_argument("--yes", action="store_true", help="approve a destructive call without asking")
    catalog = sub.add_parser("catalog", parents=[common], help="tool counts by category and action")
    catalog.add_argument("--toolset", metavar="NAME", help="only the tools of this [[toolsets]] entry")
    findability.add_arguments(catalog)
    sub.add_parser(
        "index",
        parents=[common],
        help="build the search index now, every layer, and cache it for the next start",
    )
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
    _approvals(sub, common)
    sub.add_parser(
        "limits", parents=[common], help="each rate limit and quota, and what is left of it (docs/limits.md)"
    )
    usage.add_arguments(
        sub.add_parser(
            "usage", parents=[common], help="what the gateway learned from use: stats, export, import, forget"
        )
    )
    sub.add_parser(
        "demo", parents=[common], help="play an agent-shaped session on a throw-away local workspace"
    )
    auth = sub.add_parser("auth", parents=[common], help="connect an account, e.g. gateway auth google")
    auth.add_argument("service", choices=["google"], help="whose sign-in to run")
    auth.add_argument("--no-browser", action="store_true", help="print the sign-in address, open nothing")
    serve = sub.add_parser("serve", parents=[common], help="serve the meta-tools to MCP clients")
    serve.add_argument("--transport", choices=["stdio", "http"], help="default: stdio")
    serve.add_argument("--host", help="HTTP address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP port (default 8765; 0 picks a free one)")
    serve.add_argument("--code", action="store_true", default=None, help="offer run_code (docs/code-mode.md)")
    serve.add_argument(
        "--code-only", action="store_true", default=None, help="offer run_code alone (implies --code)"
    )
    serve.add_argument(
        "--toolset", metavar="NAME", help="serve only the tools of this [[toolsets]] entry, to every client"
    )
    serve.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="HTTP: N processes on one port, each a whole gateway (needs sessions off; docs/mcp.md#workers)",
    )
    serve.add_argument("--worker-pipes", help=argparse.SUPPRESS)  # how a worker reaches its parent
    console.add_arguments(
        sub.add_parser(
            "console", parents=[common], help="the operator console in a web page (docs/console.md)"
        )
    )
    chat.add_arguments(
        sub.add_parser("chat", parents=[common], help="chat with an agent that uses the gateway")
    )
    model.add_arguments(
        sub.add_parser(
            "model", parents=[common], help="the dense layer's model: gateway model pull (downloads), check"
        )
    )
    openapi.add_arguments(
        sub.add_parser(
            "openapi", parents=[common], help="check an OpenAPI description: gateway openapi check SPEC"
        )
    )
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    return openapi.with_entries(_settings(args), args.openapi)


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
            # `serve --code`, `chat --code`; `--code-only` is code mode too
            "code.enabled": True if getattr(args, "code_only", None) else getattr(args, "code", None),
            "code.only": getattr(args, "code_only", None),
            "serve.workers": getattr(args, "workers", None),
        },
    )
