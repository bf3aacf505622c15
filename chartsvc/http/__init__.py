"""Thin route modules, one per domain: read validated input, call one domain function, encode."""
