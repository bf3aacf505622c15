"""The server-rendered dashboard and account pages (Jinja2, autoescaped, no external assets).

``setup(app)`` installs the template environment; ``ROUTES`` are the page route tables for
``build_app(extra_routes=...)``; ``error_page`` renders our errors as HTML on pages. Pages are not
part of the OpenAPI spec. This package must not hold SQL or decide visibility.
"""

from __future__ import annotations

from results.web import dashboard, insights, session
from results.web.render import error_page, setup

ROUTES = (dashboard.routes, insights.routes, session.routes)

__all__ = ["ROUTES", "error_page", "setup"]
