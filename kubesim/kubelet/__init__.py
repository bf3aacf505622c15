"""The simulated kubelet: pod lifecycles, container programs, logs and the in-pod network."""

from kubesim.kubelet.kubelet import Kubelet
from kubesim.kubelet.model import Container, Run
from kubesim.kubelet.runtime import PodRuntime

__all__ = ["Container", "Kubelet", "PodRuntime", "Run"]
