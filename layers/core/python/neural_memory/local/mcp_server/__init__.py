"""``neural-memory mcp``: the memory as Model Context Protocol tools for agents (``server.py``),
over the embedded store in-process or a remote API (``backends.py``)."""
