"""Pod files (``spec/console.files.yaml``): a directory listing, a file read, written or deleted."""

from __future__ import annotations

import base64
from typing import TypedDict

from console.streams.podfiles import Entry, Listing, Skipped


class PodFileEntry(TypedDict):
    name: str
    path: str
    type: str
    size: int
    mode: str
    modified: str


class PodFileSkipped(TypedDict):
    name: str
    reason: str


class PodFileListing(TypedDict):
    path: str
    entries: list[PodFileEntry]
    truncated: bool
    skipped: list[PodFileSkipped]


class PodFileWritten(TypedDict):
    path: str
    size: int


class PodFileContent(PodFileWritten):
    encoding: str
    content: str


def encode_entry(entry: Entry) -> PodFileEntry:
    return {
        "name": entry.name,
        "path": entry.path,
        "type": entry.type,
        "size": entry.size,
        "mode": entry.mode,
        "modified": entry.modified,
    }


def encode_listing(listing: Listing) -> PodFileListing:
    return {
        "path": listing.path,
        "entries": [encode_entry(e) for e in listing.entries],
        "truncated": listing.truncated,
        "skipped": [encode_skipped(s) for s in listing.skipped],
    }


def encode_skipped(skipped: Skipped) -> PodFileSkipped:
    return {"name": skipped.name, "reason": skipped.reason}


def encode_written(path: str, size: int) -> PodFileWritten:
    return {"path": path, "size": size}


def encode_content(path: str, data: bytes) -> PodFileContent:
    """The file as text when it is UTF-8, else base64 (``encoding`` says which)."""
    try:
        content, encoding = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        content, encoding = base64.b64encode(data).decode(), "base64"
    return {"path": path, "size": len(data), "encoding": encoding, "content": content}
