"""Results service settings, grouped as the contract prints them (``results.security.open-mode``).

The contract names ``results.security.require-ingest-token`` and an open mode; the other keys are
ours and described in ``spec/results.yaml``. This module only declares; ``common.config`` reads
the sources.

Ownership: ``SecuritySettings`` belongs to the accounts/auth side — add its fields there (sessions,
password hashing, bootstrap admin, ...) without touching the other groups. Everything else here is
read by ingest, the gate and the store.
"""

from __future__ import annotations

import enum
from pathlib import Path

import attrs

from common.config import data_dir_option, option, section
from common.serving import ServerSettings, server_section
from results.runs import Visibility

MiB = 1024 * 1024


class MissingDataPolicy(enum.Enum):
    """What a gate rule answers when the data it needs is missing (the detail always says so)."""

    PASS = "PASS"  # noqa: S105 - a policy name, not a password
    FAIL = "FAIL"


@attrs.frozen
class DbSettings:
    url: str | None = option(
        None,
        "The database: postgresql://user:password@host:port/dbname for a PostgreSQL server that "
        "N replicas share (see docs/running-replicas.md), or sqlite:PATH. Unset: the SQLite file "
        "at results.db.path. Default unset.",
        secret=True,
    )
    path: Path | None = option(
        None, "SQLite database file. Default <data-dir>/results.db (created on first start)."
    )
    pool_size: int = option(
        10,
        "PostgreSQL only: connections each replica keeps open, at most. Default 10.",
    )
    busy_timeout_ms: int = option(
        5000,
        "How long a connection waits for a lock held by another process before failing, in "
        "milliseconds. Default 5000.",
    )


class CookieSecure(enum.Enum):
    """When the session cookie carries ``Secure``."""

    AUTO = "AUTO"
    ALWAYS = "ALWAYS"
    NEVER = "NEVER"


@attrs.frozen
class AdminSettings:
    username: str | None = option(
        None,
        "User created with role ADMIN on start-up when no user of that name exists (an existing "
        "user is never changed). Default unset: no bootstrap.",
    )
    password: str | None = option(
        None,
        "Password of the bootstrap admin: plain text, or a hash from `wharf results hash-password` "
        "written as {scrypt}scrypt$... so the file holds no usable secret. Required with username.",
        secret=True,
    )


@attrs.frozen
class SecuritySettings:
    open_mode: bool = option(
        True,
        "true: API reads, the dashboard and ingest need no login (/me and /profile still do); "
        "false: every API call needs a credential (401 problem) and every page a login "
        "(redirect to /login). Default true.",
    )
    require_ingest_token: bool = option(
        False,
        "Require a valid API token (Authorization: Bearer or X-Results-Token) on POST "
        "/api/v1/ingest, even in open mode; otherwise 401. Default false.",
    )
    cookie_secure: CookieSecure = option(
        CookieSecure.AUTO,
        "Secure flag of the session cookie: AUTO sets it when the request came over HTTPS "
        "(directly or as X-Forwarded-Proto: https from a proxy); ALWAYS; NEVER. Default AUTO.",
    )
    session_hours: int = option(
        12, "Lifetime of a login session, in hours, after which the user logs in again. Default 12."
    )
    admin: AdminSettings = section(AdminSettings, "Admin account bootstrapped on first start.")


@attrs.frozen
class ProjectSettings:
    default_visibility: Visibility = option(
        Visibility.PUBLIC,
        "Visibility of a project created by its first ingest. PRIVATE projects are invisible "
        "(404) to non-members. Default PUBLIC.",
    )


@attrs.frozen
class IngestSettings:
    max_parts: int = option(
        64,
        "Most multipart parts in one ingest request (fields and files); more gets 413. "
        "Default 64 (CI uploads bigger sets in several requests with one runKey).",
    )
    max_part_bytes: int = option(
        64 * MiB,
        "Largest single uploaded report as sent, in bytes; larger gets 413. Default 64 MiB.",
    )
    max_total_bytes: int = option(
        256 * MiB,
        "Largest ingest request body, all parts together, in bytes; larger gets 413. "
        "Default 256 MiB.",
    )
    max_diff_bytes: int = option(
        8 * MiB,
        "Largest diff part (the change under test, for patch coverage) as sent and after gzip "
        "decompression, in bytes; larger gets 413 naming the part. Default 8 MiB.",
    )
    max_report_bytes: int = option(
        256 * MiB,
        "Largest report after gzip decompression, in bytes (the gzip-bomb guard); larger gets "
        "413. Default 256 MiB.",
    )
    max_elements: int = option(
        1_000_000,
        "Most XML elements in the reports of one ingest request, all files together; more gets "
        "413. Parsed test cases are held until the run is written (about 600 bytes each), so "
        "this bounds an ingest's memory. Default 1000000 (a 20,000-test report with 5 MB of "
        "JaCoCo is about 160000).",
    )
    max_xml_depth: int = option(
        64, "Deepest element nesting accepted in an XML report; deeper gets 400. Default 64."
    )
    temp_dir: Path | None = option(
        None,
        "Where uploads are spooled while they are parsed; leftovers of a killed process are "
        "removed at start-up. Default <data-dir>/spool.",
    )


@attrs.frozen
class GateSettings:
    base_branch: str = option(
        "main",
        "Branch whose latest run (same flag) is the baseline when no baseSha run exists. "
        "Default main.",
    )
    max_coverage_drop_pct: float = option(
        1.0,
        "coverage-drop rule: largest allowed fall of line coverage against the baseline, in "
        "percentage points. Default 1.0.",
    )
    min_line_coverage: float | None = option(
        None,
        "min-coverage rule: lowest allowed line coverage in percent; the rule is left out "
        "when unset. Default unset.",
    )
    patch_coverage_min: float | None = option(
        None,
        "patch-coverage rule: lowest allowed coverage of the lines the run's diff added, in "
        "percent; the rule is left out when unset. A run uploaded without a diff skips it and "
        "says so. Default unset.",
    )
    fail_on_new_failures: bool = option(
        True,
        "new-failures rule: fail on failing tests that were not failing in the baseline. "
        "Default true.",
    )
    on_missing_coverage: MissingDataPolicy = option(
        MissingDataPolicy.PASS,
        "Answer of the coverage rules when the gated run has no line coverage. The rule detail "
        "always names the missing data. Default PASS.",
    )
    on_missing_baseline: MissingDataPolicy = option(
        MissingDataPolicy.PASS,
        "Answer of coverage-drop when there is no baseline run or it has no coverage. "
        "Default PASS (the first run of a project has no baseline).",
    )
    on_zero_tests: MissingDataPolicy = option(
        MissingDataPolicy.FAIL,
        "Answer of new-failures when the gated run holds no test results at all. "
        "Default FAIL (a test step that ran nothing is usually broken).",
    )


@attrs.frozen
class EventsSettings:
    """Owned by the events side (``results.events``), like ``SecuritySettings``."""

    queue_size: int = option(
        256,
        "Run events queued for one stream before it counts as too slow; a slower client's stream "
        "is closed and it catches up by reconnecting with Last-Event-ID. Default 256.",
    )
    max_subscribers: int = option(
        10_000, "Open event streams allowed at once; more get 503. Default 10000."
    )
    max_anonymous_per_address: int = option(
        64,
        "Open anonymous event streams allowed from one client address; more get 429. Streams "
        "of logged-in users and tokens do not count. Behind a reverse proxy every client has "
        "the proxy's address: raise it there. Default 64.",
    )
    replay_limit: int = option(
        100,
        "Most missed runs replayed to a stream reconnecting with Last-Event-ID (the newest "
        "ones). Default 100.",
    )


@attrs.frozen
class ResultsSettings:
    data_dir: Path = data_dir_option("results", "the database")
    db: DbSettings = section(DbSettings, "The database: SQLite (default) or PostgreSQL.")
    security: SecuritySettings = section(SecuritySettings, "Logins, tokens and open mode.")
    projects: ProjectSettings = section(ProjectSettings, "Projects.")
    ingest: IngestSettings = section(IngestSettings, "Limits on report uploads.")
    gate: GateSettings = section(GateSettings, "The quality gate.")
    events: EventsSettings = section(EventsSettings, "The live event stream.")
    server: ServerSettings = server_section()

    @property
    def db_path(self) -> Path:
        return self.db.path or self.data_dir / "results.db"

    @property
    def spool_dir(self) -> Path:
        """Where uploads are spooled: the service's own folder, so start-up may sweep it."""
        return self.ingest.temp_dir or self.data_dir / "spool"

    @property
    def db_url(self) -> str:
        """``results.db.url``, else ``sqlite:`` and the file at ``db_path``."""
        return self.db.url or f"sqlite:{self.db_path}"


@attrs.frozen
class Settings:
    results: ResultsSettings = section(ResultsSettings, "The test-results service.")
