#!/usr/bin/env python3
"""Writes the `kubectl get … -o json` fixtures of tests/kube.rs (one per group convention,
plus a mixed List). Objects carry the fields kubectl prints (resourceVersion, uid,
creationTimestamp, default tolerations, status conditions, ...) with the keys of
shared/spec/kubernetes-objects.md. Run from this directory; the output is deterministic."""
import json, uuid

def uid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "tessera-fixture/" + name))

RV = [1000]
def meta(name, ns=None, labels=None, annotations=None, owner=None, created="2026-07-24T10:00:00Z"):
    RV[0] += 7
    m = {"name": name}
    if ns is not None:
        m["namespace"] = ns
    m.update({"uid": uid((ns or "") + "/" + name), "resourceVersion": str(RV[0]), "creationTimestamp": created})
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    if owner:
        kind, oname = owner
        m["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": kind, "name": oname, "uid": uid(ns + "/" + oname),
                                 "controller": True, "blockOwnerDeletion": True}]
    return m

def node(name, cpu="8", memory="32Gi", labels=None, taints=None, unschedulable=False, gpu=None, pods="110"):
    lab = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
           "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    lab.update(labels or {})
    cap = {"cpu": cpu, "ephemeral-storage": "101430960Ki", "hugepages-1Gi": "0", "hugepages-2Mi": "0", "memory": memory, "pods": pods}
    alloc = dict(cap)
    alloc["ephemeral-storage"] = "93478772582"
    if gpu:
        cap["nvidia.com/gpu"] = gpu
        alloc["nvidia.com/gpu"] = gpu
    spec = {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"], "providerID": "kind://docker/kind/" + name}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
        spec.setdefault("taints", []).append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
                                              "timeAdded": "2026-07-24T09:00:00Z"})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(name, labels=lab, annotations={"node.alpha.kubernetes.io/ttl": "0",
                                                           "volumes.kubernetes.io/controller-managed-attach-detach": "true"}),
            "spec": spec,
            "status": {"addresses": [{"address": "172.18.0.2", "type": "InternalIP"}, {"address": name, "type": "Hostname"}],
                       "allocatable": alloc, "capacity": cap,
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                       "message": "kubelet is posting ready status",
                                       "lastHeartbeatTime": "2026-07-24T10:00:00Z", "lastTransitionTime": "2026-07-01T00:00:00Z"}],
                       "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.37.0", "operatingSystem": "linux",
                                    "containerRuntimeVersion": "containerd://2.1.0"}}}

DEFAULT_TOLERATIONS = [
    {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
]

def pod(name, ns, requests, node=None, labels=None, annotations=None, scheduler="default-scheduler", priority=0,
        priority_class=None, owner=None, extra_spec=None, containers=None, created="2026-07-24T10:00:00Z", phase=None):
    c = containers or [{"name": "main", "image": "registry.example.com/train:1.4",
                        "resources": {"requests": requests, "limits": {k: v for k, v in requests.items() if k != "cpu"}},
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                        "imagePullPolicy": "IfNotPresent"}]
    spec = {"containers": c, "dnsPolicy": "ClusterFirst", "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
            "priority": priority, "restartPolicy": "Never", "schedulerName": scheduler, "securityContext": {},
            "serviceAccount": "default", "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
            "tolerations": DEFAULT_TOLERATIONS}
    if priority_class:
        spec["priorityClassName"] = priority_class
    if node:
        spec["nodeName"] = node
    spec.update(extra_spec or {})
    if node:
        status = {"phase": phase or "Running", "hostIP": "172.18.0.2", "podIP": "10.244.1.7", "qosClass": "Burstable",
                  "startTime": created,
                  "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": created}],
                  "containerStatuses": [{"name": x["name"], "ready": True, "restartCount": 0, "started": True,
                                         "image": x.get("image", ""), "imageID": "", "containerID": "containerd://0",
                                         "allocatedResources": x["resources"].get("requests", {}),
                                         "state": {"running": {"startedAt": created}}} for x in c]}
    else:
        status = {"phase": phase or "Pending", "qosClass": "Burstable",
                  "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                  "message": "0/8 nodes are available", "lastTransitionTime": created}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name, ns, labels, annotations, owner, created),
            "spec": spec, "status": status}

def pclass(name, value, default=False, policy=None):
    o = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": meta(name), "value": value,
         "description": name + " priority"}
    if default:
        o["globalDefault"] = True
    if policy:
        o["preemptionPolicy"] = policy
    return o

def lst(items):
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}

def write(name, obj):
    with open(name, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")

RACK = "topology.example.com/rack"
BLOCK = "cloud.provider.com/topology-block"
KRACK = "cloud.provider.com/topology-rack"

# --- Kubernetes 1.37 scheduling.k8s.io/v1beta1: Workload + PodGroup (gang of 4, one rack) ----
nodes = [node(f"r1-n{i}", labels={RACK: "r1"}) for i in range(4)] + [node(f"r2-n{i}", labels={RACK: "r2"}) for i in range(4)]
running = [pod(f"web-{i}", "default", {"cpu": "2", "memory": "2Gi"}, node=f"r1-n{i}") for i in range(4)]
wl = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": meta("train", "ml"),
      "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
               "podGroupTemplates": [{"name": "worker", "schedulingPolicy": {"gang": {"minCount": 4}}, "schedulingConstraints": None}]}}
pg = {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": meta("train-worker-0", "ml"),
      "spec": {"workloadRef": {"workloadName": "train", "templateName": "worker"},
               "schedulingPolicy": {"gang": {"minCount": 4}}, "schedulingConstraints": {"topology": [{"key": RACK}]},
               "disruptionMode": {"all": {}}, "priorityClassName": "high", "priority": 100000,
               "preemptionPolicy": "PreemptLowerPriority"},
      "status": {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
                                 "message": "0/8 nodes", "lastTransitionTime": "2026-07-24T10:00:00Z"}]}}
members = [pod(f"train-{i}", "ml", {"cpu": "7", "memory": "8Gi"}, priority=100000, priority_class="high", owner=("Job", "train"),
               labels={"batch.kubernetes.io/job-completion-index": str(i)},
               extra_spec={"schedulingGroup": {"podGroupName": "train-worker-0"}}) for i in range(4)]
write("upstream-v1beta1.json", lst(nodes + running + [pclass("high", 100000), wl, pg] + members))

# --- Kubernetes 1.36 scheduling.k8s.io/v1alpha2: PodGroup, disruptionMode string ------------------
nodes = [node(f"n{i}", cpu="4") for i in range(3)]
pg_gang = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta("infer-0", "serve"),
           "spec": {"podGroupTemplateRef": None, "schedulingPolicy": {"gang": {"minCount": 3}},
                    "schedulingConstraints": None, "disruptionMode": "PodGroup"}}
pg_basic = {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup", "metadata": meta("batch-0", "serve"),
            "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "batch", "podGroupTemplateName": "any"}},
                     "schedulingPolicy": {"basic": {}}, "disruptionMode": "Pod"}}
gang = [pod(f"infer-{i}", "serve", {"cpu": "3"}, extra_spec={"schedulingGroup": {"podGroupName": "infer-0"}}) for i in range(3)]
basic = [pod(f"batch-{i}", "serve", {"cpu": "2"}, extra_spec={"schedulingGroup": {"podGroupName": "batch-0"}}) for i in range(3)]
orphan = [pod("lost-0", "serve", {"cpu": "1"}, extra_spec={"schedulingGroup": {"podGroupName": "missing"}})]
write("upstream-v1alpha2.json", lst(nodes + [pg_gang, pg_basic] + gang + basic + orphan))

# --- Kubernetes 1.35 scheduling.k8s.io/v1alpha1: Workload with inline pod groups, workloadRef ----
nodes = [node(f"n{i}", cpu="4") for i in range(2)]
wl = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": meta("train", "ml"),
      "spec": {"controllerRef": {"kind": "Job", "apiGroup": "batch", "name": "train"},
               "podGroups": [{"name": "worker", "policy": {"gang": {"minCount": 2}}}]}}
pods_ = []
for r in range(2):
    for i in range(2):
        pods_.append(pod(f"train-r{r}-{i}", "ml", {"cpu": "2"},
                         extra_spec={"workloadRef": {"name": "train", "podGroup": "worker", "podGroupReplicaKey": f"replica-{r}"}}))
# A third replica of three pods 2 cpu each on 8 cpu: it cannot fit after the first two.
for i in range(3):
    pods_.append(pod(f"train-r2-{i}", "ml", {"cpu": "2"},
                     extra_spec={"workloadRef": {"name": "train", "podGroup": "worker", "podGroupReplicaKey": "replica-2"}}))
write("upstream-v1alpha1.json", lst(nodes + [wl] + pods_))

# --- Kubernetes 1.37 scheduling.k8s.io/v1alpha3: CompositePodGroup of a leader and workers -------
nodes = ([node(f"b1-n{i}", cpu="4", labels={"topology.example.com/block": "b1"}) for i in range(2)] +
         [node(f"b2-n{i}", cpu="4", labels={"topology.example.com/block": "b2"}) for i in range(3)])
comp = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "CompositePodGroup", "metadata": meta("js-0", "ml"),
        "spec": {"workloadRef": {"workloadName": "js", "templateName": "replica"},
                 "schedulingPolicy": {"gang": {"minGroupCount": 2}},
                 "schedulingConstraints": {"topology": [{"key": "topology.example.com/block"}]},
                 "disruptionMode": {"all": {}}, "priority": 500}}
leader = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": meta("js-0-leader", "ml"),
          "spec": {"parentCompositePodGroupName": "js-0", "schedulingPolicy": {"gang": {"minCount": 1}}}}
workers = {"apiVersion": "scheduling.k8s.io/v1alpha3", "kind": "PodGroup", "metadata": meta("js-0-workers", "ml"),
           "spec": {"parentCompositePodGroupName": "js-0", "schedulingPolicy": {"gang": {"minCount": 2}}}}
ps = ([pod("js-0-leader-0", "ml", {"cpu": "2"}, extra_spec={"schedulingGroup": {"podGroupName": "js-0-leader"}})] +
      [pod(f"js-0-worker-{i}", "ml", {"cpu": "3"}, extra_spec={"schedulingGroup": {"podGroupName": "js-0-workers"}}) for i in range(3)])
write("upstream-composite-v1alpha3.json", lst(nodes + [comp, leader, workers] + ps))

# --- scheduler-plugins coscheduling -------------------------------------------------------------
nodes = [node(f"n{i}", cpu="4") for i in range(2)]
pgs = [{"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta(n, "ml"),
        "spec": {"minMember": mm, "minResources": {"cpu": "3", "memory": "3Gi"}, "scheduleTimeoutSeconds": 30},
        "status": {"phase": "Scheduling", "running": 0, "succeeded": 0, "failed": 0}} for n, mm in [("nginx", 3), ("short", 3)]]
ps = ([pod(f"nginx-{i}", "ml", {"cpu": "1500m", "memory": "1Gi"}, labels={"scheduling.x-k8s.io/pod-group": "nginx"},
           scheduler="scheduler-plugins-scheduler") for i in range(3)] +
      [pod(f"short-{i}", "ml", {"cpu": "100m"}, labels={"scheduling.x-k8s.io/pod-group": "short"},
           scheduler="scheduler-plugins-scheduler") for i in range(2)])
write("coscheduling.json", lst(nodes + pgs + ps))

# --- Volcano (minTaskMember) ----------------------------------------------------------------------
nodes = [node(f"n{i}", cpu="8", gpu="2", labels={"nvidia.com/gpu.present": "true"}) for i in range(4)]
job_uid = uid("ml/tf-job")
vpg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta(f"tf-job-{job_uid}", "ml"),
       "spec": {"minMember": 5, "minTaskMember": {"ps": 1, "worker": 4}, "queue": "default", "priorityClassName": "high",
                "minResources": {"cpu": "22", "memory": "40Gi", "nvidia.com/gpu": "4"}},
       "status": {"phase": "Inqueue", "running": 0, "succeeded": 0, "failed": 0, "conditions": []}}
ann = lambda t: {"scheduling.k8s.io/group-name": f"tf-job-{job_uid}", "volcano.sh/task-spec": t,
                 "volcano.sh/job-name": "tf-job", "volcano.sh/queue-name": "default"}
ps = ([pod("tf-job-ps-0", "ml", {"cpu": "2", "memory": "4Gi"}, annotations=ann("ps"), scheduler="volcano", priority=1000,
           priority_class="high")] +
      [pod(f"tf-job-worker-{i}", "ml", {"cpu": "5", "memory": "8Gi", "nvidia.com/gpu": "1"}, annotations=ann("worker"),
           scheduler="volcano", priority=1000, priority_class="high") for i in range(5)])
write("volcano.json", lst(nodes + [pclass("high", 1000), vpg] + ps))

# --- YuniKorn task groups --------------------------------------------------------------------------
nodes = [node(f"n{i}", cpu="8", memory="16Gi") for i in range(3)]
tg = json.dumps([{"name": "driver", "minMember": 1, "minResource": {"cpu": "1", "memory": "2Gi"}},
                 {"name": "executor", "minMember": 4, "minResource": {"cpu": "2", "memory": "4Gi"},
                  "nodeSelector": {}, "tolerations": [], "affinity": {}, "topologySpreadConstraints": []}])
lab = {"yunikorn.apache.org/app-id": "spark-42", "yunikorn.apache.org/queue": "root.sandbox", "spark-role": "driver"}
ps = [pod("spark-42-driver", "spark", {"cpu": "1", "memory": "2Gi"}, labels=lab, scheduler="yunikorn",
          annotations={"yunikorn.apache.org/task-group-name": "driver", "yunikorn.apache.org/task-groups": tg,
                       "yunikorn.apache.org/schedulingPolicyParameters": "placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard"})]
lab = dict(lab, **{"spark-role": "executor"})
ps += [pod(f"spark-42-exec-{i}", "spark", {"cpu": "2", "memory": "4Gi"}, labels=lab, scheduler="yunikorn",
           annotations={"yunikorn.apache.org/task-group-name": "executor", "yunikorn.apache.org/task-groups": tg}) for i in range(5)]
ps += [pod("tg-spark-42-executor-0", "spark", {"cpu": "2", "memory": "4Gi"}, scheduler="yunikorn",
           labels={"applicationId": "spark-42", "placeholder": "true"},
           annotations={"internal.yunikorn.apache.org/placeholder": "true", "yunikorn.apache.org/task-group-name": "executor"})]
write("yunikorn.json", lst(nodes + ps))

# --- Kueue TAS (Topology levels, required block, rack slices) and a plain-pod group ------------------
topo = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": meta("default"),
        "spec": {"levels": [{"nodeLabel": BLOCK}, {"nodeLabel": KRACK}, {"nodeLabel": "kubernetes.io/hostname"}]}}
flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": meta("tas-flavor"),
          "spec": {"nodeLabels": {"cloud.provider.com/node-group": "tas"}, "topologyName": "default"}}
nodes = []
for b in ("b1", "b2"):
    for r in ("r1", "r2"):
        for i in range(2):
            nodes.append(node(f"{b}-{r}-n{i}", cpu="4", labels={BLOCK: b, KRACK: f"{b}-{r}", "cloud.provider.com/node-group": "tas"}))
busy = [pod("other-0", "default", {"cpu": "2"}, node="b1-r1-n0")]
ann = {"kueue.x-k8s.io/podset-required-topology": BLOCK, "kueue.x-k8s.io/podset-slice-required-topology": KRACK,
       "kueue.x-k8s.io/podset-slice-size": "2"}
job = [pod(f"train-{i}", "team-a", {"cpu": "3"}, owner=("Job", "train"), annotations=ann,
           labels={"kueue.x-k8s.io/queue-name": "user-queue", "batch.kubernetes.io/job-name": "train"},
           extra_spec={"nodeSelector": {"cloud.provider.com/node-group": "tas"}}) for i in range(4)]
plain = [pod(f"group-{i}", "team-a", {"cpu": "1"}, labels={"kueue.x-k8s.io/pod-group-name": "group", "kueue.x-k8s.io/queue-name": "user-queue"},
             annotations={"kueue.x-k8s.io/pod-group-total-count": "2"}) for i in range(2)]
write("kueue.json", lst([topo, flavor] + nodes + busy + job + plain))

# --- Mixed List: priorities, preemption, cordon, taints, sidecars, unmappable constraints -----------
nodes = [node("cpu-1", cpu="8", memory="32Gi"), node("cpu-2", cpu="8", memory="32Gi"),
         node("cpu-3", cpu="8", memory="32Gi", unschedulable=True),
         node("gpu-1", cpu="16", memory="64Gi", gpu="4", labels={"pool": "gpu"},
              taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])]
classes = [pclass("high", 1000), pclass("low", 10, default=True), pclass("never", 1000, policy="Never")]
low = [pod(f"batch-{i}", "default", {"cpu": "3", "memory": "4Gi"}, node=n, priority=10, priority_class="low",
           created="2026-07-24T09:00:00Z") for i, n in enumerate(["cpu-1", "cpu-1", "cpu-2", "cpu-2"])]
system = [pod("kube-proxy-x", "kube-system", {"cpu": "100m", "memory": "64Mi"}, node="cpu-1", priority=2000001000,
              priority_class="system-node-critical", annotations={"kubernetes.io/config.mirror": "abc"})]
done = [pod("old-job-0", "default", {"cpu": "8"}, node="cpu-2", phase="Succeeded")]
# A high-priority coscheduling gang of 2 x 5 cpu: needs the low pods of one node each... cpu-1 has 6 + 0.1 used.
gang_pg = {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta("urgent", "ml"),
           "spec": {"minMember": 2}}
gang = [pod(f"urgent-{i}", "ml", {"cpu": "5", "memory": "4Gi"}, labels={"scheduling.x-k8s.io/pod-group": "urgent"},
            priority=1000, priority_class="high") for i in range(2)]
gpu = [pod("cuda-0", "ml", {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2"}, priority=10,
           extra_spec={"tolerations": DEFAULT_TOLERATIONS + [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                       "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                           {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]}}}})]
sidecar = [pod("with-sidecar", "web", {}, priority=10, containers=[
    {"name": "app", "image": "app:1", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
    extra_spec={"initContainers": [
        {"name": "migrate", "image": "app:1", "resources": {"requests": {"cpu": "2", "memory": "512Mi"}}},
        {"name": "proxy", "image": "envoy:1", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}}}],
        "overhead": {"cpu": "100m", "memory": "32Mi"}})]
anti = [pod("singleton", "web", {"cpu": "1"}, priority=10, extra_spec={"affinity": {"podAntiAffinity": {
    "requiredDuringSchedulingIgnoredDuringExecution": [{"labelSelector": {"matchLabels": {"app": "singleton"}},
                                                        "topologyKey": "kubernetes.io/hostname"}]}}})]
ds = [pod("node-agent-gpu-1", "kube-system", {"cpu": "100m"}, priority=2000001000, priority_class="system-node-critical",
          extra_spec={"tolerations": [{"operator": "Exists"}],
                      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                          {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}]}}}})]
deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("web", "web"), "spec": {"replicas": 1}}
write("mixed-list.json", lst(nodes + classes + low + system + done + [gang_pg] + gang + gpu + sidecar + anti + ds + [deploy]))

# --- kube-scheduler extender/v1 ExtenderArgs as kube-scheduler's HTTPExtender.Filter sends it
# (encoding/json of the Go struct: field names as keys, nil slices as null; the embedded
# v1.Pod and v1.NodeList keep their json tags) for train-0 of upstream-v1beta1.json.
src = json.load(open("upstream-v1beta1.json"))["items"]
pod0 = next(i for i in src if i["kind"] == "Pod" and i["metadata"]["name"] == "train-0")
nodes = [i for i in src if i["kind"] == "Node"]
write("extender-filter-args.json", {"Pod": pod0, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None})
