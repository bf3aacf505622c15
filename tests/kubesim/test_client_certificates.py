"""Client certificates (``Simulator(client_certificates=True)``): one signed by the simulator's
authority names the user (common name) and groups (organizations) RBAC then judges; an expired
one is refused with 401 as kube-apiserver refuses it; with neither certificate nor token, 401."""

from __future__ import annotations

import ssl
from collections.abc import Iterator, Sequence
from pathlib import Path

import aiohttp
import pytest

from kubesim import Simulator
from kubesim.http import tls


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Simulator]:
    with Simulator(tmp_path_factory.mktemp("kubesim"), client_certificates=True) as s:
        yield s


def holding(
    sim: Simulator, folder: Path, user: str, groups: Sequence[str], *, seconds: float = 600
) -> ssl.SSLContext:
    cert, key = tls.client_certificate(sim.directory, user, groups, seconds=seconds)
    (folder / "tls.crt").write_bytes(cert)
    (folder / "tls.key").write_bytes(key)
    context = ssl.create_default_context(cafile=str(sim.ca_path))
    context.load_cert_chain(folder / "tls.crt", folder / "tls.key")
    return context


async def answer(sim: Simulator, context: ssl.SSLContext) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(sim.url + "/api/v1/namespaces", ssl=context) as resp,
    ):
        return resp.status, (await resp.json()).get("message", "")


async def test_a_certificate_names_the_user_and_groups_rbac_judges(
    sim: Simulator, tmp_path: Path
) -> None:
    status, message = await answer(sim, holding(sim, tmp_path, "carol", ["team-x"]))
    assert status == 403
    assert 'User "carol"' in message
    assert (await answer(sim, holding(sim, tmp_path, "root", ["system:masters"])))[0] == 200


async def test_an_expired_certificate_or_none_at_all_is_401(sim: Simulator, tmp_path: Path) -> None:
    # The same person, once with a certificate that is still valid and once with one whose
    # notAfter has passed (issued already expired: no sleep that load could outrun).
    assert (await answer(sim, holding(sim, tmp_path, "root", ["system:masters"])))[0] == 200
    expired = holding(sim, tmp_path, "root", ["system:masters"], seconds=-1)
    assert await answer(sim, expired) == (401, "Unauthorized")
    bare = ssl.create_default_context(cafile=str(sim.ca_path))
    assert (await answer(sim, bare))[0] == 401
