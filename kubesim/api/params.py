"""Request parsing shared by the HTTP handlers: resource paths, query parameters, media types."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from kubesim.api.validation import field
from kubesim.machinery.registry import Registry, ResourceType
from kubesim.machinery.status import KubeError, bad_request, not_found

# Subresources of a namespace itself (``/api/v1/namespaces/{name}/status``), as RequestInfo has it.
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


@attrs.frozen
class Target:
    """What a resource URL names: a type, maybe a namespace, an object, a subresource."""

    rt: ResourceType
    namespace: str
    name: str
    subresource: str
    all_namespaces: bool


def split_namespace(parts: list[str]) -> tuple[str, list[str]]:
    """(namespace, the rest) as RequestInfoFactory reads a path after its group and version:
    ``namespaces/<ns>/<resource>...`` is namespaced, except a namespace's own subresources
    (``namespaces/<ns>/status``, ``/finalize``), which keep the namespace as the resource."""
    if parts[:1] == ["namespaces"] and len(parts) > 2 and parts[2] not in _NAMESPACE_SUBRESOURCES:
        return parts[1], parts[2:]
    return "", parts


def parse_target(registry: Registry, group: str, version: str, tail: str) -> Target:
    namespace, parts = split_namespace([p for p in tail.split("/") if p])
    if len(parts) > 3 and parts[2] == "proxy":  # the rest is the path to proxy to
        parts = parts[:3]
    if not parts or len(parts) > 3:
        raise not_found("", "", "")
    rt = registry.get(group, version, parts[0])
    if rt is None:
        raise KubeError(404, "the server could not find the requested resource", details={})
    name = parts[1] if len(parts) > 1 else ""
    sub = parts[2] if len(parts) > 2 else ""
    if sub and rt.subresource(sub) is None:
        raise KubeError(404, "the server could not find the requested resource", details={})
    if namespace and not rt.namespaced:
        raise KubeError(404, "the server could not find the requested resource", details={})
    return Target(rt, namespace, name, sub, rt.namespaced and not namespace)


def flag(query: Mapping[str, str], name: str) -> bool:
    """Query booleans as the apiserver's parameter codec reads them (``true``, ``True``, ``1``)."""
    value = query.get(name)
    if value is None:
        return False
    if value.lower() in ("true", "1", "t", ""):
        return True
    if value.lower() in ("false", "0", "f"):
        return False
    raise bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def integer(query: Mapping[str, str], name: str) -> int | None:
    value = query.get(name)
    if value in (None, ""):
        return None
    try:
        return int(str(value))
    except ValueError:
        raise bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def field_validation(query: Mapping[str, str]) -> str:
    """The field validation a write asked for (``Warn`` when unset; ``options`` checks it)."""
    return query.get("fieldValidation", "") or "Warn"


def field_manager(query: Mapping[str, str], user_agent: str) -> str:
    """``fieldManager`` or, like kube-apiserver, the program name from the User-Agent."""
    return query.get("fieldManager") or user_agent.split("/", 1)[0][:128] or "unknown"


def media_params(part: str) -> tuple[str, dict[str, str]]:
    fields = [f.strip() for f in part.split(";")]
    params = {}
    for f in fields[1:]:
        if "=" in f:
            k, v = f.split("=", 1)
            params[k.strip()] = v.strip()
    return fields[0].lower(), params


PROTOBUF = "application/vnd.kubernetes.protobuf"


def prefers_protobuf(accept: str) -> bool:
    """Whether the first media type of ``accept`` the server can answer is plain protobuf."""
    for part in (accept or "").split(","):
        media, params = media_params(part)
        if media == PROTOBUF and "as" not in params and "stream" not in params:
            return True
        if media in ("application/json", "*/*", "application/*", "application/yaml"):
            return False
    return False


def accepts_json(accept: str) -> bool:
    media = {media_params(part)[0] for part in (accept or "").split(",")}
    return bool(media & {"application/json", "*/*", "application/*", "application/yaml"})


@attrs.frozen
class Form:
    """What an Accept header asks an answer to be: the object itself (``json``), a ``Table``,
    ``PartialObjectMetadata`` or ``PartialObjectMetadataList``, in meta.k8s.io ``version``
    (``v1`` or ``v1beta1``)."""

    kind: str
    version: str = "v1"

    @property
    def api_version(self) -> str:
        return f"meta.k8s.io/{self.version}"


AS_IS = Form("json")
_INCLUDE_OBJECT = ("Metadata", "Object", "None", "")


def include_object(query: Mapping[str, str]) -> str:
    """A Table's ``includeObject`` (``Metadata`` when unset), checked as the apiserver's
    ``optionsForTransform`` checks it (``ValidateTableOptions``): anything else is a 400."""
    value = query.get("includeObject", "")
    if value not in _INCLUDE_OBJECT:
        cause = field.invalid(
            "includeObject", value, "must be 'Metadata', 'Object', 'None', or empty"
        )
        raise bad_request(
            f"Unable to convert to Table as requested: {cause['field']}: {cause['message']}"
        )
    return value or "Metadata"


def not_acceptable(*, protobuf: bool) -> KubeError:
    """``negotiation.NewNotAcceptableError`` listing what the resource is served as (custom
    resources have no protobuf form)."""
    served = ", ".join(_JSON_MEDIA[-2:] + ((PROTOBUF,) if protobuf else ()))
    return KubeError(
        406, f"only the following media types are accepted: {served}", reason="NotAcceptable"
    )


_JSON_MEDIA = ("*/*", "application/*", "application/json", "application/yaml")


def response_form(accept: str, *, protobuf: bool = False) -> Form:
    """The first form the Accept header allows: the object, a Table or PartialObjectMetadata.

    An Accept that offers nothing the server makes (``as=Foo``, another group, ``text/html``)
    is a 406, as the apiserver's ``NegotiateOutputMediaType`` answers it, listing the media
    types the resource is served as (``protobuf``: it has a protobuf form); a protobuf answer is
    the negotiate middleware's business. The meta.k8s.io version asked for (v1 or v1beta1) is
    the version answered (``asTable``)."""
    refused = False
    for part in (accept or "application/json").split(","):
        media, params = media_params(part)
        if not media:
            continue
        if media == PROTOBUF:
            return AS_IS  # the negotiate middleware answers or refuses it
        if media not in _JSON_MEDIA:
            refused = True
            continue
        wanted = params.get("as")
        if wanted is None:
            return AS_IS
        version = params.get("v", "")
        if (
            params.get("g") == "meta.k8s.io"
            and version in ("v1", "v1beta1")
            and wanted in ("Table", "PartialObjectMetadata", "PartialObjectMetadataList")
        ):
            return Form(wanted, version)
        refused = True
    if refused:
        raise not_acceptable(protobuf=protobuf)
    return AS_IS
