"""The tools agents call over MCP, defined once and free of the MCP SDK: their names, descriptions,
input schemas and annotations (``definitions.py``), how a call runs and what the model reads from
its reply (``calling.py``, ``summaries.py``), and the memory of one workspace served in this
process (``workspace.py``). The stdio server and ``neural-memory mcp --http`` (the SDK's
transports, ``mcp_server/``), the local server's ``/mcp`` and the Lambda function's ``/mcp``
(``api/mcp_endpoint.py``) all serve them from here."""
