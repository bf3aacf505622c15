"""The values library under ``/api/v1/helm/values``: named, reusable Helm values files.

Every method needs the admin, GET included (values files hold passwords; ``console.auth`` lists
the paths). PUT checks the YAML (a mapping, within ``console.helm.values.max-size``) before
anything is written, and writes atomically; saving and deleting are audited (never the content).
Install and upgrade use a file by ``valuesName``.
"""

from __future__ import annotations

from aiohttp import web

from common.errors import BadRequest, UnsupportedMediaType
from common.openapi import validated
from console.audit import audited
from console.http.encode import YAML_TYPE
from console.http.encode.helm import encode_values_file
from console.keys import HELM

routes = web.RouteTableDef()


#: The media types a values file may be sent as (the YAML text itself).
YAML_TYPES = frozenset({"application/yaml", "application/x-yaml", "text/yaml"})


async def _text(request: web.Request) -> str:
    try:
        return await request.text()
    except UnicodeDecodeError:
        raise BadRequest("a values file must be UTF-8 text") from None


async def _save(request: web.Request, name: str, text: str) -> web.Response:
    with audited(request, action="helm.values.save", target=name):
        saved, created = await request.app[HELM].values.save(name, text)
    return web.json_response(encode_values_file(saved), status=201 if created else 200)


@routes.get("/helm/values", name="listValuesFiles")
async def list_values_files(request: web.Request) -> web.Response:
    return web.json_response(
        [encode_values_file(f) for f in await request.app[HELM].values.entries()]
    )


@routes.put("/helm/values", name="saveValuesFileByBody")
async def save_values_file_by_body(request: web.Request) -> web.Response:
    body = validated(request).body
    return await _save(request, body["name"], body["content"])


@routes.get("/helm/values/{name}", name="getValuesFile")
async def get_values_file(request: web.Request) -> web.Response:
    text = await request.app[HELM].values.read(validated(request).path["name"])
    return web.Response(text=text, content_type=YAML_TYPE)


@routes.put("/helm/values/{name}", name="saveValuesFile")
async def save_values_file(request: web.Request) -> web.Response:
    if request.content_type not in YAML_TYPES:
        raise UnsupportedMediaType(
            f"Content-Type must be application/yaml for a values file, not {request.content_type}"
        )
    return await _save(request, validated(request).path["name"], await _text(request))


@routes.delete("/helm/values/{name}", name="deleteValuesFile")
async def delete_values_file(request: web.Request) -> web.Response:
    name = validated(request).path["name"]
    with audited(request, action="helm.values.delete", target=name):
        await request.app[HELM].values.delete(name)
    return web.Response(status=204)
