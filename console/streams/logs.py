"""Pod logs: which container a request means, why it has no log yet, and its lines read or followed.

A log request for a container that has not started, that the pod does not have, or that never ran
before is answered by the API server with a 400 ``Status`` body, which a naive client streams as
log text. Here the pod is read first and those cases become problems of their own
(``container-not-started``, ``unknown-container``, ``no-previous-run``) naming the reason; any other
refusal stays the cluster's (``cluster-refused``). Followed lines carry the kubelet's RFC 3339
timestamp, so several sources can be merged and a stream resumed.

This module must not know HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any

import attrs

from common.errors import BadRequest
from console.resources.kubeapi import KubeApi, lines, path_of

DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"
TEXT = "text/plain, */*"


class UnknownContainer(BadRequest, code="unknown-container"): ...


class ContainerNotStarted(BadRequest, code="container-not-started"): ...


class NoPreviousRun(BadRequest, code="no-previous-run"): ...


@attrs.frozen(order=True)
class Source:
    """One container of one pod that logs are read from."""

    pod: str
    container: str
    init: bool = False


@attrs.frozen
class LogLine:
    source: Source
    time: str  # RFC 3339 with nanoseconds, as the kubelet stamped it
    text: str

    @property
    def key(self) -> tuple[int, int]:
        return time_key(self.time)


def time_key(stamp: str) -> tuple[int, int]:
    """``(epoch seconds, nanoseconds)`` of an RFC 3339 time; the kubelet trims trailing zeros of
    the fraction, so the strings do not sort by themselves."""
    whole, _, rest = stamp.partition(".")
    fraction = "".join(ch for ch in rest if ch.isdigit())[:9] if rest else ""
    suffix = rest[len(fraction) :] if rest else ""
    try:
        moment = datetime.fromisoformat((whole + suffix).replace("Z", "+00:00"))
    except ValueError:
        return (0, 0)
    return (int(moment.timestamp()), int(fraction.ljust(9, "0") or 0))


def pod_path(namespace: str, pod: str) -> str:
    return path_of("", "v1", "pods", namespace=namespace, name=pod)


def containers(pod: Mapping[str, Any], *, init: bool) -> list[Source]:
    """The pod's app containers, and its init containers first when ``init``."""
    spec, name = pod.get("spec") or {}, (pod.get("metadata") or {}).get("name", "")
    found = (
        [Source(name, c["name"], True) for c in spec.get("initContainers") or []] if init else []
    )
    return found + [Source(name, c["name"]) for c in spec.get("containers") or []]


def container_status(pod: Mapping[str, Any], container: str) -> Mapping[str, Any] | None:
    status = pod.get("status") or {}
    for cs in [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]:
        if cs.get("name") == container:
            found: Mapping[str, Any] = cs
            return found
    return None


def has_run(status: Mapping[str, Any] | None) -> bool:
    """The container has (or had) a process whose log can be read."""
    if status is None:
        return False
    state, last = status.get("state") or {}, status.get("lastState") or {}
    return bool("running" in state or "terminated" in state or "terminated" in last)


def pick_container(pod: Mapping[str, Any], name: str | None, *, previous: bool = False) -> str:
    """The container a log request means (kubectl's default when none is named), or the refusal."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    pod_name = meta.get("name", "")
    apps = [c["name"] for c in spec.get("containers") or []]
    every = [c["name"] for c in spec.get("initContainers") or []] + apps
    if not name:
        default = (meta.get("annotations") or {}).get(DEFAULT_CONTAINER)
        name = str(default) if default in apps else (apps[0] if apps else "")
    if name not in every:
        raise UnknownContainer(
            f"pod {pod_name} has no container {name!r}; its containers: {', '.join(every)}"
        )
    status = container_status(pod, name)
    if not has_run(status):
        waiting = ((status or {}).get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason") or (pod.get("status") or {}).get("phase") or "Pending"
        raise ContainerNotStarted(
            f"container {name!r} of pod {pod_name} has not started yet ({reason}): no log yet"
        )
    if previous and not _ran_before(status):
        raise NoPreviousRun(f"container {name!r} of pod {pod_name} has no previous run to read")
    return name


def _ran_before(status: Mapping[str, Any] | None) -> bool:
    status = status or {}
    last = status.get("lastState") or {}
    return "terminated" in last or int(status.get("restartCount") or 0) > 0


async def read_log(
    api: KubeApi,
    namespace: str,
    pod: str,
    container: str | None,
    *,
    tail_lines: int,
    previous: bool = False,
) -> bytes:
    """The last ``tail_lines`` lines of the container's current (or previous) run."""
    obj = await api.get(pod_path(namespace, pod))
    name = pick_container(obj, container, previous=previous)
    query = [("container", name), ("tailLines", str(tail_lines))]
    if previous:
        query.append(("previous", "true"))
    return await api.read("GET", pod_path(namespace, pod) + "/log", query=query, accept=TEXT)


async def follow(
    api: KubeApi,
    namespace: str,
    source: Source,
    *,
    tail_lines: int | None = None,
    since: str | None = None,
) -> AsyncIterator[LogLine]:
    """The container's lines as it writes them (after its last ``tail_lines``, or from ``since``
    on: lines stamped at or before ``since`` are dropped); ends when the container stops."""
    query: list[tuple[str, str]] = [
        ("container", source.container),
        ("follow", "true"),
        ("timestamps", "true"),
    ]
    if since is not None:
        query.append(("sinceTime", _whole_seconds(since)))
    elif tail_lines is not None:
        query.append(("tailLines", str(tail_lines)))
    after = time_key(since) if since is not None else None
    path = pod_path(namespace, source.pod) + "/log"
    async with api.open_stream(path, query=query, accept=TEXT) as body:
        async for raw in lines(body):
            stamp, _, text = raw.decode("utf-8", "replace").partition(" ")
            line = LogLine(source, stamp, text)
            if after is None or line.key > after:
                yield line


def _whole_seconds(stamp: str) -> str:
    """``sinceTime`` is a ``metav1.Time``: whole seconds (the stream drops what came before)."""
    return datetime.fromtimestamp(time_key(stamp)[0], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
