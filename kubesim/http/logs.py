"""``pods/log``: which container instance a request reads, and its lines as the kubelet serves them.

Options are ``PodLogOptions``: ``container``, ``previous``, ``sinceSeconds``/``sinceTime``,
``timestamps`` (RFC 3339 with nanoseconds), ``tailLines``, ``limitBytes`` and ``follow``, which
streams lines as the container writes them and ends when it exits or the pod goes away. Refusals
are the real ones, word for word: a container name is required for multi-container pods, a waiting
container "is waiting to start", ``--previous`` needs a terminated instance. HTTP-free.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Awaitable, Callable, Mapping

import attrs

from kubesim.api.params import flag, integer
from kubesim.kubelet import Container, Kubelet, Run
from kubesim.kubelet.logbuf import Line
from kubesim.machinery.status import KubeError, bad_request
from kubesim.store import Obj

FOLLOW_TICK = 1.0


@attrs.frozen
class LogOptions:
    container: str = ""
    follow: bool = False
    previous: bool = False
    since: float | None = None
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None

    @classmethod
    def parse(cls, query: Mapping[str, str], now: float) -> LogOptions:
        since_seconds = integer(query, "sinceSeconds")
        since_time = query.get("sinceTime")
        causes = []
        if since_seconds is not None and since_time:
            causes.append(
                ("sinceSeconds", "at most one of `sinceTime` or `sinceSeconds` may be specified")
            )
        if since_seconds is not None and since_seconds < 1:
            causes.append(("sinceSeconds", "must be greater than 0"))
        tail = integer(query, "tailLines")
        if tail is not None and tail < 0:
            causes.append(("tailLines", "must be greater than or equal to 0"))
        limit = integer(query, "limitBytes")
        if limit is not None and limit < 1:
            causes.append(("limitBytes", "must be greater than 0"))
        if causes:
            raise KubeError(
                422,
                'PodLogOptions "" is invalid: '
                + ", ".join(f"{f}: Invalid value: {m}" for f, m in causes),
                details={
                    "kind": "PodLogOptions",
                    "causes": [
                        {"reason": "FieldValueInvalid", "message": m, "field": f} for f, m in causes
                    ],
                },
            )
        since = now - since_seconds if since_seconds is not None else None
        if since_time:
            try:
                since = datetime.datetime.fromisoformat(
                    since_time.replace("Z", "+00:00")
                ).timestamp()
            except ValueError:
                raise bad_request(
                    f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot parse'
                ) from None
        return cls(
            container=query.get("container", ""),
            follow=flag(query, "follow"),
            previous=flag(query, "previous"),
            since=since,
            timestamps=flag(query, "timestamps"),
            tail_lines=tail,
            limit_bytes=limit,
        )


def _names(cs: list[Container]) -> str:
    return " ".join(c.name for c in cs)


def container_of(pod: Obj, kubelet: Kubelet, name: str) -> Container:
    """The container a request means, or the apiserver's/kubelet's refusal."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    pod_name = meta["name"]
    apps = [c["name"] for c in spec.get("containers") or []]
    inits = [c["name"] for c in spec.get("initContainers") or []]
    if not name:
        if len(apps) != 1:
            extra = f" or one of the init containers: [{' '.join(inits)}]" if inits else ""
            raise bad_request(
                f"a container name must be specified for pod {pod_name}, choose one of: [{' '.join(apps)}]{extra}"
            )
        name = apps[0]
    if name not in apps + inits:
        raise bad_request(f"container {name} is not valid for pod {pod_name}")
    if not spec.get("nodeName"):
        raise bad_request(f"pod {pod_name} does not have a host assigned")
    rt = kubelet.runtime(meta["namespace"], pod_name)
    container = rt.container(name) if rt is not None else None
    if container is None or not container.runs:
        reason = "ContainerCreating"
        if container is not None:
            reason = {
                "ErrImagePull": "trying and failing to pull image",
                "ImagePullBackOff": "image can't be pulled",
            }.get(
                container.reason,
                "PodInitializing" if name in apps and inits else container.reason or reason,
            )
        raise bad_request(f'container "{name}" in pod "{pod_name}" is waiting to start: {reason}')
    return container


def run_of(pod: Obj, container: Container, previous: bool) -> Run:
    if not previous:
        return container.runs[-1]
    if container.phase in ("exited", "backoff"):
        return container.runs[-1]
    if len(container.runs) > 1:
        return container.runs[-2]
    raise bad_request(
        f'previous terminated container "{container.name}" in pod "{pod["metadata"]["name"]}" not found'
    )


def stamp(t: float) -> str:
    whole = int(t)
    nanos = round((t - whole) * 1e9)
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, 0
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{nanos:09d}Z"


def render(lines: list[Line], opts: LogOptions) -> bytes:
    if opts.timestamps:
        return b"".join(f"{stamp(t)} {text}\n".encode() for t, _, _, text in lines)
    return b"".join(f"{text}\n".encode() for _, _, _, text in lines)


def snapshot(run: Run, opts: LogOptions, now: float) -> list[Line]:
    lines = run.log.lines(now)
    if opts.since is not None:
        lines = [line for line in lines if line[0] >= opts.since]
    if opts.tail_lines is not None:
        lines = lines[len(lines) - opts.tail_lines :] if opts.tail_lines else []
    return lines


def read(run: Run, opts: LogOptions) -> bytes:
    data = render(snapshot(run, opts, time.time()), opts)
    return data[: opts.limit_bytes] if opts.limit_bytes is not None else data


async def follow(
    run: Run, opts: LogOptions, write: Callable[[bytes], Awaitable[None]], alive: Callable[[], bool]
) -> None:
    """Stream the run's log: what exists (after since/tail), then new lines until it ends."""
    budget = opts.limit_bytes
    now = time.time()
    pending = snapshot(run, opts, now)
    everything = run.log.lines(now)
    cursor: Line | None = everything[-1] if everything else None  # new lines come after this one
    while True:
        if pending:
            data = render(pending, opts)
            if budget is not None:
                data, budget = data[:budget], budget - len(data)
            await write(data)
            if budget is not None and budget <= 0:
                return
        if run.log.finished(now) or not alive():
            return
        nxt = run.log.next_time(now)
        await run.log.wait(min(FOLLOW_TICK, nxt - time.time()) if nxt is not None else FOLLOW_TICK)
        now = time.time()
        pending = run.log.lines_after(cursor, now)
        if pending:
            cursor = pending[-1]
