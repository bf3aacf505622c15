"""The simulated kubelet: pod lifecycles, container programs, logs and the in-pod network."""

from common.kubesim.kubelet.kubelet import Kubelet
from common.kubesim.kubelet.model import Container, Run
from common.kubesim.kubelet.runtime import PodRuntime

__all__ = ["Container", "Kubelet", "PodRuntime", "Run"]
