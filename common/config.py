"""Settings: frozen attrs classes filled from defaults < YAML file < environment < ``--set``.

Each service declares its settings as ``@attrs.frozen`` classes whose fields are made with
:func:`option` (a leaf with a doc string) or :func:`section` (a nested group). A field ``api_key`` is
the key ``api-key``; the root class has one field named after the service, so keys read exactly as the
contracts print them (``chartsvc.security.mode``).

This module parses and checks; it never reads ``os.environ`` or argv itself (the commands pass
them in), and it never logs values, since some are secrets.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from common import yamlio

S = TypeVar("S")

#: Top-level sections that belong to Wharf services. A shared config file may hold all of them;
#: a service reads its own section and leaves the others alone.
SERVICE_SECTIONS = ("chartsvc", "results", "console")


class ConfigError(Exception):
    """A setting that stops start-up; ``str()`` is the one line the CLI prints (exit code 2)."""

    def __init__(self, key: str, expected: str, *, source: str = "") -> None:
        where = f" (from {source})" if source else ""
        super().__init__(f"invalid setting {key}{where}: expected {expected}")
        self.key = key


def option(default: Any, doc: str, *, secret: bool = False) -> Any:
    """A settings leaf. ``doc`` says the unit, the default and why; secrets never appear in repr."""
    kwargs: dict[str, Any] = {"repr": not secret, "metadata": {"doc": doc, "secret": secret}}
    if isinstance(default, list | dict):
        raise TypeError("mutable defaults are not allowed in settings; use a tuple")
    return attrs.field(default=default, **kwargs)


def section(cls: type[Any], doc: str) -> Any:
    """A nested settings group, defaulting to the group's own defaults."""
    return attrs.field(factory=cls, metadata={"doc": doc, "section": True})


@attrs.frozen
class SettingInfo:
    """One leaf key, as documented and as read."""

    key: str
    type_name: str
    default: Any
    doc: str
    secret: bool


def key_name(field_name: str) -> str:
    return field_name.replace("_", "-")


def env_name(key: str) -> str:
    return key.upper().replace(".", "_").replace("-", "_")


def describe(root: type[Any]) -> list[SettingInfo]:
    """Every leaf setting of ``root``, in declaration order (for docs, env lookup and checks)."""
    return list(_walk(root, ""))


def _walk(cls: type[Any], prefix: str) -> Iterator[SettingInfo]:
    hints = typing.get_type_hints(cls)
    for field in attrs.fields(cls):
        key = f"{prefix}{key_name(field.name)}"
        if field.metadata.get("section"):
            yield from _walk(hints[field.name], key + ".")
            continue
        if "doc" not in field.metadata:
            raise TypeError(f"setting {key} has no doc; declare it with option()")
        default = field.default
        yield SettingInfo(
            key=key,
            type_name=_type_name(hints[field.name]),
            default=None if field.metadata["secret"] else default,
            doc=field.metadata["doc"],
            secret=field.metadata["secret"],
        )


def load_settings(
    root: type[S],
    *,
    config_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    overrides: Sequence[str] = (),
) -> S:
    """Merge the four sources and build ``root``; raises :class:`ConfigError` on the first bad key."""
    known = {info.key: info for info in describe(root)}
    own_sections = {key.split(".", 1)[0] for key in known}
    raw: dict[str, tuple[Any, str]] = {}
    if config_file is not None:
        for key, value in _flatten(_read_yaml(config_file)):
            if key.split(".", 1)[0] in set(SERVICE_SECTIONS) - own_sections:
                continue  # another service's section of a shared config file
            raw[key] = (value, str(config_file))
    for key in known:
        name = env_name(key)
        if environ is not None and name in environ:
            raw[key] = (environ[name], f"environment {name}")
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(item, "key=value", source="--set")
        raw[key.strip()] = (value, "--set")
    for key, (_, source) in raw.items():
        if key not in known:
            raise ConfigError(key, "a known setting (this key does not exist)", source=source)
    return _build(root, "", raw)


def _read_yaml(path: Path) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("--config", f"a readable file ({exc.strerror}: {path})") from exc
    try:
        data = yamlio.load(text)
    except yamlio.YAMLError as exc:
        raise ConfigError("--config", f"valid YAML ({path}: {exc})") from exc
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ConfigError("--config", f"a YAML mapping at the top of {path}")
    return data


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flatten(value, full + ".")
        else:
            yield full, value


def _build(cls: type[S], prefix: str, raw: Mapping[str, tuple[Any, str]]) -> S:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for field in attrs.fields(cls):  # type: ignore[arg-type]
        key = f"{prefix}{key_name(field.name)}"
        if field.metadata.get("section"):
            kwargs[field.name] = _build(hints[field.name], key + ".", raw)
        elif key in raw:
            value, source = raw[key]
            kwargs[field.name] = convert(value, hints[field.name], key=key, source=source)
    return cls(**kwargs)


def convert(value: Any, target: Any, *, key: str, source: str = "") -> Any:
    """Turn a YAML value or a string from env/--set into ``target``, or raise ConfigError."""
    origin = typing.get_origin(target)
    if origin in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(target) if m is not type(None)]
        if value is None or (isinstance(value, str) and value.lower() in ("", "null", "none")):
            return None
        return convert(value, members[0], key=key, source=source)
    if origin is tuple:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise ConfigError(key, "a list", source=source)
        (member, _) = typing.get_args(target)
        return tuple(
            convert(i.strip() if isinstance(i, str) else i, member, key=key) for i in items
        )
    try:
        return _scalar(value, target)
    except (ValueError, TypeError):
        raise ConfigError(key, _type_name(target), source=source) from None


def _scalar(value: Any, target: Any) -> Any:
    if isinstance(target, type) and issubclass(target, enum.Enum):
        return target(str(value))
    if target is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise ValueError(value)
    if target is int:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(value)
        return int(str(value).replace("_", "")) if isinstance(value, str) else int(value)
    if target is float:
        if isinstance(value, bool):
            raise ValueError(value)
        return float(value)
    if target is Path:
        if not isinstance(value, str) or not value:
            raise ValueError(value)
        return Path(value).expanduser()
    if target is str:
        if isinstance(value, Mapping | list):
            raise ValueError(value)
        return str(value)
    raise TypeError(f"unsupported settings type {target!r}")


def _type_name(target: Any) -> str:
    origin = typing.get_origin(target)
    if origin in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(target) if m is not type(None)]
        return f"{_type_name(members[0])} or null"
    if origin is tuple:
        return f"a list of {_type_name(typing.get_args(target)[0])}"
    if isinstance(target, type) and issubclass(target, enum.Enum):
        return "one of " + ", ".join(str(m.value) for m in target)
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    return names.get(target, "a path" if target is Path else getattr(target, "__name__", "?"))


def data_dir_option(service: str, holds: str) -> Any:
    """A service's ``data-dir`` setting (what the folder ``holds``, in words), by default
    ``./var/<service>`` under the cwd.

    A relative default keeps a checkout self-contained (``./scripts/run`` from the repo root), and a
    systemd unit or pod sets ``<service>.data-dir`` to its state directory.
    """
    default = Path("var") / service
    return option(default, f"Directory for the service's files ({holds}). Default ./{default}.")
