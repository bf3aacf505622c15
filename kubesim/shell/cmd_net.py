"""Network commands: ``wget``, ``curl`` and ``nslookup``, answered by the simulated cluster network.

Names resolve like cluster DNS (``svc``, ``svc.ns``, ``svc.ns.svc.cluster.local``, pod IPs); a
Service answers only when it has a ready endpoint, so ``wget`` in a Helm test hook fails exactly when
the real one would. Messages and exit codes are BusyBox's (wget) and curl's.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from kubesim.shell.fs import FsError
from kubesim.shell.host import HttpReply
from kubesim.shell.io import IO, say
from kubesim.shell.registry import command, getopt

if TYPE_CHECKING:
    from kubesim.shell.session import Session


def split_url(url: str) -> tuple[str, int, str]:
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.hostname or "", parts.port or default, path


async def fetch(sh: Session, url: str) -> tuple[str, int, str, HttpReply | str | None]:
    """(host, port, ip, reply); reply None: the name did not resolve; str: connection error."""
    host, port, path = split_url(url)
    network = sh.host.network
    ip = network.resolve(host) if network is not None else None
    if network is None or ip is None:
        return host, port, "", None
    return host, port, ip, await network.http(host, port, path)


@command("wget")
async def wget(sh: Session, argv: list[str], io: IO) -> int:
    flags, vals, urls = getopt(
        argv,
        "qScs",
        "OTUt",
        longs={"spider": "p", "quiet": "q", "output-document=": "O", "timeout=": "T"},
    )
    if not urls:
        await say(
            io.stderr,
            "BusyBox v1.36.1 (2023-05-18 22:34:17 UTC) multi-call binary.\n\nUsage: wget [-cqS] [--spider] [-O FILE] URL...\n",
        )
        return 1
    for url in urls:
        host, port, ip, reply = await fetch(sh, url)
        if reply is None:
            await say(
                io.stderr,
                f"wget: bad address '{host}:{port}'\n"
                if ":" in url.split("//")[-1]
                else f"wget: bad address '{host}'\n",
            )
            return 1
        if "q" not in flags:
            await say(io.stderr, f"Connecting to {host}:{port} ({ip}:{port})\n")
        if isinstance(reply, str):
            await say(io.stderr, f"wget: can't connect to remote host ({ip}): {reply}\n")
            return 1
        if reply.status >= 400:
            await say(
                io.stderr, f"wget: server returned error: HTTP/1.1 {reply.status} {reply.reason}\n"
            )
            return 1
        if "p" in flags:
            await say(io.stderr, "remote file exists\n")
            continue
        target = (
            vals.get("O") or posixpath.basename(split_url(url)[2].split("?")[0]) or "index.html"
        )
        if target == "-":
            await io.stdout.write(reply.body)
            continue
        try:
            sh.fs.write(target, reply.body, sh.cwd)
        except FsError as exc:
            await say(io.stderr, f"wget: can't open '{target}': {exc}\n")
            return 1
        if "q" not in flags:
            size = len(reply.body)
            await say(
                io.stderr,
                f"saving to '{target}'\n{target:<20} 100% |{'*' * 31}|  {size:>4}  0:00:00 ETA\n'{target}' saved\n",
            )
    return 0


@command("curl")
async def curl(sh: Session, argv: list[str], io: IO) -> int:
    flags, vals, urls = getopt(
        argv,
        "sSfIviLkq",
        "oXHdmw",
        longs={
            "silent": "s",
            "fail": "f",
            "head": "I",
            "output=": "o",
            "max-time=": "m",
            "connect-timeout=": "m",
            "include": "i",
            "location": "L",
            "insecure": "k",
            "show-error": "S",
        },
    )
    if not urls:
        await say(io.stderr, "curl: try 'curl --help' or 'curl --manual' for more information\n")
        return 2
    host, port, _, reply = await fetch(sh, urls[0])
    quiet = "s" in flags and "S" not in flags
    if reply is None:
        if not quiet:
            await say(io.stderr, f"curl: (6) Could not resolve host: {host}\n")
        return 6
    if isinstance(reply, str):
        if not quiet:
            await say(
                io.stderr,
                f"curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server\n",
            )
        return 7
    if "f" in flags and reply.status >= 400:
        if not quiet:
            await say(io.stderr, f"curl: (22) The requested URL returned error: {reply.status}\n")
        return 22
    head = (
        f"HTTP/1.1 {reply.status} {reply.reason}\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in reply.headers)
        + "\r\n"
    )
    out = head.encode() if "I" in flags else (head.encode() if "i" in flags else b"") + reply.body
    if "o" in vals:
        try:
            sh.fs.write(vals["o"], out, sh.cwd)
        except FsError as exc:
            await say(io.stderr, f"curl: (23) Failure writing output to destination: {exc}\n")
            return 23
    else:
        await io.stdout.write(out)
    return 0


@command("nslookup")
async def nslookup(sh: Session, argv: list[str], io: IO) -> int:
    names = [a for a in argv[1:] if not a.startswith("-")]
    if not names:
        await say(io.stderr, "Usage: nslookup [-type=QUERY_TYPE] [-debug] HOST [DNS_SERVER]\n")
        return 1
    network = sh.host.network
    ip = network.resolve(names[0]) if network is not None else None
    await say(io.stdout, "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n")
    if ip is None:
        await say(io.stdout, f"** server can't find {names[0]}: NXDOMAIN\n\n")
        return 1
    fqdn = (
        names[0]
        if names[0][0].isdigit() or "." in names[0]
        else f"{names[0]}.{sh.host.namespace}.svc.cluster.local"
    )
    await say(io.stdout, f"Name:\t{fqdn}\nAddress: {ip}\n\n")
    return 0
