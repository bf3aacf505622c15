"""What importing a service loads: the big optional parts stay out until they are used.

Every import of a service pays for what its app module imports (each command, each test that builds
an app): the MCP SDK (``chartsvc.mcp.sessions``, imported in a worker thread when the app starts) and
the PostgreSQL driver (``common.db.postgresql``, only for a PostgreSQL URL) are left out of it.
An import-linter contract forbids the edges, except the few lazy imports that load them; this
checks that those stay lazy, in a fresh interpreter (this one has long loaded both). The console
reaches the driver only through ``common.db``, as results does, so it is not imported again here.
"""

from __future__ import annotations

import subprocess
import sys

IMPORTS = """
import sys
import chartsvc.app, results.app
optional = {"mcp", "sse_starlette", "uvicorn", "psycopg", "psycopg_pool"}
print("loaded:", ",".join(sorted(optional & {m.split(".")[0] for m in sys.modules})))
"""


def test_the_service_apps_import_neither_the_mcp_sdk_nor_the_postgresql_driver() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "loaded:", done.stdout
