"""What ``wharf results upload`` and ``wharf results gate`` do once their arguments are read
(``results.ci.commands`` declares them and imports this module only to run one)."""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import sys
import tempfile
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from results.ci import gitdiff
from results.ci.client import ApiError, ResultsClient, Retry
from results.ci.commands import FAILED, OK, UNUSABLE, URL_ENV
from results.ci.sources import SourceError, Target, ci_target, report_files


def run(command: str, args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    return _run(_upload if command == "upload" else _gate, args, environ)


def _run(action: Any, args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    try:
        result: int = asyncio.run(action(args, environ))
    except (SourceError, UsageError) as exc:
        _say(f"wharf results {args.results_command}: {exc}")
        return UNUSABLE
    return result


class UsageError(ValueError):
    pass


async def _upload(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    files = [("junit", p) for p in report_files(args.junit, coverage=False)]
    files += [("jacoco", p) for p in report_files(args.coverage, coverage=True)]
    if not files:
        raise UsageError("name at least one report: --junit FILE... or --coverage FILE...")
    target = _target(args, environ)
    fields = {"project": args.project, "commit": target.commit or "", "branch": target.branch or ""}
    fields["runKey"] = args.run_key or f"wharf-{uuid.uuid4().hex}"  # retries stay one run
    if args.flag:
        fields["flag"] = args.flag
    if args.build_url or target.build_url:
        fields["buildUrl"] = args.build_url or target.build_url or ""
    with tempfile.TemporaryDirectory(prefix="wharf-diff-") as temp:
        diff = None if args.no_diff else await _diff(args, Path(temp), fields)
        try:
            async with _client(args, environ) as client:
                answer = await client.upload(
                    fields, files, files_per_request=args.files_per_request, diff=diff
                )
        except ApiError as exc:
            _say(f"wharf results upload: {exc}")
            return FAILED
    _print_upload(answer, len(files), _base(args, environ), as_json=args.json)
    return OK


async def _diff(args: argparse.Namespace, temp: Path, fields: dict[str, str]) -> Path | None:
    """The work tree's change as a file to send (``fields`` gains its base), or None."""
    found = await asyncio.to_thread(gitdiff.change, Path.cwd(), args.base)
    if found.diff is None:
        _say(f"wharf results upload: no diff sent for patch coverage: {found.why}")
        return None
    path = temp / "change.diff.gz"
    path.write_bytes(gzip.compress(found.diff, compresslevel=6))
    if found.base is not None:
        fields["base"] = found.base
    return path


async def _gate(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    target = _target(args, environ, need_branch=False)
    if target.commit is not None and not (args.commit is None and args.branch is not None):
        params = {"project": args.project, "commit": target.commit}
    else:  # --branch alone, or no commit known: the branch's latest run
        params = {"project": args.project, "branch": target.branch or ""}
    if args.flag:
        params["flag"] = args.flag
    if args.base_sha:
        params["baseSha"] = args.base_sha
    try:
        async with _client(args, environ) as client:
            verdict = await client.gate(params)
    except ApiError as exc:
        _say(f"wharf results gate: no verdict: {exc}")
        return UNUSABLE
    _print_verdict(verdict, _base(args, environ), as_json=args.json)
    return OK if verdict.get("passed") is True else FAILED


def _target(
    args: argparse.Namespace, environ: Mapping[str, str], *, need_branch: bool = True
) -> Target:
    found = ci_target(environ)
    commit, branch = args.commit or found.commit, args.branch or found.branch
    if commit is None and need_branch:
        raise UsageError("no commit: pass --commit (no CI commit variable is set)")
    if commit is None and branch is None:
        raise UsageError("no commit or branch: pass --commit or --branch (no CI variable is set)")
    if need_branch and branch is None:
        raise UsageError("no branch: pass --branch (no CI branch variable is set)")
    return Target(commit, branch, found.build_url)


def _base(args: argparse.Namespace, environ: Mapping[str, str]) -> str:
    base = args.url or environ.get(URL_ENV, "").strip()
    if not base:
        raise UsageError(f"no server: pass --url or set {URL_ENV}")
    if not base.startswith(("http://", "https://")):
        raise UsageError(f"{base!r} is not an http(s) URL")
    return base.rstrip("/").removesuffix("/api/v1")


def _client(args: argparse.Namespace, environ: Mapping[str, str]) -> Any:
    if args.retries < 0 or args.timeout <= 0 or getattr(args, "files_per_request", 1) < 1:
        raise UsageError("--retries must be 0 or more, --timeout and --files-per-request above 0")
    token = environ.get(args.token_env, "").strip() or None
    return ResultsClient.open(
        _base(args, environ),
        token=token,
        retry=Retry(attempts=args.retries + 1),
        timeout_s=args.timeout,
    )


def _print_upload(answer: Mapping[str, Any], files: int, base: str, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(answer, indent=2))
    coverage = answer.get("lineCoveragePct")
    said = "no coverage" if coverage is None else f"line coverage {coverage:.2f}%"
    patch = answer.get("patchCoverage")
    if patch is not None and patch.get("pct") is not None:
        said += f", patch coverage {patch['pct']:.2f}% ({patch['covered']}/{patch['coverable']})"
    _say(
        f"uploaded {files} file(s) to run #{answer['runId']} of {answer['project']} "
        f"({answer['branch']} @ {str(answer['commit'])[:12]}): {answer['tests']} tests, "
        f"{answer['failures']} failed, {answer['errors']} errors, {answer['skipped']} skipped, "
        f"{answer['flaky']} flaky; {said}; {answer['status']}\n  {base}{answer['runPath']}"
    )
    for diagnostic in answer.get("diagnostics", []):
        if diagnostic.get("code") != "dialect":
            _say(f"  note: {diagnostic.get('filename') or diagnostic.get('part')}: "
                 f"{diagnostic.get('message')}")  # fmt: skip


def _print_verdict(verdict: Mapping[str, Any], base: str, *, as_json: bool) -> None:
    if as_json:
        print(json.dumps(verdict, indent=2))
    baseline = verdict.get("baseline")
    against = f"baseline run #{baseline['runId']}" if baseline else "no baseline"
    _say(
        f"quality gate {verdict['status']} for {verdict['project']} run #{verdict['runId']} "
        f"({verdict['branch']} @ {str(verdict['commit'])[:12]}, flag {verdict['flag']}), "
        f"{against}"
    )
    for rule in verdict.get("rules", []):
        _say(f"  {'PASS' if rule['passed'] else 'FAIL'} {rule['name']}: {rule['detail']}")
    _say(f"  {base}{verdict['runPath']}")
    if baseline and not verdict.get("passed"):
        _say(f"  what changed: {base}{verdict['runPath']}/compare")


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
