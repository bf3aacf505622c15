"""A real PostgreSQL server for the tests: initdb in a temporary directory, a free loopback port.

One server per test session (``pg_server`` in ``tests/conftest.py``); each test that needs one gets
a fresh database on it (``PgServer.new_database``), so tests never see each other's rows. The
tests' server runs with fsync off: it is thrown away at the end, and durability is not what is
tested (benchmarks ask for a durable one).
The binaries come from PATH or the Debian layout (``./scripts/test`` installs them when missing).
PostgreSQL refuses to run as root, so under root it runs as the ``postgres`` user (or ``nobody``).
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import attrs
import psycopg

from tests.addresses import free_port

USER = "wharf"


def binaries() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    found = shutil.which("initdb")
    if found is not None:
        return Path(found).resolve().parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists():
            return candidate
    raise RuntimeError("PostgreSQL server binaries not found: ./scripts/test installs them")


@attrs.define
class PgServer:
    root: Path
    port: int
    _run_as: list[str]
    _names: Iterator[int] = attrs.field(factory=lambda: itertools.count(1))

    @property
    def admin_url(self) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/postgres"

    def url(self, dbname: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{dbname}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t{next(self._names)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def stop(self) -> None:
        pg_ctl = str(binaries() / "pg_ctl")
        subprocess.run(
            [*self._run_as, pg_ctl, "stop", "-D", str(self.root / "data"), "-m", "immediate"],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def start(*, durable: bool = False) -> PgServer:
    """A server for the session. ``durable``: fsync and synchronous commit on, as in production
    (benchmarks that compare it with SQLite, which syncs every commit); off for the tests."""
    bindir = binaries()
    root = Path(tempfile.mkdtemp(prefix="wharf-pg-"))
    run_as = _unprivileged(root)
    data, port = root / "data", free_port()
    subprocess.run(
        [*run_as, str(bindir / "initdb"), "-D", str(data), "-U", USER, "-A", "trust",
         "-E", "UTF8", "--locale=C", "--no-sync"],
        check=True, capture_output=True,
    )  # fmt: skip
    options = f"-h 127.0.0.1 -p {port} -k '' -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    started = subprocess.run(
        [*run_as, str(bindir / "pg_ctl"), "start", "-w", "-t", "60", "-D", str(data),
         "-o", options, "-l", str(root / "server.log")],
        check=False, capture_output=True, text=True,
    )  # fmt: skip
    server = PgServer(root, port, run_as)
    if started.returncode != 0:
        log = (root / "server.log").read_text("utf-8", "replace")
        server.stop()
        raise RuntimeError(f"PostgreSQL did not start: {started.stderr}\n{log}")
    return server


def _unprivileged(root: Path) -> list[str]:
    """A command prefix that drops root (which PostgreSQL refuses), owning ``root`` for it."""
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            user = pwd.getpwnam(name)
        except KeyError:
            continue
        os.chown(root, user.pw_uid, user.pw_gid)
        return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
    raise RuntimeError("running as root with no postgres or nobody user to run PostgreSQL as")
