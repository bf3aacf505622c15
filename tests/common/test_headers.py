"""Header values made from a user's choice: never a CR or LF, RFC 6266 names for downloads."""

from __future__ import annotations

import pytest

from common.headers import content_disposition, location


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("chart-1.0.0.tgz", 'attachment; filename="chart-1.0.0.tgz"'),
        ("a b.txt", 'attachment; filename="a b.txt"'),
        ("ü.txt", "attachment; filename=\"_.txt\"; filename*=UTF-8''%C3%BC.txt"),
        ('x"\\%.txt', "attachment; filename=\"x___.txt\"; filename*=UTF-8''x%22%5C%25.txt"),
        ("a\r\nb", 'attachment; filename="a__b"'),
        ("", 'attachment; filename="download"'),
        ("..", 'attachment; filename="download"'),
        ("x" * 300, f'attachment; filename="{"x" * 200}"'),
    ],
)
def test_content_disposition(name: str, value: str) -> None:
    assert content_disposition(name) == value


def test_location_encodes_what_urls_do_not_allow() -> None:
    assert location("/runs/1?x=a&y=%20#top") == "/runs/1?x=a&y=%20#top"
    assert location("/x\ry\n z\u00e9") == "/x%0Dy%0A%20z%C3%A9"
