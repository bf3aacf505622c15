"""Server-side apply and managedFields as ``kubectl apply --server-side`` users see them."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubesim.patch import fieldpath, mergekeys
from kubesim.patch.apply import LAST_APPLIED, ApplyConflict, apply, record_update
from kubesim.patch.patching import PatchError
from tests.kubesim.live import Obj

T0 = datetime(2026, 11, 21, 12, 0, 0, 123456, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)


def deployment(**overrides: Any) -> Obj:
    obj: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}
                    ]
                },
            },
        },
    }
    for dotted, value in overrides.items():
        node = obj
        *parents, leaf = dotted.split("__")
        for part in parents:
            node = node[part]
        if value is None:
            del node[leaf]
        else:
            node[leaf] = value
    return obj


def ssa(live: Obj | None, applied: Obj, manager: str = "kubectl", **kw: Any) -> Obj:
    kw.setdefault("force", False)
    kw.setdefault("now", T0)
    return apply(
        live, applied, manager=manager, group="apps", version="v1", kind="Deployment", **kw
    )


def managers(obj: Obj) -> list[tuple[str, str]]:
    return [(m["manager"], m["operation"]) for m in obj["metadata"].get("managedFields", [])]


def fields_of(obj: Obj, manager: str, operation: str = "Apply") -> Obj:
    for entry in obj["metadata"]["managedFields"]:
        if (entry["manager"], entry["operation"]) == (manager, operation):
            fields: Obj = entry["fieldsV1"]
            return fields
    raise AssertionError(f"no {manager}/{operation} entry")


def containers(obj: Obj) -> list[Obj]:
    items: list[Obj] = obj["spec"]["template"]["spec"]["containers"]
    return items


def update(live: Obj, manager: str, mutate: Any, *, subresource: str = "") -> Obj:
    new = copy.deepcopy(live)
    mutate(new)
    return record_update(
        live, new, manager=manager, operation="Update", subresource=subresource, now=T1
    )


# --- creating with apply -------------------------------------------------------------------------


def test_apply_creates_with_the_managed_fields_a_real_server_records() -> None:
    created = ssa(None, deployment())
    assert created["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": "2026-11-21T12:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {"f:app": {}}},
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"nginx"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:name": {},
                                    "f:ports": {
                                        'k:{"containerPort":80,"protocol":"TCP"}': {
                                            ".": {},
                                            "f:containerPort": {},
                                        }
                                    },
                                }
                            }
                        },
                    },
                },
            },
        }
    ]
    assert created["spec"] == deployment()["spec"]


def test_apply_does_not_mutate_its_inputs() -> None:
    live = ssa(None, deployment())
    applied = deployment(spec__replicas=5)
    before = copy.deepcopy((live, applied))
    ssa(live, applied)
    assert (live, applied) == before


# --- applying again: fields the applier drops ----------------------------------------------------

DROPS: list[tuple[str, Obj, str, Any]] = [
    (
        "a label",
        deployment(metadata__labels=None),
        "metadata",
        {"name": "web", "namespace": "default"},
    ),
    ("replicas", deployment(spec__replicas=None), "spec.replicas", None),
    (
        "a container",
        deployment(
            spec__template__spec__containers=[
                {"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}
            ]
        ),
        "containers",
        ["nginx"],
    ),
    (
        "a container port",
        deployment(spec__template__spec__containers=[{"name": "nginx", "image": "nginx:1.25"}]),
        "container0",
        {"name": "nginx", "image": "nginx:1.25"},
    ),
]


def view(obj: Obj, what: str) -> Any:
    if what == "metadata":
        return {k: v for k, v in obj["metadata"].items() if k != "managedFields"}
    if what == "spec.replicas":
        return obj["spec"].get("replicas")
    if what == "containers":
        return [c["name"] for c in containers(obj)]
    return containers(obj)[0]


@pytest.mark.parametrize(
    ("second", "what", "expected"), [d[1:] for d in DROPS], ids=[d[0] for d in DROPS]
)
def test_applying_again_without_a_field_removes_it(second: Obj, what: str, expected: Any) -> None:
    first = deployment()
    containers(first).append({"name": "sidecar", "image": "busybox"})
    live = ssa(None, first)
    assert view(ssa(live, second), what) == expected


def test_a_dropped_field_another_manager_owns_stays() -> None:
    live = ssa(None, deployment())
    labels = {"name": "web", "labels": {"app": "web"}}
    label_only: Obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": labels}
    live = ssa(live, label_only, manager="helm")
    live = update(live, "kubectl-label", lambda o: o["metadata"]["labels"].update(team="a"))
    result = ssa(live, deployment(metadata__labels=None))
    assert result["metadata"]["labels"] == {"app": "web", "team": "a"}


def test_an_unchanged_apply_keeps_its_timestamp() -> None:
    live = ssa(None, deployment())
    again = ssa(live, deployment(), now=T1)
    assert again == live


# --- conflicts -----------------------------------------------------------------------------------


def client_side_created() -> Obj:
    """A Deployment as ``kubectl create``/client-side apply leaves it: one Update manager."""
    return record_update(
        None, deployment(), manager="kubectl-client-side-apply", operation="Update", now=T0
    )


def test_changing_a_field_another_manager_owns_is_a_conflict_naming_it() -> None:
    live = client_side_created()
    with pytest.raises(ApplyConflict) as info:
        ssa(live, deployment(spec__replicas=3), manager="helm")
    assert info.value.conflicts == [("kubectl-client-side-apply", ".spec.replicas")]
    assert str(info.value) == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
        "using apps/v1: .spec.replicas"
    )
    assert info.value.causes == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
            "field": ".spec.replicas",
        }
    ]


def test_applying_the_same_value_shares_ownership() -> None:
    live = client_side_created()
    result = ssa(live, deployment(), manager="helm")
    assert managers(result) == [("helm", "Apply"), ("kubectl-client-side-apply", "Update")]
    assert "f:replicas" in fields_of(result, "helm")["f:spec"]
    assert "f:replicas" in fields_of(result, "kubectl-client-side-apply", "Update")["f:spec"]


def test_force_takes_ownership() -> None:
    live = client_side_created()
    result = ssa(live, deployment(spec__replicas=3), manager="helm", force=True)
    assert result["spec"]["replicas"] == 3
    assert "f:replicas" in fields_of(result, "helm")["f:spec"]
    assert "f:replicas" not in fields_of(result, "kubectl-client-side-apply", "Update")["f:spec"]


def test_conflict_between_appliers_and_inside_a_list_item() -> None:
    live = ssa(None, deployment(), manager="helm")
    changed = deployment()
    containers(changed)[0]["image"] = "nginx:1.26"
    with pytest.raises(ApplyConflict) as info:
        ssa(live, changed, manager="argo")
    assert str(info.value) == (
        'Apply failed with 1 conflict: conflict with "helm": '
        '.spec.template.spec.containers[name="nginx"].image'
    )


def test_several_conflicts_are_listed_per_manager() -> None:
    live = client_side_created()
    live = update(
        live, "kubectl-scale", lambda o: o["spec"].update(replicas=4), subresource="scale"
    )
    changed = deployment(spec__replicas=3, metadata__labels={"app": "x"})
    with pytest.raises(ApplyConflict) as info:
        ssa(live, changed, manager="helm")
    assert str(info.value) == (
        "Apply failed with 2 conflicts: "
        'conflicts with "kubectl-client-side-apply" using apps/v1:\n'
        "- .metadata.labels.app\n"
        'conflicts with "kubectl-scale" with subresource "scale" using apps/v1:\n'
        "- .spec.replicas"
    )


def test_kubectl_upgrades_from_client_side_apply_without_conflict() -> None:
    # kubectl apply, then kubectl apply --server-side with a change: the last-applied annotation
    # vouches for the fields kubectl-client-side-apply owns, so the server forces them over.
    created = deployment()
    created["metadata"]["annotations"] = {LAST_APPLIED: json.dumps(deployment()) + "\n"}
    live = record_update(
        None, created, manager="kubectl-client-side-apply", operation="Update", now=T0
    )
    result = ssa(live, deployment(spec__replicas=3), manager="kubectl")
    assert result["spec"]["replicas"] == 3
    assert json.loads(result["metadata"]["annotations"][LAST_APPLIED])["spec"]["replicas"] == 3
    with pytest.raises(ApplyConflict):
        ssa(live, deployment(spec__replicas=3), manager="helm")


# --- what apply ignores or refuses ---------------------------------------------------------------


def test_status_is_ignored_on_the_main_resource() -> None:
    live = ssa(None, deployment())
    live["status"] = {"replicas": 2}
    result = ssa(live, {**deployment(), "status": {"replicas": 99}})
    assert result["status"] == {"replicas": 2}
    assert "f:status" not in fields_of(result, "kubectl")


REFUSED: list[tuple[str, Obj, str]] = [
    ("managedFields in the body", deployment(metadata__managedFields=[{}]), "managedFields"),
    ("another kind", {**deployment(), "kind": "StatefulSet"}, "invalid object type"),
    ("no kind", deployment(kind=None), "Kind"),
]


@pytest.mark.parametrize(
    ("applied", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED]
)
def test_malformed_apply_bodies_are_bad_requests(applied: Obj, message: str) -> None:
    with pytest.raises(PatchError) as info:
        ssa(None, applied)
    assert info.value.status == 400
    assert message in info.value.message


def test_custom_resources_apply_with_granular_maps_and_atomic_lists() -> None:
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "finalizers": ["example.com/f"]},
        "spec": {"size": 1, "tags": ["a"], "nested": {"x": 1}},
    }
    result = apply(
        None, widget, manager="m", force=False, group="example.com", version="v1", kind="Widget"
    )
    assert result["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:metadata": {"f:finalizers": {'v:"example.com/f"': {}}},
        "f:spec": {"f:nested": {"f:x": {}}, "f:size": {}, "f:tags": {}},
    }


# --- record_update -------------------------------------------------------------------------------


def test_create_records_every_field_as_a_real_server_does() -> None:
    created = deployment()
    created["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    containers(created)[0]["env"] = [{"name": "A", "value": "1"}]
    result = record_update(None, created, manager="kubectl-create", operation="Update", now=T0)
    fields = fields_of(result, "kubectl-create", "Update")
    assert fields["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}
    assert fields["f:spec"]["f:strategy"] == {
        "f:rollingUpdate": {".": {}, "f:maxSurge": {}},
        "f:type": {},
    }
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert container["f:env"] == {".": {}, 'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}}}
    assert result["metadata"]["managedFields"][0]["time"] == "2026-11-21T12:00:00Z"


def test_an_update_takes_the_fields_it_changes_from_the_applier() -> None:
    live = ssa(None, deployment())
    result = update(live, "kubectl-edit", lambda o: o["spec"].update(replicas=5))
    assert managers(result) == [("kubectl", "Apply"), ("kubectl-edit", "Update")]
    assert fields_of(result, "kubectl-edit", "Update") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in fields_of(result, "kubectl")["f:spec"]
    assert result["metadata"]["managedFields"][1]["time"] == "2026-11-21T12:01:00Z"


def test_an_update_that_changes_nothing_records_nothing() -> None:
    live = ssa(None, deployment())
    assert update(live, "kubectl-edit", lambda o: None) == live


def test_fields_that_disappear_leave_every_manager() -> None:
    live = ssa(None, deployment())
    result = update(live, "kubectl-edit", lambda o: o["metadata"].pop("labels"))
    assert "f:metadata" not in fields_of(result, "kubectl")
    assert managers(result) == [("kubectl", "Apply")]


def test_a_manager_losing_all_its_fields_disappears() -> None:
    live = update(ssa(None, deployment()), "a", lambda o: o["spec"].update(replicas=5))
    result = update(live, "b", lambda o: o["spec"].update(replicas=6))
    assert managers(result) == [("kubectl", "Apply"), ("b", "Update")]


def test_a_status_update_is_recorded_with_its_subresource() -> None:
    live = ssa(None, deployment())
    live["status"] = {}
    result = update(live, "ctrl", lambda o: o["status"].update(replicas=2), subresource="status")
    entry = result["metadata"]["managedFields"][-1]
    assert (entry["manager"], entry["subresource"]) == ("ctrl", "status")
    assert entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_sending_an_empty_managed_fields_entry_resets_them() -> None:
    live = ssa(None, deployment())
    new = copy.deepcopy(live)
    new["metadata"]["managedFields"] = [{}]
    result = record_update(live, new, manager="x", operation="Update", now=T1)
    assert "managedFields" not in result["metadata"]


# --- custom resources with list markers, and the FieldsV1 format ----------------------------------

PORT = {"properties": {"port": {"type": "integer"}, "protocol": {"default": "TCP"}}}
WIDGET_SCHEMA = {
    "properties": {
        "spec": {
            "properties": {
                "ports": {
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": PORT,
                },
                "tags": {"x-kubernetes-list-type": "set", "items": {}},
                "selector": {"x-kubernetes-map-type": "atomic"},
            },
        }
    },
}


def widget(**spec: Any) -> Obj:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "spec": spec,
    }


def apply_widget(live: Obj | None, applied: Obj, manager: str) -> Obj:
    rules = mergekeys.rules_from_openapi(WIDGET_SCHEMA)
    return apply(
        live,
        applied,
        manager=manager,
        force=False,
        group="example.com",
        version="v1",
        kind="Widget",
        rules=rules,
        now=T0,
    )


def test_custom_resource_list_markers_give_keyed_ownership() -> None:
    live = apply_widget(None, widget(ports=[{"port": 80}], tags=["a"], selector={"x": "1"}), "a")
    assert live["metadata"]["managedFields"][0]["fieldsV1"] == {
        "f:spec": {
            "f:ports": {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}},
            "f:selector": {},
            "f:tags": {'v:"a"': {}},
        }
    }
    both = apply_widget(live, widget(ports=[{"port": 443}], tags=["b"]), "b")
    assert both["spec"]["ports"] == [{"port": 80}, {"port": 443}]
    assert both["spec"]["tags"] == ["a", "b"]


def test_fields_v1_round_trips_and_prints_paths_as_kubectl_does() -> None:
    paths = {
        (("f", "spec"), ("f", "containers"), ("k", '{"name":"nginx"}')),
        (("f", "spec"), ("f", "containers"), ("k", '{"name":"nginx"}'), ("f", "image")),
        (("f", "metadata"), ("f", "finalizers"), ("v", '"a/b"')),
        (("f", "spec"), ("f", "args"), ("i", "10")),
        (("f", "spec"), ("f", "args"), ("i", "9")),
    }
    encoded = fieldpath.encode(paths)
    assert list(encoded["f:spec"]["f:args"]) == ["i:9", "i:10"]
    assert fieldpath.decode(json.loads(json.dumps(encoded))) == paths
    printed = sorted(fieldpath.path_string(p) for p in paths)
    assert printed == [
        '.metadata.finalizers[="a/b"]',
        ".spec.args[10]",
        ".spec.args[9]",
        '.spec.containers[name="nginx"]',
        '.spec.containers[name="nginx"].image',
    ]


def test_apply_merges_lists_in_config_order_keeping_live_only_items_in_place() -> None:
    live = deployment()
    containers(live)[:] = [{"name": n, "image": n} for n in ("a", "b", "c")]
    live = record_update(None, live, manager="create", operation="Update", now=T0)
    applied = deployment()
    containers(applied)[:] = [{"name": "c", "image": "c"}, {"name": "a", "image": "a"}]
    assert [c["name"] for c in containers(ssa(live, applied))] == ["b", "c", "a"]


def test_past_ten_update_managers_the_oldest_merge_into_ancient_changes() -> None:
    obj = ssa(None, deployment())
    for i in range(12):
        new = copy.deepcopy(obj)
        new["metadata"]["labels"][f"k{i}"] = "v"
        obj = record_update(
            obj, new, manager=f"m{i:02}", operation="Update", now=T0 + timedelta(seconds=i)
        )
    updaters = [m for m, op in managers(obj) if op == "Update"]
    assert len(updaters) == 10
    assert updaters[0] == "ancient-changes"
    ancient = fields_of(obj, "ancient-changes", "Update")["f:metadata"]["f:labels"]
    assert set(ancient) == {"f:k0", "f:k1", "f:k2"}
    assert updaters[1:] == [f"m{i:02}" for i in range(3, 12)]


# --- kubectl's upgrade from client-side to server-side apply -------------------------------------


def upgraded_from_client_side(obj: Obj) -> Obj:
    """``obj`` created by ``kubectl apply`` (client-side), after kubectl's csaupgrade JSON patch
    has handed ``kubectl-client-side-apply``'s fields to the ``kubectl`` applier: the field set
    keeps the ``"."`` members a create records for every map and list item."""
    obj["metadata"].setdefault("annotations", {})[LAST_APPLIED] = json.dumps(obj) + "\n"
    live = record_update(None, obj, manager="kubectl-client-side-apply", operation="Update", now=T0)
    [entry] = live["metadata"]["managedFields"]
    entry.update(manager="kubectl", operation="Apply")
    return live


def upgraded_deployment() -> Obj:
    obj = deployment()
    obj["metadata"]["labels"]["tier"] = "web"
    obj["metadata"]["finalizers"] = ["example.com/keep"]
    containers(obj)[0]["env"] = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    return upgraded_from_client_side(obj)


def test_the_upgraded_field_set_holds_maps_and_items_as_members() -> None:
    fields = fields_of(upgraded_deployment(), "kubectl")
    assert set(fields["f:metadata"]["f:labels"]) == {".", "f:app", "f:tier"}
    assert set(fields["f:metadata"]["f:finalizers"]) == {".", 'v:"example.com/keep"'}
    container = fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']
    assert "." in container
    assert set(container["f:env"]) == {".", 'k:{"name":"A"}', 'k:{"name":"B"}'}


def test_server_side_apply_after_the_upgrade_keeps_what_it_still_applies() -> None:
    # The defect: "." members absent from the new field set removed whole maps and items.
    live = upgraded_deployment()
    applied = deployment(spec__replicas=3)
    applied["metadata"]["labels"]["tier"] = "web"
    applied["metadata"]["finalizers"] = ["example.com/keep"]
    containers(applied)[0]["env"] = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    result = ssa(live, applied)
    assert result["spec"]["replicas"] == 3
    assert result["metadata"]["labels"] == {"app": "web", "tier": "web"}
    assert result["metadata"]["finalizers"] == ["example.com/keep"]
    assert containers(result)[0]["env"] == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"},
    ]
    assert result["spec"]["template"]["metadata"]["labels"] == {"app": "web"}
    fields = fields_of(result, "kubectl")
    assert set(fields["f:metadata"]["f:labels"]) == {"f:app", "f:tier"}


def test_server_side_apply_after_the_upgrade_removes_only_what_it_dropped() -> None:
    live = upgraded_deployment()
    applied = deployment()  # no tier label, no finalizer, no env var B
    containers(applied)[0]["env"] = [{"name": "A", "value": "1"}]
    result = ssa(live, applied)
    assert result["metadata"]["labels"] == {"app": "web"}
    assert "finalizers" not in result["metadata"]
    assert containers(result)[0]["env"] == [{"name": "A", "value": "1"}]
    assert containers(result)[0]["ports"] == [{"containerPort": 80}]


def test_a_dropped_map_stays_while_another_manager_owns_a_field_in_it() -> None:
    live = upgraded_deployment()
    live = update(live, "labeller", lambda o: o["metadata"]["labels"].update(team="a"))
    applied = deployment()
    del applied["metadata"]["labels"]
    result = ssa(live, applied)
    assert result["metadata"]["labels"] == {"team": "a"}


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda o: o["metadata"]["labels"].update(tier="db"), ".metadata.labels.tier"),
        (
            lambda o: containers(o)[0]["env"][1].update(value="3"),
            '.spec.template.spec.containers[name="nginx"].env[name="B"].value',
        ),
    ],
)
def test_fields_inherited_from_client_side_apply_conflict_with_other_appliers(
    change: Any, path: str
) -> None:
    live = upgraded_deployment()
    applied = copy.deepcopy(live)
    del applied["metadata"]["managedFields"]
    del applied["metadata"]["annotations"]
    change(applied)
    with pytest.raises(ApplyConflict) as info:
        ssa(live, applied, manager="helm")
    assert info.value.conflicts == [("kubectl", path)]
    forced = ssa(live, applied, manager="helm", force=True)
    assert path.rsplit(".", 1)[-1] in json.dumps(fields_of(forced, "helm"))
