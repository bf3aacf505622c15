"""Names the JUnit XML dialect of a report, from evidence the JUnit parser collects on the way.

The dialect is reported as a diagnostic so a user can see how their file was understood; the
parser's behaviour does not depend on it (every rule applies to every dialect). Evidence is taken
from the root, the suites and only the first few test cases, so detection costs nothing on large
files. This module must not change parse results.
"""

from __future__ import annotations

import attrs

#: Test cases inspected for evidence; dialect markers appear on every case, so a few suffice.
SAMPLE_CASES = 20

_GRADLE_SUITE_ATTRS = ("name", "tests", "skipped", "failures", "errors", "timestamp", "hostname")


@attrs.define
class DialectEvidence:
    root_name: str = ""
    suite_names: set[str] = attrs.field(factory=set)
    first_suite_attrs: tuple[str, ...] | None = None
    markers: set[str] = attrs.field(factory=set)
    cases_seen: int = 0

    def saw_root(self, attrs_: dict[str, str]) -> None:
        self.root_name = attrs_.get("name", "")
        self._schema(attrs_)

    def saw_suite(self, attrs_: dict[str, str]) -> None:
        if self.first_suite_attrs is None:
            self.first_suite_attrs = tuple(attrs_)
        self.suite_names.add(attrs_.get("name", ""))
        if attrs_.get("hostname", "").startswith("executor://"):
            self.markers.add("dotnet")
        if "assertions" in attrs_:
            self.markers.add("phpunit")
        self._schema(attrs_)

    def saw_property(self, name: str) -> None:
        if name == "go.version":
            self.markers.add("go")
        elif name.startswith(("surefire.", "maven.")):
            self.markers.add("surefire")

    def saw_case(self, attrs_: dict[str, str]) -> None:
        self.cases_seen += 1
        if "assertions" in attrs_:
            self.markers.add("phpunit")
        if "file" in attrs_ and "line" in attrs_:
            self.markers.add("file-line")
        if attrs_.get("file", "").lower().endswith(".dll"):
            self.markers.add("dotnet")
        if "status" in attrs_:
            self.markers.add("gtest" if "result" in attrs_ else "status")
        if "duration" in attrs_ and "classname" not in attrs_:
            self.markers.add("bazel")
        classname = attrs_.get("classname")
        if classname and classname == attrs_.get("name"):
            self.markers.add("classname-is-name")  # jest-junit's default naming

    def saw_retry(self) -> None:
        self.markers.add("retries")

    def _schema(self, attrs_: dict[str, str]) -> None:
        for key, value in attrs_.items():
            if key.endswith("noNamespaceSchemaLocation") and "surefire" in value:
                self.markers.add("surefire")

    def decide(self) -> str:
        marks = self.markers
        ordered = (
            ("surefire", "surefire" in marks),
            ("gradle", self._gradle_shape()),
            ("bazel", "bazel" in marks and "status" in marks),
            ("googletest", "gtest" in marks),
            ("dotnet-junit-logger", "dotnet" in marks),
            ("phpunit", "phpunit" in marks),
            ("pytest-xunit1", "pytest" in self.suite_names and "file-line" in marks),
            ("pytest-xunit2", "pytest" in self.suite_names),
            ("jest-junit", self.root_name == "jest tests" or "classname-is-name" in marks),
            ("mocha-junit-reporter", self.root_name == "Mocha Tests"),
            ("go-junit-report", "go" in marks and "hostname" in (self.first_suite_attrs or ())),
            ("gotestsum", "go" in marks),
            ("surefire", "retries" in marks),
        )
        return next((name for name, matched in ordered if matched), "generic")

    def _gradle_shape(self) -> bool:
        attrs_ = self.first_suite_attrs
        return attrs_ is not None and attrs_[: len(_GRADLE_SUITE_ATTRS)] == _GRADLE_SUITE_ATTRS
