"""The chart service's MCP tool server: the REST operations as tools for AI agents.

``tools`` builds one tool per operation the spec offers to MCP (schemas from the served spec), each
running the operation's call in ``chartsvc.calls`` as its HTTP route does, ``server`` is the official
``mcp`` package's low-level server around them, and ``routes``/``asgi``/``stdio`` attach it to
aiohttp (``/mcp``, ``/sse``) and to stdin/stdout. This package holds no chart logic of its own.
"""
