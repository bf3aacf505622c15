"""apps/v1 and batch/v1 rules (``apps/validation``, ``batch/validation``): selectors that match
their template, strategies that fit their type, counts that are not negative, cron schedules that
parse, and the pod template's own rules with the restart policies each kind allows.
"""

from __future__ import annotations

from typing import Any

from kubesim.api.validation import field as f
from kubesim.api.validation.podspec import pod_spec
from kubesim.machinery import cron
from kubesim.machinery.selectors import matches_label_selector

Cause = f.Cause
Obj = f.Obj
_PERCENT_MSG = f.regex_error(
    "a valid percent string must be a numeric string followed by an ending '%'",
    "[0-9]+%",
    "1%",
    "93%",
)


def _template(spec: Any, path: str, *, restart: tuple[str, ...]) -> list[Cause]:
    template = f.mapping(f.get(spec, "template"))
    labels = f.get(template, "metadata", "labels")
    causes = f.labels(labels, f"{path}.template.metadata.labels")
    causes += f.annotation_keys(
        f.get(template, "metadata", "annotations"), f"{path}.template.metadata.annotations"
    )
    return causes + pod_spec(template.get("spec"), f"{path}.template.spec", restart=restart)


def _selected(spec: Any, path: str, *, required: bool = True) -> list[Cause]:
    """The selector is valid, non-empty, and matches the template's labels."""
    selector = f.get(spec, "selector")
    if not isinstance(selector, dict):
        return [f.required(f"{path}.selector")] if required else []
    causes = f.label_selector(selector, f"{path}.selector")
    if not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return [*causes, f.required(f"{path}.selector")] if required else causes
    labels = f.get(spec, "template", "metadata", "labels")
    if not causes and not matches_label_selector(selector, f.mapping(labels)):
        causes.append(
            f.invalid(
                f"{path}.template.metadata.labels",
                f.Go(_go_map(f.mapping(labels))),
                "`selector` does not match template `labels`",
            )
        )
    return causes


def _go_map(labels: Obj) -> str:
    """A ``map[string]string`` as ``%#v`` prints it (keys sorted)."""
    body = ", ".join(f"{f.shown(str(k))}:{f.shown(str(v))}" for k, v in sorted(labels.items()))
    return f"map[string]string{{{body}}}"


def int_or_percent(value: Any, path: str) -> list[Cause]:
    """``ValidatePositiveIntOrPercent`` with ``IsNotMoreThan100Percent``."""
    if isinstance(value, str):
        if not value.endswith("%") or not value[:-1].isdigit():
            return [f.invalid(path, f.int_or_string(value), _PERCENT_MSG)]
        if int(value[:-1]) > 100:
            return [f.invalid(path, f.int_or_string(value), "must not be greater than 100%")]
    elif isinstance(value, int) and value < 0:
        return [f.invalid(path, value, f.NON_NEGATIVE)]
    return []


def _is_zero(value: Any) -> bool:
    return value in (0, "0%") or value is None


def _deployment_strategy(spec: Any, path: str) -> list[Cause]:
    strategy = f.mapping(f.get(spec, "strategy"))
    kind, rolling = strategy.get("type"), strategy.get("rollingUpdate")
    at = f"{path}.strategy"
    if kind == "Recreate":
        if rolling is not None:
            return [
                f.forbidden(
                    f"{at}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"
                )
            ]
        return []
    if kind != "RollingUpdate":
        return [f.not_supported(f"{at}.type", kind or "", ("Recreate", "RollingUpdate"))]
    causes: list[Cause] = []
    surge, unavailable = f.get(rolling, "maxSurge"), f.get(rolling, "maxUnavailable")
    causes += int_or_percent(surge, f"{at}.rollingUpdate.maxSurge")
    causes += int_or_percent(unavailable, f"{at}.rollingUpdate.maxUnavailable")
    if not causes and _is_zero(surge) and _is_zero(unavailable) and rolling is not None:
        causes.append(
            f.invalid(
                f"{at}.rollingUpdate.maxUnavailable",
                f.int_or_string(unavailable if unavailable is not None else 0),
                "may not be 0 when `maxSurge` is 0",
            )
        )
    return causes


def _counts(spec: Any, path: str, *keys: str) -> list[Cause]:
    return [c for key in keys for c in f.non_negative(spec, key, path)]


def deployment(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    causes = _counts(spec, "spec", "replicas")
    causes += _selected(spec, "spec")
    causes += _template(spec, "spec", restart=("Always",))
    causes += _deployment_strategy(spec, "spec")
    causes += _counts(spec, "spec", "minReadySeconds", "revisionHistoryLimit")
    deadline, ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds", 0)
    if isinstance(deadline, int) and isinstance(ready, int) and deadline <= ready:
        causes.append(
            f.invalid(
                "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
            )
        )
    return causes


def replicaset(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    causes = _counts(spec, "spec", "replicas", "minReadySeconds")
    causes += _selected(spec, "spec")
    return causes + _template(spec, "spec", restart=("Always",))


def statefulset(obj: Obj) -> list[Cause]:
    """Like the real one, the pod template's spec is not validated (its volumes may come from
    volumeClaimTemplates), only its labels, restart policy and activeDeadlineSeconds."""
    spec = f.mapping(obj.get("spec"))
    causes = f.one_of(spec, "podManagementPolicy", "spec", ("OrderedReady", "Parallel"))
    strategy = f.mapping(spec.get("updateStrategy"))
    if strategy.get("type") == "OnDelete" and strategy.get("rollingUpdate") is not None:
        causes.append(
            f.invalid(
                "spec.updateStrategy.rollingUpdate",
                f.Go("&apps.RollingUpdateStatefulSetStrategy{Partition:0, MaxUnavailable:nil}"),
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        )
    causes += _counts(spec, "spec", "replicas")
    causes += _selected(spec, "spec")
    template = f.mapping(spec.get("template"))
    causes += f.labels(f.get(template, "metadata", "labels"), "spec.template.labels")
    restart = f.get(template, "spec", "restartPolicy")
    if restart is not None and restart != "Always":
        causes.append(f.not_supported("spec.template.spec.restartPolicy", restart, ("Always",)))
    deadline = f.get(template, "spec", "activeDeadlineSeconds")
    if deadline is not None:
        at = "spec.template.spec.activeDeadlineSeconds"
        causes.append(f.invalid(at, deadline, "must not be specified"))
    return causes


def daemonset(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    causes = _selected(spec, "spec")
    causes += _template(spec, "spec", restart=("Always",))
    strategy = f.mapping(spec.get("updateStrategy"))
    kind = strategy.get("type")
    if kind not in (None, "OnDelete", "RollingUpdate"):
        causes.append(
            f.not_supported("spec.updateStrategy.type", kind, ("OnDelete", "RollingUpdate"))
        )
    return causes


_JOB_RESTART = ("OnFailure", "Never")


def job_spec(spec: Any, path: str) -> list[Cause]:
    causes = _counts(spec, path, "parallelism", "completions", "backoffLimit")
    causes += _counts(spec, path, "activeDeadlineSeconds", "ttlSecondsAfterFinished")
    mode = f.get(spec, "completionMode")
    causes += f.one_of(spec, "completionMode", path, ("NonIndexed", "Indexed"))
    if mode == "Indexed" and f.get(spec, "completions") is None:
        causes.append(f.required(f"{path}.completions", "when completion mode is Indexed"))
    if f.get(spec, "manualSelector"):
        causes += _selected(spec, path)
    else:
        causes += f.label_selector(f.get(spec, "selector"), f"{path}.selector")
    return causes + _template(spec, path, restart=_JOB_RESTART)


def job(obj: Obj) -> list[Cause]:
    return job_spec(f.mapping(obj.get("spec")), "spec")


def cronjob(obj: Obj) -> list[Cause]:
    spec = f.mapping(obj.get("spec"))
    causes: list[Cause] = []
    schedule = spec.get("schedule")
    if not schedule:
        causes.append(f.required("spec.schedule"))
    elif "TZ" in str(schedule):
        causes.append(
            f.invalid(
                "spec.schedule",
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            )
        )
    else:
        try:
            cron.parse(str(schedule))
        except ValueError as exc:
            causes.append(f.invalid("spec.schedule", schedule, str(exc)))
    causes += f.one_of(spec, "concurrencyPolicy", "spec", ("Allow", "Forbid", "Replace"))
    causes += _counts(
        spec,
        "spec",
        "startingDeadlineSeconds",
        "successfulJobsHistoryLimit",
        "failedJobsHistoryLimit",
    )
    job_template = f.mapping(f.get(spec, "jobTemplate", "spec"))
    return causes + job_spec(job_template, "spec.jobTemplate.spec")
