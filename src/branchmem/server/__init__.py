"""Serving a store: the HTTP API, the MCP tools, API keys and grants.

The service layer (`branchmem.server.service`) holds every served operation;
`branchmem.server.app.create_app` (HTTP, needs the ``server`` extra) and
`branchmem.server.mcp_tools` (MCP) are thin shells over it. This package's
own import needs nothing beyond the standard library.
"""
