"""``wharf results upload`` and ``wharf results gate``: the curl upload and the gate wrapper as
commands a CI job runs.

upload: sends the report files (``--junit``, ``--coverage``: files, directories or globs) to
``POST /api/v1/ingest`` as one run; exits 0 when the server stored them, 1 when it refused or
could not be reached (the message says why), 2 for a usage problem found before sending.
gate: asks ``GET /api/v1/gate``, prints each rule, and exits 0 when the gate passed, 1 when it
failed, 2 when there is no verdict (no such run or project, refused, unreachable).

The server comes from ``--url`` or ``WHARF_RESULTS_URL``; the token only from the environment
(``WHARF_RESULTS_TOKEN``, or the variable ``--token-env`` names): an argument would show in ``ps``
and in CI logs. Commit, branch and build URL default to the CI system's variables
(``results.ci.sources``). ``main`` hands the environment in: this module never reads it itself.
Messages go to stderr; ``--json`` prints the server's answer on stdout for scripts.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

URL_ENV = "WHARF_RESULTS_URL"
TOKEN_ENV = "WHARF_RESULTS_TOKEN"  # noqa: S105 - the name of a variable, not a token
OK, FAILED, UNUSABLE = 0, 1, 2
MAX_FILES = 50  # the server's results.ingest.max-parts is 64, text fields included


def register(sub: Any, environ: Mapping[str, str]) -> None:
    """Add ``upload`` and ``gate`` to the ``wharf results`` subcommands."""
    upload = sub.add_parser(
        "upload",
        help="upload JUnit and coverage reports as one run (CI)",
        description="Send JUnit and coverage reports to a results server as one run. Exit code: "
        "0 stored, 1 refused or unreachable (the message says why), 2 a usage problem. The API "
        f"token comes from ${TOKEN_ENV} (or the variable --token-env names), never an argument.",
        epilog="example: wharf results upload --url https://results.example.com --project shop "
        "--junit target/surefire-reports --coverage target/site/jacoco/jacoco.xml",
    )
    _server_args(upload)
    upload.add_argument("--project", required=True)
    _target_args(upload)
    upload.add_argument("--run-key", help="shards of one run share it (default: a new one)")
    upload.add_argument(
        "--build-url", help="link to the CI build (default: from the CI's variables)"
    )
    upload.add_argument("--junit", nargs="+", default=[], metavar="FILE", action="extend",
                        help="JUnit XML files, directories of them, or globs")  # fmt: skip
    upload.add_argument("--coverage", "--jacoco", nargs="+", default=[], metavar="FILE",
                        action="extend", dest="coverage",
                        help="JaCoCo, Cobertura, LCOV or Go coverage files, directories or globs")  # fmt: skip
    upload.add_argument("--files-per-request", type=int, default=MAX_FILES, metavar="N",
                        help=f"files per request; more go in several requests of one run "
                        f"(default {MAX_FILES}, under the server's results.ingest.max-parts)")  # fmt: skip
    upload.add_argument("--base", help="commit the change is diffed against for patch coverage "
                        "(default: the merge base with origin/HEAD, else main, else master)")  # fmt: skip
    upload.add_argument("--no-diff", action="store_true",
                        help="do not send the change (git diff base...HEAD) for patch coverage")  # fmt: skip
    upload.set_defaults(func=lambda args: _act("upload", args, environ))
    gate = sub.add_parser(
        "gate",
        help="ask the quality gate; exit 0 passed, 1 failed, 2 no verdict (CI)",
        description="Exit code: 0 the gate passed, 1 it failed, 2 no verdict.",
    )
    _server_args(gate)
    gate.add_argument("--project", required=True)
    _target_args(gate)
    gate.add_argument("--base-sha", help="commit whose run is the baseline (e.g. the merge base)")
    gate.set_defaults(func=lambda args: _act("gate", args, environ))


def _server_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", help=f"the results server (default ${URL_ENV})")
    parser.add_argument("--token-env", default=TOKEN_ENV, metavar="NAME",
                        help=f"environment variable holding the API token (default {TOKEN_ENV})")  # fmt: skip
    parser.add_argument("--retries", type=int, default=4, help="retries after the first try")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    parser.add_argument("--json", action="store_true", help="print the server's answer on stdout")


def _target_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--commit", help="default: the CI's commit variable")
    parser.add_argument("--branch", help="default: the CI's branch variable")
    parser.add_argument("--flag", default=None, help="component scope (default 'default')")


def _act(command: str, args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Run ``command``: its code (the HTTP client, git, the report finders) is imported only now,
    so that ``--help`` and a usage error cost a CI step no more than Python's own start."""
    from results.ci import actions

    return actions.run(command, args, environ)


def main(argv: Sequence[str], environ: Mapping[str, str]) -> int:
    """``wharf results upload|gate ...`` on their own (``argv`` starts with the command): the
    ``wharf`` command hands these straight here, without importing the services."""
    parser = argparse.ArgumentParser(prog="wharf results")
    sub = parser.add_subparsers(dest="results_command", metavar="COMMAND", required=True)
    register(sub, environ)
    args = parser.parse_args(list(argv))
    result: int = args.func(args)
    return result
