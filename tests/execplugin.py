"""A kubeconfig ``exec`` credential plugin for the tests, run as a real subprocess.

It does what a cloud provider's plugin does, against the simulator: reads ``KUBERNETES_EXEC_INFO``,
finds the server and its CA in ``spec.cluster`` (so the kubeconfig must set
``provideClusterInfo``), asks the cluster for a short-lived ServiceAccount token (TokenRequest,
authenticated with ``EXECPLUGIN_ADMIN_TOKEN``) and prints an ExecCredential with its expiry.

Environment (the kubeconfig's ``exec.env``):
``EXECPLUGIN_RUNS``: a file that gets one line per run (the tests count them);
``EXECPLUGIN_INFO``: a file that receives the last ``KUBERNETES_EXEC_INFO``;
``EXECPLUGIN_SA``: ``namespace/name`` of the ServiceAccount; ``EXECPLUGIN_SECONDS``: the token's
life; ``EXECPLUGIN_CLAIM``: the life the ExecCredential claims, when it must lie (a token the
server refuses before the client expects it to); ``EXECPLUGIN_MODE``: ``bad`` prints a token
the server refuses, ``hang`` never answers, ``fail`` exits 1, ``cert`` prints a client certificate
instead of a token (``EXECPLUGIN_CERT_USER``, signed with the key in ``EXECPLUGIN_SIM_DIR``).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import sys
import time
import urllib.parse


def main() -> int:
    env = os.environ
    with open(env["EXECPLUGIN_RUNS"], "a", encoding="utf-8") as runs:
        runs.write(f"{time.time()}\n")
    info = json.loads(env["KUBERNETES_EXEC_INFO"])
    with open(env["EXECPLUGIN_INFO"], "w", encoding="utf-8") as out:
        json.dump({**info, "stdin_is_terminal": sys.stdin.isatty()}, out)
    mode = env.get("EXECPLUGIN_MODE", "")
    if mode == "hang":
        time.sleep(3600)
    if mode == "fail":
        print("login required", file=sys.stderr)
        return 1
    seconds = int(env.get("EXECPLUGIN_SECONDS", "2"))
    claim = int(env.get("EXECPLUGIN_CLAIM") or seconds)
    expiry = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + claim))
    status = {"expirationTimestamp": expiry}
    if mode == "cert":
        status.update(_certificate(seconds))
    else:
        status["token"] = (
            "not-a-token" if mode == "bad" else _mint(info["spec"]["cluster"], seconds)
        )
    print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                      "status": status}))  # fmt: skip
    return 0


def _certificate(seconds: int) -> dict[str, str]:
    """A client certificate of ``EXECPLUGIN_CERT_USER`` in group ``system:masters``, signed by the
    simulator's authority (whose folder is ``EXECPLUGIN_SIM_DIR``), as an identity service would
    issue one."""
    from pathlib import Path

    from kubesim.http import tls

    user = os.environ["EXECPLUGIN_CERT_USER"]
    folder = Path(os.environ["EXECPLUGIN_SIM_DIR"])
    cert, key = tls.client_certificate(folder, user, ["system:masters"], seconds=seconds)
    return {"clientCertificateData": cert.decode(), "clientKeyData": key.decode()}


def _mint(cluster: dict[str, str], seconds: int) -> str:
    namespace, name = os.environ["EXECPLUGIN_SA"].split("/")
    ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
    context = ssl.create_default_context(cadata=ca)
    body = json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                       "spec": {"expirationSeconds": seconds}}).encode()  # fmt: skip
    server = urllib.parse.urlsplit(cluster["server"])
    connection = http.client.HTTPSConnection(server.netloc, context=context, timeout=10)
    try:
        connection.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            body=body,
            headers={
                "Authorization": f"Bearer {os.environ['EXECPLUGIN_ADMIN_TOKEN']}",
                "Content-Type": "application/json",
            },
        )
        token: str = json.load(connection.getresponse())["status"]["token"]
    finally:
        connection.close()
    return token


if __name__ == "__main__":
    sys.exit(main())
