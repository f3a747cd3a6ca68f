"""Vendor formats and SDKs: the only room that imports anthropic, openai or mcp.

Each module maps the vendor-neutral definitions and results to one SDK's shapes (`anthropic`,
`openai`, `mcp`), drives an agent on one SDK (`anthropic`, `openai_agent`: the agent loop's
`Provider`), serves the gateway over MCP (`mcp_server`), or connects to the MCP servers the gateway
fronts (`mcp_connection`, and `mcp_client`, the `mcp` catalog provider). It may import the core,
the agent loop (`gateway.agent`) and the fronting logic (`gateway.fronting`); never the command line.
"""
