"""The chart service's MCP tool server: the REST operations as tools for AI agents.

``tools`` builds one tool per operation of ``chartsvc.operations`` (schemas from the served spec),
``calls`` runs each through the same domain functions as the HTTP routes, ``server`` is the official
``mcp`` package's low-level server around them, and ``routes``/``asgi``/``stdio`` attach it to
aiohttp (``/mcp``, ``/sse``) and to stdin/stdout. This package holds no chart logic of its own.
"""
