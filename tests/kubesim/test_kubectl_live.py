"""kubectl 1.32 against a living demo cluster: logs, exec, rollout, drain, top, port-forward."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator

import pytest

from kubesim import Simulator
from tests.kubesim.conftest import KUBECTL, Kubectl
from tests.kubesim.livesim import demo_simulator, pods, wait_for


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    yield from demo_simulator(tmp_path_factory.mktemp("kubesim"))


def _popen(kubectl: Kubectl, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "KUBECACHEDIR": str(kubectl.cache), "HOME": str(kubectl.cache)}
    cmd = [
        KUBECTL,
        f"--kubeconfig={kubectl.sim.kubeconfig_path}",
        f"--cache-dir={kubectl.cache}",
        *args,
    ]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_logs_tail_previous_and_follow(kubectl: Kubectl, sim: Simulator) -> None:
    out = kubectl.run("logs", "-n", "shop", "statefulset/redis", "--tail=2").stdout
    assert len(out.splitlines()) == 2
    assert " * " in out.splitlines()[0]  # redis log format
    wait_for(
        sim,
        lambda st: any(
            c.get("restartCount", 0) >= 1
            for p in pods(st, "broken", "crashloop")
            for c in p["status"].get("containerStatuses") or []
        ),
    )
    previous = kubectl.run("logs", "-n", "broken", "deploy/crashloop", "--previous").stdout
    assert "panic: failed to connect to backend" in previous
    stamped = kubectl.run("logs", "-n", "shop", "postgres-0", "--timestamps", "--tail=1").stdout
    assert stamped.split(" ", 1)[0].endswith("Z")
    proc = _popen(kubectl, "logs", "-f", "-n", "shop", "postgres-0", "--tail=0")
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        assert all(" UTC [" in line for line in lines)
    finally:
        proc.kill()
        proc.communicate()
    waiting = kubectl.run("logs", "-n", "broken", "deploy/bad-image", check=False)
    assert waiting.returncode == 1
    assert "is waiting to start: " in waiting.stderr


def shop_exec(
    kubectl: Kubectl, target: str, *command: str, input: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """``kubectl exec`` into ``target`` in the shop namespace (``-i`` when there is ``input``)."""
    stdin = ("-i",) if input is not None else ()
    return kubectl.run(
        "exec", *stdin, "-n", "shop", target, "--", *command, input=input, check=check
    )


def test_exec_commands_and_exit_codes(kubectl: Kubectl) -> None:
    listing = shop_exec(kubectl, "deploy/frontend", "ls", "-la", "/").stdout
    assert listing.splitlines()[0].startswith("total ")
    assert any(line.endswith(" etc") and line.startswith("drwx") for line in listing.splitlines())
    html = shop_exec(kubectl, "deploy/frontend", "cat", "/usr/share/nginx/html/index.html").stdout
    assert "Welcome to nginx!" in html
    env = shop_exec(kubectl, "deploy/api", "sh", "-c", "echo $LOG_LEVEL; cat /etc/shop/LOG_LEVEL")
    assert env.stdout == "info\ninfo"  # a ConfigMap value has no newline of its own
    piped = shop_exec(
        kubectl, "deploy/api", "sh", "-c", "cat > /tmp/x; wc -c < /tmp/x", input="hello\n"
    )
    assert piped.stdout.strip() == "6"
    failed = shop_exec(kubectl, "deploy/api", "sh", "-c", "echo oops >&2; exit 3", check=False)
    assert failed.returncode == 3
    assert "oops" in failed.stderr
    assert "command terminated with exit code 3" in failed.stderr
    no_shell = shop_exec(kubectl, "deploy/payments", "sh", check=False)
    assert no_shell.returncode != 0
    assert 'exec: "sh": executable file not found in $PATH' in no_shell.stderr


class Terminal:
    """kubectl on a pseudo-terminal, as a person at a keyboard runs it."""

    def __init__(self, kubectl: Kubectl, *args: str) -> None:
        env = {**os.environ, "KUBECACHEDIR": str(kubectl.cache), "HOME": str(kubectl.cache)}
        cmd = [
            KUBECTL,
            f"--kubeconfig={kubectl.sim.kubeconfig_path}",
            f"--cache-dir={kubectl.cache}",
            *args,
        ]
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # pragma: no cover - the child becomes kubectl
            os.execve(KUBECTL, cmd, env)  # noqa: S606
        self.screen = b""

    def read_until(self, marker: bytes, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.screen and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                try:
                    self.screen += os.read(self.fd, 4096)
                except OSError:
                    return

    def type(self, keys: bytes, then: bytes) -> None:
        os.write(self.fd, keys)
        self.read_until(then)

    def exit_code(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def test_exec_interactive_tty(kubectl: Kubectl) -> None:
    term = Terminal(kubectl, "exec", "-it", "-n", "shop", "deploy/frontend", "--", "sh")
    term.read_until(b"/ # ")
    term.type(b"cd /etc/nginx\r", b"/etc/nginx # ")
    term.type(b"ls\r", b"nginx.conf")
    term.type(b"exit 4\r", b"exit code 4")
    assert b"conf.d" in term.screen
    assert term.exit_code() == 4


def test_run_interactive_and_remove(kubectl: Kubectl) -> None:
    term = Terminal(
        kubectl, "run", "-it", "--rm", "--restart=Never", "scratch", "--image=busybox", "--", "sh"
    )
    term.read_until(b"try pressing enter")
    term.type(b"\r", b"/ # ")
    term.type(b"echo hello from $(hostname)\r", b"hello from scratch")
    term.type(b"exit\r", b'pod "scratch" deleted')
    assert term.exit_code() == 0


def test_rollout_status_restart_undo(kubectl: Kubectl) -> None:
    assert (
        "successfully rolled out"
        in kubectl.run("rollout", "status", "-n", "shop", "deploy/frontend", "--timeout=20s").stdout
    )
    kubectl.run("rollout", "restart", "-n", "shop", "deploy/api")
    cause = "kubernetes.io/change-cause=restart for the new config"
    kubectl.run("annotate", "-n", "shop", "deploy/api", cause)
    assert (
        "successfully rolled out"
        in kubectl.run("rollout", "status", "-n", "shop", "deploy/api", "--timeout=20s").stdout
    )
    history = kubectl.run("rollout", "history", "-n", "shop", "deploy/api").stdout
    rows = [line.split(None, 1) for line in history.splitlines()[2:] if line.strip()]
    assert rows == [["1", "<none>"], ["2", "restart for the new config"]]
    # undo sends the old template as a JSON patch with creationTimestamp: null; the server drops
    # the null, so the template equals the first ReplicaSet's and that one is reused
    kubectl.run("rollout", "undo", "-n", "shop", "deploy/api")
    assert (
        "successfully rolled out"
        in kubectl.run("rollout", "status", "-n", "shop", "deploy/api", "--timeout=20s").stdout
    )
    rs = kubectl.json("get", "rs", "-n", "shop", "-l", "app.kubernetes.io/name=api")["items"]
    assert len(rs) == 2
    live = [r for r in rs if r["spec"]["replicas"]]
    assert len(live) == 1
    assert live[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    template = live[0]["spec"]["template"]["metadata"].get("annotations") or {}
    assert "kubectl.kubernetes.io/restartedAt" not in template
    assert (
        "rolled out"
        in kubectl.run(
            "rollout", "status", "-n", "monitoring", "ds/node-exporter", "--timeout=20s"
        ).stdout
    )
    kubectl.run("set", "image", "-n", "shop", "sts/redis", "redis=redis:7.4.2")
    assert (
        "roll out complete"
        in kubectl.run("rollout", "status", "-n", "shop", "sts/redis", "--timeout=20s").stdout
    )
    kubectl.run("rollout", "undo", "-n", "shop", "sts/redis")
    kubectl.run("rollout", "status", "-n", "shop", "sts/redis", "--timeout=20s")
    image = kubectl.json("get", "sts", "-n", "shop", "redis")["spec"]["template"]["spec"][
        "containers"
    ][0]["image"]
    assert image == "redis:7.4.1"


GUARDED = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: guarded}
spec:
  replicas: 2
  selector: {matchLabels: {app: guarded}}
  template:
    metadata: {labels: {app: guarded}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: guarded}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: guarded}}
"""


def test_drain_respects_disruption_budgets(kubectl: Kubectl, sim: Simulator) -> None:
    ns = f"d-{uuid.uuid4().hex[:6]}"
    kubectl.run("create", "namespace", ns)
    kubectl.run("apply", "-n", ns, "-f", "-", input=GUARDED)
    kubectl.run("rollout", "status", "-n", ns, "deploy/guarded", "--timeout=20s")
    node = kubectl.json("get", "pods", "-n", ns)["items"][0]["spec"]["nodeName"]
    blocked = kubectl.run(
        "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=3s", check=False
    )
    assert blocked.returncode != 0
    assert "disruption budget" in blocked.stderr
    kubectl.run("delete", "pdb", "guarded", "-n", ns)
    drained = kubectl.run(
        "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=30s"
    )
    assert f"node/{node} drained" in drained.stdout
    assert kubectl.json("get", "node", node)["spec"]["unschedulable"] is True
    kubectl.run("rollout", "status", "-n", ns, "deploy/guarded", "--timeout=20s")
    assert {p["spec"]["nodeName"] for p in kubectl.json("get", "pods", "-n", ns)["items"]} - {node}
    assert node not in {
        p["spec"]["nodeName"] for p in kubectl.json("get", "pods", "-n", ns)["items"]
    }
    kubectl.run("uncordon", node)


def test_top_nodes_and_pods(kubectl: Kubectl) -> None:
    nodes = kubectl.run("top", "nodes").stdout.splitlines()
    assert nodes[0].split()[:3] == ["NAME", "CPU(cores)", "CPU(%)"]
    assert len(nodes) == 4
    shop = kubectl.run("top", "pods", "-n", "shop").stdout.splitlines()
    names = [line.split()[0] for line in shop[1:]]
    assert "postgres-0" in names
    assert not any(n.startswith("db-migrate") for n in names)  # finished pods have no metrics
    one = kubectl.run(
        "top", "pod", "-n", "shop", "-l", "app.kubernetes.io/name=frontend", "--containers"
    ).stdout
    assert "nginx" in one


def test_port_forward_to_a_service(kubectl: Kubectl) -> None:
    proc = _popen(kubectl, "port-forward", "-n", "shop", "svc/frontend", ":80")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        port = int(line.split("->")[0].rsplit(":", 1)[1])
        for _ in range(2):  # nginx serves its welcome page, and 404 for what it does not have
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as resp:
                body = resp.read().decode()
            assert (resp.status, resp.headers["Server"]) == (200, "nginx/1.27.3")
            assert "<title>Welcome to nginx!</title>" in body
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/hello", timeout=10)
        assert missing.value.code == 404
        assert "<center><h1>404 Not Found</h1></center>" in missing.value.read().decode()
    finally:
        proc.kill()
        proc.communicate()
