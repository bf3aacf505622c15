"""Archive limits applied before any chart code sees the bytes."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from chartsvc.archives import ArchiveLimits, ArchiveTooLarge, BadArchive, check, without_gzip_extra


def make_tgz(files: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_helm_packaged_archive_passes(chart_archives: dict[str, Path]) -> None:
    check(chart_archives["demo-0.2.0"].read_bytes(), ArchiveLimits())  # gzip FEXTRA from Helm


def test_decompressed_size_cap_is_413() -> None:
    bomb = make_tgz({"c/Chart.yaml": b"0" * 200_000})
    assert len(bomb) < 2_000
    with pytest.raises(ArchiveTooLarge):
        check(bomb, ArchiveLimits(max_decompressed_bytes=100_000))


def test_entry_count_cap_is_400() -> None:
    many = make_tgz({f"c/f{i}": b"" for i in range(30)})
    with pytest.raises(BadArchive, match="more than 20 entries"):
        check(many, ArchiveLimits(max_entries=20))


def test_compressed_size_cap_is_413() -> None:
    with pytest.raises(ArchiveTooLarge):
        check(make_tgz({"c/Chart.yaml": b"x"}), ArchiveLimits(max_archive_bytes=10))


@pytest.mark.parametrize(
    "data",
    [b"plain text", gzip.compress(b"not a tar at all" * 40, mtime=0), b"", make_tgz({})],
    ids=["plain text", "gzip of no tar", "empty", "empty tar"],  # a gzip's bytes hold its time
)
def test_not_an_archive_is_400(data: bytes) -> None:
    with pytest.raises(BadArchive):
        check(data, ArchiveLimits())


@pytest.mark.parametrize("name", ["../escape/Chart.yaml", "/etc/passwd"])
def test_paths_leaving_the_chart_are_refused(name: str) -> None:
    with pytest.raises(BadArchive, match="leaves the chart"):
        check(make_tgz({name: b"x"}), ArchiveLimits())


def test_without_gzip_extra_makes_helm_archives_stream_readable(
    chart_archives: dict[str, Path],
) -> None:
    helm_made = chart_archives["demo-0.1.0"].read_bytes()
    assert helm_made[3] & 0x04  # Helm writes a FEXTRA header field
    with (
        pytest.raises(tarfile.ReadError),
        tarfile.open(fileobj=io.BytesIO(helm_made), mode="r|gz") as tar,
    ):
        tar.getnames()
    plain = without_gzip_extra(helm_made)
    with tarfile.open(fileobj=io.BytesIO(plain), mode="r|gz") as tar:
        assert "demo/Chart.yaml" in tar.getnames()
    assert without_gzip_extra(plain) is plain
