"""Fronting other MCP servers: their tools in our catalog, under our rules.

Owns what is vendor-neutral about a fronted server: its configuration (`config`: the servers file,
`${VAR}` expansion), the treatment of text from outside (`untrusted`: cleaning descriptions and
schemas, pins of what a tool said when first seen), and the provider logic that turns a server's
tool list into definitions and calls into results (`front`). It may import the core and nothing
else of the gateway. The MCP client SDK is imported only by the adapters that connect to servers
(`gateway.adapters.mcp_connection`, `gateway.adapters.mcp_client`), which build on this package.
"""

from __future__ import annotations

from .config import FrontConfig, ServerSettings, load_front_config
from .front import Connector, Front, Report, ToolsListener, UpstreamTool
from .untrusted import PinStore, clean_schema, clean_text

__all__ = [
    "Connector",
    "Front",
    "FrontConfig",
    "PinStore",
    "Report",
    "ServerSettings",
    "ToolsListener",
    "UpstreamTool",
    "clean_schema",
    "clean_text",
    "load_front_config",
]
