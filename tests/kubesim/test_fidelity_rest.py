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
    status, refused = await get_as(  # asPartialObjectMetadata: a list is not one object
        raw, path, "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    )
    assert (status, refused["reason"], refused["message"]) == (
        406,
        "NotAcceptable",
        "you requested PartialObjectMetadata, but the requested object is a list "
        "(*core.ConfigMapList)",
    )
    status, refused = await get_as(raw, path, "text/html")  # NegotiateOutputMediaType
    assert (status, refused["reason"], refused["message"]) == (
        406,
        "NotAcceptable",
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf",
    )
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
    status, answer, _ = await raw(
        "GET", cms, watch="1", sendInitialEvents="true", resourceVersionMatch="Exact"
    )
    assert (status, answer["message"]) == (
        422,
        'ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: '
        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, "
        "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks "
        "to true]",
    )
    status, answer, _ = await raw("GET", cms, watch="1", resourceVersion="ten")
    assert (status, answer["message"]) == (
        400,
        'resourceVersion: Invalid value: "ten": strconv.ParseUint: parsing "ten": invalid syntax',
    )
    status, answer, _ = await raw("DELETE", cms, resourceVersionMatch="Exact")
    assert (status, answer["details"]["kind"]) == (422, "ListOptions")  # deletecollection.go
    status, answer, _ = await raw("GET", cms, resourceVersionMatch="Soon")
    assert (status, answer) == (  # ValidateListOptions
        422,
        options_refusal(
            "ListOptions",
            (
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
                "resourceVersionMatch",
            ),
            (
                "FieldValueNotSupported",
                'Unsupported value: "Soon": supported values: "Exact", "NotOlderThan", ""',
                "resourceVersionMatch",
            ),
        ),
    )


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


# --- error texts in Go's words (item 14) -----------------------------------------------------------


async def test_malformed_bodies_are_refused_in_the_go_decoders_words(raw: Raw) -> None:
    """encoding/json's scanner errors, framed as each handler frames them: an object body by
    ``handlers/rest.go`` ``transformDecodeError`` (with ``summarizeData`` of the body), a merge
    or JSON patch by ``handlers/patch.go`` ``jsonPatcher.applyJSPatch`` (``error decoding
    patch``), a strategic merge patch bare (``strategicPatchObject``); YAML in go-yaml's words."""
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    await raw("POST", cms, {"metadata": {"name": "a"}, "data": {"x": "1"}})
    unrecognized = "the object provided is unrecognized (must be of type ConfigMap): "
    cases = [
        (
            "POST",
            cms,
            '{"metadata": {"name": "b"}, "data": {"x": 1,}}',
            "application/json",
            unrecognized + "couldn't get version/kind; json parse error: invalid character '}' "
            'looking for beginning of object key string ({"metadata": {"name": "b"}, "d ...)',
        ),
        (
            "PUT",
            f"{cms}/a",
            "[1,",
            "application/json",
            unrecognized + "couldn't get version/kind; json parse error: unexpected end of "
            "JSON input (5b312c)",
        ),
        (
            "POST",
            cms,
            "kind: [",
            "application/yaml",
            unrecognized + "error converting YAML to JSON: yaml: line 1: did not find expected "
            "node content (6b696e643a205b)",
        ),
        (
            "PATCH",
            f"{cms}/a",
            '{"data": NaN}',
            "application/merge-patch+json",
            "error decoding patch: invalid character 'N' looking for beginning of value",
        ),
        (
            "PATCH",
            f"{cms}/a",
            '{"data" {}}',
            "application/strategic-merge-patch+json",
            "invalid character '{' after object key",
        ),
        (
            "PATCH",
            f"{cms}/a",
            '["add"]',
            "application/merge-patch+json",
            "error decoding patch: json: cannot unmarshal array into Go value of type "
            "map[string]interface {}",
        ),
    ]
    cases.append(  # a subresource's body is its own kind
        (
            "POST",
            f"/api/v1/namespaces/{ns}/pods/web/eviction",
            "{bad",
            "application/json",
            "the object provided is unrecognized (must be of type Eviction): couldn't get "
            "version/kind; json parse error: invalid character 'b' looking for beginning of "
            "object key string ({bad)",
        )
    )
    for method, path, body, media, message in cases:
        status, answer, _ = await raw(method, path, body, content_type=media)
        assert (status, answer["reason"], answer["message"]) == (400, "BadRequest", message), body
    status, answer, _ = await raw(  # applyPatcher: sigs.k8s.io/yaml.Unmarshal into a map
        "PATCH", f"{cms}/a", "- 1", content_type="application/apply-patch+yaml", fieldManager="t"
    )
    assert (status, answer["message"]) == (
        400,
        "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
        "unmarshal array into Go value of type map[string]interface {}",
    )


async def test_a_failed_json_patch_test_is_the_generic_invalid_status(raw: Raw) -> None:
    """``handlers/patch.go``: a JSON patch that does not apply is
    ``NewGenericServerResponse(422, ...)``, whose words hide json-patch's own; the object is
    left as it was."""
    ns = await create_namespace(raw)
    path = f"/api/v1/namespaces/{ns}/configmaps/a"
    await raw("POST", path.rsplit("/", 1)[0], {"metadata": {"name": "a"}, "data": {"x": "1"}})
    ops = [{"op": "replace", "path": "/data/x", "value": "2"}]
    ops.append({"op": "test", "path": "/data/x", "value": "1"})
    status, answer, _ = await raw("PATCH", path, ops, content_type="application/json-patch+json")
    assert (status, answer) == (
        422,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "the server rejected our request due to an error in our request",
            "reason": "Invalid",
            "details": {},
            "code": 422,
        },
    )
    assert (await raw("GET", path))[1]["data"] == {"x": "1"}


async def test_creating_in_a_terminating_namespace_is_forbidden_for_the_object(raw: Raw) -> None:
    """The NamespaceLifecycle admission plugin (``plugin/pkg/admission/namespace/lifecycle``):
    ``admission.NewForbidden`` names the object refused, the cause names the namespace."""
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    await raw("POST", cms, {"metadata": {"name": "held", "finalizers": ["example.com/x"]}})
    await raw("DELETE", f"/api/v1/namespaces/{ns}")
    status, answer, _ = await raw("POST", cms, {"metadata": {"name": "late"}})
    assert status == 403
    assert answer["message"] == (
        f'configmaps "late" is forbidden: unable to create new content in namespace {ns} '
        "because it is being terminated"
    )
    assert answer["details"] == {
        "name": "late",
        "kind": "configmaps",
        "causes": [
            {
                "reason": "NamespaceTerminating",
                "message": f"namespace {ns} is being terminated",
                "field": "metadata.namespace",
            }
        ],
    }


#: What only Python says: exception class names, repr forms, the json module's positions.
PYTHONISMS = (
    "Traceback",
    'File "',
    "Error:",
    "Exception",
    "NoneType",
    "object has no attribute",
    "not subscriptable",
    "unhashable",
    "invalid literal for int()",
    "Expecting ",
    "(char ",
    "line 1 column",
    "<class ",
    "codec can't",
    "takes no",
    "argument",
)


async def test_no_answer_to_a_bad_request_speaks_python(raw: Raw) -> None:
    """A batch of malformed requests of every kind: each is refused with a Status (4xx, or 501
    where the README lists a difference), and no message carries Python's words."""
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    await raw("POST", cms, {"metadata": {"name": "a"}, "data": {"x": "1"}})
    deep = "[" * 5000 + "]" * 5000
    requests: list[tuple[str, str, Any, str, dict[str, str]]] = [
        ("POST", cms, "{bad", "application/json", {}),
        ("POST", cms, b"\xff\xfe{", "application/json", {}),
        ("POST", cms, '{"metadata": {"name": "n"}, "data": "notamap"}', "application/json", {}),
        (
            "POST",
            cms,
            '{"metadata": {"name": "n"}, "data": {"k": Infinity}}',
            "application/json",
            {},
        ),
        ("POST", cms, deep, "application/json", {}),
        ("POST", cms, "a: b: c", "application/yaml", {}),
        ("POST", cms, b"a: \xff", "application/yaml", {}),
        ("POST", cms, "[1, 2]", "application/json", {}),
        ("POST", cms, "null", "application/json", {}),
        ("POST", cms, "{}", "text/plain", {}),
        ("PUT", f"{cms}/a", '"text"', "application/json", {}),
        ("PATCH", f"{cms}/a", '{"op": "add"}', "application/json-patch+json", {}),
        ("PATCH", f"{cms}/a", "[1]", "application/json-patch+json", {}),
        ("PATCH", f"{cms}/a", '[{"op": "move", "path": "/x"}]', "application/json-patch+json", {}),
        ("PATCH", f"{cms}/a", "7", "application/strategic-merge-patch+json", {}),
        ("PATCH", f"{cms}/a", "- 1", "application/apply-patch+yaml", {"fieldManager": "t"}),
        ("PATCH", f"{cms}/a", "{a: [}", "application/apply-patch+yaml", {"fieldManager": "t"}),
        ("PATCH", f"{cms}/a", "{}", "application/merge-patch+json", {"force": "maybe"}),
        ("DELETE", f"{cms}/a", "{x", "application/json", {}),
        ("DELETE", f"{cms}/a", "[]", "application/json", {}),
        ("DELETE", f"{cms}/a", None, "", {"gracePeriodSeconds": "soon"}),
        ("DELETE", f"{cms}/a", None, "", {"propagationPolicy": "Sideways"}),
        ("GET", cms, None, "", {"labelSelector": "a in (b"}),
        ("GET", cms, None, "", {"labelSelector": "!"}),
        ("GET", cms, None, "", {"fieldSelector": "metadata.name"}),
        ("GET", cms, None, "", {"limit": "many"}),
        ("GET", cms, None, "", {"continue": "%%%"}),
        ("GET", cms, None, "", {"resourceVersion": "x1"}),
        ("GET", cms, None, "", {"watch": "perhaps"}),
        ("GET", cms, None, "", {"timeoutSeconds": "later", "watch": "1"}),
        ("GET", cms, None, "", {"resourceVersionMatch": "Whenever", "resourceVersion": "1"}),
        ("GET", f"/api/v1/namespaces/{ns}/pods/none/log", None, "", {"tailLines": "x"}),
        ("GET", "/apis/nothing.example/v1/things", None, "", {}),
    ]
    for method, path, body, media, params in requests:
        status, answer, _ = await raw(method, path, body, content_type=media, **params)
        said = answer if isinstance(answer, str) else answer.get("message", "")
        # 501: what the simulator knowingly does not do (nesting Go reads, Python cannot; logs of
        # a pod this raw server has no kubelet for)
        knowingly = status == 501 and (body is deep or path.endswith("/log"))
        assert 400 <= status < 500 or knowingly, (method, path, params, status, said)
        assert isinstance(answer, dict), answer
        assert answer["kind"] == "Status", answer
        spoken = [p for p in PYTHONISMS if p in said]
        assert not spoken, (method, path, body, params, said)


async def test_label_selectors_are_parsed_as_labels_parse_parses_them(
    kubectl: Kubectl, raw: Raw
) -> None:
    """``apimachinery/pkg/labels/selector.go`` ``Parser.parse``: what it refuses is a 400 in its
    words (kubectl shows them), and what it reads (``notin (b,)``, keywords as values) matches
    as it matches."""
    ns = await create_namespace(raw)
    cms = f"/api/v1/namespaces/{ns}/configmaps"
    for name, labels in (
        ("one", {"tier": "web"}),
        ("two", {"tier": "in"}),
        ("three", {"size": "3"}),
    ):
        await raw("POST", cms, {"metadata": {"name": name, "labels": labels}})
    refused = kubectl.run("-n", ns, "get", "cm", "-l", "tier in (web", check=False)
    assert refused.returncode == 1
    assert refused.stderr.startswith("Error from server (BadRequest): ")
    assert refused.stderr.strip().endswith(
        '"tier in (web", field selector "": unable to parse requirement: found \'\', '
        "expected: ',' or ')'"
    )
    status, answer, _ = await raw("GET", cms, labelSelector="tier,")
    assert (status, answer["message"]) == (400, "found '', expected: identifier after ','")

    async def names(selector: str) -> list[str]:
        _, listed, _ = await raw("GET", cms, labelSelector=selector)
        return sorted(item["metadata"]["name"] for item in listed["items"])

    assert await names("tier in (in)") == ["two"]
    assert await names("tier notin (web,)") == ["three", "two"]
    assert await names("size>2,!tier") == ["three"]


async def test_field_selectors_are_split_and_unescaped_as_fields_parse_selector_does(
    kubectl: Kubectl, raw: Raw
) -> None:
    """``apimachinery/pkg/fields/selector.go``: ``splitTerm`` stops at the first operator and
    ``UnescapeValue`` refuses a bare ``=`` or an unknown escape in the value."""
    ns = await create_namespace(raw)
    secrets = f"/api/v1/namespaces/{ns}/secrets"
    await raw("POST", secrets, {"metadata": {"name": "odd"}, "type": "example.com/a,b"})
    refused = kubectl.run(
        "-n", ns, "get", "cm", "--field-selector", "metadata.name==a==b", check=False
    )
    assert refused.stderr.strip().endswith(
        "invalid field selector: unescaped character in value: 61"
    ), refused.stderr
    for selector, error in (
        ("metadata.name=a\\b", "invalid field selector: invalid escape sequence: \\b"),
        ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ):
        status, answer, _ = await raw("GET", secrets, fieldSelector=selector)
        assert (status, answer["message"]) == (400, error)
    _, found, _ = await raw("GET", secrets, fieldSelector="type=example.com/a\\,b")
    assert [item["metadata"]["name"] for item in found["items"]] == ["odd"]
