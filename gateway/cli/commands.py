"""The commands that read the catalog or run one tool: discover, invoke, catalog, index, tools, auth."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from typing import Any

from .. import discovery
from ..context import ToolContext
from ..engine import Gateway, run_sync
from ..errors import UserError
from ..rendering import shown
from ..runtime import open_gateway, open_vault
from ..search import default_cache_dir
from ..settings.loading import Settings
from . import findability
from .approvals import TerminalApprover
from .messages import for_a_person, not_approved_without_a_terminal, note
from .output import dump, print_result

# Output format -> (adapter module, function); imported only when `gateway tools` runs.
FORMATS = {
    "anthropic": ("anthropic", "tools"),
    "openai-chat": ("openai", "chat_tools"),
    "openai-responses": ("openai", "responses_tools"),
}


def discover(gw: Gateway, ctx: ToolContext, args: argparse.Namespace) -> int:
    arguments = {
        "query": args.query,
        "categories": args.category,
        "actions": args.action,
        "limit": args.limit,
        "cursor": args.cursor,
    }
    # The search index is built (or loaded) before the event loop starts: under `asyncio.run` a first
    # Ctrl-C only cancels the running task at its next await, and a build of seconds has none.
    gw.index(ctx.principal)
    result = run_sync(gw.call("discover_tools", {k: v for k, v in arguments.items() if v}, ctx))
    layer = gw.index().dense
    if layer is not None and not layer.ready:  # a one-shot command never encodes a large catalog
        note(
            "the dense layer of search has not encoded this catalog yet, so this search ranked without it; "
            "'gateway index' encodes it once for every later command"
        )
    if not args.json:  # --json: exactly what the model reads
        result = for_a_person(result, gw, ctx.principal)
    if args.json and result.status == "ok":
        for hit in result.output.get("tools", []):  # e.g. the Google method a generated tool calls
            found = gw.catalog.get(hit["name"])
            for key in ("method_id", "operation_id"):  # ... or the OpenAPI operation
                if found is not None and key in found.metadata:
                    hit[key] = found.metadata[key]
    if args.json or result.status != "ok":
        return print_result(result)
    out = result.output
    if "tools" not in out:  # no words and no filters: the overview, as `gateway catalog` shows it
        _print_overview(out)
        print(shown(out["next_step"]))
        return 0
    for hit in out["tools"]:  # a page names only what its names do not say: the catalog has the rest
        d = gw.catalog.get(hit["name"])
        kind = f"{d.category}/{d.action}" if d is not None else hit.get("category", "")
        flags = f" ({', '.join(d.flags)})" if d is not None and d.flags else ""
        print(f"{shown(hit['name']):<32} {shown(kind)}{flags}\n    {shown(hit['summary'])}")
    if not out["tools"]:
        print(shown(out.get("message", "No tool matched.")))
        for key, values in out.get("suggestions", {}).items():
            print(f"{_SUGGESTION_LABELS.get(key, key)}: {shown(', '.join(map(str, values)))}")
        print(shown(out["next_step"]))
    if "next_cursor" in out:
        print(f"more: --cursor {out['next_cursor']}")
    return 0


# What a nothing-matched page suggests, as a person reads it (the keys are the model's).
_SUGGESTION_LABELS = {
    "close_names": "Close names",
    "categories_with_related_tools": "Categories with related tools",
    "categories": "Categories",
}


def _print_overview(overview: discovery.Overview, served: str | None = None) -> None:
    """Tool counts by category, in columns as wide as the longest name and count."""
    total = f"{overview['total_tools']} tools" + (f" ({served})" if served else "")
    print(total)
    categories = overview["categories"]
    name_width = max((len(shown(c["name"])) for c in categories), default=0)
    count_width = max((len(str(c["tools"])) for c in categories), default=0)
    for cat in categories:
        actions = ", ".join(f"{a} {n}" for a, n in cat["actions"].items())
        print(f"  {shown(cat['name']):<{name_width}}  {cat['tools']:>{count_width}}  ({shown(actions)})")


def invoke(gw: Gateway, ctx: ToolContext, args: argparse.Namespace, approver: TerminalApprover | None) -> int:
    if gw.meta.get(args.tool_name) is not None:
        raise UserError(
            f"{args.tool_name} is a meta-tool, for models; on the command line its work is done by "
            "'gateway discover [WORDS]', 'gateway schema NAME' and 'gateway invoke NAME PARAMETERS'"
        )
    parameters = args.parameters
    if parameters == "-":  # a JSON object on stdin: no argument limit of the shell (128 KiB)
        parameters = _parameters_from_stdin()
        if approver is not None:
            approver.stdin_taken = True  # a confirmation is asked on the terminal itself
    result = run_sync(gw.invoke(args.tool_name, parameters, context=ctx))
    if approver is not None and approver.asked_nobody:
        result = not_approved_without_a_terminal(result)
    if not args.json:
        result = for_a_person(result, gw, ctx.principal, tool_name=args.tool_name)
    return print_result(result)


MAX_STDIN_BYTES = 16 * 2**20
"""`gateway invoke TOOL -` reads at most this much; the gateway then holds the call to its own limits."""


def _parameters_from_stdin() -> str:
    if sys.stdin.isatty():
        note("reading the parameters from the terminal: a JSON object, then Ctrl-D")
    data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise UserError(f"the parameters on stdin are over {MAX_STDIN_BYTES // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"the parameters on stdin are not UTF-8 (byte {exc.start})") from None


def served(settings: Settings) -> str:
    """The catalogs the gateway serves, e.g. 'workspace: local backend; google-apis'."""
    shown = [f"{c}: {settings.backend} backend" if c == "workspace" else c for c in settings.catalogs]
    if settings.openapi and not any(c == "openapi" or c.startswith("openapi:") for c in settings.catalogs):
        shown.append("openapi: " + ", ".join(entry.name for entry in settings.openapi))
    if settings.tools_dirs and "files" not in settings.catalogs:
        shown.append("files")
    if settings.mcp_servers is not None and "mcp" not in settings.catalogs:
        shown.append("mcp")
    return "; ".join(shown)


def catalog(gw: Gateway, ctx: ToolContext, args: argparse.Namespace, settings: Settings) -> int:
    if args.findability:
        return findability.run(gw, ctx, args)
    if args.min_found is not None:
        raise UserError("--min-found is the threshold of --findability: give both")
    overview = gw.overview(ctx.principal)
    if args.json:
        print(dump({k: v for k, v in overview.items() if k != "next_step"}))
        return 0
    _print_overview(overview, served(settings))
    return 0


def index(gw: Gateway, args: argparse.Namespace) -> int:
    """Build the served catalogs' search index now, every layer, and cache it for the next start.

    A large catalog's sentence vectors (the `dense` extra) take minutes to encode in the background;
    a one-shot command ends before they are ready, a server ranks without them until they are. This
    command waits for them, showing progress on stderr.
    """
    start = time.perf_counter()
    built = gw.index()
    layer = built.dense
    ready = layer is not None and layer.wait()
    if layer is not None and not ready:
        raise UserError("the dense layer could not encode the catalog (the log above says why)")
    layers = ["lexical", *(["semantic"] if built.semantic else []), *(["dense"] if ready else [])]
    cache = None if gw.search_cache_dir is False else str(gw.search_cache_dir or default_cache_dir())
    seconds = round(time.perf_counter() - start, 1)
    if args.json:
        print(dump({"tools": len(gw.catalog), "layers": layers, "cache_dir": cache, "seconds": seconds}))
    else:
        where = f"cached in {cache}" if cache else "not cached"
        print(f"{len(gw.catalog):,} tools indexed in {seconds} s: {', '.join(layers)} ({where})")
    return 0


def tools_new(settings: Settings, args: argparse.Namespace) -> int:
    from ..filetools.directories import scaffold  # file tools are an optional extra

    if not args.name or not settings.tools_dirs:
        raise UserError("usage: gateway tools new NAME --tools-dir DIR (or set GATEWAY_TOOLS_DIR)")
    _refuse_a_served_name(settings, args.name)
    for path in scaffold(settings.tools_dirs[0], args.name, args.category):
        print(path)
    return 0


def _refuse_a_served_name(settings: Settings, name: str) -> None:
    """A file tool named like a built-in or OpenAPI tool would never be served: those win clashes.

    (Fronted MCP servers are not started for the question: their tools come and go with them.)
    """
    others = [c for c in settings.catalogs if c not in ("files", "mcp")]
    update = {"tools_dirs": [], "catalogs": others, "mcp_servers": None}
    with open_gateway(settings.model_copy(update=update)) as gw:
        if gw.catalog.get(name) is not None:
            raise UserError(
                f"{name} is already a tool of the served catalogs, which win over a file tool of the "
                "same name: choose another name"
            )


def tools_check(gw: Gateway, settings: Settings, args: argparse.Namespace) -> int:
    """Every skipped definition with its file and line; exit 1 when there is one."""
    from ..filetools.directories import FileTools

    tools = gw.resources.get(FileTools)
    if not isinstance(tools, FileTools):
        raise UserError("no tools directory: pass --tools-dir DIR or set GATEWAY_TOOLS_DIR")
    problems = tools.problems
    if args.json:
        listed = [{"path": str(p.path), "line": p.line, "message": p.message} for p in problems]
        print(dump({"tools": list(tools.names), "problems": listed}))
    else:
        for problem in problems:
            print(problem)
        print(f"{_count(len(tools.names), 'tool')} loaded, {_count(len(problems), 'problem')}")
    return 1 if problems else 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def tool_definitions(gw: Gateway, output_format: str) -> int:
    """The meta-tool definitions in one vendor's format."""
    module, function = FORMATS[output_format]
    emit: Any = getattr(importlib.import_module(f"..adapters.{module}", __package__), function)
    print(dump(emit(gw.meta)))
    return 0


def auth(settings: Settings, args: argparse.Namespace) -> int:
    """A service's sign-in, registered by the service package in the `metatool_gateway.auth` entry points."""
    from importlib.metadata import entry_points

    from ..toolset import ProviderOptions

    found = [ep for ep in entry_points(group="metatool_gateway.auth") if ep.name == args.service]
    if not found:
        raise UserError(
            f"no sign-in for {args.service!r} is installed; pip install 'metatool-gateway[google]'"
        )
    vault = open_vault(settings)
    options = ProviderOptions(
        data_dir=settings.data_dir,
        timezone=settings.timezone,
        backend=args.service,
        # The service's own section, and what is served (a catalog can need more access at sign-in).
        extra={
            args.service: getattr(settings, args.service).model_dump(),
            "catalogs": tuple(settings.catalogs),
            "google_apis": settings.google_apis.model_dump(),
            # A team gateway's own account of the person at this terminal (`gateway connect google`).
            "vault": vault,
            "principal": settings.principal,
        },
    )
    try:
        print(found[0].load()(options, open_browser=not getattr(args, "no_browser", False)))
    finally:
        if vault is not None:
            vault.close()
    print(f"active backend: {settings.backend}")
    return 0
