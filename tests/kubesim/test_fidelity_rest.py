"""The fidelity suite's REST cases (issue 40 items 11, 13, 14, 15): table columns, request
options refused as apimachinery refuses them, and error texts in Go's words. Each expectation
names the upstream file and function it was taken from (kubernetes v1.32, apimachinery and
apiserver v0.32)."""

from __future__ import annotations

from typing import Any

from tests.kubesim.conftest import Kubectl, Raw, create_namespace

TABLE_V1BETA1 = "application/json;as=Table;g=meta.k8s.io;v=v1beta1"


async def get_as(raw: Raw, path: str, accept: str, **params: str) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {raw.sim.token}", "Accept": accept}
    url = raw.sim.url + path
    async with raw.session.get(url, headers=headers, params=params, ssl=raw.ssl) as resp:
        return resp.status, await resp.json()


# --- table columns (item 11) -----------------------------------------------------------------------


def test_priority_class_and_api_service_columns_as_kubectl_shows_them(kubectl: Kubectl) -> None:
    """``pkg/printers/internalversion/printers.go`` ``printPriorityClass`` and kube-aggregator's
    ``registry/apiservice/etcd`` ``REST.ConvertToTable``."""
    kubectl.run("create", "priorityclass", "batch-low", "--value=-5", "--preemption-policy=Never")
    lines = kubectl.run("get", "priorityclass", "batch-low").stdout.splitlines()
    assert lines[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    name, value, default, _age, policy = lines[1].split()
    assert (name, value, default, policy) == ("batch-low", "-5", "false", "Never")
    lines = kubectl.run("get", "apiservice", "v1.apps").stdout.splitlines()
    assert lines[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    assert lines[1].split()[:3] == ["v1.apps", "Local", "True"]


# --- smaller REST differences (item 15) ------------------------------------------------------------


async def test_a_v1beta1_table_is_answered_in_v1beta1(raw: Raw) -> None:
    """``endpoints/handlers/response.go`` ``asTable``: the Table, and the metadata objects of its
    rows, in the meta.k8s.io version the Accept header named; ``optionsForTransform`` refuses an
    ``includeObject`` it does not know with 400."""
    ns = await create_namespace(raw)
    path = f"/api/v1/namespaces/{ns}/configmaps"
    await raw("POST", path, {"metadata": {"name": "a"}, "data": {"k": "v"}})
    for url in (path, f"{path}/a"):
        status, table = await get_as(raw, url, TABLE_V1BETA1)
        assert status == 200, table
        assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1beta1")
        row = table["rows"][0]
        assert row["cells"][:2] == ["a", 1]
        assert row["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
        assert row["object"]["kind"] == "PartialObjectMetadata"
    status, partial = await get_as(
        raw, f"{path}/a", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"
    )
    assert (status, partial["apiVersion"]) == (200, "meta.k8s.io/v1beta1")
    status, refused = await get_as(raw, path, TABLE_V1BETA1, includeObject="Everything")
    assert status == 400
    assert refused["message"] == (
        'Unable to convert to Table as requested: includeObject: Invalid value: "Everything": '
        "must be 'Metadata', 'Object', 'None', or empty"
    )


# --- request options (item 13) ---------------------------------------------------------------------


def options_refusal(kind: str, *causes: tuple[str, str, str]) -> dict[str, Any]:
    """The Status ``errors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: kind}, "",
    errs)`` writes: no name, one cause per field error, the message their aggregate."""
    texts = [f"{f}: {m}" for _, m, f in causes]
    text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{kind}.meta.k8s.io "" is invalid: {text}',
        "reason": "Invalid",
        "details": {
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": [{"reason": r, "message": m, "field": f} for r, m, f in causes],
        },
        "code": 422,
    }


async def test_write_options_are_refused_before_the_object_is_looked_up(raw: Raw) -> None:
    """``apis/meta/v1/validation`` ``ValidateCreateOptions``/``ValidatePatchOptions``/
    ``ValidateDeleteOptions``, which the handlers (``handlers/create.go``, ``patch.go``,
    ``delete.go``) run before decoding the body or reading storage: a missing object still
    answers 422 for its options, not 404."""
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    status, answer, _ = await raw(
        "POST", cms, {"metadata": {"name": "a"}}, dryRun="Some", fieldValidation="Loud"
    )
    assert (status, answer) == (
        422,
        options_refusal(
            "CreateOptions",
            (
                "FieldValueNotSupported",
                'Unsupported value: []string{"Some"}: supported values: "All"',
                "dryRun",
            ),
            (
                "FieldValueNotSupported",
                'Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
                "fieldValidation",
            ),
        ),
    )
    apply = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "absent"}}
    status, answer, _ = await raw(
        "PATCH", f"{cms}/absent", apply, content_type="application/apply-patch+yaml"
    )
    assert (status, answer) == (
        422,
        options_refusal(
            "PatchOptions",
            ("FieldValueRequired", "Required value: is required for apply patch", "fieldManager"),
        ),
    )
    status, answer, _ = await raw(
        "PATCH", f"{cms}/absent", {}, content_type="application/merge-patch+json", force="true"
    )
    assert (status, answer["message"]) == (
        422,
        'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for '
        "non-apply patch",
    )
    status, answer, _ = await raw(
        "DELETE", f"{cms}/absent", orphanDependents="true", propagationPolicy="Foreground"
    )
    assert (status, answer) == (
        422,
        options_refusal(
            "DeleteOptions",
            (
                "FieldValueInvalid",
                'Invalid value: "Foreground": orphanDependents and deletionPropagation cannot '
                "be both set",
                "propagationPolicy",
            ),
        ),
    )
    status, answer, _ = await raw("DELETE", f"{cms}/absent", {"dryRun": ["Later"]})
    assert (status, answer["details"]["causes"][0]["field"]) == (422, "dryRun")


async def test_an_apply_body_without_its_type_is_refused_as_the_field_manager_does(
    raw: Raw,
) -> None:
    """``fieldmanager/internal/versioncheck.go`` ``versionCheckManager.Apply``: the body's
    group/version/kind must be the endpoint's, printed as ``schema.GroupVersionKind`` prints."""
    ns = await create_namespace(raw)
    url = f"/api/v1/namespaces/{ns}/configmaps/a"
    for body, shown in (
        ({"metadata": {"name": "a"}}, "/, Kind="),
        ({"apiVersion": "v1", "metadata": {"name": "a"}}, "/v1, Kind="),
        ({"apiVersion": "apps/v1", "kind": "ConfigMap"}, "apps/v1, Kind=ConfigMap"),
    ):
        status, answer, _ = await raw(
            "PATCH", url, body, content_type="application/apply-patch+yaml", fieldManager="t"
        )
        assert (status, answer["message"]) == (400, f"invalid object type: {shown}")
        assert answer["reason"] == "BadRequest"
