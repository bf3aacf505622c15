"""The charts and dependencies calls: render, scaffold, show, resolve a lock."""

from __future__ import annotations

from chartsvc.calls.base import (
    Call,
    Reply,
    Services,
    call,
    verified_archive,
    verified_upload,
)
from chartsvc.calls.form import ChartForm
from chartsvc.charts import LintRequest, PackageRequest, RenderRequest
from chartsvc.encoders import encode_lint, encode_provenance
from chartsvc.helm import ShowFormat
from common.openapi import Validated


@call("templateChart")
async def template_chart(s: Services, v: Validated) -> Reply:
    render = RenderRequest.from_body(v.body)
    verified = await verified_archive(s, v.body, field="chartRef")
    if verified is not None:
        return Reply(text=await s.charts.render(verified, render))
    return Reply(text=await s.charts.template(v.body["chartRef"], v.body.get("version"), render))


@call("templateChartUpload")
async def template_chart_upload(s: Services, v: Validated) -> Reply:
    form: ChartForm = v.body
    body = form.json_object("request")
    archive = await verified_upload(s, form, body)
    return Reply(text=await s.charts.template_upload(archive, RenderRequest.from_body(body)))


@call("createChart")
async def create_chart(s: Services, v: Validated) -> Reply:
    name = v.body["name"]
    return Reply(archive=await s.charts.create(name), filename=f"{name}.tgz")


def _show(what: ShowFormat) -> Call:
    async def show(s: Services, v: Validated) -> Reply:
        return Reply(text=await s.charts.show(v.query["chartRef"], v.query.get("version"), what))

    return show


call("showChart")(_show("all"))
call("showChartValues")(_show("values"))
call("showChartReadme")(_show("readme"))
call("showChartMetadata")(_show("chart"))
call("showChartCrds")(_show("crds"))


@call("lintChart")
async def lint_chart(s: Services, v: Validated) -> Reply:
    archive = await s.charts.archive(v.body["chartRef"], v.body.get("version"))
    return Reply(encode_lint(await s.charts.lint(archive, LintRequest.from_body(v.body))))


@call("lintChartUpload")
async def lint_chart_upload(s: Services, v: Validated) -> Reply:
    form: ChartForm = v.body
    archive = await s.charts.checked(form.archive())
    request = LintRequest.from_body(form.json_object("request"))
    return Reply(encode_lint(await s.charts.lint(archive, request)))


@call("packageChart")
async def package_chart(s: Services, v: Validated) -> Reply:
    request = PackageRequest.from_body(v.body)
    data, filename = await s.charts.package_files(v.body["files"], request)
    return Reply(archive=data, filename=filename)


@call("packageChartUpload")
async def package_chart_upload(s: Services, v: Validated) -> Reply:
    form: ChartForm = v.body
    request = PackageRequest.from_body(form.json_object("request"))
    data, filename = await s.charts.package_upload(form.archive(), request)
    return Reply(archive=data, filename=filename)


@call("resolveDependencies")
async def resolve_dependencies(s: Services, v: Validated) -> Reply:
    lock = await s.charts.resolve_dependencies(v.body["chartRef"], v.body.get("version"))
    # Exactly the contract's media type: the lock is ASCII YAML, a charset parameter adds nothing.
    return Reply(text=lock, media="text/yaml")


@call("verifyChart")
async def verify_chart(s: Services, v: Validated) -> Reply:
    ref, version, key_id = v.body["chart"], v.body.get("version"), v.body.get("keyId")
    _, _, provenance = await s.charts.verified(ref, version, key_id, field="chart")
    return Reply(encode_provenance(provenance))


@call("verifyChartUpload")
async def verify_chart_upload(s: Services, v: Validated) -> Reply:
    form: ChartForm = v.body
    key_id = form.text("keyId") or None
    provenance = await s.charts.verify_upload(form.archive(), form.parts.get("provenance"), key_id)
    return Reply(encode_provenance(provenance))
