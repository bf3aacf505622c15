"""The render worker: a child process that renders charts for :mod:`chartsvc.helm.sandbox`.

A render runs arbitrary template code (``until 100000000`` is one line), and helm_python offers no
way to stop a render or bound what it builds: only a process can be stopped, and only a process
that ends gives its Go heap back. So renders run here, one at a time, and the parent kills this
process when a render overruns its time or memory; a warm worker keeps the loaded charts of the
last renders.

The protocol, on stdin/stdout, is frames (an 8-byte big-endian length, then that many bytes): a
request is a JSON header frame and the archive frame; the answer is a JSON header frame and, when
the header says ``ok``, the rendered text frame. Nothing else may write to the protocol pipe, so
fd 1 is pointed at stderr before anything runs. This module must not be imported by the service.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from collections import OrderedDict
from typing import IO, Any

import helm_python as helm

from chartsvc.helm import manifests

#: Loaded charts kept per worker: a chart's load is a third of a small render's cost.
KEEP_CHARTS = 16


def read_frame(stream: IO[bytes]) -> bytes | None:
    """One frame, or None at end of input."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "big")
    data = stream.read(size)
    return data if len(data) == size else None


def write_frame(stream: IO[bytes], data: bytes) -> None:
    stream.write(len(data).to_bytes(8, "big"))
    stream.write(data)


class _Charts:
    def __init__(self) -> None:
        self._loaded: OrderedDict[str, helm.Chart] = OrderedDict()

    def get(self, archive: bytes) -> helm.Chart:
        key = hashlib.sha256(archive).hexdigest()
        chart = self._loaded.pop(key, None) or helm.Chart.load_archive(archive)
        self._loaded[key] = chart
        while len(self._loaded) > KEEP_CHARTS:
            self._loaded.popitem(last=False)[1].close()
        return chart


def _answer(
    charts: _Charts, header: dict[str, Any], archive: bytes
) -> tuple[dict[str, Any], bytes]:
    try:
        helm.validate_release_name(header["name"])
        chart = charts.get(archive)
        rendered = _render(chart, header)
    except helm.HelmError as exc:
        return {"error": type(exc).__name__, "code": exc.code, "message": str(exc)}, b""
    text = manifests.text(rendered).encode()
    if len(text) > header["maxOutput"]:
        return {"tooLarge": len(text)}, b""
    return {"ok": True}, text


def _render(chart: helm.Chart, header: dict[str, Any]) -> dict[str, str]:
    """Offline (``lookup`` finds nothing), or with the header's cluster as Helm's install and
    upgrade render (``lookup`` reads live objects, the only call that reaches the cluster)."""
    values, name, options = header["values"], header["name"], header["options"]
    cluster = header.get("cluster")
    if cluster is None:
        return chart.render(values, name=name, **options)
    config = helm.Config(
        kubeconfig_path=cluster["kubeconfig"],
        kube_context=cluster["context"],
        namespace=options.get("namespace"),
    )
    try:
        return config.render(chart, values, name=name, **options)
    finally:
        config.close()


def _orphaned_exit(interval_s: float = 0.5) -> None:
    """End this process once its parent is gone (killed with SIGKILL, say): a render in progress
    would otherwise run on, unbounded, with nobody to stop it. ctypes lets the GIL go during a
    render, so this thread runs while Go renders."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(interval_s)
    os._exit(1)


#: The first frame a worker writes, once it can render.
READY = b"ready"


def main() -> None:
    threading.Thread(target=_orphaned_exit, daemon=True).start()
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else writes to stdout (Go's runtime, say) lands on stderr
    charts = _Charts()
    write_frame(answers, READY)  # started: the time a render may take is counted from here
    answers.flush()
    while (header := read_frame(requests)) is not None:
        archive = read_frame(requests)
        if archive is None:
            break
        answer, text = _answer(charts, json.loads(header), archive)
        write_frame(answers, json.dumps(answer).encode())
        if answer.get("ok"):
            write_frame(answers, text)
        answers.flush()


if __name__ == "__main__":
    main()
