"""RBAC, identities and impersonation with the real kubectl: a cluster that says no."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from kubesim import Simulator
from tests.kubesim.conftest import Kubectl, Raw


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    users = {"jane": ["devs"], "sam": []}
    with Simulator(tmp_path_factory.mktemp("kubesim"), nodes=0, users=users) as s:
        yield s


def as_user(kubectl: Kubectl, token: str, *args: str) -> tuple[int, str, str]:
    proc = kubectl.run(f"--token={token}", *args, check=False)
    return proc.returncode, proc.stdout.strip(), proc.stderr.strip()


def test_a_user_may_do_only_what_a_binding_grants(
    sim: Simulator, kubectl: Kubectl, ns: str
) -> None:
    jane = sim.user_tokens["jane"]
    kubectl.run("create", "namespace", ns)
    code, _, err = as_user(kubectl, jane, "-n", ns, "get", "pods")
    assert code == 1
    assert err == (
        'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource '
        f'"pods" in API group "" in the namespace "{ns}"'
    )
    kubectl.run(
        "-n", ns, "create", "rolebinding", "devs-view", "--clusterrole=view", "--group=devs"
    )
    assert as_user(kubectl, jane, "-n", ns, "get", "pods")[0] == 0
    code, _, err = as_user(kubectl, jane, "-n", ns, "create", "configmap", "x")
    assert 'cannot create resource "configmaps"' in err
    assert as_user(kubectl, jane, "-n", ns, "get", "secrets")[0] == 1  # view excludes secrets
    assert as_user(kubectl, jane, "get", "pods", "-A")[0] == 1  # a RoleBinding is one namespace
    assert as_user(kubectl, jane, "api-resources")[0] == 0  # discovery: system:authenticated


def test_can_i_and_whoami_answer_for_the_impersonated_user(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("create", "namespace", ns)
    whoami = json.loads(kubectl.run("auth", "whoami", "--as=jane", "-o", "json").stdout)
    assert whoami["status"]["userInfo"] == {
        "username": "jane",
        "groups": ["system:authenticated"],
    }
    assert (
        kubectl.run(
            "auth", "can-i", "list", "pods", "-n", ns, "--as=jane", check=False
        ).stdout.strip()
        == "no"
    )
    kubectl.run("-n", ns, "create", "role", "reader", "--verb=get,list", "--resource=pods")
    kubectl.run("-n", ns, "create", "rolebinding", "jane-reads", "--role=reader", "--user=jane")
    assert (
        kubectl.run("auth", "can-i", "list", "pods", "-n", ns, "--as=jane").stdout.strip() == "yes"
    )
    assert (
        kubectl.run(
            "auth", "can-i", "delete", "pods", "-n", ns, "--as=jane", check=False
        ).stdout.strip()
        == "no"
    )
    listed = kubectl.run("auth", "can-i", "--list", "-n", ns, "--as=jane").stdout
    assert "pods" in listed
    assert "[get list]" in listed
    grouped = kubectl.run(
        "auth", "can-i", "list", "pods", "-n", ns, "--as=bob", "--as-group=ops", check=False
    ).stdout.strip()
    assert grouped == "no"
    kubectl.run("-n", ns, "create", "rolebinding", "ops-reads", "--role=reader", "--group=ops")
    assert (
        kubectl.run(
            "auth", "can-i", "list", "pods", "-n", ns, "--as=bob", "--as-group=ops"
        ).stdout.strip()
        == "yes"
    )


def test_service_accounts_start_with_nothing_and_cannot_impersonate(
    kubectl: Kubectl, ns: str
) -> None:
    kubectl.run("create", "namespace", ns)
    kubectl.run("-n", ns, "create", "serviceaccount", "robot")
    token = kubectl.run("-n", ns, "create", "token", "robot").stdout.strip()
    code, _, err = as_user(kubectl, token, "-n", ns, "get", "configmaps")
    assert code == 1
    assert f'User "system:serviceaccount:{ns}:robot" cannot list resource "configmaps"' in err
    code, _, err = as_user(kubectl, token, "-n", ns, "get", "configmaps", "--as=jane")
    assert code == 1
    assert (
        f'users "jane" is forbidden: User "system:serviceaccount:{ns}:robot" cannot impersonate '
        'resource "users" in API group "" at the cluster scope'
    ) in err
    kubectl.run(
        "-n",
        ns,
        "create",
        "rolebinding",
        "robot-edit",
        "--clusterrole=edit",
        f"--serviceaccount={ns}:robot",
    )
    assert as_user(kubectl, token, "-n", ns, "create", "configmap", "made")[0] == 0
    # edit lets a ServiceAccount impersonate the namespace's ServiceAccounts, and nobody else
    code, out, _ = as_user(
        kubectl,
        token,
        "-n",
        ns,
        "auth",
        "whoami",
        f"--as=system:serviceaccount:{ns}:robot",
        "-o",
        "json",
    )
    assert code == 0
    assert json.loads(out)["status"]["userInfo"]["groups"] == [
        "system:serviceaccounts",
        f"system:serviceaccounts:{ns}",
        "system:authenticated",
    ]


async def test_subject_access_reviews_and_forbidden_status(
    sim: Simulator, raw: Raw, ns: str
) -> None:
    await raw("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": "sam",
            "resourceAttributes": {"namespace": ns, "verb": "get", "resource": "secrets"},
        },
    }
    path = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
    status, body, _ = await raw("POST", path, review)
    assert (status, body["status"]) == (201, {"allowed": False})
    binding = {
        "metadata": {"name": "sam-admin"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "admin",
        },
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "sam"}],
    }
    await raw("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", binding)
    _, body, _ = await raw("POST", path, review)
    assert body["status"] == {
        "allowed": True,
        "reason": f'RBAC: allowed by RoleBinding "sam-admin/{ns}" of ClusterRole "admin" to User "sam"',
    }
    status, body, _ = await raw("GET", "/apis/apps/v1/deployments", token=sim.user_tokens["sam"])
    assert (status, body) == (
        403,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": 'deployments.apps is forbidden: User "sam" cannot list resource "deployments" '
            'in API group "apps" at the cluster scope',
            "reason": "Forbidden",
            "details": {"group": "apps", "kind": "deployments"},
            "code": 403,
        },
    )
    status, _, _ = await raw(
        "GET", f"/api/v1/namespaces/{ns}/secrets/none", token=sim.user_tokens["sam"]
    )
    assert status == 404  # allowed to look, and there is nothing
