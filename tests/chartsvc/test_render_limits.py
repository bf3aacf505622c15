"""Every render is bounded: a template bomb is refused within the render limits, in its own worker
process, and the service answers afterwards (issue 39 item 1). Small limits keep the tests quick."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio.client import CoreV1Api, V1ConfigMap, V1ObjectMeta

from chartsvc.helm import RenderLimits, RenderPool, RenderTimedOut, RenderTooLarge
from kubesim import Simulator
from tests.chartsvc.conftest import FULL, KEY, MakeClient
from tests.chartsvc.fixtures_cluster import (
    API,
    LOOP,
    build_chart,
    install_upload,
    kube_api,
    namespace,
    rewrite_record,
    sim,
    upgrade_upload,
    upload_form,
)
from tests.guards import assert_problem
from tests.typing_support import Client

__all__ = ["namespace", "sim"]

#: Doubles a string thirty times: a gigabyte within a second or two unless stopped.
BALLOON = (
    '{{ $s := "xxxxxxxx" }}{{ range until 30 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ $s }}\n'
)
#: A hundred thousand short lines: about 600 kB of output, rendered at once.
WIDE = "{{ range $i := until 100000 }}n: {{ $i }}\n{{ end }}"


async def test_a_looping_template_is_stopped_at_the_time_limit(
    make_client: MakeClient, tmp_path: Path
) -> None:
    client = await make_client("chartsvc.charts.render-timeout=1.5")
    bomb = build_chart(tmp_path, "bomb", templates={"loop.yaml": LOOP})
    started = time.monotonic()
    resp = await client.post("/api/v1/charts/template/upload", data=upload_form(bomb))
    body = await assert_problem(resp, 422, code="render-timeout")
    assert time.monotonic() - started < 5
    assert "render-timeout" in body["detail"]
    # the stopped worker was replaced: a small render still answers, with the chart's output
    fine = build_chart(tmp_path, "fine")
    resp = await client.post(
        "/api/v1/charts/template/upload", data=upload_form(fine, {"releaseName": "ok"})
    )
    assert resp.status == 200, await resp.text()
    assert "name: ok" in await resp.text()


async def test_lint_of_a_bomb_is_stopped_too(make_client: MakeClient, tmp_path: Path) -> None:
    client = await make_client("chartsvc.charts.render-timeout=1")
    bomb = build_chart(tmp_path, "bomb", templates={"loop.yaml": LOOP})
    resp = await client.post("/api/v1/charts/lint/upload", data=upload_form(bomb))
    await assert_problem(resp, 422, code="render-timeout")
    broken = build_chart(tmp_path, "broken", templates={"x.yaml": "{{ .Values.nope.deeper }}"})
    resp = await client.post("/api/v1/charts/lint/upload", data=upload_form(broken))
    assert resp.status == 200, await resp.text()  # a render failure stays lint's finding
    assert (await resp.json())["errors"]


async def test_output_over_the_limit_is_413(make_client: MakeClient, tmp_path: Path) -> None:
    client = await make_client("chartsvc.charts.max-render-output=100000")
    wide = build_chart(tmp_path, "wide", templates={"wide.yaml": WIDE})
    resp = await client.post("/api/v1/charts/template/upload", data=upload_form(wide))
    body = await assert_problem(resp, 413, code="render-too-large")
    assert "max-render-output" in body["detail"]
    client = await make_client("chartsvc.charts.max-render-output=1000000")
    resp = await client.post("/api/v1/charts/template/upload", data=upload_form(wide))
    assert resp.status == 200
    assert len(await resp.read()) > 100000


def test_memory_over_the_bound_stops_the_worker(tmp_path: Path) -> None:
    pool = RenderPool(RenderLimits(timeout=60, max_memory=300 * 1024 * 1024, workers=1))
    try:
        bomb = build_chart(tmp_path, "balloon", templates={"b.yaml": BALLOON})
        started = time.monotonic()
        with pytest.raises(RenderTooLarge, match="max-render-memory"):
            pool.render(bomb, {}, name="x", options={})
        assert time.monotonic() - started < 30
        fine = build_chart(tmp_path, "fine")
        assert "name: y" in pool.render(fine, {}, name="y", options={})
    finally:
        pool.close()


@pytest.mark.parametrize(("workers", "at_least", "under"), [(1, 2.0, 9.0), (2, 1.0, 1.9)])
def test_renders_beyond_the_worker_count_wait_their_turn(
    tmp_path: Path, workers: int, at_least: float, under: float
) -> None:
    pool = RenderPool(RenderLimits(timeout=1.0, workers=workers))
    bomb = build_chart(tmp_path, "bomb", templates={"loop.yaml": LOOP})

    def render() -> None:
        with pytest.raises(RenderTimedOut):
            pool.render(bomb, {}, name="x", options={})

    fine = build_chart(tmp_path, "fine")
    try:
        with ThreadPoolExecutor(2) as threads:  # every worker started and warm: not timed
            warm = [threads.submit(pool.render, fine, {}, name="w", options={}) for _ in "ab"]
            for started_render in warm:
                started_render.result()
        started = time.monotonic()
        with ThreadPoolExecutor(2) as threads:
            for done in [threads.submit(render), threads.submit(render)]:
                done.result()
        assert at_least <= time.monotonic() - started < under
    finally:
        pool.close()


async def test_an_install_of_a_bomb_is_refused_before_helm_runs_it(
    make_client: MakeClient, sim: Simulator, namespace: str, tmp_path: Path
) -> None:
    client = await make_client(
        *FULL, f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}", "chartsvc.charts.render-timeout=1"
    )
    bomb = build_chart(tmp_path, "bomb", templates={"loop.yaml": LOOP})
    resp = await install_upload(client, bomb, namespace, "boom")
    await assert_problem(resp, 422, code="render-timeout")
    resp = await install_upload(client, bomb, namespace, "boom", dryRun=True)
    await assert_problem(resp, 422, code="render-timeout")
    resp = await client.get(f"{API}/releases", params={"namespace": namespace}, headers=KEY)
    assert resp.status == 200
    assert await resp.json() == []  # nothing was stored


async def test_a_render_worker_ends_with_the_service_killed_mid_render(tmp_path: Path) -> None:
    """The service is killed with SIGKILL while a bomb renders: its worker stops too."""
    bomb = tmp_path / "bomb.tgz"
    bomb.write_bytes(build_chart(tmp_path, "bomb", templates={"loop.yaml": LOOP}))
    script = (
        "import sys, threading\n"
        "from pathlib import Path\n"
        "from chartsvc.helm import RenderLimits, RenderPool\n"
        "pool = RenderPool(RenderLimits(timeout=600))\n"
        "archive = Path(sys.argv[1]).read_bytes()\n"
        "threading.Thread(target=pool.render, args=(archive, {}),"
        " kwargs={'name': 'x', 'options': {}}).start()\n"
        "print('started', flush=True)\n"
        "threading.Event().wait()\n"
    )
    service = subprocess.Popen(
        [sys.executable, "-c", script, str(bomb)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert service.stdout is not None
        assert service.stdout.readline().strip() == "started"
        children = Path(f"/proc/{service.pid}/task")
        async with asyncio.timeout(30):
            while not (workers := _children(children)):
                await asyncio.sleep(0.05)
        await asyncio.sleep(1)  # the worker is rendering
        service.kill()
        service.wait()
        async with asyncio.timeout(10):
            while any(Path(f"/proc/{pid}").exists() and _alive(pid) for pid in workers):
                await asyncio.sleep(0.1)
    finally:
        if service.poll() is None:
            service.kill()
            service.wait()


def _children(tasks: Path) -> list[int]:
    return [int(c) for task in tasks.iterdir() for c in (task / "children").read_text().split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


#: ``lines`` times ``scale`` keys (the chart's own factor ``factor`` on top): what is a few bytes
#: with the stored values alone becomes megabytes once a reused or new value multiplies it.
LINES = """apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-lines}
data:
{{- range $i := until (mul (int (default 0 .Values.lines)) (int (default 1 .Values.scale)) (int .Values.factor) | int) }}
  k{{ $i }}: v
{{- end }}
"""
#: A bomb only when the cluster holds a ConfigMap named ``trigger`` (``lookup`` finds it).
LOOKUP = """{{- if lookup "v1" "ConfigMap" .Release.Namespace "trigger" }}
apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-found}
data:
{{- range $i := until 20000 }}
  k{{ $i }}: v
{{- end }}
{{- end }}
"""


async def bounded_client(make_client: MakeClient, sim: Simulator) -> Client:
    return await make_client(
        *FULL,
        f"chartsvc.kube.kubeconfig={sim.kubeconfig_path}",
        "chartsvc.charts.max-render-output=100000",
    )


async def revisions(client: Client, namespace: str, name: str) -> list[int]:
    resp = await client.get(f"{API}/releases/{name}/history", params={"namespace": namespace})
    assert resp.status == 200, await resp.text()
    return [r["version"] for r in await resp.json()]


async def test_an_upgrade_is_bounded_with_the_values_helm_reuses(
    make_client: MakeClient, sim: Simulator, namespace: str, tmp_path: Path
) -> None:
    client = await bounded_client(make_client, sim)
    small = build_chart(tmp_path, "lines", templates={"cm.yaml": LINES}, values={"factor": 1})
    resp = await install_upload(client, small, namespace, "app", values={"lines": 10})
    assert resp.status == 201, await resp.text()
    # reuseValues: the stored lines times the given scale
    reuse = {"reuseValues": True, "values": {"scale": 20000}}
    resp = await upgrade_upload(client, small, namespace, "app", reuse)
    assert (
        "max-render-output" in (await assert_problem(resp, 413, code="render-too-large"))["detail"]
    )
    # no values: Helm reuses the stored ones, which the new version multiplies
    wide = build_chart(
        tmp_path, "lines", version="0.2.0", templates={"cm.yaml": LINES}, values={"factor": 20000}
    )
    resp = await upgrade_upload(client, wide, namespace, "app", {})
    await assert_problem(resp, 413, code="render-too-large")
    assert await revisions(client, namespace, "app") == [1]
    resp = await upgrade_upload(client, wide, namespace, "app", {"resetValues": True})
    assert resp.status == 200, await resp.text()  # the chart's defaults alone: no lines


async def test_a_lookup_bomb_is_rendered_with_the_cluster_and_refused(
    make_client: MakeClient, sim: Simulator, namespace: str, tmp_path: Path
) -> None:
    client = await bounded_client(make_client, sim)
    chart = build_chart(tmp_path, "looker", templates={"found.yaml": LOOKUP})
    async with kube_api(sim) as api:
        trigger = V1ConfigMap(metadata=V1ObjectMeta(name="trigger"))
        await CoreV1Api(api).create_namespaced_config_map(namespace, trigger)
    resp = await install_upload(client, chart, namespace, "app")
    await assert_problem(resp, 413, code="render-too-large")
    resp = await client.get(f"{API}/releases", params={"namespace": namespace}, headers=KEY)
    assert await resp.json() == []


async def test_a_rollback_to_a_revision_with_oversized_manifests_is_refused(
    make_client: MakeClient, sim: Simulator, namespace: str, tmp_path: Path
) -> None:
    client = await bounded_client(make_client, sim)
    small = build_chart(tmp_path, "lines", templates={"cm.yaml": LINES}, values={"factor": 1})
    assert (await install_upload(client, small, namespace, "app")).status == 201
    assert (await upgrade_upload(client, small, namespace, "app", {})).status == 200
    # revision 1 as a writer around the service could have stored it: 150 kB of manifest
    lines = "".join(f"  k{i}: v\n" for i in range(15000))
    big = f"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big}}\ndata:\n{lines}"

    def oversized(record: dict[str, Any]) -> None:
        record["manifest"] += big

    await rewrite_record(sim, namespace, "app", oversized)
    where = f"{API}/releases/app/rollback?namespace={namespace}"
    for body in ({"revision": 1}, {}):  # named, and "the previous one"
        resp = await client.post(where, json=body, headers=KEY)
        problem = await assert_problem(resp, 413, code="render-too-large")
        assert "revision 1" in problem["detail"]
    assert await revisions(client, namespace, "app") == [1, 2]


def _render_worker_environments() -> list[dict[str, str]]:
    """The environments of this process's render workers, as the system sees them."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if ppid != os.getpid() or b"renderworker" not in (proc / "cmdline").read_bytes():
                continue
            pairs = (proc / "environ").read_bytes().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue  # not a process, or one that ended meanwhile
        found.append(dict(p.decode().split("=", 1) for p in pairs if b"=" in p))
    return found


@pytest.mark.parametrize("operator_gogc", [None, "150"])
def test_workers_collect_garbage_less_often_unless_the_operator_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, operator_gogc: str | None
) -> None:
    """Go's collector at 5x the live heap (``GOGC=400``) costs a small render 15 % less CPU; its
    soft memory limit sits at half the worker's bound; an operator's own ``GOGC`` wins."""
    if operator_gogc is None:
        monkeypatch.delenv("GOGC", raising=False)
    else:
        monkeypatch.setenv("GOGC", operator_gogc)
    pool = RenderPool(RenderLimits(max_memory=256 * 1024 * 1024, workers=1))
    try:
        assert "name: y" in pool.render(build_chart(tmp_path, "fine"), {}, name="y", options={})
        [environment] = _render_worker_environments()
    finally:
        pool.close()
    assert environment["GOGC"] == (operator_gogc or "400")
    assert environment["GOMEMLIMIT"] == f"{128 * 1024 * 1024}B"
