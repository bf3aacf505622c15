"""The CI side of the results service: ``wharf results upload`` and ``wharf results gate``.

``sources`` finds the report files and what CI already knows (commit, branch, build URL);
``client`` talks to a results server over HTTP with retries; ``commands`` is the command line.
Nothing here runs inside the server.
"""
