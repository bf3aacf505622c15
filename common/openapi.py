"""The OpenAPI 3.1 spec as the one place requests are validated, and the docs it serves.

``spec/<service>.yaml`` is loaded once at start-up; one validator per operation is compiled then, so a
request path does no schema work beyond running compiled validators. Spec paths are relative to the
service's base path (``servers[0].url`` is rewritten to the configured base path when served).

This module must not know any service: it validates what the spec says and nothing else. Error
messages never echo the offending value (a bad value may be a secret, such as a kubeconfig).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Awaitable, Callable, Collection, Hashable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import attrs
import jsonschema
import referencing
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from multidict import MultiMapping
from referencing.jsonschema import DRAFT202012

from common import documents, sse, yamlio
from common.errors import UnsupportedMediaType, ValidationFailed
from common.routing import Guard

SPEC_URI = "urn:wharf:spec"
JSON_TYPES = ("application/json",)
MULTIPART = "multipart/form-data"
SSE_TYPE = "text/event-stream"


@attrs.frozen
class Validated:
    """What a handler reads: coerced path, query and header values, and the parsed JSON body."""

    path: Mapping[str, Any]
    query: Mapping[str, Any]
    headers: Mapping[str, Any]
    body: Any


VALIDATED = web.RequestKey("wharf.validated", Validated)


def validated(request: web.Request) -> Validated:
    return request[VALIDATED]


def operation_id(request: web.Request) -> str | None:
    """The operationId of the matched route, or None for routes outside the spec."""
    name = request.match_info.route.name
    return name if name and name in request.app[SPEC].operations else None


_NO_DEFAULT: Any = object()


@attrs.frozen
class Param:
    name: str
    location: str
    required: bool
    schema: Mapping[str, Any]
    validator: jsonschema.protocols.Validator
    #: The same checks in plain Python when the schema is a simple one (see ``quick_checks``).
    quick: Callable[[Any], list[str]] | None = None
    # Read from the schema once, not on every request:
    #: A comma-separated list (``type: array``), which may also come as repeated parameters.
    array: bool = attrs.field(init=False)
    #: Whether the text sent becomes another type (``_coerce``); strings stay as they are.
    coerced: bool = attrs.field(init=False)
    default: Any = attrs.field(init=False)

    @array.default
    def _array(self) -> bool:
        return bool(self.schema.get("type") == "array")

    @coerced.default
    def _coerced(self) -> bool:
        return bool(self.schema.get("type", "string") != "string")

    @default.default
    def _default(self) -> Any:
        return self.schema.get("default", _NO_DEFAULT)


@attrs.frozen
class Operation:
    """One compiled operation: its parameters, body validator and multipart requirements."""

    operation_id: str
    method: str
    path: str
    params: tuple[Param, ...]
    body_required: bool
    json_body: jsonschema.protocols.Validator | None
    other_body_types: tuple[str, ...]
    multipart_required: tuple[str, ...]
    #: The part names a closed multipart schema allows (None: any).
    multipart_parts: frozenset[str] | None
    #: A validator per JSON part of the multipart body (by the spec's ``encoding``), which request
    #: validation leaves to the handler that reads the form.
    multipart_json: Mapping[str, jsonschema.protocols.Validator]
    responses: Mapping[str, jsonschema.protocols.Validator]
    statuses: frozenset[str]
    raw: Mapping[str, Any]
    #: Validated requests by their input (``_memo_key``), for an operation whose validation reads
    #: only the path, the raw query string and its header parameters: no body, no list values.
    #: CI polls the same URL again and again; validating it once is enough. None otherwise.
    memo: dict[Hashable, Validated] | None = attrs.field(eq=False)
    #: The names of its header parameters (part of a memo key).
    header_params: tuple[str, ...] = attrs.field(eq=False, init=False)
    #: Of an event stream: each event's name and a validator of its ``data`` (see ``_events``).
    events: Mapping[str, jsonschema.protocols.Validator | None] = attrs.field(
        eq=False, factory=dict
    )

    @memo.default
    def _memo(self) -> dict[Hashable, Validated] | None:
        reads_body = self.json_body is not None or self.body_required
        lists = any(p.array for p in self.params)
        return None if reads_body or lists else {}

    @header_params.default
    def _headers(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.location == "header")


#: The operation a request's route serves, set by the validation middleware.
OPERATION = web.RequestKey("wharf.operation", Operation)

#: Inputs kept per operation (``Operation.memo``); past it the memo starts again, so a client
#: sending ever new query strings costs memory no longer than this.
MEMO_LIMIT = 512


@attrs.define
class Spec:
    """A loaded, compiled spec."""

    document: dict[str, Any]
    operations: dict[str, Operation]

    @classmethod
    def load(
        cls,
        path: Path,
        *,
        exclude: Collection[str] = (),
        patterns: Mapping[str, str] = MappingProxyType({}),
    ) -> Spec:
        """``spec/<service>.yaml`` merged with its fragments (see :func:`load_document`)."""
        return cls.from_document(load_document(path, exclude=exclude, patterns=patterns))

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> Spec:
        compiler = _Compiler.of(document)
        operations: dict[str, Operation] = {}
        for path, item in document.get("paths", {}).items():
            for method, op in item.items():
                if method not in _METHODS:
                    continue
                compiled = compiler.operation(path, method, op, item.get("parameters", []))
                if compiled.operation_id in operations:
                    raise ValueError(f"duplicate operationId {compiled.operation_id}")
                operations[compiled.operation_id] = compiled
        return cls(document=document, operations=operations)

    def validator(self, schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
        """A compiled validator of ``schema``, whose local references resolve in this spec (for a
        JSON part of a multipart body, which the request validation leaves to the handler)."""
        return _Compiler.of(self.document).validator(schema)

    def served(self, base_path: str) -> dict[str, Any]:
        """The document as served: servers pointing at the configured base path."""
        document = copy.deepcopy(self.document)
        document["servers"] = [{"url": base_path or "/"}]
        return document


def load_document(
    path: Path,
    *,
    exclude: Collection[str] = (),
    patterns: Mapping[str, str] = MappingProxyType({}),
) -> dict[str, Any]:
    """``spec/<service>.yaml`` merged with its fragments ``spec/<service>.<part>.yaml``.

    Fragments let one service's groups be written side by side; the served document and every
    check see the merged whole, and a path, method or component defined twice is refused. A part
    named in ``exclude`` is left out: a group the service registers only sometimes keeps its
    operations in its own fragment, so spec and routes stay in parity either way.

    ``patterns`` gives the ``pattern`` of named schemas (``components.schemas``) from the
    service's own validators: the spec names and describes the rule, the code that holds requests
    to it states it, so the two cannot drift. Each must be a string schema without a pattern.
    """
    document = _read_yaml(path)
    fragments = {
        f.name[len(path.stem) + 1 : -len(".yaml")]: f
        for f in path.parent.glob(f"{path.stem}.*.yaml")
    }
    unknown = sorted(set(exclude) - set(fragments))
    if unknown:
        raise ValueError(f"{path.name}: no fragment to exclude named {', '.join(unknown)}")
    for part, fragment in sorted(fragments.items()):
        if part not in exclude:
            merge_fragment(document, _read_yaml(fragment), source=fragment.name)
    _bound_integer_parameters(document)
    _state_patterns(document, patterns, source=path.name)
    return document


def _state_patterns(document: dict[str, Any], patterns: Mapping[str, str], *, source: str) -> None:
    schemas = (document.get("components") or {}).get("schemas") or {}
    for name, pattern in patterns.items():
        schema = schemas.get(name)
        if not isinstance(schema, dict) or schema.get("type") != "string" or "pattern" in schema:
            raise ValueError(f"{source}: no string schema {name} without a pattern to state")
        schema["pattern"] = pattern


def _bound_integer_parameters(document: dict[str, Any]) -> None:
    """Give every integer parameter the signed 64-bit range ``_coerce`` holds it to, where the spec
    states no narrower one: the served document then says what the server accepts."""
    items = list((document.get("paths") or {}).values())
    holders = [*items, *(op for item in items for op in item.values() if isinstance(op, dict))]
    params = [
        *(p for holder in holders for p in holder.get("parameters") or ()),
        *((document.get("components") or {}).get("parameters") or {}).values(),
    ]
    for param in params:
        schema = param.get("schema") if isinstance(param, dict) else None
        if isinstance(schema, dict) and schema.get("type") == "integer":
            schema.setdefault("minimum", _INT64_MIN)
            schema.setdefault("maximum", _INT64_MAX)


def _read_yaml(path: Path) -> dict[str, Any]:
    document = yamlio.load(path.read_text("utf-8"))
    if not isinstance(document, dict):
        raise ValueError(f"{path.name} is not an OpenAPI document")
    return document


def merge_fragment(document: dict[str, Any], fragment: Mapping[str, Any], *, source: str) -> None:
    paths = document.setdefault("paths", {})
    for path, item in (fragment.get("paths") or {}).items():
        target = paths.setdefault(path, {})
        for key, value in item.items():
            if key in target:
                raise ValueError(f"{source}: {key} {path} is already defined")
            target[key] = value
    components = document.setdefault("components", {})
    for kind, entries in (fragment.get("components") or {}).items():
        target = components.setdefault(kind, {})
        for name, value in entries.items():
            if name in target and target[name] != value:
                raise ValueError(f"{source}: components.{kind}.{name} is already defined")
            target[name] = value
    known = {t.get("name") for t in document.get("tags", [])}
    document.setdefault("tags", []).extend(
        t for t in fragment.get("tags", []) if t.get("name") not in known
    )


SPEC = web.AppKey("wharf.spec", Spec)

_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


@attrs.define
class _Compiler:
    document: dict[str, Any]
    registry: referencing.Registry[Any]
    #: Each local reference's target with its own references inlined, shared by every schema
    #: that names it (compiled once, never copied again).
    _inlined: dict[str, Any] = attrs.field(factory=dict, init=False)

    @classmethod
    def of(cls, document: dict[str, Any]) -> _Compiler:
        """A compiler whose references resolve in ``document``, the spec's resource."""
        resource = DRAFT202012.create_resource(document)
        return cls(document, referencing.Registry().with_resource(SPEC_URI, resource))

    def resolve(self, node: Any) -> Any:
        while isinstance(node, Mapping) and "$ref" in node:
            pointer = node["$ref"].removeprefix("#/").split("/")
            node = self.document
            for part in pointer:
                node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def validator(self, schema: Mapping[str, Any]) -> jsonschema.protocols.Validator:
        return jsonschema.Draft202012Validator(
            self.inline(schema, ()),
            registry=self.registry,
            format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
        )

    def inline(self, node: Any, chain: tuple[str, ...]) -> Any:
        """``node`` with each local ``{"$ref": ...}`` (annotations beside it aside) replaced by
        its target: jsonschema resolves a reference through the registry on every request, which
        made a small body's check cost several times its inlined one. A reference back into its
        own chain (a recursive schema) or one with checks beside it stays a reference, rebased
        onto the spec's resource so that "#/components/..." resolves."""
        if isinstance(node, list):
            return [self.inline(v, chain) for v in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if not (isinstance(ref, str) and ref.startswith("#/")):
            return {k: self.inline(v, chain) for k, v in node.items()}
        if ref not in chain and _ANNOTATIONS.issuperset(k for k in node if k != "$ref"):
            if ref not in self._inlined:
                self._inlined[ref] = self.inline(self.resolve({"$ref": ref}), (*chain, ref))
            return self._inlined[ref]
        out = {k: self.inline(v, chain) for k, v in node.items() if k != "$ref"}
        return {"$ref": SPEC_URI + ref, **out}

    def operation(
        self, path: str, method: str, op: Mapping[str, Any], shared: list[Any]
    ) -> Operation:
        params = tuple(self.param(p) for p in [*shared, *op.get("parameters", [])])
        body = self.resolve(op.get("requestBody", {}))
        content = body.get("content", {})
        json_schema = next((c["schema"] for t, c in content.items() if t in JSON_TYPES), None)
        multipart = self.resolve(content.get(MULTIPART, {}).get("schema", {}))
        parts = multipart.get("properties", {})
        encoding = content.get(MULTIPART, {}).get("encoding", {})
        return Operation(
            operation_id=op["operationId"],
            method=method.upper(),
            path=path,
            params=params,
            body_required=bool(body.get("required", False)),
            json_body=self.validator(json_schema) if json_schema is not None else None,
            other_body_types=tuple(t for t in content if t not in JSON_TYPES),
            multipart_required=tuple(multipart.get("required", ())),
            multipart_parts=(
                frozenset(parts) if multipart.get("additionalProperties") is False else None
            ),
            multipart_json={
                name: self.validator(parts.get(name, {}))
                for name, how in encoding.items()
                if how.get("contentType") in JSON_TYPES
            },
            responses=self.responses(op.get("responses", {})),
            statuses=frozenset(str(s) for s in op.get("responses", {})),
            raw=op,
            events=self.events(op.get("responses", {})),
        )

    def param(self, node: Any) -> Param:
        param = self.resolve(node)
        schema = param.get("schema", {})
        # A named schema's keywords, with those written beside the reference (a ``default``).
        resolved = {**self.resolve(schema), **{k: v for k, v in schema.items() if k != "$ref"}}
        return Param(
            name=param["name"],
            location=param["in"],
            required=bool(param.get("required", param["in"] == "path")),
            schema=resolved,
            validator=self.validator(schema),
            quick=quick_checks(resolved),
        )

    def events(
        self, responses: Mapping[str, Any]
    ) -> dict[str, jsonschema.protocols.Validator | None]:
        """The events an event stream's schema names, each with a validator of its ``data``: the
        schema is ``oneOf`` one object per kind of event, its ``event`` a ``const`` or ``enum``,
        its ``data`` a string whose ``contentSchema`` the parsed JSON must match."""
        found: dict[str, jsonschema.protocols.Validator | None] = {}
        for node in responses.values():
            media = self.resolve(node).get("content", {}).get(SSE_TYPE)
            schema = self.resolve((media or {}).get("schema", {}))
            for kind in schema.get("oneOf", ()):
                properties = self.resolve(kind).get("properties", {})
                named = properties.get("event", {})
                content = properties.get("data", {}).get("contentSchema")
                validator = self.validator(content) if content is not None else None
                for name in named.get("enum", [named.get("const")]):
                    found[name] = validator
        return found

    def responses(self, responses: Mapping[str, Any]) -> dict[str, jsonschema.protocols.Validator]:
        out = {}
        for status, node in responses.items():
            content = self.resolve(node).get("content", {})
            for media, entry in content.items():
                if "json" in media and "schema" in entry:
                    out[str(status)] = self.validator(entry["schema"])
        return out


#: Keywords that check nothing.
_ANNOTATIONS = frozenset({"default", "description", "example", "examples", "title", "deprecated"})
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}
Check = Callable[[Any], str | None]


def quick_checks(schema: Mapping[str, Any]) -> Callable[[Any], list[str]] | None:
    """A parameter schema made only of ``type``, ``minLength``, ``maxLength``, ``pattern``,
    ``minimum``, ``maximum`` and a string ``enum`` (nearly all of them), checked in plain Python:
    the messages and their order are those of the compiled validator (``_message`` of each
    error, keywords in schema order), at a tenth of its cost on every request. None for any other
    schema, which the validator checks."""
    checks: list[Check] = []
    for key, rule in schema.items():
        if key in _ANNOTATIONS:
            continue
        check = _quick_check(key, rule, schema)
        if check is None:
            return None
        checks.append(check)

    def run(value: Any) -> list[str]:
        return [m for check in checks if (m := check(value)) is not None]

    return run


def _quick_check(key: str, rule: Any, schema: Mapping[str, Any]) -> Check | None:
    is_number = _TYPES["number"]
    if key == "type" and isinstance(rule, str) and rule in _TYPES:
        is_type, wrong = _TYPES[rule], f"must be of type {rule}"
        return lambda v: None if is_type(v) else wrong
    if key in ("minLength", "maxLength") and isinstance(rule, int) and not isinstance(rule, bool):
        if key == "minLength":
            short = f"must be at least {rule} characters"
            return lambda v: short if isinstance(v, str) and len(v) < rule else None
        long = f"must be at most {rule} characters"
        return lambda v: long if isinstance(v, str) and len(v) > rule else None
    if key == "pattern" and isinstance(rule, str):
        search, unmatched = re.compile(rule).search, _pattern_message(rule, schema)
        return lambda v: unmatched if isinstance(v, str) and not search(v) else None
    if key in ("minimum", "maximum") and is_number(rule):
        if key == "minimum":
            low = f"must be >= {rule}"
            return lambda v: low if is_number(v) and v < rule else None
        high = f"must be <= {rule}"
        return lambda v: high if is_number(v) and v > rule else None
    if key == "enum" and isinstance(rule, list) and rule and all(isinstance(e, str) for e in rule):
        allowed, outside = frozenset(rule), "must be one of " + ", ".join(rule)
        return lambda v: None if isinstance(v, str) and v in allowed else outside
    return None


# --- request validation --------------------------------------------------------------------------


async def validate_request(request: web.Request, op: Operation) -> Validated:
    errors: list[dict[str, str]] = []
    values: dict[str, dict[str, Any]] = {"path": {}, "query": {}, "header": {}}
    sources: dict[str, Mapping[str, Any]] = {
        "path": request.match_info,
        "query": request.query,
        "header": request.headers,
    }
    for param in op.params:
        source = sources.get(param.location)
        if source is None:
            continue  # a cookie: read by whoever needs it
        present = param.name in source
        raw = _raw_param(source, param) if present else None
        if present and param.coerced:
            try:
                raw = _coerce(raw, param.schema)
            except ValueError as exc:
                errors.append(_error(param.location, param.name, str(exc)))
                continue
        _check_param(param, present, raw, values[param.location], errors)
    body = await _body(request, op, errors)
    if errors:
        raise ValidationFailed(errors)
    return Validated(
        path=values["path"], query=values["query"], headers=values["header"], body=body
    )


def validate_arguments(
    op: Operation, arguments: Mapping[str, Mapping[str, Any]], body: Any = None
) -> Validated:
    """Validate values that arrive already typed (an MCP tool call's arguments, not an HTTP
    request) with the operation's compiled validators: the same rules, defaults and ``errors``
    entries as a request. ``arguments`` maps a location (``path``, ``query``, ``header``) to the
    values given for it; ``body`` is checked against the JSON body schema when the operation has one.
    """
    errors: list[dict[str, str]] = []
    values: dict[str, dict[str, Any]] = {"path": {}, "query": {}, "header": {}}
    for param in op.params:
        if param.location not in values:
            continue
        given = arguments.get(param.location, {})
        present = param.name in given and given[param.name] is not None
        _check_param(param, present, given.get(param.name), values[param.location], errors)
    if op.json_body is not None and body is not None:
        errors += schema_errors(op.json_body, body)
    if errors:
        raise ValidationFailed(errors)
    if op.json_body is not None:
        body = whole_integers(op.json_body, body)
    return Validated(
        path=values["path"], query=values["query"], headers=values["header"], body=body
    )


def _check_param(
    param: Param, present: bool, value: Any, into: dict[str, Any], errors: list[dict[str, str]]
) -> None:
    if not present:
        if param.required:
            errors.append(_error(param.location, param.name, "is required"))
        elif param.default is not _NO_DEFAULT:
            into[param.name] = param.default
        return
    if param.quick is not None:
        bad = param.quick(value)
    else:
        bad = [_message(e) for e in param.validator.iter_errors(value)]
    if bad:
        errors.extend(_error(param.location, param.name, m) for m in bad)
    into[param.name] = value if bad else whole_integers(param.validator, value)


def _raw_param(source: Mapping[str, Any], param: Param) -> Any:
    """The text of a parameter that is present in ``source`` (its location's mapping)."""
    if param.array and param.location != "path":
        assert isinstance(source, MultiMapping)
        return [v for item in source.getall(param.name) for v in item.split(",")]
    return source[param.name]


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _coerce(raw: Any, schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "array":
        item = schema.get("items", {})
        return [_coerce(v, item) for v in raw]
    if kind == "integer":
        try:
            number = int(raw)
        except ValueError:
            raise ValueError("must be an integer") from None
        # Every integer a Wharf service stores is a signed 64-bit column: a larger one can name
        # nothing, and would overflow the database driver instead of answering 400.
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise ValueError(f"must be between {_INT64_MIN} and {_INT64_MAX}")
        return number
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            raise ValueError("must be a number") from None
    if kind == "boolean":
        lowered = str(raw).lower()
        if lowered not in ("true", "false"):
            raise ValueError("must be true or false")
        return lowered == "true"
    return raw


async def _body(request: web.Request, op: Operation, errors: list[dict[str, str]]) -> Any:
    # aiohttp counts a declared empty body (Content-Length: 0) as none; of a type the handler
    # reads (a file's bytes, YAML text) it is a body all the same: an empty file is a file.
    has_body = request.body_exists or (
        request.content_length == 0 and request.content_type in op.other_body_types
    )
    if not has_body:
        if op.body_required and not op.multipart_required:
            errors.append(_error("body", "body", "is required"))
        return None
    if op.json_body is None:
        return None  # a non-JSON body (multipart, YAML) is read by the handler
    media = request.content_type
    if not (media in JSON_TYPES or media.endswith("+json")):
        if media in op.other_body_types:
            return None  # read by the handler
        taken = " or ".join((*JSON_TYPES, *op.other_body_types))
        raise UnsupportedMediaType(f"Content-Type must be {taken}")
    floats: list[float] = []  # a body without whole floats (nearly all) is never walked again
    try:
        body = documents.load_json(await request.read(), parse_float=_noted(floats))
    except ValueError as exc:
        errors.append(_error("body", "body", str(exc)))
        return None
    found = schema_errors(op.json_body, body)
    errors.extend(found)
    return whole_integers(op.json_body, body) if floats and not found else body


def check_form(op: Operation, names: Collection[str]) -> None:
    """A multipart form's part names against the operation: every required part is there, and,
    where the form's schema is closed, no part it does not name (a misspelt part is not ignored)."""
    errors = [
        _error("body", n, "part is required") for n in op.multipart_required if n not in names
    ]
    allowed = op.multipart_parts
    if allowed is not None:
        known = "is not a known part; the form takes " + ", ".join(sorted(allowed))
        errors += [_error("body", n, known) for n in names if n not in allowed]
    if errors:
        raise ValidationFailed(errors)


# The spec's "integer" is JSON Schema's: any number with no fractional part, so 440.0 is valid where
# an integer is asked for. Python keeps it a float, which the code behind would trip over (a
# TypeError, a 500); whole_integers hands such values on as ints, decided here for every door.
_STRICT_INTEGERS = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool)
    ),
)


def whole_integers(validator: jsonschema.protocols.Validator, value: Any) -> Any:
    """``value`` (valid against ``validator``'s schema) with every whole-number float the schema
    types as an integer made an ``int``, in place; the value itself when it holds no float."""
    if not _holds_whole_float(value):
        return value
    strict = _STRICT_INTEGERS(validator.schema, registry=validator._registry)  # type: ignore[attr-defined]
    paths = [path for err in strict.iter_errors(value) for path in _integer_paths(err)]
    for path in paths:
        if not path:
            return int(value)
        *parents, last = path
        container = value
        for step in parents:
            container = container[step]
        container[last] = int(container[last])
    return value


def _noted(whole: list[float]) -> Callable[[str], float]:
    """A ``parse_float`` that also keeps the whole-number floats it reads in ``whole``."""

    def parse(text: str) -> float:
        value = float(text)
        if value.is_integer():
            whole.append(value)
        return value

    return parse


def _holds_whole_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_holds_whole_float(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_whole_float(v) for v in value)
    return False


def _integer_paths(err: jsonschema.ValidationError) -> list[list[str | int]]:
    """Where ``err`` (of the strict validator) and its sub-errors found a whole float for an
    integer."""
    kinds = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
    found: list[list[str | int]] = []
    if (
        err.validator == "type"
        and "integer" in kinds
        and isinstance(err.instance, float)
        and err.instance.is_integer()
    ):
        found.append(list(err.absolute_path))
    for sub in err.context or ():
        found += _integer_paths(sub)
    return found


def schema_errors(
    validator: jsonschema.protocols.Validator, value: Any, *, prefix: str = ""
) -> list[dict[str, str]]:
    """``errors`` entries for ``value``: the body, or the body part named ``prefix``."""
    found = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
    return [_error("body", _in_part(prefix, _field(e)), _message(e)) for e in found]


def _in_part(part: str, field: str) -> str:
    """``field`` (``body``: the whole) of the multipart body part ``part``, or of the body."""
    return f"{part}.{field}".removesuffix(".body") if part else field


def _error(location: str, field: str, message: str) -> dict[str, str]:
    return {"in": location, "field": field, "message": message}


def _field(err: jsonschema.ValidationError) -> str:
    instance: Any = err.instance
    rule: Any = err.validator_value
    schema: Any = err.schema
    parts = [str(p) if isinstance(p, str) else f"[{p}]" for p in err.absolute_path]
    if err.validator == "required":
        missing = next((p for p in rule if p not in instance), "")
        parts.append(missing)
    elif "propertyNames" in err.schema_path and isinstance(instance, str):
        parts.append(instance[:200])  # the key that breaks the rule, as the field
    elif err.validator == "additionalProperties" and isinstance(instance, Mapping):
        allowed = schema.get("properties", {})
        extra = [k for k in instance if k not in allowed]
        parts.append(extra[0] if extra else "")
    return ".".join(parts).replace(".[", "[") or "body"


def _pattern_message(pattern: str, schema: Mapping[str, Any]) -> str:
    title = schema.get("title")
    return f"must be {title}" if isinstance(title, str) else f"must match {pattern}"


def _message(err: jsonschema.ValidationError) -> str:
    """A message naming the rule, never the rejected value. A pattern is named by its schema's
    ``title`` where it has one (a generated pattern is long)."""
    value: Any = err.validator_value
    schema: Any = err.schema
    messages: dict[str, Callable[[], str]] = {
        "required": lambda: "is required",
        "type": lambda: (
            f"must be of type {value if isinstance(value, str) else ' or '.join(value)}"
        ),
        "enum": lambda: "must be one of " + ", ".join(map(str, value)),
        "const": lambda: f"must be {value}",
        "minimum": lambda: f"must be >= {value}",
        "maximum": lambda: f"must be <= {value}",
        "exclusiveMinimum": lambda: f"must be > {value}",
        "exclusiveMaximum": lambda: f"must be < {value}",
        "minLength": lambda: f"must be at least {value} characters",
        "maxLength": lambda: f"must be at most {value} characters",
        "pattern": lambda: _pattern_message(value, schema),
        "format": lambda: f"must be a valid {value}",
        "minItems": lambda: f"must have at least {value} items",
        "maxItems": lambda: f"must have at most {value} items",
        "additionalProperties": lambda: "is not a known field",
        "anyOf": lambda: _alternatives_message(err),
        "oneOf": lambda: _alternatives_message(err),
    }
    return messages.get(str(err.validator), lambda: "is invalid")()


def _alternatives_message(err: jsonschema.ValidationError) -> str:
    """A value that fits none of ``anyOf``/``oneOf``'s schemas, in the words of the one it came
    closest to: a value of a type none takes names every type taken ("must be of type string or
    null"); a value of a type some take names what that one refuses (its pattern, its length)."""
    of_type = [e for e in err.context if e.validator == "type" and not e.relative_path]
    rest = [e for e in err.context if e not in of_type]
    if of_type and not rest:
        taken: list[str] = []
        for e in of_type:
            value: Any = e.validator_value
            taken += [value] if isinstance(value, str) else value
        return "must be of type " + " or ".join(dict.fromkeys(taken))
    best = jsonschema.exceptions.best_match(rest)
    return _message(best) if best is not None else "is invalid"


def validation(spec: Spec) -> Guard:
    """Validation of each route's operation in ``spec`` (its route name is the operationId),
    made for the route when the app starts; nothing for the routes outside the spec."""

    def for_route(route: web.AbstractRoute | None) -> Middleware | None:
        op = spec.operations.get(route.name) if route is not None and route.name else None
        if op is None:
            return None
        return _validating(op) if op.memo is None else _recalling(op, op.memo)

    return for_route


def _validating(op: Operation) -> Middleware:
    @web.middleware
    async def validate(request: web.Request, handler: Handler) -> web.StreamResponse:
        request[OPERATION] = op
        request[VALIDATED] = await validate_request(request, op)
        return await handler(request)

    return validate


def _recalling(op: Operation, memo: dict[Hashable, Validated]) -> Middleware:
    """Validation of a memoised operation: a request seen before is not a coroutine of its own
    (it hands over the handler's awaitable); the first of its kind is validated and kept."""

    async def first(request: web.Request, handler: Handler, *, key: Hashable) -> web.StreamResponse:
        known = _read_only(await validate_request(request, op))
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        memo[key] = request[VALIDATED] = known
        return await handler(request)

    @web.middleware
    def recall(request: web.Request, handler: Handler) -> Awaitable[web.StreamResponse]:
        request[OPERATION] = op
        key = _memo_key(request, op)
        known = memo.get(key)
        if known is None:
            return first(request, handler, key=key)
        request[VALIDATED] = known
        return handler(request)

    return recall


@web.middleware
async def response_check(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Tests add it innermost (``check_responses``): each JSON answer of an operation must match
    the spec's schema for its status."""
    op = request.get(OPERATION)
    if op is not None and op.events:
        request[sse.EVENT_CHECK] = functools.partial(check_event, op)
    response = await handler(request)
    if op is not None:
        check_response(op, response)
    return response


def check_event(op: Operation, event: str | None, data: str) -> None:
    """Tests turn this on: an event a stream writes must be one its spec names, its ``data``
    JSON of the schema given for it."""
    name = event or "message"
    if name not in op.events:
        raise AssertionError(f"{op.operation_id}: event {name!r} is not in the spec")
    validator = op.events[name]
    if validator is not None:
        _assert_valid(validator, json.loads(data), f"{op.operation_id} event {name!r}")


def check_responses(app: web.Application) -> None:
    """Check every answer of ``app``'s operations against the spec (tests turn this on)."""
    app.middlewares.append(response_check)


def _memo_key(request: web.Request, op: Operation) -> Hashable:
    """All a memoised operation's validation reads: the request target as sent, which fixes the
    path's values and the query string (decoding it first could merge two that parse apart), and
    the header parameters (an operation without any is keyed by the target alone)."""
    if not op.header_params:
        return request.raw_path
    headers = request.headers
    return (request.raw_path, *(headers.get(name) for name in op.header_params))


def _read_only(found: Validated) -> Validated:
    """What a memo hands to many requests: no handler may change it for the next one."""
    return Validated(
        path=MappingProxyType(dict(found.path)),
        query=MappingProxyType(dict(found.query)),
        headers=MappingProxyType(dict(found.headers)),
        body=found.body,
    )


def check_response(op: Operation, response: web.StreamResponse) -> None:
    """Tests turn this on: a JSON response must match the spec's schema for its status."""
    if not isinstance(response, web.Response) or "json" not in (response.content_type or ""):
        return
    validator = op.responses.get(str(response.status)) or op.responses.get("default")
    declared = str(response.status) in op.statuses or "default" in op.statuses
    if not declared and response.status < 400:
        raise AssertionError(f"{op.operation_id}: status {response.status} is not in the spec")
    if validator is None or response.body is None:
        return
    assert isinstance(response.body, bytes)
    _assert_valid(
        validator, json.loads(response.body), f"{op.operation_id} {response.status} response"
    )


def _assert_valid(validator: jsonschema.protocols.Validator, value: Any, what: str) -> None:
    problems = [f"{_field(e)}: {_message(e)}" for e in validator.iter_errors(value)]
    if problems:
        raise AssertionError(f"{what}: {problems}")


def check_parity(routes: list[tuple[str, str, str]], spec: Spec) -> list[str]:
    """Drift between routes ``(method, relative path, name)`` and spec operations, both ways."""
    problems = []
    seen = set()
    for method, path, name in routes:
        op = spec.operations.get(name)
        if op is None:
            problems.append(
                f"route {method} {path} ({name or 'unnamed'}) has no operation in the spec"
            )
        elif (op.method, op.path) != (method, path):
            problems.append(f"route {name} is {method} {path}; the spec says {op.method} {op.path}")
        seen.add(name)
    for op_id, op in spec.operations.items():
        if op_id not in seen:
            problems.append(f"operation {op_id} ({op.method} {op.path}) has no route")
    return problems
