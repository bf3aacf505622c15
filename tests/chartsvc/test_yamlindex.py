"""The fast Helm-shape index reader gives exactly what the YAML library gives, or steps aside."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
import yaml

from chartsvc.repos import index, yamlindex

# As Helm (go-yaml v2 through sigs.k8s.io/yaml) writes an index: sorted keys, indentless sequences,
# long plain scalars folded, quoting where needed, block scalars for multi-line text.
HELM_STYLE = """apiVersion: v1
entries:
  nginx:
  - annotations:
      category: Infrastructure
      images: |
        - name: nginx
          image: docker.io/bitnami/nginx:1.25.3-debian-11-r1
      licenses: Apache-2.0
    apiVersion: v2
    appVersion: 1.25.3
    created: "2023-11-09T09:20:41.390185316Z"
    dependencies:
    - name: common
      repository: oci://registry-1.docker.io/bitnamicharts
      tags:
      - bitnami-common
      version: 2.x.x
    description: NGINX Open Source is a web server that can be also used as a reverse
      proxy, load balancer, and HTTP cache. Recommended for high-demanding sites due
      to its focus on high concurrency, high performance and low memory usage.
    digest: 0a1f2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8
    home: https://bitnami.com
    keywords:
    - nginx
    - http
    maintainers:
    - name: VMware, Inc.
      url: https://github.com/bitnami/charts
    name: nginx
    urls:
    - https://charts.bitnami.com/bitnami/nginx-15.4.3.tgz
    version: 15.4.3
  - apiVersion: v2
    appVersion: "1.10"
    created: "2023-10-01T00:00:00Z"
    deprecated: true
    description: 'It''s quoted: with a colon'
    digest: ff
    name: nginx
    urls:
    - "https://charts.example.com/nginx-15.4.2.tgz"
    version: 15.4.2
  - description: |-
      Two lines
      of text
    name: nginx
    urls: []
    version: 15.4.1-rc.1
  weird:
  - description: "Escapes \\u00e9 and \\"quotes\\""
    name: weird
    urls:
      - indented.tgz
    version: v1.0
  - name: weird
    version: not-a-version
    urls: []
empty: []
generated: "2023-11-09T09:21:06.418549498Z"
serverInfo:
  contextPath: /charts
"""


def both(text: str) -> tuple[index.PreparedIndex, index.PreparedIndex]:
    raw = text.encode()
    return index.parse(raw, source={}), index.parse(raw, source={}, fast_yaml=False)


def test_helm_style_index_is_read_fast_and_identically() -> None:
    assert yamlindex.read(HELM_STYLE) is not None
    fast, library = both(HELM_STYLE)
    assert fast == library
    nginx = fast.entries("nginx") or []
    assert [e[index.VERSION] for e in nginx] == ["15.4.3", "15.4.2", "15.4.1-rc.1"]
    assert nginx[0][index.DESCRIPTION].startswith("NGINX Open Source is a web server that")
    assert nginx[0][index.DESCRIPTION].endswith("low memory usage.")
    assert nginx[1][index.DESCRIPTION] == "It's quoted: with a colon"
    assert nginx[1][index.APP_VERSION] == "1.10"
    assert nginx[2][index.DESCRIPTION] == "Two lines\nof text"
    assert (fast.entries("weird") or [])[0][index.DESCRIPTION] == 'Escapes é and "quotes"'
    assert fast.skipped == 1


TRICKY = [
    "plain",
    "with: colon",
    "trailing colon:",
    "hash # inside",
    "C# and F#",
    "'single' quotes",
    '"double" quotes',
    "- leading dash",
    "[brackets]",
    "{braces}",
    "multi\nline\ntext",
    "  leading spaces",
    "unicode ✓ é",
    "null",
    "~",
    "true",
    "1.10",
    "",
    "a" * 150 + " folded " + "b " * 60,
    "back\\slash",
    "tab\there",
]


@pytest.mark.parametrize("seed", range(6))
def test_library_dumped_indexes_agree(seed: int) -> None:
    rng = random.Random(seed)
    entries: dict[str, list[dict[str, object]]] = {}
    for c in range(8):
        name = f"chart-{c}"
        entries[name] = [
            {
                "name": name,
                "version": f"{v}.{rng.randint(0, 9)}.0",
                "appVersion": rng.choice(TRICKY),
                "description": rng.choice(TRICKY),
                "created": rng.choice(["2024-01-01T00:00:00Z", "2024-01-01"]),
                "digest": rng.choice(TRICKY),
                "urls": [rng.choice(TRICKY), f"{name}-{v}.tgz"],
                "deprecated": rng.choice([True, False, "true"]),
                "annotations": {"x": rng.choice(TRICKY), "nested": {"y": [1, 2]}},
                "maintainers": [{"name": rng.choice(TRICKY)}],
            }
            for v in range(6)
        ]
    document = {"apiVersion": "v1", "entries": entries, "generated": "2024-01-01T00:00:00Z"}
    text = yaml.safe_dump(document, width=rng.choice([40, 80, 10_000]), allow_unicode=seed % 2 == 0)
    fast, library = both(text)
    assert fast == library


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: v1\nentries:\n  a:\n  - &anchor\n    name: a\n    version: 1.0.0\n",
        "apiVersion: v1\nentries:\n  a:\n  - {name: a, version: 1.0.0}\n",
        "apiVersion: v1\nentries:\n\ta:\n",
        "apiVersion: v1\n# a comment\nentries: {}\n",
        "apiVersion: v1\nentries:\n  a:\n  - name: a\n  # comment\n    version: 1.0.0\n",
        "--- \n...\n",
        "just text",
    ],
)
def test_other_shapes_step_aside(text: str) -> None:
    assert yamlindex.read(text) is None


def test_a_large_generated_index_takes_the_fast_reader_and_matches_the_library() -> None:
    """The speed-up itself is measured in scripts/bench/chartsvc_index.py, not timed here."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "bench"))
    from chartsvc_index import generate_index

    document = json.loads(generate_index(20, 25))
    raw = yaml.safe_dump(document).encode()
    assert yamlindex.read(raw.decode()) is not None  # the Helm-shape reader accepts it whole
    assert index.parse(raw, source={}) == index.parse(raw, source={}, fast_yaml=False)


def test_an_index_written_by_helm_itself(chart_archives: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    import helm_python as helm

    for path in chart_archives.values():
        shutil.copy(path, tmp_path)
    helm.repo_index_generate(tmp_path, base_url="https://charts.example.com/stable")
    text = (tmp_path / "index.yaml").read_text()
    assert yamlindex.read(text) is not None
    fast, library = both(text)
    assert fast == library
    assert [e[index.VERSION] for e in fast.entries("demo") or []] == [
        "1.0.0-rc.1",
        "0.2.0",
        "0.1.0",
    ]
    assert (fast.entries("other") or [])[0][index.URLS] == [
        "https://charts.example.com/stable/other-2.3.4.tgz"
    ]


def test_crlf_line_ends_read_fast_too() -> None:
    text = HELM_STYLE.replace("\n", "\r\n")
    assert yamlindex.read(text) is not None
    fast, library = both(text)
    assert fast == library


def test_parsing_leaves_the_collector_as_it_found_it() -> None:
    import gc

    assert gc.isenabled()
    index.parse(HELM_STYLE.encode(), source={})
    assert gc.isenabled()
    with pytest.raises(index.InvalidIndex):
        index.parse(b"{}", source={})
    assert gc.isenabled()
    gc.disable()
    try:
        index.parse(HELM_STYLE.encode(), source={})
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


def test_overlapping_parses_restore_the_collector() -> None:
    import gc
    from concurrent.futures import ThreadPoolExecutor

    raw = HELM_STYLE.encode()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: index.parse(raw, source={}), range(40)))
    assert gc.isenabled()
