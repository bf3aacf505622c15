"""The simulated kubelet: container lifecycles, failure modes, logs and graceful deletion."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesim.api import deletion
from kubesim.cluster import LiveCluster
from kubesim.http import logs
from kubesim.machinery.status import KubeError
from kubesim.shell.io import IO, BufferWriter, BytesReader
from tests.kubesim.live import (
    PODS,
    USER,
    create,
    events_for,
    live_fixture,
    phase,
    ready,
    rt,
    stored,
    until,
)

live = live_fixture(nodes=1, namespaces=("k",))


def pod(name: str, image: str, **container: Any) -> dict[str, Any]:
    restart = container.pop("restartPolicy", "Always")
    return {
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": restart,
            "containers": [{"name": "main", "image": image, **container}],
        },
    }


def status_of(live: LiveCluster, name: str) -> dict[str, Any]:
    found = live.objs.store.get(PODS, "k", name) or {}
    statuses = (found.get("status") or {}).get("containerStatuses") or [{}]
    first: dict[str, Any] = statuses[0]
    return first


def log_text(live: LiveCluster, name: str, **query: str) -> str:
    p = stored(live.objs, PODS, "k", name)
    opts = logs.LogOptions.parse(query, 0)
    run = logs.run_of(p, logs.container_of(p, live.kubelet, opts.container), opts.previous)
    return logs.read(run, opts).decode()


async def test_server_runs_and_logs_deterministically(live: LiveCluster) -> None:
    create(live.objs, PODS, "k", pod("web", "nginx:1.27", ports=[{"containerPort": 80}]))
    await until(lambda: ready(live.objs.store.get(PODS, "k", "web") or {}))
    status = status_of(live, "web")
    assert status["image"] == "docker.io/library/nginx:1.27"
    assert status["started"] is True
    assert status["containerID"].startswith("containerd://")
    await asyncio.sleep(0.2)
    text = log_text(live, "web")
    assert "Configuration complete; ready for start up" in text
    assert '"GET ' in text  # access-log lines at the configured cadence
    first = log_text(live, "web", tailLines="2")
    assert len(first.splitlines()) == 2
    assert text.startswith(log_text(live, "web")[: len(text) // 2])
    stamped = log_text(live, "web", timestamps="true", tailLines="1")
    assert stamped[:4].isdigit()
    assert stamped[10] == "T"
    assert stamped.split(" ", 1)[0].endswith("Z")
    assert len(log_text(live, "web", limitBytes="10")) == 10
    assert log_text(live, "web", sinceSeconds="3600") == log_text(live, "web")


async def test_crash_loop_keeps_the_previous_log(live: LiveCluster) -> None:
    create(live.objs, PODS, "k", pod("crash", "ghcr.io/wharf-demo/crashloop:1.0"))
    await until(lambda: status_of(live, "crash").get("restartCount", 0) >= 2, what="restarts")
    await until(
        lambda: (
            status_of(live, "crash")["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff"
        )
    )
    status = status_of(live, "crash")
    assert status["lastState"]["terminated"]["exitCode"] == 1
    assert status["lastState"]["terminated"]["reason"] == "Error"
    assert "back-off" in status["state"]["waiting"]["message"]
    assert "panic: failed to connect to backend" in log_text(live, "crash", previous="true")
    assert any(e["reason"] == "BackOff" for e in events_for(live.objs, "crash"))
    assert phase(live.objs.store.get(PODS, "k", "crash")) == "Running"


async def test_image_pull_oom_and_readiness_failures(live: LiveCluster) -> None:
    create(live.objs, PODS, "k", pod("pull", "registry.example.com/team/does-not-exist:1.0"))
    create(
        live.objs,
        PODS,
        "k",
        pod("oom", "ghcr.io/wharf-demo/oom:1.0", resources={"limits": {"memory": "64Mi"}}),
    )
    create(
        live.objs, PODS, "k", pod("slow", "nginx", readinessProbe={"exec": {"command": ["false"]}})
    )
    await until(
        lambda: (
            status_of(live, "pull").get("state", {}).get("waiting", {}).get("reason")
            == "ImagePullBackOff"
        )
    )
    with pytest.raises(KubeError) as info:
        log_text(live, "pull")
    assert (
        info.value.message
        == 'container "main" in pod "pull" is waiting to start: image can\'t be pulled'
    )
    failed = [e["message"] for e in events_for(live.objs, "pull") if e["reason"] == "Failed"]
    assert any("failed to resolve reference" in m for m in failed)
    assert "Error: ImagePullBackOff" in failed
    await until(
        lambda: (
            status_of(live, "oom").get("lastState", {}).get("terminated", {}).get("reason")
            == "OOMKilled"
        )
    )
    assert status_of(live, "oom")["lastState"]["terminated"]["exitCode"] == 137
    await until(lambda: any(e["reason"] == "Unhealthy" for e in events_for(live.objs, "slow")))
    slow = stored(live.objs, PODS, "k", "slow")
    assert phase(slow) == "Running"
    assert not ready(slow)
    assert status_of(live, "slow")["ready"] is False


async def test_scripts_init_containers_and_completion(live: LiveCluster) -> None:
    body = pod(
        "job",
        "busybox:1.36",
        command=["sh", "-c", 'echo "hello $POD"; ls /etc | head -n 2; exit 0'],
        restartPolicy="Never",
        env=[{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
    )
    body["spec"]["initContainers"] = [
        {"name": "wait", "image": "busybox", "command": ["sh", "-c", "echo init done"]}
    ]
    create(live.objs, PODS, "k", body)
    await until(
        lambda: phase(live.objs.store.get(PODS, "k", "job")) == "Succeeded", what="succeeded"
    )
    assert log_text(live, "job") == "hello job\nfstab\ngroup\n" or log_text(live, "job").startswith(
        "hello job\n"
    )
    assert log_text(live, "job", container="wait") == "init done\n"
    terminated = status_of(live, "job")["state"]["terminated"]
    assert terminated["exitCode"] == 0
    assert terminated["reason"] == "Completed"
    with pytest.raises(KubeError) as info:
        log_text(live, "job", previous="true")
    assert info.value.message == 'previous terminated container "main" in pod "job" not found'
    create(
        live.objs,
        PODS,
        "k",
        pod("fails", "busybox", command=["sh", "-c", "exit 3"], restartPolicy="Never"),
    )
    await until(lambda: phase(live.objs.store.get(PODS, "k", "fails")) == "Failed")
    assert status_of(live, "fails")["state"]["terminated"]["exitCode"] == 3


async def test_graceful_deletion_and_log_follow(live: LiveCluster) -> None:
    create(live.objs, PODS, "k", pod("web", "redis:7.4"))
    await until(lambda: ready(live.objs.store.get(PODS, "k", "web") or {}))
    p = stored(live.objs, PODS, "k", "web")
    run = logs.run_of(p, logs.container_of(p, live.kubelet, ""), False)
    chunks: list[bytes] = []

    async def write(data: bytes) -> None:
        chunks.append(data)

    follower = asyncio.create_task(
        logs.follow(run, logs.LogOptions(follow=True), write, lambda: True)
    )
    await until(lambda: len(b"".join(chunks).splitlines()) >= 6, what="followed lines")
    remaining = deletion.delete(live.objs, rt(live.objs, PODS), "k", "web", {}, USER)
    assert remaining is not None
    assert remaining["metadata"]["deletionTimestamp"]
    await until(
        lambda: live.objs.store.get(PODS, "k", "web") is None, what="kubelet finishes the deletion"
    )
    await asyncio.wait_for(follower, 2)
    assert b"Ready to accept connections" in b"".join(chunks)
    assert any(e["reason"] == "Killing" for e in events_for(live.objs, "web"))
    with pytest.raises(KubeError):
        logs.container_of(
            {
                "metadata": {"name": "x", "namespace": "k"},
                "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            },
            live.kubelet,
            "",
        )


async def _sh(live: LiveCluster, name: str, script: str) -> tuple[int, str]:
    """Run ``script`` in pod ``name``'s container as ``kubectl exec`` would."""
    rt_ = live.kubelet.pods[("k", name)]
    sh = live.kubelet.shell_for(rt_, rt_.containers[0], pid=7)
    out, err = BufferWriter(), BufferWriter()
    status = await sh.run(script, IO(BytesReader(b""), out, err))
    return status, out.data.decode() + err.data.decode()


async def test_nginx_serves_its_site_and_unknown_tags_do_not_pull(live: LiveCluster) -> None:
    page = "<h1>from a ConfigMap</h1>\n"
    create(
        live.objs,
        ("", "configmaps"),
        "k",
        {"metadata": {"name": "site"}, "data": {"index.html": page}},
    )
    create(
        live.objs,
        PODS,
        "k",
        {
            "metadata": {"name": "web"},
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80}],
                        "volumeMounts": [{"name": "site", "mountPath": "/usr/share/nginx/html"}],
                    }
                ],
                "volumes": [{"name": "site", "configMap": {"name": "site"}}],
            },
        },
    )
    create(live.objs, PODS, "k", pod("box", "busybox:1.36", command=["sleep", "3600"]))
    create(live.objs, PODS, "k", pod("future", "nginx:9.9"))
    await until(lambda: all(ready(stored(live.objs, PODS, "k", n)) for n in ("web", "box")))
    ip = stored(live.objs, PODS, "k", "web")["status"]["podIP"]
    assert await _sh(live, "box", f"wget -qO- http://{ip}/") == (0, page)
    status, out = await _sh(live, "box", f"wget -qO- http://{ip}/missing.html")
    assert status == 1
    assert "404 Not Found" in out
    assert await _sh(live, "box", "cat /etc/hostname") == (0, "box\n")
    await until(
        lambda: (
            status_of(live, "future").get("state", {}).get("waiting", {}).get("reason")
            in ("ErrImagePull", "ImagePullBackOff")
        )
    )
    failed = [e["message"] for e in events_for(live.objs, "future") if e["reason"] == "Failed"]
    assert any('failed to resolve reference "docker.io/library/nginx:9.9"' in m for m in failed)
