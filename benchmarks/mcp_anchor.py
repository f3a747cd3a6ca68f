"""The anchor of `benchmarks.mcp_load`: the MCP SDK's own minimal server, on the same HTTP stack.

    python -m benchmarks.mcp_anchor [--sessions on|off]

One tool named `invoke_tool`, taking the gateway's `invoke_tool` arguments and doing nothing, served
by the SDK's `MCPServer` over Streamable HTTP (stateless and plain JSON without sessions, as the
gateway answers then) on uvicorn with the options `gateway serve` uses (by default the HTTP stack
uvicorn picks, as the gateway's: httptools and uvloop when installed, else h11 and asyncio), on a
free loopback port. Its first line on stderr says where it listens. A client's bytes for the
gateway are bytes for it too.
"""

from __future__ import annotations

import argparse
import socket
import sys
from typing import Any

import uvicorn
from mcp.server import MCPServer


def app(sessions: bool) -> Any:
    server = MCPServer("anchor")

    @server.tool()
    async def invoke_tool(tool_name: str, parameters: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run one tool (here: nothing)."""
        return {"ok": True}

    return server.streamable_http_app(stateless_http=not sessions, json_response=not sessions)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", choices=["on", "off"], default="off")
    parser.add_argument("--http", default="auto", help="uvicorn's HTTP implementation (auto, h11, httptools)")
    parser.add_argument("--loop", default="auto", help="uvicorn's event loop (auto, asyncio, uvloop)")
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as `gateway serve` does
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app(args.sessions == "on"), log_level="warning", access_log=False, http=args.http, loop=args.loop
    )
    print(f"anchor: serving MCP on http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
