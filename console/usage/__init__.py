"""Cluster usage: CPU and memory from ``metrics.k8s.io``, node disk from the kubelet's stats
summary, Prometheus detection, and graphs from the console's own bounded in-memory sampler.

A source that is absent (no metrics-server, no stats endpoint, no Prometheus) gives an empty
answer, never an error: "not installed" is a state of the cluster, not a failure of the request.
Nothing here knows HTTP.
"""
