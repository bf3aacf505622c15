"""The console's pages in headless Chromium doing what a person does, over a living simulator.

Sign in, open the cluster, find a Deployment by search, open it, scale it to 3 and see the list's
rows follow without a reload, read a pod's logs as new lines arrive, type ``echo hi`` in a
terminal and see ``hi`` (and the exit code at the end), roll back a Helm release, and see a
cluster's 403 as a message. Screenshots of each page land under ``var/test-artifacts/``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, Route, expect

from kubesim import Simulator
from tests.browser import Pages, Visit
from tests.console.helm_support import chart_archives, chart_repo, helm_console
from tests.console.resources_support import (
    create,
    deployment,
    eventually,
    fresh_namespace,
    kube_in_new_namespace,
    seeded_namespace,
)
from tests.console.support import ADMIN, ADMIN_PASSWORD, ADMIN_USER
from tests.typing_support import Client

__all__ = ["chart_archives", "chart_repo", "helm_console"]

ALPHA = "/api/v1/clusters/alpha"
#: Prints a numbered line three times a second: the logs page must show new ones arriving.
TICKER = 'i=0; while true; do i=$((i+1)); echo "tick $i"; sleep 0.3; done'


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    """``alpha`` alive, with a user ``nobody`` whom RBAC grants nothing (context ``alpha-nobody``:
    every read there is the cluster's 403)."""
    directory = tmp_path_factory.mktemp("sim-alpha")
    with Simulator(directory, context="alpha", nodes=1, users={"nobody": ()}) as live:
        yield live


def ticking(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    container = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", TICKER]}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [container],
                                           # a shell PID 1 ignores SIGTERM: a scaled-down pod
                                           # would stay Terminating for the default 30 s
                                           "terminationGracePeriodSeconds": 1}}}}  # fmt: skip


SETTINGS = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
            "data": {"colour": "blue"}}  # fmt: skip


@pytest.fixture(scope="module")
def shop(sim: Simulator) -> str:
    """A namespace with the Deployment ``storefront`` (one pod printing ticks) and the ConfigMap
    ``settings``."""
    return seeded_namespace(sim, "shop", ticking("storefront", 1), SETTINGS)


#: Whether a row of the terminal holds exactly the argument (output, not the echoed command).
ROW_IS = """text => [...document.querySelectorAll('#terminal .xterm-rows > div')]
  .some(row => row.textContent.trim() === text)"""
#: A paste of the argument into the terminal, as the browser delivers one.
PASTE = """text => {
  const data = new DataTransfer();
  data.setData('text/plain', text);
  document.querySelector('#terminal textarea')
    .dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
}"""


async def sign_in(page: Page, base: str) -> None:
    await page.goto(base + "/login")
    await page.fill("#username", ADMIN_USER)
    await page.fill("#password", ADMIN_PASSWORD)
    await page.click("button[type=submit]")
    await page.wait_for_url(base + "/")


async def pick_namespace(page: Page, namespace: str) -> None:
    await expect(page.locator(f"#namespace option[value='{namespace}']")).to_have_count(1)
    await page.select_option("#namespace", namespace)


#: Form controls without a label, buttons and links without a name, and a value shown as
#: "[object ...]" instead of its text (none may be).
DEFECTS = """() => [...document.querySelectorAll('input, select, textarea, button, a[href]')]
  .filter(e => e.offsetParent !== null && !e.closest('.xterm'))
  .filter(e => ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.tagName)
    ? !(e.labels?.length || e.getAttribute('aria-label')) : !e.textContent.trim())
  .map(e => e.outerHTML.slice(0, 80))
  .concat(document.body.innerText.includes('[object ') ? ['[object ...] shown'] : [])"""


async def unnamed(page: Page) -> list[str]:
    found: list[str] = await page.evaluate(DEFECTS)
    return found


async def row_names(page: Page) -> list[str]:
    names: list[str] = await page.eval_on_selector_all(
        "#rows tbody tr", "rows => rows.map(r => r.cells[0].textContent)"
    )
    return names


async def test_find_scale_watch_logs_and_terminal(
    helm_console: Client, browser: Pages, shop: str
) -> None:
    client = helm_console
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        seen: dict[str, Any] = {}
        await sign_in(page, base)
        await page.click("#clusters a[href='#/c/alpha']")
        await expect(page.locator("#kinds a[data-kind=deployments]")).to_be_visible()
        await pick_namespace(page, shop)
        await expect(page.locator("#rows")).to_be_visible()  # the default page: the pods
        await visit.screenshot("cluster")
        # Find the Deployment by search and open it.
        await page.fill("#q", "storefront")
        await page.press("#q", "Enter")
        hit = page.locator("#hits a", has_text="storefront").first
        await expect(hit).to_be_visible()
        await visit.screenshot("search")
        seen["hits"] = await page.eval_on_selector_all(
            "#hits tbody tr", "rows => rows.map(r => r.cells[1].textContent)"
        )
        await page.locator("#hits tbody tr", has_text="Deployment").locator("a").click()
        await expect(page.locator("#page h1")).to_have_text(f"Deployment {shop}/storefront")
        await visit.screenshot("object")
        seen["unnamed"] = await unnamed(page)
        # A marker the page keeps until it is reloaded.
        await page.evaluate("window.stillTheSamePage = true")
        # Scale to 3 with the confirmation naming the object.
        await page.fill("input[name=replicas]", "3")
        await page.click("button:text-is('Scale')")
        dialog = page.locator("dialog.confirm")
        await expect(dialog).to_contain_text(f"Scale Deployment {shop}/storefront to 3 replicas?")
        await visit.screenshot("confirm-scale")
        await page.keyboard.press("Enter")  # the dialog opens with its confirm button focused
        await expect(page.locator("#action-result")).to_contain_text("scaled")
        # The pods' list follows the scale-up without a reload.
        await page.click("#kinds a[data-kind=pods]")
        await expect(page.locator("#rows tbody tr")).to_have_count(3, timeout=30_000)
        await visit.screenshot("pods-after-scale")
        seen["unnamed"] += await unnamed(page)
        # Scaled down behind the page's back (another client, signed in as the page is): rows go.
        resp = await page.request.post(
            f"{base}{ALPHA}/resources/deployments/{shop}/storefront/scale?replicas=1"
        )
        assert resp.status == 200
        await expect(page.locator("#rows tbody tr")).to_have_count(1, timeout=30_000)
        seen["same-page"] = await page.evaluate("window.stillTheSamePage === true")
        # The remaining pod's logs: lines keep arriving.
        await page.locator("#rows tbody a").first.click()
        await page.click("a.button:text-is('Logs')")
        log = page.locator("#log")
        await expect(log).to_contain_text("tick", timeout=20_000)
        first = await log.locator("div").count()
        await expect(log.locator("div")).not_to_have_count(first, timeout=10_000)
        seen["log-grew"] = await log.locator("div").count() > first
        await visit.screenshot("logs")
        seen["unnamed"] += await unnamed(page)
        # A terminal in it: echo hi, then the exit code.
        await page.go_back()
        sent: list[bytes | str] = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda frame: sent.append(frame)))
        await page.click("a.button:text-is('Terminal')")
        await expect(page.locator("#terminal-status")).to_contain_text("Connected")
        await page.locator("#terminal").click()
        await page.keyboard.type("echo hi\n")
        rows = page.locator("#terminal .xterm-rows")
        await expect(rows).to_contain_text("echo hi")
        await page.wait_for_function(ROW_IS, arg="hi")
        await visit.screenshot("terminal")
        seen["unnamed"] += await unnamed(page)
        # Pasted text goes to the process as typed text does.
        await page.evaluate(PASTE, "echo pasted\r")
        await page.wait_for_function(ROW_IS, arg="pasted")
        # A smaller window: the terminal refits and tells the process its new size.
        await page.set_viewport_size({"width": 900, "height": 600})
        await page.wait_for_function(
            "() => document.querySelector('#terminal .xterm-screen').offsetWidth < 700"
        )
        await page.wait_for_timeout(300)
        seen["resizes"] = [
            json.loads(f[1:]) for f in sent if isinstance(f, bytes) and f[:1] == b"\x04"
        ]
        await page.keyboard.type("exit 3\n")
        await expect(page.locator("#terminal-status")).to_have_text(
            "The process ended with exit code 3."
        )
        return seen

    seen = await browser.visit("find-scale-watch-logs-terminal", steps)
    assert "Deployment" in seen["hits"]
    assert seen["same-page"] is True
    assert seen["log-grew"] is True
    assert seen["unnamed"] == []
    first, *_, last = seen["resizes"]  # one when it connected, more as the window shrank
    assert set(first) == set(last) == {"Width", "Height"}
    assert last["Width"] < first["Width"]
    assert last["Height"] < first["Height"]


async def test_a_clusters_403_is_a_message_on_a_phone_in_the_dark(
    helm_console: Client, browser: Pages
) -> None:
    base = str(helm_console.make_url("")).rstrip("/")
    refused = "/api/v1/clusters/alpha-nobody"

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        for path in ("namespaces", "resources/pods"):  # discovery is open to everyone signed in
            visit.expect(403, f"{refused}/{path}")
        await page.set_viewport_size({"width": 390, "height": 844})
        await page.emulate_media(color_scheme="dark")
        await sign_in(page, base)
        await page.click("#clusters a[href='#/c/alpha-nobody']")
        alert = page.locator("#page [role=alert]")
        await expect(alert).to_be_visible()
        return {
            "message": await alert.text_content(),
            "overflow": await page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            ),
            "background": await page.evaluate("getComputedStyle(document.body).backgroundColor"),
        }

    seen = await browser.visit("forbidden-phone-dark", steps)
    assert seen["message"] == (
        'pods is forbidden: User "nobody" cannot list resource "pods" in API group "" at the '
        "cluster scope"
    )
    assert seen["overflow"] <= 0  # nothing wider than the phone
    assert seen["background"] == "rgb(20, 23, 29)"  # the dark theme's --bg


async def test_edit_yaml_see_the_dry_runs_diff_apply_and_errors_in_place(
    helm_console: Client, browser: Pages, shop: str
) -> None:
    base = str(helm_console.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        visit.expect(400, "/api/v1/clusters/alpha/apply/dry-run")
        await sign_in(page, base)
        await page.goto(f"{base}/#/c/alpha/o/configmaps/{shop}/settings")
        await page.click("button[role=tab]:text-is('YAML')")
        yaml_box = page.get_by_label("The object as YAML")
        await expect(yaml_box).to_have_js_property("readOnly", True)
        await page.click("button:text-is('Edit')")
        text = await yaml_box.input_value()
        await yaml_box.fill(text.replace("colour: blue", "colour: green"))
        await page.click("button:text-is('Review changes')")
        diff = page.locator("pre.diff")
        await expect(diff).to_be_visible()
        await visit.screenshot("diff")
        seen: dict[str, Any] = {"diff": await diff.inner_text()}
        await page.click("button:text-is('Apply')")
        await expect(page.locator("#yaml-error")).to_have_text("Applied: ConfigMap settings.")
        await yaml_box.fill("kind: [")
        await page.click("button:text-is('Review changes')")
        error = page.locator("#yaml-error [role=alert]")
        await expect(error).to_be_visible()
        seen["error"] = await error.text_content()
        seen["apply-enabled"] = await page.locator("button:text-is('Apply')").is_enabled()
        await visit.screenshot("error")
        return seen

    seen = await browser.visit("yaml", steps)
    assert [line for line in seen["diff"].splitlines() if line[:1] in "+-"] == [
        '-     "colour": "blue"',
        '+     "colour": "green"',
    ]
    assert "YAML" in seen["error"] or "yaml" in seen["error"], seen["error"]
    assert seen["apply-enabled"] is False
    obj = await helm_console.get(
        "/api/v1/clusters/alpha/resources/configmaps/object",
        params={"namespace": shop, "name": "settings"},
    )
    assert (await obj.json())["data"] == {"colour": "green"}


RELEASES = "/api/v1/clusters/alpha/helm/releases"


async def release_with_two_revisions(client: Client, sim: Simulator) -> str:
    """The release ``web`` of chart ``demo`` 0.1.0 upgraded to 0.2.0, in a new namespace (→ it)."""
    ns = await fresh_namespace(sim)
    install = {"releaseName": "web", "namespace": ns, "chartRef": "r/demo", "version": "0.1.0"}
    assert (await client.post(RELEASES, json=install, headers=ADMIN)).status == 201
    upgrade = {"chartRef": "r/demo", "version": "0.2.0"}
    resp = await client.post(f"{RELEASES}/{ns}/web/upgrade", json=upgrade, headers=ADMIN)
    assert resp.status == 200
    return ns


async def test_roll_back_a_helm_release(
    helm_console: Client, browser: Pages, sim: Simulator
) -> None:
    ns = await release_with_two_revisions(helm_console, sim)
    base = str(helm_console.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        await sign_in(page, base)
        await page.click("#clusters a[href='#/c/alpha']")
        await page.click("a:text-is('Helm releases')")
        await page.locator("#releases a", has_text="web").first.click()
        await expect(page.locator("#release-status")).to_have_text("deployed")
        await page.select_option("select[name=revision]", "1")
        await page.click("button:text-is('Roll back')")
        dialog = page.locator("dialog.confirm")
        await expect(dialog).to_contain_text(f"Roll the Helm release {ns}/web back to revision 1?")
        await dialog.locator("button.primary").click()
        await expect(page.locator("#helm-result")).to_have_text(
            "Rolled back to revision 1: now revision 3 (deployed)."
        )
        await visit.screenshot("rolled-back")
        return {
            "history": await page.eval_on_selector_all(
                "#history tbody tr",
                "rows => rows.map(r => [r.cells[0].textContent, r.cells[2].textContent])",
            ),
            "values": await page.locator("#values").text_content(),
        }

    seen = await browser.visit("helm-rollback", steps)
    assert seen["history"] == [["3", "0.1.0"], ["2", "0.2.0"], ["1", "0.1.0"]]
    assert seen["values"] == "{}\n"  # the values given (none), as Helm's YAML


async def test_a_page_left_while_it_loads_never_covers_the_next(
    helm_console: Client, browser: Pages, sim: Simulator
) -> None:
    """A cluster's first page (its pods) waits on the kinds of its side navigation; a person who
    moves on to the Helm releases meanwhile must keep them, not see the pods drawn over them
    when the kinds arrive (the browser holds the kinds back until the Helm page is shown)."""
    ns = await release_with_two_revisions(helm_console, sim)
    base = str(helm_console.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> str:
        page = visit.page
        held: list[Route] = []
        await page.route("**/clusters/alpha/nav", lambda route: held.append(route))
        await sign_in(page, base)
        await page.click("#clusters a[href='#/c/alpha']")
        await page.click("a:text-is('Helm releases')")
        ours = page.locator("#releases tr", has_text=ns)
        await expect(ours).to_have_count(1)
        for _ in range(100):  # the kinds were asked for before the click; their hold is noted
            if held:
                break
            await page.wait_for_timeout(50)
        for route in held:
            await route.continue_()
        await expect(page.locator("#kinds a[data-kind=pods]")).to_be_visible()  # the kinds came
        await page.wait_for_timeout(1000)  # ample for the pods page to draw itself, were it to
        await expect(page.locator("#page h1")).to_have_text("Helm releases")
        await expect(ours).to_have_count(1)
        return await page.title()

    title = await browser.visit("left-while-loading", steps)
    assert title.startswith("Helm releases ·"), title


async def test_diagnose_shows_evidence_links_and_applies_a_fix(
    helm_console: Client, browser: Pages, sim: Simulator
) -> None:
    client = helm_console
    async with kube_in_new_namespace(sim, "sick") as (api, ns):
        await create(api, deployment(ns, "api", image="ghcr.io/wharf-demo/crashloop:1.0"))

    async def crashing() -> bool:
        resp = await client.get(f"{ALPHA}/remediations", params={"namespace": ns})
        return any(p["action"] == "restart" for p in (await resp.json())["proposals"])

    await eventually(crashing, timeout=30, what="a crash-loop finding")
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        await sign_in(page, base)
        await page.click("#clusters a[href='#/c/alpha']")
        await pick_namespace(page, ns)
        await page.click("a:text-is('Diagnose')")
        finding = page.locator("#findings section", has_text="crash-loop").first
        await expect(finding).to_be_visible()
        link = finding.locator(f"a:text-is('Deployment {ns}/api')")
        seen: dict[str, Any] = {"link": await link.get_attribute("href")}
        await finding.locator("button", has_text="Preview").filter(has_text="restart").first.click()
        diff = finding.locator("pre.diff")
        await expect(diff).to_contain_text("restartedAt")
        await visit.screenshot("preview")
        await finding.locator("button:text-is('Apply')").first.click()
        await expect(page.locator("dialog.confirm")).to_contain_text(f"Deployment/api in {ns}")
        await page.locator("dialog.confirm button.primary").click()
        await expect(finding.locator("p.ok")).to_be_visible()
        seen["done"] = await finding.locator("p.ok").text_content()
        seen["unnamed"] = await unnamed(page)
        await visit.screenshot("applied")
        return seen

    seen = await browser.visit("diagnose", steps)
    assert seen["link"] == f"#/c/alpha/o/deployments/{ns}/api"
    assert "restarted" in seen["done"]
    assert seen["unnamed"] == []
    obj = await client.get(
        f"{ALPHA}/resources/deployments/object", params={"namespace": ns, "name": "api"}
    )
    template = (await obj.json())["spec"]["template"]["metadata"]
    assert "kubectl.kubernetes.io/restartedAt" in template.get("annotations", {})


def config_map(name: str, tier: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"tier": tier}}, "data": {}}  # fmt: skip


@pytest.fixture(scope="module")
def catalogue(sim: Simulator) -> str:
    """ConfigMaps ``alpha-web``, ``beta-db`` and ``gamma-web`` labelled with their tier."""
    maps = [
        config_map("alpha-web", "web"),
        config_map("beta-db", "db"),
        config_map("gamma-web", "web"),
    ]
    return seeded_namespace(sim, "cat", *maps)


async def test_a_list_sorts_filters_by_text_and_label_and_says_when_it_reconnects(
    helm_console: Client, browser: Pages, catalogue: str
) -> None:
    base = str(helm_console.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        seen: dict[str, Any] = {}
        await sign_in(page, base)
        await page.goto(f"{base}/#/c/alpha/r/configmaps")
        await pick_namespace(page, catalogue)
        await expect(page.locator("#rows tbody tr", has_text="gamma-web")).to_be_visible()
        seen["all"] = await row_names(page)
        await page.locator("th button", has_text="Name").focus()
        await page.keyboard.press("Enter")  # sorted by name already: now the other way
        await expect(page.locator("th[data-column=name]")).to_have_attribute(
            "aria-sort", "descending"
        )
        seen["descending"] = await row_names(page)
        seen["aria-sort"] = await page.locator("th[data-column=name]").get_attribute("aria-sort")
        await page.get_by_label("Filter").fill("web")
        await expect(page.locator("#rows tbody tr")).to_have_count(2)  # the filter has applied
        seen["text"] = await row_names(page)
        await page.get_by_label("Filter").fill("")
        await page.get_by_label("Label selector").fill("tier=db")
        await page.get_by_label("Label selector").press("Enter")
        await expect(page.locator("#rows tbody tr")).to_have_count(1)
        seen["selector"] = await row_names(page)
        await page.get_by_label("Label selector").fill("tier, tier notin (db), !missing")
        await page.get_by_label("Label selector").press("Enter")
        await expect(page.locator("#rows tbody tr")).to_have_count(2)
        seen["set-based"] = await row_names(page)
        await page.get_by_label("Label selector").fill("tier=(")
        await page.get_by_label("Label selector").press("Enter")
        seen["bad"] = await page.locator(".filters [role=alert]").text_content()
        await visit.screenshot("filtered")
        # The network goes away: the page says it is reconnecting, and stops saying so after.
        visit.expect_failure("net::ERR_INTERNET_DISCONNECTED")
        badge = page.locator(".title .badge")
        await page.context.set_offline(True)
        await expect(badge).to_have_text("Reconnecting…")
        await visit.screenshot("reconnecting")
        await page.context.set_offline(False)
        await expect(badge).to_be_hidden(timeout=20_000)
        return seen

    seen = await browser.visit("list-filters", steps)
    names = ["alpha-web", "beta-db", "gamma-web"]
    assert [n for n in seen["all"] if n in names] == names
    assert [n for n in seen["descending"] if n in names] == names[::-1]
    assert seen["aria-sort"] == "descending"
    assert seen["text"] == ["gamma-web", "alpha-web"]
    assert seen["selector"] == ["beta-db"]
    assert seen["set-based"] == ["gamma-web", "alpha-web"]
    assert seen["bad"] == 'Not a label selector: "tier=(".'


def pod(name: str, scripts: dict[str, str]) -> dict[str, Any]:
    containers = [{"name": c, "image": "busybox:1.36", "command": ["sh", "-c", script]}
                  for c, script in scripts.items()]  # fmt: skip
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": containers}}  # fmt: skip


@pytest.fixture(scope="module")
def chatty(sim: Simulator) -> str:
    """Pods ``duo`` (containers ``main`` and ``side``, each numbering its lines) and ``flaky``
    (says ``attempt`` and fails, again and again)."""
    duo = pod(
        "duo", {"main": TICKER.replace("tick", "main"), "side": TICKER.replace("tick", "side")}
    )
    flaky = pod("flaky", {"main": "echo attempt; sleep 0.5; exit 1"})
    return seeded_namespace(sim, "chat", duo, flaky)


VISIBLE_LINES = """() => [...document.querySelectorAll('#log > div')].filter(d => !d.hidden)
  .map(d => d.lastChild.textContent)"""


async def test_logs_pick_a_container_filter_stamp_pause_download_and_show_the_previous_run(
    helm_console: Client, browser: Pages, chatty: str
) -> None:
    base = str(helm_console.make_url("")).rstrip("/")
    client = helm_console

    async def restarted() -> bool:
        resp = await client.get(f"{ALPHA}/pods/{chatty}/flaky/log/previous")
        return resp.status == 200

    await eventually(restarted, timeout=30, what="flaky to have run before")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        seen: dict[str, Any] = {}
        await sign_in(page, base)
        await page.goto(f"{base}/#/c/alpha/logs/{chatty}/pods/duo")
        await expect(page.locator("#page [role=status]").first).to_have_text(
            "Following 2 containers of 1 pod."
        )
        await expect(page.locator("#log")).to_contain_text("side 2")
        await page.get_by_label("Container").select_option("side")
        seen["side"] = await page.evaluate(VISIBLE_LINES)
        await page.get_by_label("Filter").fill("side 1")
        seen["filtered"] = await page.evaluate(VISIBLE_LINES)
        await page.get_by_label("Timestamps").check()
        seen["stamp"] = await page.locator("#log > div:not([hidden]) .time").first.text_content()
        await page.get_by_label("Follow").uncheck()
        await expect(page.locator("#page [role=status]").first).to_have_text("Paused.")
        paused = await page.locator("#log > div").count()
        await page.wait_for_timeout(1000)
        seen["paused-grew"] = await page.locator("#log > div").count() - paused
        async with page.expect_download() as download:
            await page.click("button:text-is('Download')")
        seen["download"] = Path(await (await download.value).path()).read_text()
        seen["download-name"] = (await download.value).suggested_filename
        await visit.screenshot("duo")
        await page.goto(f"{base}/#/c/alpha/logs/{chatty}/pods/flaky")
        await page.get_by_label("Previous run").check()
        await expect(page.locator("#log")).to_contain_text("attempt")
        seen["previous"] = await page.evaluate(VISIBLE_LINES)
        await visit.screenshot("previous")
        return seen

    seen = await browser.visit("logs-controls", steps)
    assert seen["side"]
    assert all(line.startswith("side ") for line in seen["side"])
    assert seen["filtered"]
    assert all(line.startswith("side 1") for line in seen["filtered"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z ", seen["stamp"])
    assert seen["paused-grew"] == 0
    assert seen["download-name"] == "duo.log"
    lines = seen["download"].splitlines()
    assert lines
    assert all(re.fullmatch(r"\S+Z side side 1\d*", line) for line in lines), lines[:3]
    assert seen["previous"] == ["attempt"]


async def test_relations_are_links_and_delete_asks_first(
    helm_console: Client, browser: Pages, sim: Simulator
) -> None:
    client = helm_console
    async with kube_in_new_namespace(sim, "rel") as (api, ns):
        await create(api, deployment(ns, "api"))
        await create(
            api, config_map("doomed", "web") | {"metadata": {"name": "doomed", "namespace": ns}}
        )

    async def one_pod() -> str | None:
        rows = await (await client.get(f"{ALPHA}/pods", params={"namespace": ns})).json()
        return rows[0]["name"] if rows else None

    pod_name = await eventually(one_pod, what="the Deployment's pod")
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        seen: dict[str, Any] = {}
        await sign_in(page, base)
        await page.goto(f"{base}/#/c/alpha/o/pods/{ns}/{pod_name}")
        await page.click("button[role=tab]:text-is('Relations')")
        panel = page.locator("#panel")
        await expect(panel.locator("h2", has_text="Owners")).to_be_visible()
        seen["owners"] = await panel.locator("h2:text-is('Owners') + ul a").all_text_contents()
        await visit.screenshot("relations")
        await panel.locator(f"a:text-is('Deployment {ns}/api')").click()
        await expect(page.locator("#page h1")).to_have_text(f"Deployment {ns}/api")
        await page.click("button[role=tab]:text-is('Relations')")
        seen["owned"] = await panel.locator("a", has_text=pod_name).count()
        # Delete: Escape keeps the object, the confirmation deletes it and returns to the list.
        await page.goto(f"{base}/#/c/alpha/o/configmaps/{ns}/doomed")
        await page.click("button:text-is('Delete')")
        dialog = page.locator("dialog.confirm")
        await expect(dialog).to_contain_text(
            f"Delete ConfigMap {ns}/doomed? This cannot be undone."
        )
        await page.keyboard.press("Escape")
        await expect(dialog).to_have_count(0)
        seen["kept"] = (await page.request.get(
            f"{base}{ALPHA}/resources/configmaps/object?namespace={ns}&name=doomed"
        )).status  # fmt: skip
        await page.click("button:text-is('Delete')")
        await page.locator("dialog.confirm button.primary").click()
        await page.wait_for_url(f"{base}/#/c/alpha/r/configmaps")
        visit.expect(404, f"{ALPHA}/resources/configmaps/object")
        seen["gone"] = (await page.request.get(
            f"{base}{ALPHA}/resources/configmaps/object?namespace={ns}&name=doomed"
        )).status  # fmt: skip
        return seen

    seen = await browser.visit("relations-delete", steps)
    assert seen["owners"][-1] == f"Deployment {ns}/api"
    assert seen["owners"][0].startswith(f"ReplicaSet {ns}/api-")
    assert seen["owned"] == 1
    assert (seen["kept"], seen["gone"]) == (200, 404)


@pytest.fixture(scope="module")
def listener(sim: Simulator) -> str:
    """The pod ``echo`` whose process answers each line of its stdin with ``got <line>``."""
    main = {"name": "main", "image": "busybox:1.36", "stdin": True,
            "command": ["sh", "-c", "while read line; do echo got $line; done"]}  # fmt: skip
    echo = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "echo"},
            "spec": {"containers": [main]}}  # fmt: skip
    return seeded_namespace(sim, "attach", echo)


async def test_attach_to_a_running_process(
    helm_console: Client, browser: Pages, listener: str
) -> None:
    client = helm_console

    async def running() -> bool:
        resp = await client.get(
            f"{ALPHA}/resources/pods/object", params={"namespace": listener, "name": "echo"}
        )
        statuses = (await resp.json()).get("status", {}).get("containerStatuses") or []
        return any("running" in s.get("state", {}) for s in statuses)

    await eventually(running, what="the echo pod to run")
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> None:
        page = visit.page
        await sign_in(page, base)
        await page.goto(f"{base}/#/c/alpha/exec/{listener}/echo")
        await expect(page.locator("#terminal-status")).to_contain_text("Connected")
        await page.get_by_label("Mode").select_option("attach")
        await page.click("button:text-is('Connect')")
        await expect(page.locator("#terminal-status")).to_contain_text("Connected")
        await page.locator("#terminal").click()
        await page.keyboard.type("ahoy\r")
        await page.wait_for_function(ROW_IS, arg="got ahoy")
        await visit.screenshot("attached")

    await browser.visit("attach", steps)


async def test_a_cronjob_is_suspended_resumed_and_run_now(
    helm_console: Client, browser: Pages, sim: Simulator
) -> None:
    client = helm_console
    job = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
        {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "echo done"]}]}}}}  # fmt: skip
    async with kube_in_new_namespace(sim, "cron") as (api, ns):
        await create(api, {"apiVersion": "batch/v1", "kind": "CronJob",
                           "metadata": {"name": "nightly", "namespace": ns},
                           "spec": {"schedule": "0 3 * * *", "jobTemplate": job}})  # fmt: skip
    base = str(client.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        seen: dict[str, Any] = {}
        await sign_in(page, base)
        await page.goto(f"{base}/#/c/alpha/o/cronjobs/{ns}/nightly")
        for action in ("Suspend", "Resume"):
            await page.click(f".actions button:text-is('{action}')")
            await expect(page.locator("dialog.confirm")).to_contain_text(
                f"{action} CronJob {ns}/nightly?"
            )
            await page.keyboard.press("Enter")
            await expect(page.locator("#action-result")).to_have_class("ok")
            seen[action] = await page.locator("#action-result").text_content()
        await page.click(".actions button:text-is('Run now')")
        await page.keyboard.press("Enter")
        await expect(page.locator("#action-result")).to_have_class("ok")
        seen["run"] = await page.locator("#action-result").text_content()
        seen["buttons"] = await page.locator(".actions button").all_text_contents()
        await visit.screenshot("cronjob")
        return seen

    seen = await browser.visit("cronjob", steps)
    assert "suspended" in seen["Suspend"]
    assert "resumed" in seen["Resume"]
    assert "nightly-manual-" in seen["run"]
    assert seen["buttons"] == ["Suspend", "Run now", "Delete"]
    jobs = await (await client.get(f"{ALPHA}/resources/jobs", params={"namespace": ns})).json()
    assert [j["name"][: len("nightly-manual-")] for j in jobs] == ["nightly-manual-"]


async def test_a_node_is_cordoned_and_uncordoned_on_a_phone(
    helm_console: Client, browser: Pages
) -> None:
    base = str(helm_console.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        seen: dict[str, Any] = {}
        await page.set_viewport_size({"width": 390, "height": 844})
        await sign_in(page, base)
        await page.goto(f"{base}/#/c/alpha/o/nodes/_/kubesim-node-1")
        await page.click(".actions button:text-is('Cordon')")
        await expect(page.locator("dialog.confirm")).to_contain_text(
            "Stop scheduling pods on Node kubesim-node-1?"
        )
        await page.keyboard.press("Enter")
        await expect(page.locator(".actions button:text-is('Uncordon')")).to_be_visible()
        seen["cordoned"] = await page.locator("#object-status").text_content()
        seen["overflow"] = await page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        await visit.screenshot("cordoned")
        await page.click(".actions button:text-is('Uncordon')")
        await page.keyboard.press("Enter")
        await expect(page.locator(".actions button:text-is('Cordon')")).to_be_visible()
        seen["uncordoned"] = await page.locator("#object-status").text_content()
        seen["unnamed"] = await unnamed(page)
        return seen

    seen = await browser.visit("node", steps)
    assert "SchedulingDisabled" in seen["cordoned"]
    assert "SchedulingDisabled" not in seen["uncordoned"]
    assert seen["overflow"] <= 0
    assert seen["unnamed"] == []


async def test_without_signing_in_helm_values_and_rollback_say_why_not(
    helm_console: Client, browser: Pages, sim: Simulator
) -> None:
    ns = await release_with_two_revisions(helm_console, sim)
    base = str(helm_console.make_url("")).rstrip("/")

    async def steps(visit: Visit) -> dict[str, Any]:
        page = visit.page
        visit.expect(401, "/api/v1/auth/session")  # the shell asks who is signed in: nobody
        visit.expect(401, f"{RELEASES}/{ns}/web/values")
        visit.expect(401, f"{RELEASES}/{ns}/web/rollback")
        await page.goto(f"{base}/#/c/alpha/helm/{ns}/web")  # open mode: reading needs no login
        await expect(page.locator("#release-status")).to_have_text("deployed")
        await expect(page.locator("#values")).to_have_text(
            "Sign in to see the values: they may hold secrets."
        )
        await page.click("button:text-is('Roll back')")
        await page.keyboard.press("Enter")
        await expect(page.locator("#helm-result")).to_have_class("error")
        await visit.screenshot("anonymous")
        return {"refused": await page.locator("#helm-result").text_content()}

    seen = await browser.visit("helm-anonymous", steps)
    assert (
        seen["refused"] == "Sign in first: authentication required: HTTP Basic or a session cookie"
    )
    history = await (await helm_console.get(f"{RELEASES}/{ns}/web/history")).json()
    assert len(history) == 2  # nothing rolled back
