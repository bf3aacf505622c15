"""YAML in one place: libyaml's C loaders and dumper when PyYAML was built with it, else the pure ones.

Only safe loaders exist here: ``load``/``load_all`` build plain mappings, lists and scalars;
``load_strings`` keeps every scalar a string (YAML 1.1 would read ``version: 1.10`` as 1.1 and
``no`` as False, which Helm's files must not suffer). ``YAMLError`` is PyYAML's, re-exported so
callers catch it without importing PyYAML themselves. Loader classes are exported for the two
readers that add constructors of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from common import documents

YAMLError = yaml.YAMLError
#: Plain data only (the C SafeLoader when available).
SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: Every scalar a string (the C BaseLoader when available).
BaseLoader: type[yaml.BaseLoader] = getattr(yaml, "CBaseLoader", yaml.BaseLoader)
SafeDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load(text: str | bytes) -> Any:
    """One document as plain data; raises :data:`YAMLError`."""
    return _shallow(yaml.load(text, Loader=SafeLoader))  # noqa: S506 - a safe loader


def load_all(text: str | bytes) -> Iterator[Any]:
    """Each document of a stream, lazily; raises :data:`YAMLError` while iterating."""
    return map(_shallow, yaml.load_all(text, Loader=SafeLoader))


def load_strings(text: str | bytes) -> Any:
    """One document with every scalar kept as the string written."""
    return _shallow(yaml.load(text, Loader=BaseLoader))  # noqa: S506 - a base loader builds no objects


def _shallow(document: Any) -> Any:
    """``document`` unless it nests past ``documents.MAX_DEPTH`` (libyaml stops only at 1,000
    levels, past what recursive code after it survives)."""
    if documents.deeper_than(document):
        raise YAMLError(f"the document {documents.TOO_DEEP}")
    return document


def dump(document: Any, *, sort_keys: bool = False) -> str:
    """Block-style YAML, Unicode kept as written."""
    text: str = yaml.dump(
        document,
        Dumper=SafeDumper,
        sort_keys=sort_keys,
        default_flow_style=False,
        allow_unicode=True,
    )
    return text
