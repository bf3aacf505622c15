"""Every ``web.AppKey`` of the chart service, typed; no string keys anywhere."""

from __future__ import annotations

from collections.abc import Mapping

from aiohttp import web

from chartsvc.budget import UploadBudget
from chartsvc.calls.base import Services
from chartsvc.charts import ChartService
from chartsvc.clusters import ClusterSource
from chartsvc.helm import Helm
from chartsvc.hub import HubClient
from chartsvc.oci import OciClient
from chartsvc.operations import Operation
from chartsvc.releases import ReleaseService, StuckReleases
from chartsvc.repos.service import RepoService
from chartsvc.settings import ChartsvcSettings
from common.netguard import AddressPolicy

SETTINGS = web.AppKey("chartsvc.settings", ChartsvcSettings)
POLICY = web.AppKey("chartsvc.address_policy", AddressPolicy)
REPOS = web.AppKey("chartsvc.repos", RepoService)
CHARTS = web.AppKey("chartsvc.charts", ChartService)
OCI = web.AppKey("chartsvc.oci", OciClient)
HELM = web.AppKey("chartsvc.helm", Helm)
HUB = web.AppKey("chartsvc.hub", HubClient)
CLUSTERS = web.AppKey("chartsvc.clusters", ClusterSource)
RELEASES = web.AppKey("chartsvc.releases", ReleaseService)
STUCK = web.AppKey("chartsvc.stuck_releases", StuckReleases)
SERVICES = web.AppKey("chartsvc.services", Services)
UPLOADS = web.AppKey("chartsvc.upload_budget", UploadBudget)
OPERATIONS = web.AppKey("chartsvc.operations", Mapping[str, Operation])
