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
from common.config import data_dir_option, option, section
from common.serving import ServerSettings, server_section

MiB = 1024 * 1024
#: Public OpenAI-compatible chat-completions bases of providers that have one.
PUBLIC_AI_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com/v1",
}


class StoreBackend(enum.Enum):
    SQLITE = "sqlite"
    MEMORY = "memory"


class Impersonation(enum.Enum):
    """Whether a cluster is asked to act as the person behind each request."""

    AUTO = "auto"  # when the console's own credentials may impersonate (checked on connect)
    ON = "on"
    OFF = "off"


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
    allow_addresses: tuple[str, ...] = option(
        (),
        "Where clusters added through the API may be although the address guard refuses the "
        "class of their server's address (loopback; link-local; private ranges with "
        "block-private-networks): hosts, addresses or CIDR networks, each optionally with :port, "
        "e.g. 127.0.0.1:6443, localhost, 10.20.0.0/16. Cloud metadata addresses are never "
        "allowed. Clusters of the service's own kubeconfig are not checked. Default empty.",
    )
    block_private_networks: bool = option(
        False,
        "Also refuse clusters added through the API whose server is in a private range (10/8, "
        "172.16/12, 192.168/16, 100.64/10, fc00::/7) unless allow-addresses names it. Default "
        "false: clusters usually live on private networks.",
    )
    impersonate: Impersonation = option(
        Impersonation.AUTO,
        "Whether requests made for a person carry Impersonate-User and Impersonate-Group, so the "
        "cluster's RBAC decides what each person may do: auto (on when the console's own "
        "credentials may impersonate users and groups, which a SelfSubjectAccessReview checks "
        "when the console connects the cluster), on, or off (everyone acts with the console's "
        "own credentials). Applies to kubeconfig-context clusters, and to runtime clusters "
        "registered without their own choice. Default auto.",
    )
    impersonate_contexts: tuple[str, ...] = option(
        (),
        "Per-context overrides of console.clusters.impersonate for kubeconfig-context clusters, "
        "each written context=on or context=off (e.g. prod=on,lab=off). Default none.",
    )


@attrs.frozen
class AdminSettings:
    username: str = option(
        "admin",
        "User name of the contract's admin login (named accounts: wharf console user add). "
        "Default admin.",
    )
    password: str | None = option(
        None,
        "Admin password: plain text, or a hash from `wharf console hash-password` written as "
        "{scrypt}scrypt$... so the file holds no usable secret. Unset: nobody can sign in, so "
        "every request that needs the admin is refused with 401. Default unset.",
        secret=True,
    )
    groups: tuple[str, ...] = option(
        ("wharf:admins",),
        "Groups the admin login is a member of, sent to a cluster with its name (so a cluster's "
        "RBAC can bind them). Default wharf:admins.",
    )


@attrs.frozen
class AnonymousSettings:
    user: str = option(
        "system:anonymous",
        "User name an anonymous request (a public read in open mode) acts as toward a cluster. "
        "Default system:anonymous, as Kubernetes names one.",
    )
    groups: tuple[str, ...] = option(
        ("system:unauthenticated",),
        "Groups of the anonymous user. Default system:unauthenticated.",
    )


@attrs.frozen
class ProxySettings:
    user_header: str | None = option(
        None,
        "Header in which a trusted authenticating proxy (oauth2-proxy, Pomerium) names the "
        "signed-in user, e.g. X-Forwarded-User. Honoured only from trusted-networks. Default "
        "unset.",
    )
    groups_header: str | None = option(
        None,
        "Header carrying that user's groups, comma-separated (oauth2-proxy's "
        "X-Forwarded-Groups). Default unset: no groups.",
    )
    trusted_networks: tuple[str, ...] = option(
        (),
        "Client addresses (CIDR list) whose proxy headers are believed; from anywhere else they "
        "are ignored, counted in console_proxy_headers_ignored_total and logged once per "
        "address. Default empty: the proxy way in is off.",
    )


@attrs.frozen
class SecuritySettings:
    open_mode: bool = option(
        True,
        "true: every GET is public and every other method needs a signed-in person (the admin "
        "login, a named account or a trusted proxy's user); false: everything but "
        "/actuator/health/**, /actuator/info, the sign-in call and the web pages (/login, the "
        "shell at / and their /ui assets) needs one. Paths that return secrets (exec, pod "
        "files, Helm values) need one in both modes. Default true.",
    )
    admin: AdminSettings = section(AdminSettings, "The admin login.")
    anonymous: AnonymousSettings = section(
        AnonymousSettings, "Who anonymous requests are toward a cluster."
    )
    proxy: ProxySettings = section(ProxySettings, "A trusted authenticating proxy in front.")
    session_timeout_minutes: int = option(
        30,
        "Idle lifetime of a JSESSIONID session, in minutes; each authenticated request renews it. "
        "Default 30 (Spring's default).",
    )
    access_review_ttl: float = option(
        10.0,
        "How long a cluster's answer to a SubjectAccessReview (may this person watch and list "
        "this resource in this namespace?) is reused, in seconds; a shared watch's subscriber is "
        "checked again on this interval and its stream closed once the answer is no. Every "
        "long-lived stream (SSE, exec WebSocket, port-forward) of a named account also has its "
        "account re-validated on this interval: removed, or given another password or other "
        "groups, it ends. Default 10.",
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
    data_dir: Path = data_dir_option("console", "the runtime cluster store")
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
    server: ServerSettings = server_section()

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

    @property
    def credentials_dir(self) -> Path:
        """Private folder (0700) where certificates live while a cluster client loads them."""
        return self.data_dir / "credentials"

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
