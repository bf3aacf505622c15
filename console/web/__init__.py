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
#: The files under ``static/`` the pages load, each served at ``/ui/<name>``; the look is the
#: stylesheet every service's pages share.
ASSETS = ("console.js",)
PUBLIC_PATHS = frozenset(
    {SHELL_PATH, LOGIN_PATH, STYLESHEET_PATH, *(f"{ASSETS_PREFIX}/{name}" for name in ASSETS)}
)
