"""Console settings, grouped as the contract prints them (``console.security.open-mode``, ...).

Keys the contract names (``console.security.open-mode``, ``console.security.admin.*``,
``console.files.enabled``/``writable``) are spelled exactly as there; the others are ours and are
documented in ``spec/console.yaml``'s description. This module only declares; ``common.config``
reads the sources, and ``console.credentials`` checks the admin password's form at start-up.
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs

from chartsvc.settings import (
    ChartLimits,
    ChartsvcSettings,
    HubSettings,
    OciSettings,
    RepositoriesSettings,
)
from chartsvc.settings import SecuritySettings as ChartSecurity
from common.config import default_data_dir, option, section
from common.serving import ServerSettings

MiB = 1024 * 1024
#: Public OpenAI-compatible chat-completions bases of providers that have one.
PUBLIC_AI_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com/v1",
}


class StoreBackend(enum.Enum):
    SQLITE = "sqlite"
    MEMORY = "memory"


@attrs.frozen
class StoreSettings:
    backend: StoreBackend = option(
        StoreBackend.SQLITE,
        "Where clusters added at runtime are kept: sqlite (a file that survives restarts) or "
        "memory (lost on restart; the config view and /about say so). Default sqlite.",
    )
    url: str | None = option(
        None,
        "postgresql://user:password@host:port/dbname: keep runtime clusters in a PostgreSQL "
        "server that N replicas share (see docs/running-replicas.md). Unset: the SQLite file at "
        "path. Only with backend sqlite. Default unset.",
        secret=True,
    )
    encryption_key: str | None = option(
        None,
        "Key that encrypts stored kubeconfigs (a random value of 32+ characters, such as the "
        "output of openssl rand -base64 32). Required with a postgresql:// url, so the database "
        "never holds a kubeconfig in clear; optional for SQLite. Changing it makes stored "
        "clusters unreadable. Default unset.",
        secret=True,
    )
    sync_seconds: float = option(
        2.0,
        "With a postgresql:// url: how often each replica reads the runtime clusters other "
        "replicas added, changed or removed, in seconds. Default 2.",
    )
    path: Path | None = option(
        None,
        "SQLite file of runtime clusters (it holds their kubeconfigs, so it is created readable "
        "by the service's user only). Default <data-dir>/clusters.db.",
    )


@attrs.frozen
class ClustersSettings:
    store: StoreSettings = section(StoreSettings, "The runtime cluster store.")
    probe_timeout_seconds: float = option(
        5.0,
        "How long adding or editing a cluster waits for its API server's /version and /api "
        "before refusing the definition as unreachable (invalid-cluster), in seconds. Default 5.",
    )
    warm_up: bool = option(
        True,
        "Connect to every cluster and read its discovery in the background at start-up, so the "
        "first browse request does not pay for them. Start-up never waits on it, and a cluster "
        "that cannot be reached is simply left for its first request to report. Default true.",
    )


@attrs.frozen
class AdminSettings:
    username: str = option("admin", "User name of the single admin login. Default admin.")
    password: str | None = option(
        None,
        "Admin password: plain text, or a hash from `wharf console hash-password` written as "
        "{scrypt}scrypt$... so the file holds no usable secret. Unset: nobody can sign in, so "
        "every request that needs the admin is refused with 401. Default unset.",
        secret=True,
    )


@attrs.frozen
class SecuritySettings:
    open_mode: bool = option(
        True,
        "true: every GET is public and every other method needs the admin; false: everything but "
        "/actuator/health/**, /actuator/info, the sign-in call and the web pages (/login, the "
        "shell at / and their /ui assets) needs the admin. Paths that return secrets (exec, pod "
        "files, Helm values) need the admin in both modes. Default true.",
    )
    admin: AdminSettings = section(AdminSettings, "The admin login.")
    session_timeout_minutes: int = option(
        30,
        "Idle lifetime of a JSESSIONID session, in minutes; each authenticated request renews it. "
        "Default 30 (Spring's default).",
    )


@attrs.frozen
class FilesSettings:
    enabled: bool = option(
        False, "Whether the pod file browser is served at all (reported by /about). Default false."
    )
    writable: bool = option(
        False,
        "Whether the pod file browser may write and delete (needs enabled; reported by /about). "
        "Default false.",
    )
    allowed_roots: tuple[str, ...] = option(
        ("/",),
        "Container directories the file browser may reach, checked after resolving links "
        "(reported by /about to signed-in callers only). Default /.",
    )
    max_read_bytes: int = option(
        MiB, "Largest file the browser reads or downloads, in bytes. Default 1 MiB."
    )
    max_write_bytes: int = option(MiB, "Largest file the browser writes, in bytes. Default 1 MiB.")


@attrs.frozen
class PortForwardSettings:
    bind_address: str = option(
        "127.0.0.1",
        "Address the listening sockets of port-forwards bind to. Default 127.0.0.1 (loopback "
        "only): anyone who can reach a forward's port reaches the pod, without credentials.",
    )
    max_forwards: int = option(
        64, "Most port-forwards open at once, over all clusters. Default 64."
    )


@attrs.frozen
class AiSettings:
    provider: str | None = option(
        None,
        "LLM provider used for diagnosis summaries (for example anthropic). Unset: no LLM is "
        "configured, /about reports AI disabled and summary requests get 409 ai-unavailable.",
    )
    model: str | None = option(None, "Model name passed to the provider. Default unset.")
    api_key: str | None = option(None, "API key of the LLM provider. Default unset.", secret=True)
    base_url: str | None = option(
        None,
        "Base URL of an OpenAI-compatible chat-completions API (the console POSTs to "
        "<base-url>/chat/completions). Default: the provider's public one for openai and "
        "anthropic; required for any other provider (vLLM, Ollama, a gateway).",
    )
    timeout_seconds: float = option(
        60.0, "How long a summary request waits for the model, in seconds. Default 60."
    )


@attrs.frozen
class ValuesLibrarySettings:
    max_size: int = option(
        256 * 1024, "Largest values file the library accepts, in bytes. Default 256 KiB."
    )
    max_files: int = option(500, "Most values files the library keeps. Default 500.")


@attrs.frozen
class HelmSettings:
    """The embedded chart library (chartsvc's, under /api/v1/helm) and the values library."""

    repositories: RepositoriesSettings = section(
        RepositoriesSettings,
        "Chart repositories (Helm's repositories.yaml and index cache); paths default under "
        "<data-dir>/helm.",
    )
    charts: ChartLimits = section(ChartLimits, "Limits on chart archives.")
    hub: HubSettings = section(HubSettings, "Artifact Hub search.")
    oci: OciSettings = section(OciSettings, "OCI registries (credentials default under helm/).")
    block_private_networks: bool = option(
        False,
        "Also refuse chart fetches to 10/8, 172.16/12 and 192.168/16 (loopback, link-local and "
        "metadata addresses are always refused). Default false so internal repositories work.",
    )
    values: ValuesLibrarySettings = section(ValuesLibrarySettings, "The values-file library.")


@attrs.frozen
class SamplerSettings:
    interval_seconds: float = option(
        30.0,
        "How often the console samples metrics.k8s.io of a cluster whose graphs are being "
        "read, in seconds. Default 30 (metrics-server refreshes every 15 to 60).",
    )
    history_minutes: int = option(
        60,
        "How much of each graph series the sampler keeps, in minutes; a cluster nobody graphed "
        "for that long is no longer sampled. Default 60.",
    )
    max_series: int = option(
        5000, "Most series kept in memory (least recently updated dropped first). Default 5000."
    )


@attrs.frozen
class ConsoleSettings:
    data_dir: Path = option(
        default_data_dir("console"),
        "Directory for the service's files (the runtime cluster store). Default ./var/console.",
    )
    kubeconfig: str | None = option(
        None,
        "Kubeconfig file(s) whose contexts become the static clusters, a path list like "
        "KUBECONFIG. Unset: KUBECONFIG, else ~/.kube/config, exactly as kubectl reads them.",
    )
    clusters: ClustersSettings = section(ClustersSettings, "Clusters and their store.")
    security: SecuritySettings = section(SecuritySettings, "Open or closed mode and the admin.")
    files: FilesSettings = section(FilesSettings, "The pod file browser.")
    port_forwards: PortForwardSettings = section(PortForwardSettings, "Port-forwards.")
    ai: AiSettings = section(AiSettings, "The optional LLM for diagnosis summaries.")
    sampler: SamplerSettings = section(
        SamplerSettings, "The in-memory metrics sampler behind graphs without Prometheus."
    )
    helm: HelmSettings = section(HelmSettings, "Releases, the chart library and values library.")
    server: ServerSettings = section(
        ServerSettings, "Connections: header-read and keep-alive timeouts, the per-address cap."
    )

    @property
    def store_path(self) -> Path:
        return self.clusters.store.path or self.data_dir / "clusters.db"

    @property
    def store_url(self) -> str:
        """``console.clusters.store.url``, else ``sqlite:`` and the file at ``store_path``."""
        return self.clusters.store.url or f"sqlite:{self.store_path}"

    @property
    def helm_dir(self) -> Path:
        return self.data_dir / "helm"

    def chart_library(self) -> ChartsvcSettings:
        """chartsvc's settings for the embedded chart library, its files under ``helm_dir``."""
        helm = self.helm
        return ChartsvcSettings(
            data_dir=self.helm_dir,
            security=ChartSecurity(block_private_networks=helm.block_private_networks),
            repositories=helm.repositories,
            charts=helm.charts,
            hub=helm.hub,
            oci=helm.oci,
        )

    @property
    def ai_base_url(self) -> str | None:
        return self.ai.base_url or PUBLIC_AI_URLS.get((self.ai.provider or "").lower())

    @property
    def ai_enabled(self) -> bool:
        """An LLM is configured: a provider, a model, where to reach it, and a key unless the
        base URL was given (a self-hosted model may need none)."""
        ai = self.ai
        return bool(ai.provider and ai.model and self.ai_base_url and (ai.api_key or ai.base_url))


@attrs.frozen
class Settings:
    console: ConsoleSettings = section(ConsoleSettings, "The cluster console.")
