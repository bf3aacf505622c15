"""The results schema as numbered migrations, for SQLite and PostgreSQL, applied in order.

Every table of the service is here from the first migration, the accounts tables included (their
SQL lives in ``results.store.accounts``). A migration is never edited once released: a change is a
new entry at the end of ``MIGRATIONS``. Each migration runs in one transaction together with the
``user_version`` bump, so a crash mid-migration leaves the previous version intact.

Decisions worth knowing:
- ``AUTOINCREMENT`` on runs: ids are never reused, because a run id is also the live-event id that
  ``Last-Event-ID`` replays from, and "latest run" means highest id (the wall clock here is not
  trusted to order runs).
- Line data is stored per (run, file) as range text (``1-5,7``), so shards merge by line union
  without reading any other run.
- ``users.username`` compares case-insensitively, so ``Alice`` and ``alice`` are one account.
- Suites are indexed by run only, and test cases by run where they did not pass (V2) and by run
  and test (V3, for history): uploads are never deleted on their own, and a 20,000-case ingest
  pays for every extra index. A case names its test by id in the project's catalog (``tests``). A bulk
  deletion of runs (retention, when it comes) should delete their cases by id range (an upload's
  cases go in together, so their ids are contiguous): the cascade through ``run_id`` would scan.

This module holds the schema only; ``common.db`` applies it.
"""

from __future__ import annotations

from common.db import Schema

V1 = """
CREATE TABLE projects (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    visibility  TEXT NOT NULL DEFAULT 'PUBLIC' CHECK (visibility IN ('PUBLIC', 'PRIVATE')),
    created_at  TEXT NOT NULL
);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
    display_name  TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL DEFAULT 'MEMBER' CHECK (role IN ('ADMIN', 'MEMBER')),
    password_hash TEXT,
    created_at    TEXT NOT NULL
);

CREATE TABLE memberships (
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    role        TEXT NOT NULL DEFAULT 'MEMBER',
    PRIMARY KEY (user_id, project_id)
) WITHOUT ROWID;
CREATE INDEX memberships_by_project ON memberships(project_id);

CREATE TABLE tokens (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    sha256        TEXT NOT NULL UNIQUE,
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    last_used_at  TEXT,
    revoked_at    TEXT
);
CREATE INDEX tokens_by_user ON tokens(user_id);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX sessions_by_user ON sessions(user_id);
CREATE INDEX sessions_by_expiry ON sessions(expires_at);

CREATE TABLE runs (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id        INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    branch            TEXT NOT NULL,
    commit_sha        TEXT NOT NULL,
    flag              TEXT NOT NULL DEFAULT 'default',
    run_key           TEXT,
    build_url         TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('PASSED', 'FAILED')),
    tests             INTEGER NOT NULL DEFAULT 0,
    passed            INTEGER NOT NULL DEFAULT 0,
    failures          INTEGER NOT NULL DEFAULT 0,
    errors            INTEGER NOT NULL DEFAULT 0,
    skipped           INTEGER NOT NULL DEFAULT 0,
    flaky             INTEGER NOT NULL DEFAULT 0,
    duration_ms       INTEGER NOT NULL DEFAULT 0,
    lines_covered     INTEGER NOT NULL DEFAULT 0,
    lines_valid       INTEGER NOT NULL DEFAULT 0,
    branches_covered  INTEGER NOT NULL DEFAULT 0,
    branches_valid    INTEGER NOT NULL DEFAULT 0,
    uploads           INTEGER NOT NULL DEFAULT 0,
    UNIQUE (project_id, run_key)
);
CREATE INDEX runs_by_commit ON runs(project_id, commit_sha, flag);
CREATE INDEX runs_by_branch ON runs(project_id, branch, flag);

CREATE TABLE uploads (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id            INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('junit', 'coverage')),
    sha256            TEXT NOT NULL,
    filename          TEXT,
    format            TEXT NOT NULL,
    size              INTEGER NOT NULL,
    counter_lines_covered     INTEGER,
    counter_lines_valid       INTEGER,
    counter_branches_covered  INTEGER,
    counter_branches_valid    INTEGER,
    created_at        TEXT NOT NULL,
    UNIQUE (run_id, sha256)
);

CREATE TABLE suites (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    upload_id     INTEGER NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    parents       TEXT NOT NULL DEFAULT '',
    tests         INTEGER NOT NULL,
    passed        INTEGER NOT NULL,
    failures      INTEGER NOT NULL,
    errors        INTEGER NOT NULL,
    skipped       INTEGER NOT NULL,
    flaky         INTEGER NOT NULL,
    duration_ms   INTEGER,
    system_out    TEXT,
    system_err    TEXT
);
CREATE INDEX suites_by_run ON suites(run_id);

CREATE TABLE test_cases (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    upload_id     INTEGER NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    suite         TEXT NOT NULL,
    classname     TEXT NOT NULL,
    name          TEXT NOT NULL,
    key           TEXT NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status IN ('passed', 'failed', 'error', 'skipped', 'flaky')),
    duration_ms   INTEGER,
    message       TEXT,
    failure_type  TEXT,
    trace         TEXT,
    reruns        INTEGER NOT NULL DEFAULT 0,
    system_out    TEXT,
    system_err    TEXT
);
CREATE INDEX test_cases_by_run ON test_cases(run_id, status);

CREATE TABLE coverage_files (
    run_id            INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    path              TEXT NOT NULL,
    lines_covered     INTEGER NOT NULL,
    lines_valid       INTEGER NOT NULL,
    branches_covered  INTEGER NOT NULL,
    branches_valid    INTEGER NOT NULL,
    covered           TEXT NOT NULL,
    uncovered         TEXT NOT NULL,
    branches          TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
) WITHOUT ROWID;
"""

# V2, for the cost of a 20,000-case ingest (scripts/bench/results_ingest.py):
# - The status check of test_cases as an OR chain. SQLite (3.40 here) evaluates ``x IN (...)`` in
#   a CHECK by building a temporary table for every row it checks: 39 ms of a 130 ms insert, where
#   the chain costs 3.5 ms. SQLite cannot alter a constraint, so the table is rebuilt (nothing
#   references it, so dropping the old one cascades nowhere).
# - Each JUnit upload keeps the counts and summed duration of its own cases, and a run's totals
#   are summed over its uploads instead of over its cases. Every query left on test_cases asks for
#   cases that did not pass, so the run index holds only those: indexing 20,000 passing cases cost
#   13 ms of each ingest, summing them 9 ms.
V2 = """
ALTER TABLE uploads ADD COLUMN tests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN passed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN errors INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN flaky INTEGER NOT NULL DEFAULT 0;
ALTER TABLE uploads ADD COLUMN duration_ms INTEGER NOT NULL DEFAULT 0;
UPDATE uploads SET tests = t.tests, passed = t.passed, failures = t.failures, errors = t.errors,
    skipped = t.skipped, flaky = t.flaky, duration_ms = t.duration_ms
FROM (
    SELECT upload_id, COUNT(*) AS tests,
           COUNT(*) FILTER (WHERE status = 'passed') AS passed,
           COUNT(*) FILTER (WHERE status = 'failed') AS failures,
           COUNT(*) FILTER (WHERE status = 'error') AS errors,
           COUNT(*) FILTER (WHERE status = 'skipped') AS skipped,
           COUNT(*) FILTER (WHERE status = 'flaky') AS flaky,
           COALESCE(SUM(duration_ms), 0) AS duration_ms
    FROM test_cases GROUP BY upload_id
) AS t
WHERE uploads.id = t.upload_id;
CREATE TABLE test_cases_v2 (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    upload_id     INTEGER NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    suite         TEXT NOT NULL,
    classname     TEXT NOT NULL,
    name          TEXT NOT NULL,
    key           TEXT NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status = 'passed' OR status = 'failed' OR status = 'error'
                         OR status = 'skipped' OR status = 'flaky'),
    duration_ms   INTEGER,
    message       TEXT,
    failure_type  TEXT,
    trace         TEXT,
    reruns        INTEGER NOT NULL DEFAULT 0,
    system_out    TEXT,
    system_err    TEXT
);
INSERT INTO test_cases_v2 SELECT id, run_id, upload_id, suite, classname, name, key, status,
    duration_ms, message, failure_type, trace, reruns, system_out, system_err FROM test_cases;
DROP TABLE test_cases;
ALTER TABLE test_cases_v2 RENAME TO test_cases;
CREATE INDEX test_cases_not_passed ON test_cases(run_id, status) WHERE status <> 'passed';
"""

# V3, for history, flakiness and trends (scripts/bench/results_history.py), within the ingest's
# budget (scripts/bench/results_ingest.py):
# - ``passed`` counts a test that failed and then passed on a rerun: it passed (and is flaky too).
# - ``tests`` is the catalog of a project's test cases, one row per stable key, so a test has an
#   id across runs. A run's cases name their test by that integer instead of repeating suite,
#   classname, name and key as text in every row: the rows shrink from about 150 to 30 bytes, which
#   pays for the index that history needs. ``test_id`` carries no REFERENCES clause: ingest takes
#   every id from the catalog in the same transaction, and checking 20,000 of them costs 5 ms.
# - The index on (run_id, test_id) grows at its end only (run ids only grow), so an ingest writes a
#   few new pages of it, whereas one on (test_id, run_id) would touch one page per test. History
#   reads it per run: the runs of a project or flag come off their index, newest first.
V3 = """
UPDATE uploads SET passed = passed + flaky;
UPDATE suites SET passed = passed + flaky;
UPDATE runs SET passed = passed + flaky;
CREATE TABLE tests (
    id            INTEGER PRIMARY KEY,
    project_id    INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key           TEXT NOT NULL,
    suite         TEXT NOT NULL,
    classname     TEXT NOT NULL,
    name          TEXT NOT NULL,
    first_run_id  INTEGER NOT NULL,
    UNIQUE (project_id, key)
);
INSERT INTO tests (project_id, key, suite, classname, name, first_run_id)
SELECT r.project_id, c.key, c.suite, c.classname, c.name, min(c.run_id)
FROM test_cases c JOIN runs r ON r.id = c.run_id
GROUP BY r.project_id, c.key;
CREATE TABLE test_cases_v3 (
    id            INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    upload_id     INTEGER NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    test_id       INTEGER NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status = 'passed' OR status = 'failed' OR status = 'error'
                         OR status = 'skipped' OR status = 'flaky'),
    duration_ms   INTEGER,
    message       TEXT,
    failure_type  TEXT,
    trace         TEXT,
    reruns        INTEGER NOT NULL DEFAULT 0,
    system_out    TEXT,
    system_err    TEXT
);
INSERT INTO test_cases_v3
SELECT c.id, c.run_id, c.upload_id, t.id, c.status, c.duration_ms, c.message, c.failure_type,
       c.trace, c.reruns, c.system_out, c.system_err
FROM test_cases c JOIN runs r ON r.id = c.run_id
JOIN tests t ON t.project_id = r.project_id AND t.key = c.key;
DROP TABLE test_cases;
ALTER TABLE test_cases_v3 RENAME TO test_cases;
CREATE INDEX test_cases_not_passed ON test_cases(run_id, status) WHERE status <> 'passed';
CREATE INDEX test_cases_by_run_test ON test_cases(run_id, test_id);
CREATE INDEX runs_by_flag ON runs(project_id, flag);
CREATE INDEX runs_by_project ON runs(project_id)
"""

# PostgreSQL: the same three migrations, each making the same change in that dialect. Ids are
# identity columns (never reused, like AUTOINCREMENT: a run id is also the live-event id); user
# names compare case-insensitively through a nondeterministic ICU collation (PostgreSQL has no
# NOCASE); columns compared by range (a commit prefix, a test key, the next flag) use the "C"
# collation, byte order as in SQLite, whatever the database's locale; a column that SQLite can
# only drop by rebuilding its table is altered in place.
PG_V1 = """
CREATE COLLATION IF NOT EXISTS wharf_nocase (
    provider = icu, locale = 'und-u-ks-level2', deterministic = false
);

CREATE TABLE projects (
    id          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    visibility  TEXT NOT NULL DEFAULT 'PUBLIC' CHECK (visibility IN ('PUBLIC', 'PRIVATE')),
    created_at  TEXT NOT NULL
);

CREATE TABLE users (
    id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    username      TEXT NOT NULL UNIQUE COLLATE wharf_nocase,
    display_name  TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL DEFAULT 'MEMBER' CHECK (role IN ('ADMIN', 'MEMBER')),
    password_hash TEXT,
    created_at    TEXT NOT NULL
);

CREATE TABLE memberships (
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    project_id  BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    role        TEXT NOT NULL DEFAULT 'MEMBER',
    PRIMARY KEY (user_id, project_id)
);
CREATE INDEX memberships_by_project ON memberships(project_id);

CREATE TABLE tokens (
    id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    user_id       BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    sha256        TEXT NOT NULL UNIQUE,
    created_at    TEXT NOT NULL,
    expires_at    TEXT,
    last_used_at  TEXT,
    revoked_at    TEXT
);
CREATE INDEX tokens_by_user ON tokens(user_id);

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    csrf        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_id);
CREATE INDEX sessions_by_expiry ON sessions(expires_at);

CREATE TABLE runs (
    id                BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    project_id        BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    branch            TEXT NOT NULL COLLATE "C",
    commit_sha        TEXT NOT NULL COLLATE "C",
    flag              TEXT NOT NULL DEFAULT 'default' COLLATE "C",
    run_key           TEXT,
    build_url         TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('PASSED', 'FAILED')),
    tests             BIGINT NOT NULL DEFAULT 0,
    passed            BIGINT NOT NULL DEFAULT 0,
    failures          BIGINT NOT NULL DEFAULT 0,
    errors            BIGINT NOT NULL DEFAULT 0,
    skipped           BIGINT NOT NULL DEFAULT 0,
    flaky             BIGINT NOT NULL DEFAULT 0,
    duration_ms       BIGINT NOT NULL DEFAULT 0,
    lines_covered     BIGINT NOT NULL DEFAULT 0,
    lines_valid       BIGINT NOT NULL DEFAULT 0,
    branches_covered  BIGINT NOT NULL DEFAULT 0,
    branches_valid    BIGINT NOT NULL DEFAULT 0,
    uploads           BIGINT NOT NULL DEFAULT 0,
    UNIQUE (project_id, run_key)
);
CREATE INDEX runs_by_commit ON runs(project_id, commit_sha, flag);
CREATE INDEX runs_by_branch ON runs(project_id, branch, flag);

CREATE TABLE uploads (
    id                BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id            BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    kind              TEXT NOT NULL CHECK (kind IN ('junit', 'coverage')),
    sha256            TEXT NOT NULL,
    filename          TEXT,
    format            TEXT NOT NULL,
    size              BIGINT NOT NULL,
    counter_lines_covered     BIGINT,
    counter_lines_valid       BIGINT,
    counter_branches_covered  BIGINT,
    counter_branches_valid    BIGINT,
    created_at        TEXT NOT NULL,
    UNIQUE (run_id, sha256)
);

CREATE TABLE suites (
    id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id        BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    upload_id     BIGINT NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    parents       TEXT NOT NULL DEFAULT '',
    tests         BIGINT NOT NULL,
    passed        BIGINT NOT NULL,
    failures      BIGINT NOT NULL,
    errors        BIGINT NOT NULL,
    skipped       BIGINT NOT NULL,
    flaky         BIGINT NOT NULL,
    duration_ms   BIGINT,
    system_out    TEXT,
    system_err    TEXT
);
CREATE INDEX suites_by_run ON suites(run_id);

CREATE TABLE test_cases (
    id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id        BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    upload_id     BIGINT NOT NULL REFERENCES uploads(id) ON DELETE CASCADE,
    suite         TEXT NOT NULL,
    classname     TEXT NOT NULL,
    name          TEXT NOT NULL,
    key           TEXT NOT NULL,
    status        TEXT NOT NULL
                  CHECK (status IN ('passed', 'failed', 'error', 'skipped', 'flaky')),
    duration_ms   BIGINT,
    message       TEXT,
    failure_type  TEXT,
    trace         TEXT,
    reruns        BIGINT NOT NULL DEFAULT 0,
    system_out    TEXT,
    system_err    TEXT
);
CREATE INDEX test_cases_by_run ON test_cases(run_id, status);

CREATE TABLE coverage_files (
    run_id            BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    path              TEXT NOT NULL,
    lines_covered     BIGINT NOT NULL,
    lines_valid       BIGINT NOT NULL,
    branches_covered  BIGINT NOT NULL,
    branches_valid    BIGINT NOT NULL,
    covered           TEXT NOT NULL,
    uncovered         TEXT NOT NULL,
    branches          TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
)
"""

PG_V2 = """
ALTER TABLE uploads ADD COLUMN tests BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN passed BIGINT NOT NULL DEFAULT 0, ADD COLUMN failures BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN errors BIGINT NOT NULL DEFAULT 0, ADD COLUMN skipped BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN flaky BIGINT NOT NULL DEFAULT 0, ADD COLUMN duration_ms BIGINT NOT NULL DEFAULT 0;
UPDATE uploads SET tests = t.tests, passed = t.passed, failures = t.failures, errors = t.errors,
    skipped = t.skipped, flaky = t.flaky, duration_ms = t.duration_ms
FROM (
    SELECT upload_id, COUNT(*) AS tests,
           COUNT(*) FILTER (WHERE status = 'passed') AS passed,
           COUNT(*) FILTER (WHERE status = 'failed') AS failures,
           COUNT(*) FILTER (WHERE status = 'error') AS errors,
           COUNT(*) FILTER (WHERE status = 'skipped') AS skipped,
           COUNT(*) FILTER (WHERE status = 'flaky') AS flaky,
           COALESCE(SUM(duration_ms), 0) AS duration_ms
    FROM test_cases GROUP BY upload_id
) AS t
WHERE uploads.id = t.upload_id;
DROP INDEX test_cases_by_run;
CREATE INDEX test_cases_not_passed ON test_cases(run_id, status) WHERE status <> 'passed'
"""

PG_V3 = """
UPDATE uploads SET passed = passed + flaky;
UPDATE suites SET passed = passed + flaky;
UPDATE runs SET passed = passed + flaky;
CREATE TABLE tests (
    id            BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    project_id    BIGINT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    key           TEXT NOT NULL COLLATE "C",
    suite         TEXT NOT NULL,
    classname     TEXT NOT NULL,
    name          TEXT NOT NULL,
    first_run_id  BIGINT NOT NULL,
    UNIQUE (project_id, key)
);
INSERT INTO tests (project_id, key, suite, classname, name, first_run_id)
SELECT r.project_id, c.key, min(c.suite), min(c.classname), min(c.name), min(c.run_id)
FROM test_cases c JOIN runs r ON r.id = c.run_id
GROUP BY r.project_id, c.key;
ALTER TABLE test_cases ADD COLUMN test_id BIGINT;
UPDATE test_cases c SET test_id = t.id FROM runs r, tests t
WHERE r.id = c.run_id AND t.project_id = r.project_id AND t.key = c.key;
ALTER TABLE test_cases ALTER COLUMN test_id SET NOT NULL,
    DROP COLUMN suite, DROP COLUMN classname, DROP COLUMN name, DROP COLUMN key;
CREATE INDEX test_cases_by_run_test ON test_cases(run_id, test_id);
CREATE INDEX runs_by_flag ON runs(project_id, flag);
CREATE INDEX runs_by_project ON runs(project_id)
"""

# V4, the gate's "latest run on a branch" (``... AND r.branch = ? ORDER BY r.id DESC LIMIT 1``):
# PostgreSQL orders equal index keys by their place in the heap, not by id, so it read every run
# of the branch and sorted them, or walked the primary key backwards past other projects' runs;
# with the id in the index it reads one entry. SQLite's index entries already end with the rowid
# (the id), so its index serves that query as it is.
# And ingest: PostgreSQL checks each foreign key of each inserted row with a query of its own, so
# a 20,000-case load spent half its time checking that every case's run exists. The case's upload
# already names that run (and deleting a run still deletes its cases, through its uploads), so
# PostgreSQL drops the redundant key. SQLite checks keys in-process for next to nothing, and
# could only drop one by rebuilding the table: V4 changes nothing there.
V4 = ""

PG_V4 = """
CREATE INDEX runs_by_branch_newest ON runs(project_id, branch, flag, id);
DROP INDEX runs_by_branch;
ALTER TABLE test_cases DROP CONSTRAINT test_cases_run_id_fkey
"""

# V5, ingest again: PostgreSQL checks a foreign key with a query per inserted row, so the key of
# each case to its upload still cost 100 of the 170 ms of CPU it spent loading 18,000 cases, and
# the key of each test to its project as much when a project's catalog first fills. PostgreSQL
# keeps what those keys guaranteed with statement-level triggers instead: after an insert, one
# query over all its rows finds any parent that does not exist (and locks those that do, as the
# key did, so none is deleted before the commit); after parents are deleted (an upload by its
# run's cascade), their children go with them. Nothing updates an id or a parent column. SQLite
# keeps its foreign keys: V5 changes nothing there.
V5 = ""

PG_V5 = """
CREATE FUNCTION wharf_check_parents() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    -- TG_ARGV: the column of the inserted rows, the table whose id it names.
    named BIGINT[];
    present BIGINT;
BEGIN
    EXECUTE format('SELECT array_agg(DISTINCT %I) FROM added', TG_ARGV[0]) INTO named;
    EXECUTE format('SELECT count(*) FROM (SELECT FROM %I WHERE id = ANY ($1) FOR KEY SHARE) AS p',
                   TG_ARGV[1]) INTO present USING named;
    IF present < cardinality(named) THEN
        RAISE foreign_key_violation USING MESSAGE = format(
            'insert on table "%s" names a row of "%s" that does not exist', TG_TABLE_NAME,
            TG_ARGV[1]);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION wharf_delete_children() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- TG_ARGV: the table of the children, their column naming the deleted rows' ids.
    EXECUTE format('DELETE FROM %I WHERE %I IN (SELECT id FROM removed)', TG_ARGV[0], TG_ARGV[1]);
    RETURN NULL;
END $$;
"""


def _statement_key(child: str, column: str, parent: str) -> str:
    """The foreign key ``child.column`` → ``parent.id`` as the triggers above."""
    return f"""
ALTER TABLE {child} DROP CONSTRAINT {child}_{column}_fkey;
CREATE TRIGGER {child}_check_{parent} AFTER INSERT ON {child}
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT
    EXECUTE FUNCTION wharf_check_parents('{column}', '{parent}');
CREATE TRIGGER {parent}_delete_{child} AFTER DELETE ON {parent}
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT
    EXECUTE FUNCTION wharf_delete_children('{child}', '{column}');
"""


PG_V5 += _statement_key("test_cases", "upload_id", "uploads")
PG_V5 += _statement_key("tests", "project_id", "projects")

# V6, patch coverage: the base commit an upload named, the run's patch totals (NULL: the run came
# without a diff, which is not the same as a diff without coverable lines) and, per changed file,
# the added lines with those of them the coverage counts as covered and missed; and a project's own
# patch-coverage floor (NULL: results.gate.patch-coverage-min).
V6 = """
ALTER TABLE projects ADD COLUMN patch_coverage_min REAL;
ALTER TABLE runs ADD COLUMN base_commit TEXT;
ALTER TABLE runs ADD COLUMN patch_lines_covered INTEGER;
ALTER TABLE runs ADD COLUMN patch_lines_valid INTEGER;
CREATE TABLE patch_files (
    run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    path           TEXT NOT NULL,
    coverage_path  TEXT,
    changed        TEXT NOT NULL,
    covered        TEXT NOT NULL,
    missed         TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
)
"""

PG_V6 = """
ALTER TABLE projects ADD COLUMN patch_coverage_min DOUBLE PRECISION;
ALTER TABLE runs ADD COLUMN base_commit TEXT, ADD COLUMN patch_lines_covered BIGINT,
    ADD COLUMN patch_lines_valid BIGINT;
CREATE TABLE patch_files (
    run_id         BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    path           TEXT NOT NULL COLLATE "C",
    coverage_path  TEXT,
    changed        TEXT NOT NULL,
    covered        TEXT NOT NULL,
    missed         TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
)
"""

SCHEMA = Schema(
    name="results",
    sqlite=(V1, V2, V3, V4, V5, V6),
    postgresql=(PG_V1, PG_V2, PG_V3, PG_V4, PG_V5, PG_V6),
)
#: The SQLite scripts, in order (index ``n`` takes the database from version n to n + 1).
MIGRATIONS = SCHEMA.sqlite
