"""Request body decoding: JSON, YAML and Kubernetes protobuf, by Content-Type.

Protobuf is decoded for the kinds Helm's release storage sends (Secret, ConfigMap, DeleteOptions)
by ``protobuf.decode``; anything else it cannot read is a 415, never a guess. A body that does not
decode is a 400 in the words of the Go decoder a real server runs (``gojson``; go-yaml's
``yaml: line N: ...``), framed as the request's handler frames it (:class:`Words`); no Python
exception text reaches the answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
import yaml

from kubesim.encoding import gojson, gotypes, protobuf, protobuf_kinds
from kubesim.machinery.status import KubeError, bad_request, unsupported


def _same(error: str) -> str:
    return error


def _yaml_to_json(error: str) -> str:
    return f"error converting YAML to JSON: {error}"


@attrs.frozen
class Words:
    """How a request words a body its decoder refuses: ``json`` and ``yaml`` frame the Go
    decoder's error (``invalid character ...``, ``yaml: line 1: ...``)."""

    json: Callable[[str], str] = _same
    yaml: Callable[[str], str] = _yaml_to_json


def object_words(kind: str, raw: bytes) -> Words:
    """An object body (create, update): ``handlers/rest.go`` ``transformDecodeError`` after the
    serializer's ``meta.Interpret``, with ``summarizeData`` of the body."""

    def unrecognized(error: str) -> str:
        return f"the object provided is unrecognized (must be of type {kind}): {error} ({_summary(raw)})"

    return Words(
        json=lambda e: unrecognized(f"couldn't get version/kind; json parse error: {e}"),
        yaml=lambda e: unrecognized(_yaml_to_json(e)),
    )


def patch_words(media: str, field_validation: str) -> Words:
    """Patch bodies (``handlers/patch.go``): JSON and merge patches are decoded strictly first
    (``error decoding patch: ...``) unless validation is ``Ignore``, when json-patch's
    ``MergePatch`` answers ``Invalid JSON Patch``; a strategic merge patch's error is bare."""
    if media == "application/apply-patch+yaml":
        return Words(yaml=lambda e: f"error decoding YAML: {_yaml_to_json(e)}")
    if media == "application/strategic-merge-patch+json":
        return Words()
    if field_validation == "Ignore":
        return Words(json=lambda e: "Invalid JSON Patch") if "merge" in media else Words()
    return Words(json=lambda e: f"error decoding patch: {e}")


def require_patch_map(body: Any, media: str) -> None:
    """A merge, strategic merge or apply patch is decoded into a ``map[string]interface{}``
    first; any other JSON value is encoding/json's type error, framed as the patch type frames
    it (an apply body through sigs.k8s.io/yaml's ``Unmarshal``)."""
    if isinstance(body, dict) or body is None or media == "application/json-patch+json":
        return
    error = f"json: cannot unmarshal {gotypes.json_kind(body)} into Go value of type map[string]interface {{}}"
    if media == "application/apply-patch+yaml":
        error = f"error decoding YAML: error unmarshaling JSON: while decoding JSON: {error}"
        raise bad_request(error)
    raise bad_request(patch_words(media, "Warn").json(error))


DELETE_WORDS = Words(json=lambda e: f"couldn't get version/kind; json parse error: {e}")


def _summary(raw: bytes, limit: int = 30) -> str:
    """``summarizeData``: a JSON object's first bytes as text, anything else in hex."""
    if not raw:
        return "<empty>"
    if raw[:1] == b"{":
        text = raw[:limit].decode("utf-8", "replace")
        return text + " ..." if len(raw) > limit else text
    return raw[:limit].hex() + (" ..." if len(raw) > limit else "")


def _yaml_error(exc: yaml.YAMLError) -> str:
    """go-yaml's form of a YAML error, ``yaml: line N: <problem>``: libyaml's problem (go-yaml
    ports it, so the words are the same) and the line as go-yaml's ``parser.fail`` counts it."""
    if isinstance(exc, yaml.reader.ReaderError):
        return "yaml: invalid leading UTF-8 octet"
    if not isinstance(exc, yaml.MarkedYAMLError):
        return "yaml: invalid document"
    problem, context = exc.problem_mark, exc.context_mark
    line = 0
    if problem is not None and problem.line:
        line = problem.line + (1 if isinstance(exc, yaml.scanner.ScannerError) else 0)
    elif context is not None:
        line = context.line
    where = f"line {line}: " if line else ""
    return f"yaml: {where}{exc.problem or exc.context or 'invalid document'}"


def _no_constant(name: str) -> Any:
    raise ValueError(name)  # NaN and Infinity: JSON to Python, not to Go


PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
#: What a custom resource's PATCH takes: no strategic merge patch, which needs Go types
#: (apiextensions-apiserver's ``controller/openapi/builder`` lists these three for CR routes, and
#: kubectl reads them to choose a merge patch for a client-side apply).
CR_PATCH_TYPES = tuple(t for t in PATCH_TYPES if "strategic" not in t)
PROTOBUF = "application/vnd.kubernetes.protobuf"
_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[valid-type,misc]
    """Safe YAML that keeps timestamps as strings, as sigs.k8s.io/yaml's YAML-to-JSON does."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in _Base.yaml_implicit_resolvers.items()
}


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def unsupported_media(media: str, accepted: tuple[str, ...]) -> KubeError:
    return KubeError(
        415,
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
        reason="UnsupportedMediaType",
    )


def decode(
    raw: bytes, content_type: str, *, accepted: tuple[str, ...], words: Words = Words()
) -> Any:
    media = media_type(content_type) or "application/json"
    if media not in accepted:
        raise unsupported_media(media, accepted)
    if media == PROTOBUF:
        try:
            return protobuf_kinds.decode(raw)
        except protobuf.ProtobufError as exc:
            raise KubeError(
                415,
                f"the simulator cannot decode this protobuf body: {exc}",
                reason="UnsupportedMediaType",
            ) from exc
    if media in ("application/yaml", "application/apply-patch+yaml"):
        try:
            return yaml.load(raw, Loader=_Loader)  # noqa: S506 -- a safe loader, C when available
        except yaml.YAMLError as exc:
            raise bad_request(words.yaml(_yaml_error(exc))) from exc
        except RecursionError:
            raise _too_deep() from None
    return _json(raw, words)


def _json(raw: bytes, words: Words) -> Any:
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass  # worded below as Go words it
    problem = gojson.syntax_error(raw)
    if problem is not None:
        raise bad_request(words.json(problem))
    try:  # Go reads it: bytes that are not UTF-8 inside strings become U+FFFD
        return json.loads(raw.decode("utf-8", "replace"))
    except RecursionError:
        raise _too_deep() from None


def _too_deep() -> KubeError:
    return unsupported("bodies nested deeper than the simulator's decoder reads (about 900 levels)")


WRITE_TYPES = ("application/json", "application/yaml", PROTOBUF)
DELETE_TYPES = ("application/json", "application/yaml", PROTOBUF)
