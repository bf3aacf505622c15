"""Clusters: the registry handlers use, its store, and the kubeconfig rules behind them."""

from console.clusters.model import Cluster, ClusterDefinition, Origin
from console.clusters.registry import ClusterRegistry

__all__ = ["Cluster", "ClusterDefinition", "ClusterRegistry", "Origin"]
