"""Chart service settings, grouped as the contract prints them (``chartsvc.security.mode``, ...).

Keys named by the contract (base path, temp dir, access interceptor, security) are spelled exactly as
there; the others (repository state paths, limits, hub and OCI) are ours and documented in
``spec/chartsvc.yaml``'s description. This module only declares; ``common.config`` reads sources.
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs

from common.config import data_dir_option, option, section
from common.serving import ServerSettings, server_section

MiB = 1024 * 1024


class AccessMode(enum.Enum):
    READ_ONLY = "READ_ONLY"
    FULL = "FULL"


@attrs.frozen
class AccessInterceptorSettings:
    enabled: bool = option(
        True,
        "Whether the built-in access-mode gate is registered. false leaves mutating requests to "
        "the host's own security. Default true.",
    )


@attrs.frozen
class RestSettings:
    base_path: str = option("/api/v1", "Prefix of every endpoint. Default /api/v1.")
    temp_dir: Path | None = option(
        None,
        "Base directory for server-managed temporary files (uploads, unpacked charts). "
        "Default: the system temp dir.",
    )
    max_upload_size: int = option(
        100 * MiB,
        "Largest accepted chart archive upload, in bytes (a multipart part, or an MCP tool's "
        "base64 argument once decoded); larger gets 413. Default 100 MiB.",
    )
    max_json_size: int = option(
        16 * MiB,
        "Largest accepted JSON request body (values included), in bytes; larger bodies get 413. "
        "Parsed JSON takes several times its size in memory, and reads need no key. Default 16 MiB.",
    )
    access_interceptor: AccessInterceptorSettings = section(
        AccessInterceptorSettings, "The built-in access-mode gate."
    )


@attrs.frozen
class SecuritySettings:
    mode: AccessMode = option(
        AccessMode.READ_ONLY,
        "READ_ONLY refuses mutating operations (403); FULL allows them when api-key is set. "
        "Default READ_ONLY (deny by default).",
    )
    api_key: str | None = option(
        None,
        "Key a mutating request must send in X-API-Key. Without it FULL mode still refuses "
        "mutations. Default none.",
        secret=True,
    )
    block_private_networks: bool = option(
        False,
        "Also refuse outbound fetches to 10/8, 172.16/12 and 192.168/16 (loopback, link-local "
        "and metadata addresses are always refused). Default false so internal repositories work.",
    )
    allow_outbound: tuple[str, ...] = option(
        (),
        "Targets outbound fetches may reach although the address guard refuses their class "
        "(loopback, link-local, private ranges with block-private-networks): hosts, addresses or "
        "CIDR networks, each optionally with :port, e.g. 127.0.0.1:8879, localhost:8879, "
        "10.20.0.0/16, [::1]:8879, charts.corp.example. Still checked at connect time and on "
        "every redirect hop; cloud metadata addresses are never allowed. Default empty.",
    )
    keyring: Path | None = option(
        None,
        "File of the OpenPGP public keys whose signatures verify a chart's provenance (verify "
        "on install, upgrade, pull and template; POST /charts/verify), binary or armoured, as "
        "gpg --export writes it; read once at start with gpg (without gpg installed the service "
        "starts and verify answers 503 provenance-unavailable). Default none: nothing verifies.",
    )


@attrs.frozen
class RepositoriesSettings:
    config: Path | None = option(
        None,
        "Helm-compatible repositories.yaml. Default <data-dir>/repositories.yaml.",
    )
    cache: Path | None = option(
        None,
        "Helm-compatible index cache directory (<name>-index.yaml, <name>-charts.txt) plus our "
        "pre-parsed indexes. Default <data-dir>/repository.",
    )
    max_index_size: int = option(
        100 * MiB,
        "Largest repository index accepted from upstream, in bytes (decompressed). "
        "Default 100 MiB; the largest public indexes are about 50 MB.",
    )
    index_memory: int = option(
        256 * MiB,
        "Bound on pre-parsed indexes held in memory, in bytes of their on-disk form; the least "
        "recently used are dropped and re-read from disk when needed. Default 256 MiB.",
    )


@attrs.frozen
class ChartLimits:
    max_archive_size: int = option(
        100 * MiB, "Largest chart archive downloaded from a repository, in bytes. Default 100 MiB."
    )
    max_decompressed_size: int = option(
        100 * MiB,
        "Largest total size a chart archive may expand to, in bytes (Helm's own cap); "
        "larger gets 413. Default 100 MiB.",
    )
    max_entries: int = option(
        50_000, "Most entries a chart archive may hold; more gets 400. Default 50000."
    )
    render_timeout: float = option(
        30.0,
        "Longest a chart render may run (template, install, upgrade, dry runs, previews), in "
        "seconds; its worker process is then stopped and the request gets 422 render-timeout. "
        "Default 30.",
    )
    max_render_output: int = option(
        64 * MiB,
        "Largest rendered manifest text, in bytes; larger gets 413 render-too-large. "
        "Default 64 MiB.",
    )
    max_render_memory: int = option(
        1024 * MiB,
        "Most resident memory a render's worker process may reach, in bytes; it is then stopped "
        "(its memory given back) and the request gets 413 render-too-large. Default 1 GiB.",
    )
    render_workers: int = option(
        2,
        "Renders run at once, each in its own worker process kept warm; more wait for a free "
        "one. Default 2 (a render is CPU work).",
    )


@attrs.frozen
class HubSettings:
    base_url: str = option(
        "https://artifacthub.io", "Artifact Hub base URL. Default https://artifacthub.io."
    )


@attrs.frozen
class OciSettings:
    plain_http: bool = option(
        False, "Talk plain HTTP to OCI registries (local test registries only). Default false."
    )
    registry_config: Path | None = option(
        None,
        "Docker-style config.json with registry credentials, as `helm registry login` writes it. "
        "Default <data-dir>/registry/config.json; absent means anonymous.",
    )


@attrs.frozen
class KubeSettings:
    kubeconfig: Path | None = option(
        None,
        "Kubeconfig file of the cluster the release endpoints manage. Default: as kubectl finds "
        "it (the KUBECONFIG list, else ~/.kube/config), else the in-cluster service account; "
        "with none of them the release endpoints are not registered.",
    )
    context: str | None = option(
        None, "Context of that kubeconfig to use. Default: its current-context."
    )


@attrs.frozen
class ChartsvcSettings:
    data_dir: Path = data_dir_option("chartsvc", "repository state")
    rest: RestSettings = section(RestSettings, "HTTP surface.")
    security: SecuritySettings = section(SecuritySettings, "Access gate and outbound policy.")
    repositories: RepositoriesSettings = section(RepositoriesSettings, "Chart repositories.")
    charts: ChartLimits = section(ChartLimits, "Limits on chart archives.")
    hub: HubSettings = section(HubSettings, "Artifact Hub search.")
    oci: OciSettings = section(OciSettings, "OCI registries.")
    kube: KubeSettings = section(KubeSettings, "The cluster of the release endpoints.")
    server: ServerSettings = server_section()

    @property
    def repositories_file(self) -> Path:
        return self.repositories.config or self.data_dir / "repositories.yaml"

    @property
    def registry_config(self) -> Path:
        return self.oci.registry_config or self.data_dir / "registry" / "config.json"

    @property
    def cache_dir(self) -> Path:
        return self.repositories.cache or self.data_dir / "repository"

    @property
    def credentials_dir(self) -> Path:
        """Private folder (0700) of the short-lived credential files: the kubeconfig each Helm
        configuration reads, certificates while a cluster client loads them. Swept at start-up."""
        return self.data_dir / "credentials"


@attrs.frozen
class Settings:
    chartsvc: ChartsvcSettings = section(ChartsvcSettings, "The chart service.")
