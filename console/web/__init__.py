"""The console's web front end: the login page, the front-end shell and their assets.

Both pages are public in both modes (the contract keeps "the login page and the front-end shell"
open); what they show comes from the public API, fetched by the browser with the session cookie,
so they hold nothing the API would not give the same caller. ``PUBLIC_PATHS`` is the exact list
the app hands ``console.auth`` to let through without a login: a new page or asset stays behind the
login until it is added here.
"""

from __future__ import annotations

from common.pages import ASSETS_PREFIX, STYLESHEET_PATH

SHELL_PATH = "/"
LOGIN_PATH = "/login"
#: The files under ``static/`` the pages load, each served at ``/ui/<name>``: the shell's ES
#: modules (``console.js`` loads the rest), the console's stylesheet over the one every service's
#: pages share, and the terminal emulator that ``scripts/_env.sh`` (``ensure_web_assets``) puts
#: under ``static/vendor/``.
ASSETS = (
    "console.js",
    "api.js",
    "dom.js",
    "views.js",
    "list.js",
    "search.js",
    "object.js",
    "logs.js",
    "terminal.js",
    "helm.js",
    "diagnose.js",
    "console-web.css",
    "vendor/xterm.js",
    "vendor/addon-fit.js",
    "vendor/xterm.css",
)
PUBLIC_PATHS = frozenset(
    {SHELL_PATH, LOGIN_PATH, STYLESHEET_PATH, *(f"{ASSETS_PREFIX}/{name}" for name in ASSETS)}
)
