"""The ``wharf`` command's entry (and ``python -m wharf``): reads argv and the environment.

A CI job runs ``wharf results upload`` and ``wharf results gate`` on every step, so they go
straight to their own module (``results.ci.commands``), which imports only the standard library to
read its arguments; ``wharf kubesim`` goes straight to the simulator's own command line, which needs
nothing of the services; every other command goes to :mod:`wharf.cli`, which knows every service.
This module imports nothing else of Wharf before it knows which.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

#: ``wharf results <command>`` handed straight to the CI commands.
CI_COMMANDS = ("upload", "gate")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["results"] and args[1:2] and args[1] in CI_COMMANDS:
        from results.ci import commands

        try:
            return commands.main(args[1:], os.environ)
        except KeyboardInterrupt:
            return 130
    if args[:1] == ["kubesim"]:
        from common.logs import configure_logging
        from kubesim.cli import main as kubesim_main

        configure_logging("INFO")
        return kubesim_main(args[1:])
    from wharf.cli import main as wharf_main

    return wharf_main(args)
