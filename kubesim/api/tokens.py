"""Service account tokens: what ``serviceaccounts/{name}/token`` (TokenRequest) issues.

Tokens are JWTs bound to a ServiceAccount's uid, as kube-apiserver's are, but signed with HS256
under a key that lives and dies with the simulator (clients never verify the signature; the
simulator does). They authenticate as ``system:serviceaccount:<namespace>:<name>`` until they
expire or the ServiceAccount is deleted, and may do what RBAC grants that ServiceAccount.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any

from kubesim.store import Store

Obj = dict[str, Any]
ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_SECONDS = 3600
MIN_SECONDS = 600


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue(key: bytes, sa: Obj, *, audiences: list[str], seconds: int) -> tuple[str, int]:
    """(token, expiry as a Unix time) for ServiceAccount ``sa``."""
    now = int(time.time())
    meta = sa["metadata"]
    claims = {
        "aud": audiences or [ISSUER],
        "exp": now + seconds,
        "iat": now,
        "nbf": now,
        "iss": ISSUER,
        "sub": f"system:serviceaccount:{meta['namespace']}:{meta['name']}",
        "kubernetes.io": {
            "namespace": meta["namespace"],
            "serviceaccount": {"name": meta["name"], "uid": meta["uid"]},
        },
    }
    head = _b64(json.dumps({"alg": "HS256", "kid": "kubesim"}).encode())
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = _b64(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{signature}", now + seconds


def user(key: bytes, token: str, store: Store) -> Obj | None:
    """The user a valid, unexpired token of a still-existing ServiceAccount stands for."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    expected = _b64(hmac.new(key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest())
    if not hmac.compare_digest(expected, parts[2]):
        return None
    try:
        claims = json.loads(_unb64(parts[1]))
        ns = claims["kubernetes.io"]["namespace"]
        sa = claims["kubernetes.io"]["serviceaccount"]
    except (ValueError, KeyError, TypeError):
        return None
    live = store.get(("", "serviceaccounts"), ns, sa["name"])
    if claims.get("exp", 0) < time.time() or live is None or live["metadata"]["uid"] != sa["uid"]:
        return None
    return {
        "username": claims["sub"],
        "uid": sa["uid"],
        "groups": [
            "system:serviceaccounts",
            f"system:serviceaccounts:{ns}",
            "system:authenticated",
        ],
    }


def token_request(key: bytes, sa: Obj, body: Any, *, min_seconds: int = MIN_SECONDS) -> Obj:
    """The TokenRequest response for a POST to ``serviceaccounts/{name}/token``; an
    ``expirationSeconds`` below ``min_seconds`` is raised to it, as kube-apiserver does."""
    spec = (body or {}).get("spec") or {} if isinstance(body, dict) else {}
    seconds = max(min_seconds, int(spec.get("expirationSeconds") or DEFAULT_SECONDS))
    audiences = [str(a) for a in spec.get("audiences") or []]
    token, expiry = issue(key, sa, audiences=audiences, seconds=seconds)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(expiry))
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {
            "name": sa["metadata"]["name"],
            "namespace": sa["metadata"]["namespace"],
            "creationTimestamp": None,
        },
        "spec": {
            "audiences": audiences or [ISSUER],
            "expirationSeconds": seconds,
            "boundObjectRef": spec.get("boundObjectRef"),
        },
        "status": {"token": token, "expirationTimestamp": stamp},
    }
