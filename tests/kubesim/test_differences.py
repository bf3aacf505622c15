"""The simulator says where it differs from kube-apiserver: its README's list, served publicly at
the path its ``/version`` header names (the console's ``/about`` shows it)."""

from __future__ import annotations

import aiohttp

from kubesim import Simulator
from kubesim.http import differences
from tests.kubesim.conftest import Raw


async def test_version_names_the_list_which_anyone_may_read(sim: Simulator, raw: Raw) -> None:
    status, _, headers = await raw("GET", "/version")
    assert status == 200
    assert headers["X-Kubesim"] == differences.PATH
    async with aiohttp.ClientSession() as anonymous:  # no token at all, like /version
        resp = await anonymous.get(sim.url + differences.PATH, ssl=raw.ssl)
        assert resp.status == 200
        body = await resp.json()
    assert body["document"] == "kubesim/README.md"
    assert body["differences"] == [dict(d) for d in differences.differences()]
    readme = differences.README.read_text("utf-8")
    assert len(body["differences"]) == readme.count("\n- ")  # every bullet, none invented
    assert all(d["text"] and d["area"] for d in body["differences"])


def test_a_bullet_keeps_its_wrapped_lines_and_its_heading() -> None:
    text = "# Title\nIntro line.\n\n## Storage\n- One store,\n  in memory.\n- Two.\n\n## Not served\n- `/x`.\n"
    assert differences.parse(text) == [
        {"area": "Storage", "text": "One store, in memory."},
        {"area": "Storage", "text": "Two."},
        {"area": "Not served", "text": "`/x`."},
    ]
