"""Authentication over real HTTP: /me, both token headers, bad tokens, modes, private projects."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from aiohttp import ClientResponse
from multidict import CIMultiDict

from results import keys
from results.accounts import Role
from tests.conftest import ApiClient
from tests.guards import assert_problem
from tests.results.people import alice_signed_in, bearer, login, make_token, make_user, start
from tests.results.support import form, junit_xml
from tests.typing_support import Client

REPORT = junit_xml([("ok", "pass"), ("broken", "fail")])


async def upload(
    client: Client, headers: dict[str, str] | None = None, project: str = "demo"
) -> ClientResponse:
    """POST ``REPORT`` to the ingest endpoint for ``project``, with ``headers``."""
    return await client.post(
        "/api/v1/ingest", data=form(project=project, junit=[REPORT]), headers=headers or {}
    )


async def test_me_needs_a_credential_even_in_open_mode(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    resp = await client.get("/api/v1/me")
    await assert_problem(resp, 401, code="login-required")
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")


async def test_me_with_bearer_or_results_token_header(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    await make_user(client, "alice", role=Role.ADMIN)
    token = await make_token(client, "alice")
    expected = {
        "username": "alice",
        "displayName": "alice",
        "email": "alice@x.test",
        "role": "ADMIN",
        "authenticatedBy": "token",
    }
    for headers in (
        bearer(token),
        {"X-Results-Token": token},
        {"authorization": f"bearer {token}"},
    ):
        resp = await client.get("/api/v1/me", headers=headers)
        assert resp.status == 200, headers
        assert await resp.json() == expected


async def test_wrong_revoked_and_expired_tokens_are_401(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path)
    user = await make_user(client, "alice")
    accounts = client.app[keys.ACCOUNTS]
    revoked = await accounts.create_token(user, "old")
    await accounts.revoke_token(user, revoked.token.id)
    expiring = await make_token(client, "alice", expires_days=1)
    real_clock = accounts.clock
    accounts.clock = lambda: real_clock() + dt.timedelta(days=2)
    for token in ("wrt_not-a-real-token", revoked.value, expiring):
        resp = await client.get("/api/v1/me", headers=bearer(token))
        await assert_problem(resp, 401, code="invalid-token")
        # A bad token is refused even where no credential is needed (open-mode reads).
        resp = await client.get("/api/v1/gate", params={"project": "p", "branch": "main"})
        assert resp.status == 404
        resp = await client.get(
            "/api/v1/gate", params={"project": "p", "branch": "main"}, headers=bearer(token)
        )
        await assert_problem(resp, 401, code="invalid-token")


async def test_ingest_token_requirement(api_client: ApiClient, tmp_path: Path) -> None:
    open_client = await start(api_client, tmp_path / "open")
    assert (await upload(open_client)).status == 201

    client = await start(
        api_client, tmp_path / "strict", "results.security.require-ingest-token=true"
    )
    await make_user(client, "ci")
    resp = await upload(client)
    await assert_problem(resp, 401, code="token-required")
    await login(client, "ci")  # a session cookie is not a token
    resp = await upload(client)
    await assert_problem(resp, 401, code="token-required")
    token = await make_token(client, "ci")
    resp = await upload(client, bearer(token))
    assert resp.status == 201
    resp = await upload(client, {"X-Results-Token": token})
    assert resp.status == 201
    # Reads stay open in open mode.
    assert (
        await client.get("/api/v1/gate", params={"project": "demo", "branch": "main"})
    ).status == 200


async def test_closed_mode_needs_credentials_for_api_and_pages(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path, "results.security.open-mode=false")
    await make_user(client, "alice")
    query = {"project": "demo", "branch": "main"}
    await assert_problem(await client.get("/api/v1/gate", params=query), 401, code="login-required")
    resp = await upload(client)
    await assert_problem(resp, 401)
    resp = await client.get("/runs/1", allow_redirects=False)
    assert resp.status == 302
    assert resp.headers["Location"] == "/login?next=/runs/1"
    for public in ("/login", "/actuator/health", "/v3/api-docs", "/ui/wharf.css"):
        assert (await client.get(public)).status == 200, public
    assert 'href="/ui/wharf.css"' in await (await client.get("/login")).text()
    token = await make_token(client, "alice")
    resp = await upload(client, bearer(token))
    assert resp.status == 201
    assert (await client.get("/api/v1/gate", params=query, headers=bearer(token))).status == 200
    await login(client, "alice")
    assert (await client.get("/api/v1/gate", params=query)).status == 200  # reads by cookie
    assert (await client.get("/runs/1")).status == 200


async def private_setup(client: Client) -> dict[str, dict[str, str]]:
    """A PRIVATE project 'secret' with a member; returns headers per kind of caller."""
    await make_user(client, "admin", role=Role.ADMIN)
    await make_user(client, "member")
    await make_user(client, "outsider")
    tokens = {name: await make_token(client, name) for name in ("admin", "member", "outsider")}
    resp = await upload(client, bearer(tokens["admin"]), project="secret")
    assert resp.status == 201
    await client.app[keys.ACCOUNTS].grant("member", "secret")
    headers = {name: bearer(token) for name, token in tokens.items()}
    return {"anonymous": {}, **headers}


async def test_private_project_is_invisible_to_anonymous_and_non_members(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await start(api_client, tmp_path, "results.projects.default-visibility=PRIVATE")
    callers = await private_setup(client)
    query = {"project": "secret", "branch": "main"}
    for name in ("anonymous", "outsider"):
        resp = await client.get("/api/v1/gate", params=query, headers=callers[name])
        await assert_problem(resp, 404)
        resp = await upload(client, callers[name], project="secret")
        await assert_problem(resp, 404)
        assert (await client.get("/runs/1", headers=callers[name])).status == 404
        assert (await client.get("/projects/1", headers=callers[name])).status == 404
        assert "secret" not in await (await client.get("/", headers=callers[name])).text()
    for name in ("member", "admin"):
        resp = await client.get("/api/v1/gate", params=query, headers=callers[name])
        assert resp.status == 200, name
        assert (await client.get("/runs/1", headers=callers[name])).status == 200
        assert "secret" in await (await client.get("/", headers=callers[name])).text()


async def test_a_kept_gate_answer_is_still_private(api_client: ApiClient, tmp_path: Path) -> None:
    """The gate keeps its answer to a URL polled again and again; who may read it is decided per
    request all the same."""
    client = await start(api_client, tmp_path, "results.projects.default-visibility=PRIVATE")
    callers = await private_setup(client)
    query = {"project": "secret", "branch": "main"}
    for name in ("member", "member", "anonymous", "outsider", "admin", "member"):
        resp = await client.get("/api/v1/gate", params=query, headers=callers[name])
        if name in ("anonymous", "outsider"):
            await assert_problem(resp, 404, code="project-not-found")
        else:
            assert resp.status == 200, name
            assert (await resp.json())["status"] in ("PASSED", "FAILED")


async def test_a_bad_token_beside_a_good_one_is_401(api_client: ApiClient, tmp_path: Path) -> None:
    client = await start(api_client, tmp_path)
    await make_user(client, "alice")
    await make_user(client, "bob")
    good = await make_token(client, "alice")
    other = await make_token(client, "bob")
    for headers in (
        {**bearer(good), "X-Results-Token": "wrt_not-a-real-token"},
        {**bearer("wrt_not-a-real-token"), "X-Results-Token": good},
        {**bearer(good), "X-Results-Token": other},  # two people at once is no one
    ):
        resp = await client.get("/api/v1/me", headers=headers)
        await assert_problem(resp, 401, code="invalid-token")
    same = await client.get("/api/v1/me", headers={**bearer(good), "X-Results-Token": good})
    assert (await same.json())["username"] == "alice"


async def test_a_repeated_or_conflicting_credential_is_401(
    api_client: ApiClient, tmp_path: Path
) -> None:
    """Issue 39, item 10: repeated headers or cookies, and a bad cookie beside a good token."""
    client = await alice_signed_in(api_client, tmp_path)
    good = await make_token(client, "alice")
    cookie = next(c.value for c in client.session.cookie_jar if c.key == "results_session")
    client.session.cookie_jar.clear()
    for headers in (
        CIMultiDict([*bearer(good).items(), ("Authorization", "Bearer wrt_bad")]),
        CIMultiDict([("X-Results-Token", good), ("X-Results-Token", "wrt_bad")]),
        CIMultiDict([("X-Results-Token", good), ("X-Results-Token", good)]),
        {"Cookie": f"results_session={cookie}; results_session=forged"},
    ):
        resp = await client.get("/api/v1/me", headers=headers)
        await assert_problem(resp, 401, code="repeated-credential")
    resp = await client.get("/api/v1/me", headers={**bearer(good), "Cookie": "results_session=x"})
    await assert_problem(resp, 401, code="conflicting-credentials")
    both = {**bearer(good), "Cookie": f"results_session={cookie}"}
    assert (await (await client.get("/api/v1/me", headers=both)).json())["username"] == "alice"
    # Public paths still ignore what they are sent.
    resp = await client.get("/login", headers={**bearer(good), "Cookie": "results_session=x"})
    assert resp.status == 200


async def test_a_session_ingests_with_its_csrf_header_in_closed_mode(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await alice_signed_in(api_client, tmp_path, "results.security.open-mode=false")
    me = await client.get("/api/v1/me")
    assert (await me.json())["authenticatedBy"] == "session"
    csrf = me.headers["X-CSRF-Token"]
    assert me.headers["Cache-Control"] == "no-store"
    # Without the header the cookie does not count for a write: a cross-site form cannot upload.
    resp = await upload(client)
    await assert_problem(resp, 401, code="login-required")
    resp = await upload(client, {"X-CSRF-Token": csrf[::-1]})
    await assert_problem(resp, 403, code="csrf-refused")
    resp = await upload(client, {"X-CSRF-Token": csrf})
    assert resp.status == 201
    # A token's /me carries no CSRF value.
    token = await make_token(client, "alice")
    assert "X-CSRF-Token" not in (await client.get("/api/v1/me", headers=bearer(token))).headers


async def test_require_ingest_token_still_refuses_a_session_with_its_csrf(
    api_client: ApiClient, tmp_path: Path
) -> None:
    client = await alice_signed_in(
        api_client, tmp_path, "results.security.require-ingest-token=true"
    )
    csrf = (await client.get("/api/v1/me")).headers["X-CSRF-Token"]
    resp = await upload(client, {"X-CSRF-Token": csrf})
    await assert_problem(resp, 401, code="token-required")
