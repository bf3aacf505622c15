"""Rendered files joined as `helm template` prints them."""

from __future__ import annotations

from chartsvc.helm import manifests


def test_install_order_multi_document_files_hooks_last_and_notes_dropped() -> None:
    rendered = {
        "c/templates/NOTES.txt": "Thanks for installing",
        "c/templates/app.yaml": "kind: Deployment\nmetadata: {name: a}\n---\nkind: Service\n",
        "c/templates/b.yaml": "---\n# leading separator\nkind: ConfigMap\n---\n\n",
        "c/templates/hook.yaml": 'kind: Job\nmetadata:\n  annotations:\n    "helm.sh/hook": pre-install\n',
        "c/templates/x.yaml": "kind: Zebra\n---\nkind: Aardvark\n",
        "c/templates/empty.yaml": "\n\n",
        "c/templates/ns.yaml": "apiVersion: v1\nkind: Namespace\n",
    }
    text = manifests.text(rendered)
    kinds = [line.split(":")[1].strip() for line in text.splitlines() if line.startswith("kind:")]
    assert kinds == ["Namespace", "ConfigMap", "Service", "Deployment", "Aardvark", "Zebra", "Job"]
    assert "Thanks" not in text
    assert text.startswith("---\n# Source: c/templates/ns.yaml\napiVersion: v1\nkind: Namespace\n")
    assert text.count("---\n# Source:") == 7
