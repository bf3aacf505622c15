"""Settings: source precedence, key spelling, and the one-line errors that stop start-up."""

from __future__ import annotations

import enum
from pathlib import Path

import attrs
import pytest

from common.config import ConfigError, describe, env_name, load_settings, option, section


class Mode(enum.Enum):
    READ_ONLY = "READ_ONLY"
    FULL = "FULL"


@attrs.frozen
class Security:
    mode: Mode = option(Mode.READ_ONLY, "READ_ONLY or FULL.")
    api_key: str | None = option(None, "Key for mutating requests.", secret=True)
    block_private_networks: bool = option(False, "Refuse private ranges.")


@attrs.frozen
class Rest:
    base_path: str = option("/api/v1", "Prefix for all endpoints.")
    max_upload: int = option(100, "MiB.")
    ratio: float = option(1.0, "A number.")
    temp_dir: Path | None = option(None, "Temp dir.")
    origins: tuple[str, ...] = option((), "A list.")


@attrs.frozen
class Svc:
    security: Security = section(Security, "Access gate.")
    rest: Rest = section(Rest, "REST layer.")


@attrs.frozen
class Settings:
    chartsvc: Svc = section(Svc, "The chart service.")


def test_defaults() -> None:
    s = load_settings(Settings)
    assert s.chartsvc.security.mode is Mode.READ_ONLY
    assert s.chartsvc.rest.base_path == "/api/v1"


def test_precedence_file_env_set(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "chartsvc:\n  security:\n    mode: FULL\n  rest.base-path: /from-file\n"
        "chartsvc.rest.max-upload: 5\n"
    )
    s = load_settings(Settings, config_file=cfg)
    assert (s.chartsvc.security.mode, s.chartsvc.rest.base_path, s.chartsvc.rest.max_upload) == (
        Mode.FULL,
        "/from-file",
        5,
    )
    env = {"CHARTSVC_REST_BASE_PATH": "/from-env", "CHARTSVC_REST_MAX_UPLOAD": "6"}
    s = load_settings(Settings, config_file=cfg, environ=env)
    assert (s.chartsvc.rest.base_path, s.chartsvc.rest.max_upload) == ("/from-env", 6)
    s = load_settings(
        Settings, config_file=cfg, environ=env, overrides=["chartsvc.rest.max-upload=7"]
    )
    assert (s.chartsvc.rest.base_path, s.chartsvc.rest.max_upload) == ("/from-env", 7)


def test_types_are_converted() -> None:
    s = load_settings(
        Settings,
        overrides=[
            "chartsvc.security.block-private-networks=true",
            "chartsvc.rest.ratio=2.5",
            "chartsvc.rest.temp-dir=/var/tmp/x",
            "chartsvc.rest.origins=a, b",
            "chartsvc.security.api-key=k",
        ],
    )
    assert s.chartsvc.security.block_private_networks is True
    assert s.chartsvc.rest.ratio == 2.5
    assert s.chartsvc.rest.temp_dir == Path("/var/tmp/x")
    assert s.chartsvc.rest.origins == ("a", "b")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "chartsvc.security.mode=NOPE",
            "invalid setting chartsvc.security.mode (from --set): expected one of READ_ONLY, FULL",
        ),
        (
            "chartsvc.rest.max-upload=big",
            "chartsvc.rest.max-upload (from --set): expected an integer",
        ),
        ("chartsvc.security.block-private-networks=perhaps", "expected a boolean"),
        ("chartsvc.nope=1", "chartsvc.nope (from --set): expected a known setting"),
        ("no-equals-sign", "expected key=value"),
    ],
)
def test_bad_values_name_key_and_expectation(override: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(Settings, overrides=[override])
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_file_values_name_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("chartsvc:\n  security:\n    mode: [1]\n")
    with pytest.raises(ConfigError, match=r"chartsvc\.security\.mode \(from .*c\.yaml\)"):
        load_settings(Settings, config_file=cfg)
    cfg.write_text("chartsvc: {unknown: 1}\n")
    with pytest.raises(ConfigError, match=r"chartsvc\.unknown"):
        load_settings(Settings, config_file=cfg)
    cfg.write_text(": : :\n")
    with pytest.raises(ConfigError, match="valid YAML"):
        load_settings(Settings, config_file=cfg)
    with pytest.raises(ConfigError, match="readable file"):
        load_settings(Settings, config_file=tmp_path / "missing.yaml")


def test_other_services_sections_are_left_alone(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("results:\n  db.path: /x\nchartsvc.security.mode: FULL\n")
    assert load_settings(Settings, config_file=cfg).chartsvc.security.mode is Mode.FULL


def test_secrets_stay_out_of_repr() -> None:
    s = load_settings(Settings, overrides=["chartsvc.security.api-key=hunter2"])
    assert s.chartsvc.security.api_key == "hunter2"
    assert "hunter2" not in repr(s)


def test_describe_lists_every_leaf_with_doc() -> None:
    keys = [i.key for i in describe(Settings)]
    assert "chartsvc.security.api-key" in keys
    assert env_name("chartsvc.security.api-key") == "CHARTSVC_SECURITY_API_KEY"
    assert all(i.doc for i in describe(Settings))
    secret = next(i for i in describe(Settings) if i.key.endswith("api-key"))
    assert secret.secret
    assert secret.default is None
