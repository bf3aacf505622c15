"""Kubernetes' and Helm's rules for names, as anchored patterns (ECMA-262 and Python alike) that
the checks use and the spec states (``load_document``'s ``patterns``). No I/O."""

from __future__ import annotations

_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"


def dns_subdomain(longest: int) -> str:
    """A DNS-1123 subdomain (lower case letters, digits, '-' and '.') of at most ``longest``
    characters: Helm's rule for release and chart names."""
    return rf"^(?![\s\S]{{{longest + 1}}}){_LABEL}(?:\.{_LABEL})*$(?!\n)"


def dns_label(longest: int) -> str:
    """A DNS-1123 label (lower case letters, digits and '-') of at most ``longest`` characters."""
    return rf"^(?![\s\S]{{{longest + 1}}}){_LABEL}$(?!\n)"
