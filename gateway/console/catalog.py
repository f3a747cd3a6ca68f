"""The catalog as an operator sees it: where each tool comes from, who may see it, the fronted servers.

Every text here that a tool or a fronted server wrote is untrusted: the templates escape it all.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from ..context import Principal
from ..definition import ToolDefinition
from ..engine import Gateway
from ..errors import UserError
from ..fronting.config import load_front_config
from ..fronting.front import Front, Report
from ..named_toolsets import NamedToolset
from ..rendering import to_jsonable
from ..runtime import principal_from
from ..settings.loading import Settings

log = logging.getLogger("gateway.console")
NO_ROLE = "(no role)"


def _file_tool_names(gw: Gateway) -> frozenset[str]:
    try:
        from ..filetools.directories import FileTools
    except ImportError:  # the files extra is not installed: there are no file tools
        return frozenset()
    tools = gw.resources.get(FileTools)
    return frozenset(tools.names) if isinstance(tools, FileTools) else frozenset()


def source(d: ToolDefinition, file_tools: frozenset[str]) -> str:
    """Where a tool comes from, in words."""
    metadata = d.metadata
    if "server" in metadata:
        return f"fronted MCP server {metadata['server']}"
    if "method_id" in metadata:
        return f"Google API catalog ({metadata.get('api', '')})".replace(" ()", "")
    if "operation_id" in metadata:
        return f"OpenAPI ({metadata.get('api', '')})".replace(" ()", "")
    if d.name in file_tools:
        return "file tool"
    return "built-in"


def audiences(settings: Settings) -> list[tuple[str, Principal]]:
    """Each configured role (and no role at all) as a principal holding just that role."""
    roles = sorted({role for entry in settings.principals.values() for role in entry.roles})
    out = [(NO_ROLE, Principal(id="console-probe", agent=settings.agent))]
    out += [
        (role, Principal(id="console-probe", roles=frozenset({role}), agent=settings.agent)) for role in roles
    ]
    return out


def principals(settings: Settings) -> list[Principal]:
    """The principals the configuration knows: the default one, those in [principals] and the tokens'."""
    ids = {settings.principal, *settings.principals, *(t.principal for t in settings.serve.tokens)}
    return [principal_from(settings, pid) for pid in sorted(ids)]


@dataclass(frozen=True)
class ToolView:
    name: str
    category: str
    action: str
    summary: str
    description: str
    flags: tuple[str, ...]
    source: str
    roles: list[str]
    toolsets: list[str] | None  # None: no toolset is configured
    schema: str
    metadata: str


def tools(
    gw: Gateway, *, category: str = "", action: str = "", toolset: NamedToolset | None = None
) -> list[ToolDefinition]:
    """The catalog's tools, of `category`, that do `action`, that `toolset` holds (each: any when empty)."""
    return [
        d
        for d in gw.catalog
        if (not category or d.category == category)
        and (not action or d.action == action)
        and (toolset is None or toolset.holds(d))
    ]


def tool_view(gw: Gateway, settings: Settings, d: ToolDefinition) -> ToolView:
    roles = [label for label, probe in audiences(settings) if gw.policy.allows(d, probe)]
    metadata = {k: to_jsonable(v) for k, v in d.metadata.items()}
    return ToolView(
        name=d.name,
        category=d.category,
        action=d.action,
        summary=d.summary,
        description=d.description,
        flags=tuple(d.flags),
        source=source(d, _file_tool_names(gw)),
        roles=roles,
        toolsets=sorted(t.name for t in gw.policy.toolsets.all if t.holds(d))
        if gw.policy.toolsets.all
        else None,
        schema=json.dumps(d.json_schema, indent=2, ensure_ascii=False, default=str),
        metadata=json.dumps(metadata, indent=2, ensure_ascii=False, default=str) if metadata else "",
    )


def sources(gw: Gateway) -> dict[str, str]:
    """Each tool's source (one pass over the catalog)."""
    names = _file_tool_names(gw)
    return {d.name: source(d, names) for d in gw.catalog}


@dataclass(frozen=True)
class ServerView:
    name: str
    state: str  # running, idle or failed
    tools: int
    changed: list[Report] = field(default_factory=list)
    problems: list[Report] = field(default_factory=list)


def front_of(gw: Gateway) -> Front | None:
    found = gw.resources.get(Front)
    return found if isinstance(found, Front) else None


def servers(gw: Gateway, settings: Settings) -> list[ServerView]:
    """The fronted MCP servers: their state, their tools, changes waiting for an operator."""
    front = front_of(gw)
    if front is None or settings.mcp_servers is None:
        return []
    try:
        names = sorted(load_front_config(settings.mcp_servers).categories())
    except UserError as exc:
        log.warning("cannot read the fronting file again: %s", exc)
        names = sorted({r.server for r in front.reports})
    reports = front.reports
    out = []
    for name in names:
        mine = [r for r in reports if r.server == name]
        failed = any(r.kind == "unavailable" for r in mine)
        state = "running" if front.connected(name) else "failed" if failed else "idle"
        out.append(
            ServerView(
                name=name,
                state=state,
                tools=len(front.tools_of(name)),
                changed=[r for r in mine if r.kind == "changed"],
                problems=[r for r in mine if r.kind != "changed"],
            )
        )
    return out


def accept(gw: Gateway, server: str, tool: str | None) -> bool:
    """Accept a fronted tool's (or a whole server's) changed description and schema; False if unknown."""
    front = front_of(gw)
    if front is None:
        return False
    if not any(
        r.server == server and r.kind == "changed" and (tool is None or r.tool == tool) for r in front.reports
    ):
        return False
    front.accept_changes(server, tool)
    return True
