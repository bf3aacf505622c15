"""Chart archives and real Chart.yaml / Chart.lock pairs for the chartsvc client tests.

The bitnami pairs are public files from github.com/bitnami/charts. Each lock is the file as committed;
the dependency blocks are the ones Helm hashed into that lock's digest (a sha256 cannot be matched by
a guessed input, so the digest test itself proves the pairing).
"""

from __future__ import annotations

import io
import tarfile
import textwrap
from collections.abc import Mapping
from pathlib import Path

# bitnami/charts bitnami/nginx/Chart.yaml at chart version 17.1.0 (verbatim).
NGINX_17_CHART_YAML = textwrap.dedent(
    """\
    # Copyright Broadcom, Inc. All Rights Reserved.
    # SPDX-License-Identifier: APACHE-2.0

    annotations:
      category: Infrastructure
      licenses: Apache-2.0
      images: |
        - name: git
          image: docker.io/bitnami/git:2.45.1-debian-12-r0
        - name: nginx
          image: docker.io/bitnami/nginx:1.26.0-debian-12-r1
        - name: nginx-exporter
          image: docker.io/bitnami/nginx-exporter:1.1.0-debian-12-r23
    apiVersion: v2
    appVersion: 1.26.0
    dependencies:
    - name: common
      repository: oci://registry-1.docker.io/bitnamicharts
      tags:
      - bitnami-common
      version: 2.x.x
    description: NGINX Open Source is a web server that can be also used as a reverse proxy, load balancer, and HTTP cache. Recommended for high-demanding sites due to its ability to provide faster content.
    home: https://bitnami.com
    icon: https://bitnami.com/assets/stacks/nginx/img/nginx-stack-220x234.png
    keywords:
    - nginx
    - http
    - web
    - www
    - reverse proxy
    maintainers:
    - name: Broadcom, Inc. All Rights Reserved.
      url: https://github.com/bitnami/charts
    name: nginx
    sources:
    - https://github.com/bitnami/charts/tree/main/bitnami/nginx
    version: 17.1.0
    """
)

# bitnami/nginx/Chart.lock of the 17.x line.
NGINX_17_CHART_LOCK = textwrap.dedent(
    """\
    dependencies:
    - name: common
      repository: oci://registry-1.docker.io/bitnamicharts
      version: 2.16.1
    digest: sha256:f808a6fdc9c374d158ad7ff2f2c53a6c409e41da778d768b232dd20f86ef8b47
    generated: "2024-02-21T14:23:11.578246321Z"
    """
)

# bitnami/nginx/Chart.lock at commit 1c5aa0dabb8ae17d8c60f1af92aada4a30ca66b9 (verbatim), when the
# chart still used the HTTP repository; and its Chart.yaml dependency block of that time.
NGINX_2022_CHART_LOCK = textwrap.dedent(
    """\
    dependencies:
    - name: common
      repository: https://charts.bitnami.com/bitnami
      version: 2.2.2
    digest: sha256:49ca75cf23ba5eb7df4becef52580f98c8bd8194eb80368b9d7b875f6eefa8e5
    generated: "2022-12-13T19:15:48.236175982Z"
    """
)
NGINX_2022_DEPENDENCIES = textwrap.dedent(
    """\
    dependencies:
      - name: common
        repository: https://charts.bitnami.com/bitnami
        tags:
          - bitnami-common
        version: 2.x.x
    """
)

# bitnami/wordpress/Chart.lock at commit 02dcc4b7b22f37f0b5791b00a1c9aef05bb7700c (verbatim) and the
# Chart.yaml dependency block it locks (conditions included).
WORDPRESS_2025_CHART_LOCK = textwrap.dedent(
    """\
    dependencies:
    - name: memcached
      repository: oci://registry-1.docker.io/bitnamicharts
      version: 7.6.1
    - name: mariadb
      repository: oci://registry-1.docker.io/bitnamicharts
      version: 20.2.2
    - name: common
      repository: oci://registry-1.docker.io/bitnamicharts
      version: 2.29.1
    digest: sha256:3426d768d431843713b2527ff564792332f0019a69c03e605134725f10a65cc9
    generated: "2025-01-27T09:57:11.574771383Z"
    """
)
WORDPRESS_2025_DEPENDENCIES = textwrap.dedent(
    """\
    dependencies:
      - condition: memcached.enabled
        name: memcached
        repository: oci://registry-1.docker.io/bitnamicharts
        version: 7.x.x
      - condition: mariadb.enabled
        name: mariadb
        repository: oci://registry-1.docker.io/bitnamicharts
        version: 20.x.x
      - name: common
        repository: oci://registry-1.docker.io/bitnamicharts
        tags:
          - bitnami-common
        version: 2.x.x
    """
)


def chart_yaml(name: str, version: str, dependencies: str = "", *, api_version: str = "v2") -> str:
    """A minimal Chart.yaml, with an optional ``dependencies:`` block appended."""
    head = f"apiVersion: {api_version}\nname: {name}\nversion: {version}\ntype: application\n"
    return head + dependencies


def tgz_bytes(files: Mapping[str, str | bytes]) -> bytes:
    """A gzip'd tar of ``files`` (path → content), in the given order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(path)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def write_chart_tgz(
    directory: Path, chart_yaml_text: str, extra: dict[str, str | bytes] | None = None
) -> Path:
    """``<directory>/chart.tgz`` holding ``chart/Chart.yaml`` plus ``extra`` (paths under chart/)."""
    files: dict[str, str | bytes] = {"chart/Chart.yaml": chart_yaml_text}
    files |= {f"chart/{path}": content for path, content in (extra or {}).items()}
    target = directory / "chart.tgz"
    target.write_bytes(tgz_bytes(files))
    return target
