"""The printer columns of built-in kinds, as kube-apiserver's internalversion printers define them.

Cell functions live in ``printers``; this module is the table of which columns each kind shows.
"""

from __future__ import annotations

from kubesim.encoding.printers import (
    AGE,
    BINDING_SUBJECTS,
    CONTAINERS,
    IMAGES,
    NAME,
    READY_REPLICAS,
    TEMPLATE_WIDE,
    Column,
    age,
    age_of,
    apiservice_available,
    apiservice_service,
    cell,
    col,
    endpoints,
    event_object,
    external_ip,
    hpa_targets,
    integer,
    job_completions,
    job_duration,
    job_status,
    node_address,
    node_roles,
    node_status,
    pod_ready,
    pod_restarts,
    pod_status,
    ports,
    reference,
    revision_controller,
    slice_endpoints,
    slice_ports,
    text,
)

# RoleBindings and ClusterRoleBindings print alike (printRoleBinding, printClusterRoleBinding).
ROLE_BINDING = [NAME, col("Role", reference("roleRef")), AGE, *BINDING_SUBJECTS]

COLUMNS: dict[tuple[str, str], list[Column]] = {
    ("", "pods"): [
        NAME,
        col("Ready", pod_ready),
        col("Status", pod_status),
        col("Restarts", pod_restarts),
        AGE,
        col("IP", text("status", "podIP"), priority=1),
        col("Node", text("spec", "nodeName"), priority=1),
        col("Nominated Node", text("status", "nominatedNodeName"), priority=1),
        col("Readiness Gates", lambda o: "<none>", priority=1),
    ],
    ("apps", "deployments"): [
        NAME,
        READY_REPLICAS,
        integer("Up-to-date", "status", "updatedReplicas"),
        integer("Available", "status", "availableReplicas"),
        AGE,
        *TEMPLATE_WIDE,
    ],
    ("apps", "replicasets"): [
        NAME,
        integer("Desired", "spec", "replicas"),
        integer("Current", "status", "replicas"),
        integer("Ready", "status", "readyReplicas"),
        AGE,
        *TEMPLATE_WIDE,
    ],
    ("apps", "statefulsets"): [NAME, READY_REPLICAS, AGE, CONTAINERS, IMAGES],
    ("apps", "daemonsets"): [
        NAME,
        integer("Desired", "status", "desiredNumberScheduled"),
        integer("Current", "status", "currentNumberScheduled"),
        integer("Ready", "status", "numberReady"),
        integer("Up-to-date", "status", "updatedNumberScheduled"),
        integer("Available", "status", "numberAvailable"),
        col(
            "Node Selector",
            lambda o: (
                ",".join(
                    f"{k}={v}"
                    for k, v in (cell(o, "spec", "template", "spec", "nodeSelector") or {}).items()
                )
                or "<none>"
            ),
        ),
        AGE,
        *TEMPLATE_WIDE,
    ],
    ("", "services"): [
        NAME,
        col("Type", text("spec", "type")),
        col("Cluster-IP", text("spec", "clusterIP")),
        col("External-IP", external_ip),
        col("Port(s)", ports),
        AGE,
        col(
            "Selector",
            lambda o: (
                ",".join(f"{k}={v}" for k, v in sorted((cell(o, "spec", "selector") or {}).items()))
                or "<none>"
            ),
            priority=1,
        ),
    ],
    ("", "namespaces"): [NAME, col("Status", text("status", "phase", default="")), AGE],
    ("", "nodes"): [
        NAME,
        col("Status", node_status),
        col("Roles", node_roles),
        AGE,
        col("Version", text("status", "nodeInfo", "kubeletVersion", default="")),
        col("Internal-IP", node_address("InternalIP"), priority=1),
        col("External-IP", node_address("ExternalIP"), priority=1),
        col("OS-Image", text("status", "nodeInfo", "osImage", default="<unknown>"), priority=1),
        col(
            "Kernel-Version",
            text("status", "nodeInfo", "kernelVersion", default="<unknown>"),
            priority=1,
        ),
        col(
            "Container-Runtime",
            text("status", "nodeInfo", "containerRuntimeVersion", default="<unknown>"),
            priority=1,
        ),
    ],
    ("", "configmaps"): [
        NAME,
        col(
            "Data",
            lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {}),
            kind="integer",
        ),
        AGE,
    ],
    ("", "secrets"): [
        NAME,
        col("Type", text("type", default="")),
        col("Data", lambda o: len(o.get("data") or {}), kind="integer"),
        AGE,
    ],
    ("", "serviceaccounts"): [
        NAME,
        col("Secrets", lambda o: len(o.get("secrets") or []), kind="integer"),
        AGE,
    ],
    ("batch", "jobs"): [
        NAME,
        col("Status", job_status),
        col("Completions", job_completions),
        col("Duration", job_duration),
        AGE,
        *TEMPLATE_WIDE,
    ],
    ("batch", "cronjobs"): [
        NAME,
        col("Schedule", text("spec", "schedule", default="")),
        col("Timezone", text("spec", "timeZone")),
        col("Suspend", lambda o: "True" if cell(o, "spec", "suspend") else "False", kind="boolean"),
        col("Active", lambda o: len(cell(o, "status", "active") or []), kind="integer"),
        col(
            "Last Schedule",
            lambda o: (
                age(cell(o, "status", "lastScheduleTime"))
                if cell(o, "status", "lastScheduleTime")
                else "<none>"
            ),
        ),
        AGE,
        *TEMPLATE_WIDE,
    ],
    ("networking.k8s.io", "ingresses"): [
        NAME,
        col("Class", text("spec", "ingressClassName")),
        col(
            "Hosts",
            lambda o: ",".join(r.get("host", "*") for r in cell(o, "spec", "rules") or []) or "*",
        ),
        col(
            "Address",
            lambda o: ",".join(
                i.get("ip") or i.get("hostname", "")
                for i in cell(o, "status", "loadBalancer", "ingress") or []
            ),
        ),
        col("Ports", lambda o: "80, 443" if cell(o, "spec", "tls") else "80"),
        AGE,
    ],
    ("", "events"): [
        col(
            "Last Seen",
            lambda o: age_of(
                {
                    "metadata": {
                        "creationTimestamp": o.get("lastTimestamp")
                        or o.get("eventTime")
                        or o["metadata"].get("creationTimestamp")
                    }
                }
            ),
        ),
        col("Type", text("type", default="")),
        col("Reason", text("reason", default="")),
        col("Object", event_object),
        col("Subobject", text("involvedObject", "fieldPath", default=""), priority=1),
        col("Source", text("source", "component", default=""), priority=1),
        col("Message", text("message", default="")),
        col(
            "First Seen",
            lambda o: age_of({"metadata": {"creationTimestamp": o.get("firstTimestamp")}}),
            priority=1,
        ),
        col("Count", lambda o: o.get("count", 1), kind="integer", priority=1),
        col("Name", lambda o: o["metadata"]["name"], priority=1),
    ],
    ("", "persistentvolumeclaims"): [
        NAME,
        col("Status", text("status", "phase", default="")),
        col("Volume", text("spec", "volumeName", default="")),
        col("Capacity", text("status", "capacity", "storage", default="")),
        col("Access Modes", lambda o: ",".join(cell(o, "status", "accessModes") or [])),
        col("StorageClass", text("spec", "storageClassName", default="")),
        col("VolumeAttributesClass", text("spec", "volumeAttributesClassName")),
        AGE,
        col("VolumeMode", text("spec", "volumeMode", default=""), priority=1),
    ],
    ("", "persistentvolumes"): [
        NAME,
        col("Capacity", text("spec", "capacity", "storage", default="")),
        col("Access Modes", lambda o: ",".join(cell(o, "spec", "accessModes") or [])),
        col("Reclaim Policy", text("spec", "persistentVolumeReclaimPolicy", default="")),
        col("Status", text("status", "phase", default="")),
        col(
            "Claim",
            lambda o: (
                f"{cell(o, 'spec', 'claimRef', 'namespace', default='')}/"
                f"{cell(o, 'spec', 'claimRef', 'name', default='')}"
                if cell(o, "spec", "claimRef")
                else ""
            ),
        ),
        col("StorageClass", text("spec", "storageClassName", default="")),
        col("VolumeAttributesClass", text("spec", "volumeAttributesClassName")),
        col("Reason", text("status", "reason", default="")),
        AGE,
        col("VolumeMode", text("spec", "volumeMode", default=""), priority=1),
    ],
    ("policy", "poddisruptionbudgets"): [
        NAME,
        col("Min Available", text("spec", "minAvailable", default="N/A")),
        col("Max Unavailable", text("spec", "maxUnavailable", default="N/A")),
        integer("Allowed Disruptions", "status", "disruptionsAllowed"),
        AGE,
    ],
    ("autoscaling", "horizontalpodautoscalers"): [
        NAME,
        col("Reference", reference("spec", "scaleTargetRef")),
        col("Targets", hpa_targets),
        integer("MinPods", "spec", "minReplicas"),
        integer("MaxPods", "spec", "maxReplicas"),
        integer("Replicas", "status", "currentReplicas"),
        AGE,
    ],
    ("rbac.authorization.k8s.io", "rolebindings"): ROLE_BINDING,
    ("rbac.authorization.k8s.io", "clusterrolebindings"): ROLE_BINDING,
    ("storage.k8s.io", "storageclasses"): [
        NAME,
        col("Provisioner", text("provisioner", default="")),
        col("ReclaimPolicy", text("reclaimPolicy", default="Delete")),
        col("VolumeBindingMode", text("volumeBindingMode", default="Immediate")),
        col("AllowVolumeExpansion", lambda o: bool(o.get("allowVolumeExpansion")), kind="boolean"),
        AGE,
    ],
    ("coordination.k8s.io", "leases"): [
        NAME,
        col("Holder", text("spec", "holderIdentity", default="")),
        AGE,
    ],
    ("", "endpoints"): [NAME, col("Endpoints", endpoints), AGE],
    ("discovery.k8s.io", "endpointslices"): [
        NAME,
        col("AddressType", text("addressType", default="")),
        col("Ports", slice_ports),
        col("Endpoints", slice_endpoints),
        AGE,
    ],
    # printPriorityClass: the policy cell is empty when unset.
    ("scheduling.k8s.io", "priorityclasses"): [
        NAME,
        col("Value", lambda o: o.get("value", 0), kind="integer"),
        col("Global-Default", lambda o: bool(o.get("globalDefault")), kind="boolean"),
        AGE,
        col("PreemptionPolicy", text("preemptionPolicy", default="")),
    ],
    ("apiregistration.k8s.io", "apiservices"): [
        NAME,
        col("Service", apiservice_service),
        col("Available", apiservice_available),
        AGE,
    ],
    ("apps", "controllerrevisions"): [
        NAME,
        col("Controller", revision_controller),
        col("Revision", lambda o: o.get("revision", 0), kind="integer"),
        AGE,
    ],
}
