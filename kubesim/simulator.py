"""Run a simulated cluster on its own thread and event loop, or in the foreground for the CLI.

A blocking client call (helm_python, a subprocess waiting on kubectl) made on the caller's loop can
never deadlock the server, because the server never runs on that loop. Several simulators can run at
once on different ports; each writes its own certificates and kubeconfig under its directory.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import secrets
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from aiohttp import web

from common import eventloop
from kubesim.api import seed
from kubesim.api.rbac import AUTHENTICATED, UserInfo
from kubesim.cluster import LiveCluster
from kubesim.http import podapi, tls
from kubesim.http.server import create_app
from kubesim.http.state import State
from kubesim.machinery.timings import Timings

logger = logging.getLogger(__name__)
T = TypeVar("T")
# Seconds open requests get to finish at shutdown; watches are ended before that.
SHUTDOWN_TIMEOUT = 0.5


class Simulator:
    """One simulated Kubernetes cluster.

    ``directory`` receives ``ca.crt``, ``server.crt``, ``server.key`` and ``kubeconfig``.
    ``token``: the bearer token clients must send (random when None). ``tls=False`` serves plain
    HTTP without authentication, for benchmarks: client-go never sends credentials over http.
    ``history``: how many events watches can resume from before 410 Gone. ``bookmark_interval``:
    seconds between BOOKMARK events on watches that allow them.
    ``nodes``: with 1 or more, the cluster comes alive (nodes, scheduler, controllers, kubelet,
    logs, exec, port-forward, metrics; see ``cluster``); with 0 (the default) it stays a static API
    server whose workloads a stand-in reports as rolled out at once. ``scenario`` (``empty`` or
    ``demo``, which needs nodes) and ``timings`` (default: fast, test-friendly delays) shape it.
    ``users``: more identities, name -> groups; each gets a random bearer token in
    :attr:`user_tokens` and a kubeconfig context ``<context>-<name>``, and may do what RBAC
    grants it (the admin token may do everything). ``event_loop``: what :meth:`start`'s thread runs
    on (``common.eventloop``). ``min_token_seconds``: the shortest life a TokenRequest may ask
    for (kube-apiserver's 600 by default; 1 lets tests mint tokens that expire in seconds, which
    are then refused with 401 as a real server refuses them). ``max_watch_seconds``: every watch
    ends by then whatever ``timeoutSeconds`` asked, as a load balancer in front of a cluster cuts
    long requests; clients must reconnect (with their current credentials).
    ``client_certificates``: also accept client certificates signed by the simulator's authority
    (``ca.key`` in ``directory``; :func:`kubesim.http.tls.client_certificate` issues them), their
    common name the user and organizations the groups; an expired one is refused with 401.
    """

    def __init__(
        self,
        directory: Path | str,
        *,
        token: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        context: str = "kubesim",
        tls: bool = True,
        kubeconfig_path: Path | str | None = None,
        history: int = 2000,
        bookmark_interval: float = 60.0,
        nodes: int = 0,
        scenario: str = "empty",
        timings: Timings | None = None,
        users: Mapping[str, Sequence[str]] | None = None,
        event_loop: eventloop.Loop = "asyncio",
        min_token_seconds: int = 600,
        max_watch_seconds: float | None = None,
        client_certificates: bool = False,
    ) -> None:
        self.directory = Path(directory)
        self.token = token if token is not None else secrets.token_urlsafe(24)
        self.host = host
        self.port = port
        self.context = context
        self.tls = tls
        self.kubeconfig_path = (
            Path(kubeconfig_path) if kubeconfig_path else self.directory / "kubeconfig"
        )
        self._history = history
        self._bookmark_interval = bookmark_interval
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self.state: State | None = None
        if scenario != "empty" and nodes < 1:
            raise ValueError(f"scenario {scenario!r} needs at least one node")
        self.nodes, self.scenario, self.timings = nodes, scenario, timings or Timings()
        self.live: LiveCluster | None = None
        self._users = {name: tuple(groups) for name, groups in (users or {}).items()}
        self.user_tokens = {name: secrets.token_urlsafe(24) for name in self._users}
        self.event_loop = event_loop
        self.min_token_seconds = min_token_seconds
        self.max_watch_seconds = max_watch_seconds
        self.client_certificates = client_certificates

    def __repr__(self) -> str:
        return f"Simulator(url={self.url!r}, context={self.context!r})"

    @property
    def url(self) -> str:
        scheme = "https" if self.tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    @property
    def ca_path(self) -> Path:
        return self.directory / "ca.crt"

    # -- the server itself ------------------------------------------------------------------
    async def serve(self, ready: Callable[[], None] | None = None) -> None:
        """Run until :meth:`stop` (or cancellation); calls ``ready`` once the port is bound."""
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        certs = tls.generate(self.directory, [self.host]) if self.tls else None
        self.state = State.new(
            token=self.token if self.tls else None,
            history=self._history,
            bookmark_interval=self._bookmark_interval,
        )
        self.state.min_token_seconds = self.min_token_seconds
        self.state.max_watch_seconds = self.max_watch_seconds
        self.state.users = {
            self.user_tokens[name]: UserInfo(name, (*groups, AUTHENTICATED))
            for name, groups in self._users.items()
        }
        seed.populate(self.state.objects)
        if self.nodes > 0:  # installed before the app starts, so the stand-in stays off
            self.live = LiveCluster(
                self.state.objects,
                nodes=self.nodes,
                scenario=self.scenario,
                timings=self.timings,
                ca_pem=certs.ca_pem.decode() if certs else "",
            )
            podapi.install(self.state, self.live)
        runner = web.AppRunner(
            create_app(self.state),
            access_log=None,
            shutdown_timeout=SHUTDOWN_TIMEOUT,
            handle_signals=False,
        )
        await runner.setup()
        try:
            if self.live is not None:
                await self.live.start()
            site = web.TCPSite(
                runner,
                self.host,
                self.port,
                ssl_context=certs.server_context(client_certificates=self.client_certificates)
                if certs
                else None,
            )
            await site.start()
            self.port = int(runner.addresses[0][1])
            self.state.server_address = f"{self.host}:{self.port}"
            tls.write_kubeconfig(
                self.kubeconfig_path,
                server=self.url,
                context=self.context,
                token=self.token if self.tls else None,
                ca_pem=certs.ca_pem if certs else None,
                users=self.user_tokens if self.tls else None,
            )
            logger.info("kubesim serving %s (kubeconfig %s)", self.url, self.kubeconfig_path)
            if ready is not None:
                ready()
            await self._stop.wait()
        finally:
            await runner.cleanup()
            if self.live is not None:
                await self.live.stop()

    # -- thread management ------------------------------------------------------------------
    def start(self) -> None:
        """Start the server on its own thread; returns once it accepts connections."""
        started: concurrent.futures.Future[None] = concurrent.futures.Future()

        def run() -> None:
            # As asyncio.run: connection handlers still open at the end are cancelled, not leaked.
            try:
                eventloop.run(self.serve(lambda: started.set_result(None)), self.event_loop)
            except BaseException as exc:
                if not started.done():
                    started.set_exception(exc)
                else:
                    logger.exception("kubesim stopped with an error")

        self._thread = threading.Thread(target=run, name=f"kubesim-{self.context}", daemon=True)
        self._thread.start()
        started.result(timeout=30)

    def stop_soon(self) -> None:
        """Ask a server running on the current loop to stop (e.g. from a signal handler)."""
        if self._stop is not None:
            self._stop.set()

    def stop(self) -> None:
        """Stop the server thread and wait for it; idempotent."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop already closed
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    async def __aenter__(self) -> Simulator:
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    def __enter__(self) -> Simulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- inspection from other threads ------------------------------------------------------
    def call(self, fn: Callable[[State], T]) -> T:
        """Run ``fn(state)`` on the simulator's loop and return its result (blocking)."""
        return self.run(_wrap(fn, self))

    def run(self, coro: Awaitable[T]) -> T:
        if self._loop is None:
            raise RuntimeError("the simulator is not running")
        future = asyncio.run_coroutine_threadsafe(_as_coro(coro), self._loop)
        return future.result(timeout=30)


async def _as_coro(aw: Awaitable[T]) -> T:
    return await aw


async def _wrap(fn: Callable[[State], T], sim: Simulator) -> T:
    assert sim.state is not None
    return fn(sim.state)
