"""Field errors as apimachinery's ``field.ErrorList`` words them, and the name and value syntaxes.

A cause is ``{"reason", "message", "field"}``; the message is the error body the real server writes
(``Required value``, ``Invalid value: "x": ...``, ``Unsupported value: ...``), and values are shown
as Go's ``fmt`` shows them (strings quoted, numbers bare, structs in ``%#v`` form where the real
server passes a struct). This module holds wording only: no rule about any kind lives here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

Obj = dict[str, Any]
Cause = dict[str, str]


class Go(str):
    """A value already rendered the way Go's ``%#v`` prints it (a struct, a typed slice)."""


def shown(value: Any) -> str:
    """A bad value as ``field.Error.ErrorBody`` prints it."""
    if isinstance(value, Go):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def int_or_string(value: Any) -> Go:
    """An ``intstr.IntOrString`` (which has no value-receiver ``String()``) in ``%#v`` form."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Go(f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}')
    return Go(f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{shown(str(value))}}}")


def required(field: str, detail: str = "") -> Cause:
    message = "Required value" + (f": {detail}" if detail else "")
    return {"reason": "FieldValueRequired", "message": message, "field": field}


def invalid(field: str, value: Any, detail: str) -> Cause:
    return {
        "reason": "FieldValueInvalid",
        "message": f"Invalid value: {shown(value)}: {detail}",
        "field": field,
    }


def not_supported(field: str, value: Any, allowed: Iterable[str]) -> Cause:
    choices = ", ".join(json.dumps(a) for a in allowed)
    return {
        "reason": "FieldValueNotSupported",
        "message": f"Unsupported value: {shown(value)}: supported values: {choices}",
        "field": field,
    }


def duplicate(field: str, value: Any) -> Cause:
    return {
        "reason": "FieldValueDuplicate",
        "message": f"Duplicate value: {shown(value)}",
        "field": field,
    }


def not_found(field: str, value: Any) -> Cause:
    return {"reason": "FieldValueNotFound", "message": f"Not found: {shown(value)}", "field": field}


def forbidden(field: str, detail: str) -> Cause:
    return {"reason": "FieldValueForbidden", "message": f"Forbidden: {detail}", "field": field}


def invalid_each(field: str, value: Any, messages: list[str]) -> list[Cause]:
    return [invalid(field, value, m) for m in messages]


def get(obj: Any, *path: str) -> Any:
    """``obj[path[0]][path[1]]...``, or None where a step is missing or not an object."""
    cur = obj
    for p in path:
        cur = cur.get(p) if isinstance(cur, dict) else None
    return cur


def items(value: Any) -> list[Any]:
    """A list field's items (a missing or mistyped list is empty, as decoding leaves it)."""
    return value if isinstance(value, list) else []


def mapping(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


# -- syntaxes (k8s.io/apimachinery/pkg/util/validation) ------------------------------------------
_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_QUALIFIED_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_FMT + ")?"
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_RE = re.compile(f"^{_LABEL_FMT}$")
_SUBDOMAIN_RE = re.compile(f"^{_SUBDOMAIN_FMT}$")
_QUALIFIED_RE = re.compile(f"^{_QUALIFIED_FMT}$")
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_DNS1035_RE = re.compile(f"^{_DNS1035_FMT}$")
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_QUALIFIED_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: the message, its examples and the regex (double space kept)."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown_examples = "".join((" or " if i else "") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown_examples}regex used for validation is '{fmt}')"


def max_len(n: int) -> str:
    return f"must be no more than {n} characters"


_LABEL_ERROR = regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character",
    _LABEL_FMT,
    "my-name",
    "123-abc",
)
_SUBDOMAIN_ERROR = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character",
    _SUBDOMAIN_FMT,
    "example.com",
)
_DNS1035_ERROR = regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character",
    _DNS1035_FMT,
    "my-name",
    "abc-123",
)
_QUALIFIED_ERROR = regex_error(_QUALIFIED_MSG, _QUALIFIED_FMT, "MyName", "my.name", "123-abc")
_LABEL_VALUE_ERROR = regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character",
    _LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)


def _checked(value: str, limit: int, pattern: re.Pattern[str], error: str) -> list[str]:
    """The two checks of every name syntax, in apimachinery's order: the length, the pattern."""
    errs = [max_len(limit)] if len(value) > limit else []
    if not pattern.match(value):
        errs.append(error)
    return errs


def dns1123_label(value: str) -> list[str]:
    error = "must not contain dots" if _SUBDOMAIN_RE.match(value) else _LABEL_ERROR
    return _checked(value, 63, _LABEL_RE, error)


def dns1123_subdomain(value: str) -> list[str]:
    return _checked(value, 253, _SUBDOMAIN_RE, _SUBDOMAIN_ERROR)


def dns1035_label(value: str) -> list[str]:
    return _checked(value, 63, _DNS1035_RE, _DNS1035_ERROR)


def qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: an optional DNS subdomain prefix and ``/``, then a name part."""
    parts = value.split("/")
    errs: list[str] = []
    if len(parts) > 2:
        return [
            "a qualified name "
            + _QUALIFIED_ERROR
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    return errs + ["name part " + m for m in _checked(name, 63, _QUALIFIED_RE, _QUALIFIED_ERROR)]


def label_value(value: str) -> list[str]:
    return _checked(value, 63, _LABEL_VALUE_RE, _LABEL_VALUE_ERROR)


def port_name(value: str) -> list[str]:
    """``IsValidPortName``: an IANA_SVC_NAME (at most 15 characters, a letter, no ``--``)."""
    errs = [max_len(15)] if len(value) > 15 else []
    if not _PORT_NAME_CHARS.match(value):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", value):
        errs.append("must contain at least one letter (a-z)")
    if "--" in value:
        errs.append("must not contain consecutive hyphens")
    if value.startswith("-") or value.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


PORT_RANGE = "must be between 1 and 65535, inclusive"


def port_number(value: Any) -> list[str]:
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 < value < 65536
    return [] if ok else [PORT_RANGE]


def port_num_or_name(value: Any, path: str) -> list[Cause]:
    """``ValidatePortNumOrName``: a number in range or an IANA port name."""
    if isinstance(value, str):
        return invalid_each(path, value, port_name(value))
    number = value if isinstance(value, int) else 0
    return invalid_each(path, number, port_number(number))


def labels(value: Any, path: str) -> list[Cause]:
    """``ValidateLabels``: qualified-name keys and label values, all reported on ``path``."""
    causes: list[Cause] = []
    for key, val in mapping(value).items():
        causes += invalid_each(path, str(key), qualified_name(str(key)))
        causes += invalid_each(path, val, label_value(val if isinstance(val, str) else str(val)))
    return causes


def annotation_keys(value: Any, path: str) -> list[Cause]:
    """``ValidateAnnotations``' key rule: a qualified name, case ignored."""
    causes: list[Cause] = []
    for key in mapping(value):
        causes += invalid_each(path, str(key), qualified_name(str(key).lower()))
    return causes


def name(obj: Any, key: str, path: str, syntax: Callable[[str], list[str]]) -> list[Cause]:
    """A required name field in ``syntax`` (a DNS label, a subdomain...)."""
    value = get(obj, key)
    if not value:
        return [required(f"{path}.{key}")]
    return invalid_each(f"{path}.{key}", value, syntax(str(value)))


NON_NEGATIVE = "must be greater than or equal to 0"


def non_negative(obj: Any, key: str, path: str) -> list[Cause]:
    value = get(obj, key)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return [invalid(f"{path}.{key}", value, NON_NEGATIVE)]
    return []


def one_of(obj: Any, key: str, path: str, allowed: tuple[str, ...]) -> list[Cause]:
    """An enum field: when set, one of ``allowed`` (listed as the real server lists them)."""
    value = get(obj, key)
    if value is None or value in allowed:
        return []
    return [not_supported(f"{path}.{key}" if path else key, value, allowed)]


def label_selector(value: Any, path: str) -> list[Cause]:
    """``ValidateLabelSelector``: matchLabels as labels, matchExpressions' operators and values."""
    if not isinstance(value, dict):
        return []
    causes = labels(value.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(items(value.get("matchExpressions"))):
        at = f"{path}.matchExpressions[{i}]"
        op, values = get(expr, "operator"), items(get(expr, "values"))
        if op in ("In", "NotIn"):
            if not values:
                causes.append(
                    required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'")
                )
        elif op in ("Exists", "DoesNotExist"):
            if values:
                causes.append(
                    forbidden(
                        f"{at}.values",
                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                    )
                )
        else:
            causes.append(invalid(f"{at}.operator", op or "", "not a valid selector operator"))
        key = str(get(expr, "key") or "")
        causes += invalid_each(f"{at}.key", key, qualified_name(key))
        for j, v in enumerate(values):
            causes += invalid_each(f"{at}.values[{j}]", v, label_value(str(v)))
    return causes
