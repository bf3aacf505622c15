"""A project's life in a few ingests, for the read API, page and browser tests.

``shop`` on ``main``: a green start, a failure that a CI retry of the same commit passes (a flip),
a Surefire report whose tests passed on a rerun (in-run flakiness), a new failure with a coverage
drop, and a feature-branch run; plus an ``integration`` flag that must never mix into the unit
trend, and a private project nobody anonymous may see.
"""

from __future__ import annotations

from typing import Any

import attrs

from results import keys
from results.runs import Visibility
from tests.results.support import Report, ingest_ok, junit_xml, lcov, reference
from tests.typing_support import Client

COMMITS = {n: f"{n}{n}{n}{n}{n}{n}{n}0000000000000000000000000000000000" for n in "abcdef"}


def coverage(app_lines: int, *, util: int = 10) -> Report:
    """app.py: ``app_lines`` of 100 lines covered; util.py: ``util`` of 10."""
    return lcov(
        {
            "src/app.py": {n: int(n <= app_lines) for n in range(1, 101)},
            "src/util.py": {n: int(n <= util) for n in range(1, 11)},
        }
    )


@attrs.frozen
class Story:
    project_id: int
    green: int  # main, all pass, 80 % of app.py
    broken: int  # main, commit b: "checkout" fails
    retried: int  # main, commit b again: "checkout" passes (a flip on b)
    surefire: int  # main, commit c: the Surefire rerun report (two flaky, two failing)
    dropped: int  # main, commit d: "refund" fails (new), coverage falls to 60 %
    feature: int  # feature/x, commit e
    integration: int  # main, commit d, flag integration
    private_project: str = "vault"


async def tell(client: Client) -> Story:
    async def run(commit: str, cases: list[tuple[str, str]], **kw: Any) -> int:
        junit = kw.pop("junit", [junit_xml(cases, suite="shop")])
        body = await ingest_ok(client, project="shop", commit=COMMITS[commit], junit=junit, **kw)
        return int(body["runId"])

    ok = [("checkout", "pass"), ("refund", "pass"), ("search", "pass"), ("slow", "skip")]
    green = await run("a", ok, jacoco=[coverage(80)])
    broken = await run("b", [("checkout", "fail"), *ok[1:]], jacoco=[coverage(80)])
    retried = await run("b", ok, jacoco=[coverage(80)])
    surefire = await run(
        "c", [], junit=[reference("junit-surefire3-rerun-flaky.xml")], jacoco=[coverage(80)]
    )
    dropped = await run(
        "d", [("checkout", "pass"), ("refund", "fail"), ("search", "pass")], jacoco=[coverage(60)]
    )
    feature = await run("e", ok, branch="feature/x", jacoco=[coverage(85)])
    integration = await run("d", [("e2e", "pass")], flag="integration")
    await ingest_ok(client, project="vault", commit=COMMITS["f"], junit=[junit_xml(ok)])
    await client.app[keys.ACCOUNTS].set_visibility("vault", Visibility.PRIVATE)
    body = await (await client.get(f"/api/v1/runs/{green}")).json()
    project_id = int(body["projectId"])
    return Story(project_id, green, broken, retried, surefire, dropped, feature, integration)
