"""The ServiceAccount admission plugin's token volume: every new pod gets ``kube-api-access-<5>``.

As kube-apiserver's plugin (plugin/pkg/admission/serviceaccount/admission.go,
``mountServiceAccountToken``) does, a pod whose token is automounted (its own
``automountServiceAccountToken``, else its ServiceAccount's, else yes) gets one projected volume
-- a bound token, the namespace's ``kube-root-ca.crt`` and the namespace by the downward API --
mounted read-only at the token path in every container and init container that does not already
mount something there. The plugin's other duties are not simulated: a pod naming a
ServiceAccount that does not exist is admitted (a static simulator has no controller to create
``default``), and image pull secrets are not copied from the ServiceAccount.
"""

from __future__ import annotations

import secrets
from typing import Any

from kubesim.api.core import Core

Obj = dict[str, Any]
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX = "kube-api-access-"
# serviceaccount.WarnOnlyBoundTokenExpirationSeconds: the hour plus the 7 s the plugin adds so
# that a token older than an hour can be told apart (and only warned about) by the server.
EXPIRATION_SECONDS = 3607
# ProjectedVolumeSourceDefaultMode (0644), which the plugin sets explicitly.
DEFAULT_MODE = 420
# utilrand.String's alphabet: no vowels, no look-alikes.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def admit_pod(objs: Core, pod: Obj) -> None:
    """Add the token volume and its mounts to a pod being created, unless it opts out."""
    spec = pod.setdefault("spec", {})
    if not _automount(objs, pod):
        return
    taken = {v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)}
    name = _volume_name(taken)
    mounted = False
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if not isinstance(c, dict):
                continue
            mounts = c.setdefault("volumeMounts", [])
            if any(isinstance(m, dict) and m.get("mountPath") == MOUNT_PATH for m in mounts):
                continue
            mounts.append({"name": name, "readOnly": True, "mountPath": MOUNT_PATH})
            mounted = True
    if mounted:
        spec.setdefault("volumes", []).append({"name": name, "projected": token_volume()})


def token_volume() -> Obj:
    """The projected source the plugin mounts (``TokenVolumeSource``)."""
    return {
        "defaultMode": DEFAULT_MODE,
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": EXPIRATION_SECONDS, "path": "token"}},
            {
                "configMap": {
                    "name": "kube-root-ca.crt",
                    "items": [{"key": "ca.crt", "path": "ca.crt"}],
                }
            },
            {
                "downwardAPI": {
                    "items": [
                        {
                            "path": "namespace",
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        }
                    ]
                }
            },
        ],
    }


def _automount(objs: Core, pod: Obj) -> bool:
    """``shouldAutomount``: the pod's own setting wins, then its ServiceAccount's."""
    spec = pod["spec"]
    if spec.get("automountServiceAccountToken") is not None:
        return bool(spec["automountServiceAccountToken"])
    sa = objs.store.get(
        ("", "serviceaccounts"),
        pod["metadata"].get("namespace", ""),
        str(spec.get("serviceAccountName") or "default"),
    )
    if sa is not None and sa.get("automountServiceAccountToken") is not None:
        return bool(sa["automountServiceAccountToken"])
    return True


def _volume_name(taken: set[Any]) -> str:
    while True:
        name = VOLUME_PREFIX + "".join(secrets.choice(_ALPHABET) for _ in range(5))
        if name not in taken:
            return name
