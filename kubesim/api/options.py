"""A request's options (``CreateOptions``, ``UpdateOptions``, ``PatchOptions``,
``DeleteOptions``, a list's ``ListOptions``) checked as apimachinery's validation checks them.

The handlers (``endpoints/handlers/create.go``, ``update.go``, ``patch.go``, ``delete.go``) run
these checks before they decode the body or look the object up, and refuse with one 422 naming
the options kind (``PatchOptions.meta.k8s.io "" is invalid: ...``) and every bad field. A value
that does not parse at all (``force=maybe``) is the parameter codec's 400, before that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesim.api.validation import field
from kubesim.machinery.status import bad_request, invalid

CREATE = "CreateOptions"
UPDATE = "UpdateOptions"
PATCH = "PatchOptions"
DELETE = "DeleteOptions"
LIST = "ListOptions"

FIELD_MANAGER_MAX = 128
#: ``allowedFieldValidationValues`` as ``sets.List`` orders them.
_FIELD_VALIDATION = ("", "Ignore", "Strict", "Warn")
_PROPAGATION = ("Foreground", "Background", "Orphan")


def check_write(
    kind: str, query: Mapping[str, str], dry_run: Sequence[str], *, apply: bool = False
) -> None:
    """``ValidateCreateOptions``, ``ValidateUpdateOptions`` or ``ValidatePatchOptions``."""
    causes: list[field.Cause] = []
    manager = query.get("fieldManager", "")
    if kind == PATCH and not apply and "force" in query:
        causes.append(field.forbidden("force", "may not be specified for non-apply patch"))
    if kind == PATCH and apply and not manager:
        causes.append(field.required("fieldManager", "is required for apply patch"))
    causes += _field_manager(manager)
    causes += _dry_run(dry_run)
    validation = query.get("fieldValidation", "")
    if validation not in _FIELD_VALIDATION:
        causes.append(field.not_supported("fieldValidation", validation, _FIELD_VALIDATION))
    _refuse(kind, causes)


def check_delete(options: Mapping[str, Any]) -> None:
    """``ValidateDeleteOptions`` over the body and query options together."""
    causes: list[field.Cause] = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        causes.append(
            field.invalid(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    if policy is not None and policy not in _PROPAGATION:
        causes.append(field.not_supported("propagationPolicy", policy, (*_PROPAGATION, "nil")))
    dry_run = options.get("dryRun") or []
    causes += _dry_run(dry_run if isinstance(dry_run, list) else [dry_run])
    _refuse(DELETE, causes)


def check_list(query: Mapping[str, str]) -> None:
    """``ValidateListOptions`` (``apis/meta/internalversion/validation``) for a list, not a
    watch: ``resourceVersionMatch`` needs a ``resourceVersion`` and no ``continue``."""
    causes: list[field.Cause] = []
    match, version = query.get("resourceVersionMatch", ""), query.get("resourceVersion", "")
    if match:
        if not version:
            causes.append(field.forbidden("resourceVersionMatch", f"{_RV_MATCH} unless {_RV}"))
        if query.get("continue"):
            causes.append(
                field.forbidden("resourceVersionMatch", f"{_RV_MATCH} when continue is provided")
            )
        if match not in ("Exact", "NotOlderThan"):
            causes.append(
                field.not_supported("resourceVersionMatch", match, ("Exact", "NotOlderThan", ""))
            )
        if match == "Exact" and version == "0":
            causes.append(
                field.forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if "sendInitialEvents" in query:
        causes.append(
            field.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
        )
    _refuse(LIST, causes)


def check_watch(query: Mapping[str, str], *, send_initial: bool, bookmarks: bool) -> None:
    """The watch half of ``ValidateListOptions``: ``sendInitialEvents`` needs
    ``resourceVersionMatch=NotOlderThan`` (and bookmarks), which needs ``sendInitialEvents``."""
    causes: list[field.Cause] = []
    match = query.get("resourceVersionMatch", "")
    if "sendInitialEvents" in query:
        if match != "NotOlderThan":
            causes.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                )
            )
        if send_initial and not bookmarks:
            causes.append(
                field.forbidden(
                    "allowWatchBookmarks",
                    "sendInitialEvents requires setting allowWatchBookmarks to true",
                )
            )
    elif match:
        causes.append(
            field.forbidden(
                "resourceVersionMatch",
                f"{_RV_MATCH} for watch unless sendInitialEvents is provided",
            )
        )
    _refuse(LIST, causes)


def resource_version(query: Mapping[str, str]) -> str:
    """The ``resourceVersion`` asked for; one that is not a number is refused in the words of
    the storage's ``APIObjectVersioner.ParseResourceVersion``."""
    version = query.get("resourceVersion", "")
    if version and not version.isdigit():
        raise bad_request(
            f'resourceVersion: Invalid value: "{version}": strconv.ParseUint: parsing '
            f'"{version}": invalid syntax'
        )
    return version


_RV_MATCH = "resourceVersionMatch is forbidden"
_RV = "resourceVersion is provided"


def _field_manager(manager: str) -> list[field.Cause]:
    """``ValidateFieldManager``: at most 128 bytes, every character printable."""
    causes: list[field.Cause] = []
    if len(manager.encode()) > FIELD_MANAGER_MAX:
        causes.append(
            {
                "reason": "FieldValueTooLong",
                "message": f"Too long: may not be more than {FIELD_MANAGER_MAX} bytes",
                "field": "fieldManager",
            }
        )
    for i, char in enumerate(manager):
        if not char.isprintable():
            at = len(manager[:i].encode())
            causes.append(
                field.invalid(
                    "fieldManager",
                    manager,
                    f"invalid character U+{ord(char):04X} (at position {at})",
                )
            )
    return causes


def _dry_run(values: Sequence[Any]) -> list[field.Cause]:
    """``ValidateDryRun``: only ``All``; the bad value is the whole list in ``%#v`` form."""
    if all(v == "All" for v in values):
        return []
    shown = ", ".join(field.shown(str(v)) for v in values)
    return [field.not_supported("dryRun", field.Go(f"[]string{{{shown}}}"), ("All",))]


def _refuse(kind: str, causes: list[field.Cause]) -> None:
    if causes:
        raise invalid("meta.k8s.io", kind, "", causes)
