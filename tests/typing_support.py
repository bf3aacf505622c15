"""Type aliases the tests share."""

from aiohttp import web
from aiohttp.test_utils import TestClient

Client = TestClient[web.Request, web.Application]
