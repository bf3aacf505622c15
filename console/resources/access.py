"""Whether a person may do something on a cluster, as the cluster itself answers it.

What a console shares between people (one upstream watch per cluster, kind and namespace, opened
with the console's own identity) cannot be asked of the cluster as each person; instead the console
asks the cluster a SubjectAccessReview for that person (user, groups, verb, resource, namespace)
before handing them anything, and keeps the answer for ``ttl_s`` per (cluster client, identity,
verb, resource, namespace). Identical questions asked at once share one review (``Flights``). A
review the cluster cannot answer is a refusal (``cluster_error``), never a yes.

Reads across namespaces (counts, search) made for a person ask :meth:`AccessReviews.scopes`:
the whole cluster when the person may list a kind everywhere, else each namespace they may list
it in, so they see what the cluster would show them and nothing else. Which namespaces those are
is read from one SelfSubjectRulesReview per namespace, made as the person (impersonated) and kept
like the answers above: every kind of a count is decided from the same few rules, instead of one
SubjectAccessReview per kind and namespace. A rules review can only say yes for sure: where it is
``incomplete`` (an authorizer that cannot list its rules, such as a webhook) and says no, or where
the cluster refuses it, that namespace is asked by a SubjectAccessReview as before.
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

import attrs

from common.errors import WharfError
from console.identity import Identity
from console.resources.catalog import Kind
from console.resources.flights import Flights
from console.resources.kubeapi import KubeApi, path_of, refused

REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"
#: Default seconds an answer is reused (``console.security.access-review-ttl``).
TTL_S = 10.0
#: Answers kept per cluster before the expired ones are swept.
SWEEP_AT = 4096


@attrs.frozen
class Question:
    user: str
    groups: tuple[str, ...]
    verb: str
    group: str
    resource: str
    namespace: str


@attrs.frozen
class Answer:
    allowed: bool
    reason: str
    at: float


@attrs.frozen
class Rule:
    verbs: frozenset[str]
    groups: frozenset[str]
    resources: frozenset[str]

    def grants(self, verb: str, group: str, resource: str) -> bool:
        return (
            bool({verb, "*"} & self.verbs)
            and bool({group, "*"} & self.groups)
            and bool({resource, "*"} & self.resources)
        )


@attrs.frozen
class Rules:
    """What a person may do in one namespace, as a SelfSubjectRulesReview listed it."""

    rules: tuple[Rule, ...]
    #: False when an authorizer could not list its rules: a missing rule is then no answer.
    complete: bool
    at: float

    def allows(self, verb: str, group: str, resource: str) -> bool | None:
        """True if a rule grants it; False if none does and the list is complete; else None."""
        if any(rule.grants(verb, group, resource) for rule in self.rules):
            return True
        return False if self.complete else None

    @classmethod
    def from_status(cls, status: dict[str, Any], at: float) -> Rules:
        rules = []
        for raw in status.get("resourceRules") or []:
            if not isinstance(raw, dict) or raw.get("resourceNames"):
                continue  # a rule limited to named objects never grants a whole list
            fields = [frozenset(str(x) for x in raw.get(k) or []) for k in _RULE_FIELDS]
            rules.append(Rule(*fields))
        return cls(tuple(rules), status.get("incomplete") is not True, at)


_RULE_FIELDS = ("verbs", "apiGroups", "resources")


class _Dated(Protocol):
    @property
    def at(self) -> float: ...


K = TypeVar("K")
D = TypeVar("D", bound=_Dated)


class AccessReviews:
    def __init__(self, *, ttl_s: float = TTL_S, clock: Any = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.clock = clock
        #: client -> question -> answer (a client that is closed and dropped takes its answers).
        self._answers: weakref.WeakKeyDictionary[Any, dict[Question, Answer]] = (
            weakref.WeakKeyDictionary()
        )
        self._rules: weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], Rules]] = (
            weakref.WeakKeyDictionary()
        )
        self._flights = Flights()
        #: Reviews sent to clusters (the rest were answered from what was kept).
        self.asked = 0
        #: Rules reviews sent to clusters.
        self.rules_asked = 0

    async def require(
        self,
        api: KubeApi,
        identity: Identity,
        verbs: Sequence[str],
        *,
        group: str,
        resource: str,
        namespace: str | None,
    ) -> None:
        """Raise the cluster's 403 (``cluster-refused``) unless ``identity`` may do every one of
        ``verbs``; the reviews are created with the console's own identity."""
        api = api.own()
        for verb in verbs:
            question = Question(
                identity.user, identity.groups, verb, group, resource, namespace or ""
            )
            answer = await self.answer(api, question)
            if not answer.allowed:
                raise refused(403, json.dumps({"message": _forbidden(question, answer)}).encode())

    async def answer(self, api: KubeApi, question: Question) -> Answer:
        kept = self._answers.setdefault(api.client, {})
        found = self._fresh(kept, question)
        if found is not None:
            return found

        async def review() -> Answer:
            asked_at = self.clock()
            self.asked += 1
            body = await api.send("POST", REVIEWS, _review(question))
            status = body.get("status") if isinstance(body, dict) else None
            status = status if isinstance(status, dict) else {}
            reason = status.get("reason")
            made = Answer(
                status.get("allowed") is True, reason if isinstance(reason, str) else "", asked_at
            )
            return self._keep(kept, question, made)

        return await self._flights.run((id(api.client), question), review, join_running=True)

    async def scopes(self, api: KubeApi, kind: Kind, namespace: str | None) -> list[str | None]:
        """Where ``api`` may list ``kind`` for a request about ``namespace`` (None: every one):
        ``[namespace]`` as asked unless ``api`` acts for a person who may not list ``kind``
        cluster-wide; then the namespaces they may list it in (perhaps none)."""
        person = api.acting_as
        if person is None or namespace is not None or not kind.namespaced:
            return [namespace]
        own = api.own()

        def may_list(where: str) -> Question:
            return Question(person.user, person.groups, "list", kind.group, kind.resource, where)

        if (await self.answer(own, may_list(""))).allowed:
            return [None]
        listed = await own.list_all(path_of("", "v1", "namespaces"))
        names = [n for i in listed if (n := str((i.get("metadata") or {}).get("name") or ""))]
        rules = await asyncio.gather(*(self.rules_in(api, name) for name in names))
        verdicts = [
            found.allows("list", kind.group, kind.resource) if found is not None else None
            for found in rules
        ]
        unsure = [name for name, verdict in zip(names, verdicts, strict=True) if verdict is None]
        answers = await asyncio.gather(*(self.answer(own, may_list(name)) for name in unsure))
        allowed = {name for name, answer in zip(unsure, answers, strict=True) if answer.allowed}
        allowed.update(name for name, verdict in zip(names, verdicts, strict=True) if verdict)
        return [name for name in names if name in allowed]

    async def rules_in(self, api: KubeApi, namespace: str) -> Rules | None:
        """What the person ``api`` acts for may do in ``namespace`` (a SelfSubjectRulesReview
        made as them, kept ``ttl_s``); None when the cluster would not say."""
        person = api.acting_as
        assert person is not None
        kept = self._rules.setdefault(api.client, {})
        key = (person.user, *person.groups, "\0", namespace)
        found = self._fresh(kept, key)
        if found is not None:
            return found

        async def review() -> Rules | None:
            asked_at = self.clock()
            self.rules_asked += 1
            body = {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectRulesReview",
                "spec": {"namespace": namespace},
            }
            try:
                answer = await api.send("POST", RULES_REVIEWS, body)
            except WharfError:
                return None  # refused or failed: the namespace is asked the other way
            status = answer.get("status") if isinstance(answer, dict) else None
            made = Rules.from_status(status if isinstance(status, dict) else {}, asked_at)
            return self._keep(kept, key, made)

        return await self._flights.run((id(api.client), "rules", key), review, join_running=True)

    def _fresh(self, kept: dict[K, D], key: K) -> D | None:
        """What ``kept`` holds for ``key`` if it is younger than ``ttl_s``."""
        found = kept.get(key)
        return found if found is not None and self.clock() - found.at < self.ttl_s else None

    def _keep(self, kept: dict[K, D], key: K, made: D) -> D:
        """``made`` kept under ``key``; once ``SWEEP_AT`` are kept, the expired ones go first."""
        if len(kept) >= SWEEP_AT:
            now = self.clock()
            for old in [k for k, v in kept.items() if now - v.at >= self.ttl_s]:
                del kept[old]
        kept[key] = made
        return made

    async def close(self) -> None:
        await self._flights.close()


def _review(question: Question) -> dict[str, Any]:
    attributes = {"verb": question.verb, "group": question.group, "resource": question.resource}
    if question.namespace:
        attributes["namespace"] = question.namespace
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": question.user,
            "groups": list(question.groups),
            "resourceAttributes": attributes,
        },
    }


def _forbidden(question: Question, answer: Answer) -> str:
    """The API server's own wording of a refusal, with the review's reason when it gave one."""
    group = question.group
    where = (
        f' in the namespace "{question.namespace}"'
        if question.namespace
        else " at the cluster scope"
    )
    text = (
        f'{question.resource} is forbidden: User "{question.user}" cannot {question.verb} '
        f'resource "{question.resource}" in API group "{group}"{where}'
    )
    return f"{text}: {answer.reason}" if answer.reason else text
