//! Serde structs for the parts of Kubernetes objects the importer reads, with the keys of
//! `shared/spec/kubernetes-objects.md`. They are faithful subsets of the upstream types:
//! unknown keys are ignored (a `kubectl get -o json` dump carries many fields Tessera has
//! no use for), `null` is read as absent (Go pointers without `omitempty` are written as
//! `null`), and quantities are accepted as strings or numbers.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// `null` or absent both give the type's default (Go writes nil slices and maps as `null`).
fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A resource quantity as written: `"500m"`, `"8Gi"`, or a bare number.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Quantity {
    /// The usual form.
    Text(String),
    /// A whole number (hand-written manifests).
    Int(i64),
    /// A decimal number (hand-written manifests).
    Float(f64),
}

impl Quantity {
    /// The quantity as Kubernetes would print it.
    pub fn text(&self) -> String {
        match self {
            Quantity::Text(s) => s.clone(),
            Quantity::Int(i) => i.to_string(),
            Quantity::Float(f) => format!("{f}"),
        }
    }
}

/// A resource list (`requests`, `allocatable`, `overhead`).
pub type ResourceList = BTreeMap<String, Quantity>;

/// `metadata` of any object.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    /// Object name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Namespace (absent for cluster-scoped objects).
    pub namespace: Option<String>,
    /// Object uid.
    pub uid: Option<String>,
    /// Labels.
    #[serde(deserialize_with = "nullable")]
    pub labels: BTreeMap<String, String>,
    /// Annotations.
    #[serde(deserialize_with = "nullable")]
    pub annotations: BTreeMap<String, String>,
    /// RFC 3339 creation time.
    pub creation_timestamp: Option<String>,
    /// Set while the object is being deleted.
    pub deletion_timestamp: Option<String>,
    /// Owners (a Job, a ReplicaSet, ...).
    #[serde(deserialize_with = "nullable")]
    pub owner_references: Vec<OwnerReference>,
}

/// One entry of `metadata.ownerReferences`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OwnerReference {
    /// Owner kind.
    #[serde(deserialize_with = "nullable")]
    pub kind: String,
    /// Owner name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Owner uid.
    pub uid: Option<String>,
    /// Whether this owner is the managing controller.
    pub controller: Option<bool>,
}

// ---------------------------------------------------------------------------------------
// core/v1 Node

/// `v1` Node.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Node {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(deserialize_with = "nullable")]
    pub spec: NodeSpec,
    /// Status.
    #[serde(deserialize_with = "nullable")]
    pub status: NodeStatus,
}

/// `Node.spec`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    /// Cordoned.
    pub unschedulable: Option<bool>,
    /// Taints.
    #[serde(deserialize_with = "nullable")]
    pub taints: Vec<Taint>,
}

/// `Node.status`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeStatus {
    /// What pods may request.
    #[serde(deserialize_with = "nullable")]
    pub allocatable: ResourceList,
    /// Raw capacity (used only when `allocatable` is missing).
    #[serde(deserialize_with = "nullable")]
    pub capacity: ResourceList,
}

/// A node taint.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Taint {
    /// Key.
    #[serde(deserialize_with = "nullable")]
    pub key: String,
    /// Value.
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    #[serde(deserialize_with = "nullable")]
    pub effect: String,
}

// ---------------------------------------------------------------------------------------
// core/v1 Pod

/// `v1` Pod.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Pod {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(deserialize_with = "nullable")]
    pub spec: PodSpec,
    /// Status.
    #[serde(deserialize_with = "nullable")]
    pub status: PodStatus,
}

/// `Pod.spec`, the fields that matter for placement.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSpec {
    /// Set once bound.
    pub node_name: Option<String>,
    /// Which scheduler places it.
    pub scheduler_name: Option<String>,
    /// Resolved priority (Priority admission).
    pub priority: Option<i64>,
    /// Its PriorityClass.
    pub priority_class_name: Option<String>,
    /// `PreemptLowerPriority` or `Never`.
    pub preemption_policy: Option<String>,
    /// Labels every node must carry.
    #[serde(deserialize_with = "nullable")]
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations.
    #[serde(deserialize_with = "nullable")]
    pub tolerations: Vec<Toleration>,
    /// Affinity.
    pub affinity: Option<Affinity>,
    /// RuntimeClass overhead.
    #[serde(deserialize_with = "nullable")]
    pub overhead: ResourceList,
    /// Pod-level resources (gate PodLevelResources).
    pub resources: Option<ResourceRequirements>,
    /// Init containers (sidecars have `restartPolicy: Always`).
    #[serde(deserialize_with = "nullable")]
    pub init_containers: Vec<Container>,
    /// Regular containers.
    #[serde(deserialize_with = "nullable")]
    pub containers: Vec<Container>,
    /// Topology spread constraints.
    #[serde(deserialize_with = "nullable")]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// Scheduling gates (the pod waits while any is present).
    #[serde(deserialize_with = "nullable")]
    pub scheduling_gates: Vec<Value>,
    /// Dynamic resource claims.
    #[serde(deserialize_with = "nullable")]
    pub resource_claims: Vec<Value>,
    /// Volumes.
    #[serde(deserialize_with = "nullable")]
    pub volumes: Vec<Volume>,
    /// Kubernetes 1.36+: the PodGroup this pod belongs to.
    pub scheduling_group: Option<SchedulingGroup>,
    /// Kubernetes 1.35: the Workload pod group this pod belongs to.
    pub workload_ref: Option<WorkloadRef>,
}

/// `Pod.spec.schedulingGroup` (1.36+).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchedulingGroup {
    /// Name of a PodGroup in the pod's namespace.
    pub pod_group_name: Option<String>,
}

/// `Pod.spec.workloadRef` (1.35, `v1alpha1`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadRef {
    /// Workload name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Name of one of its `podGroups`.
    #[serde(deserialize_with = "nullable")]
    pub pod_group: String,
    /// Replica of that pod group (the gang unit).
    pub pod_group_replica_key: Option<String>,
}

/// A container (regular or init).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Container {
    /// Name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// `Always` on an init container makes it a sidecar.
    pub restart_policy: Option<String>,
    /// Requests and limits.
    #[serde(deserialize_with = "nullable")]
    pub resources: ResourceRequirements,
    /// Ports (a `hostPort` ties the pod to free ports of a node).
    #[serde(deserialize_with = "nullable")]
    pub ports: Vec<ContainerPort>,
}

/// `resources` of a container or a pod.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ResourceRequirements {
    /// Requests.
    #[serde(deserialize_with = "nullable")]
    pub requests: ResourceList,
    /// Limits (API defaulting copies them into missing requests).
    #[serde(deserialize_with = "nullable")]
    pub limits: ResourceList,
}

/// A container port.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerPort {
    /// Port on the node, if any.
    pub host_port: Option<i64>,
}

/// A toleration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Toleration {
    /// Key (empty with `Exists`: every key).
    pub key: Option<String>,
    /// `Equal` (default), `Exists`, `Lt`, `Gt`.
    pub operator: Option<String>,
    /// Value.
    pub value: Option<String>,
    /// Effect (empty: every effect).
    pub effect: Option<String>,
}

/// `Pod.spec.affinity`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Affinity {
    /// Node affinity.
    pub node_affinity: Option<NodeAffinity>,
    /// Inter-pod affinity.
    pub pod_affinity: Option<PodAffinity>,
    /// Inter-pod anti-affinity.
    pub pod_anti_affinity: Option<PodAffinity>,
}

/// `affinity.nodeAffinity`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeAffinity {
    /// The hard part (the preferred part only scores).
    pub required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
}

/// A node selector: terms ORed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelector {
    /// Terms.
    #[serde(deserialize_with = "nullable")]
    pub node_selector_terms: Vec<NodeSelectorTerm>,
}

/// A node selector term: requirements ANDed.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelectorTerm {
    /// On node labels.
    #[serde(deserialize_with = "nullable")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
    /// On node fields (`metadata.name` only).
    #[serde(deserialize_with = "nullable")]
    pub match_fields: Vec<NodeSelectorRequirement>,
}

/// One requirement.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelectorRequirement {
    /// Label key or field.
    #[serde(deserialize_with = "nullable")]
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`.
    #[serde(deserialize_with = "nullable")]
    pub operator: String,
    /// Values.
    #[serde(deserialize_with = "nullable")]
    pub values: Vec<String>,
}

/// `podAffinity` / `podAntiAffinity`: only whether a hard part exists matters.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodAffinity {
    /// Hard terms.
    #[serde(deserialize_with = "nullable")]
    pub required_during_scheduling_ignored_during_execution: Vec<Value>,
}

/// A topology spread constraint.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologySpreadConstraint {
    /// Node label.
    #[serde(deserialize_with = "nullable")]
    pub topology_key: String,
    /// `DoNotSchedule` (hard) or `ScheduleAnyway`.
    pub when_unsatisfiable: Option<String>,
}

/// A volume: only the kinds with placement consequences are read.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Volume {
    /// Name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// A claim (its volume may be bound to a zone or a node).
    pub persistent_volume_claim: Option<Value>,
    /// A generic ephemeral volume (a claim created with the pod).
    pub ephemeral: Option<Value>,
}

/// `Pod.status`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodStatus {
    /// Pending, Running, Succeeded, Failed, Unknown.
    pub phase: Option<String>,
    /// Per container: what the kubelet allocated (in-place resize).
    #[serde(deserialize_with = "nullable")]
    pub container_statuses: Vec<ContainerStatus>,
}

/// A container's status.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerStatus {
    /// Container name.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Allocated resources.
    #[serde(deserialize_with = "nullable")]
    pub allocated_resources: ResourceList,
    /// Actual resources.
    pub resources: Option<ResourceRequirements>,
}

// ---------------------------------------------------------------------------------------
// scheduling.k8s.io/v1 PriorityClass

/// `scheduling.k8s.io/v1` PriorityClass (fields at the top level, no spec).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PriorityClass {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Priority value.
    pub value: i64,
    /// Default class of pods that name none.
    pub global_default: Option<bool>,
    /// `PreemptLowerPriority` (default) or `Never`.
    pub preemption_policy: Option<String>,
}

// ---------------------------------------------------------------------------------------
// Upstream Workload / PodGroup (scheduling.k8s.io v1alpha1..v1beta1)

/// `schedulingPolicy` / `policy`: a union of `basic: {}` and `gang: {...}`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchedulingPolicy {
    /// Present: pod by pod.
    pub basic: Option<Value>,
    /// Present: gang.
    pub gang: Option<GangPolicy>,
}

/// `gang`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GangPolicy {
    /// PodGroup: pods that must be schedulable together.
    pub min_count: Option<i64>,
    /// CompositePodGroup: child groups that must be schedulable together.
    pub min_group_count: Option<i64>,
}

/// `schedulingConstraints`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SchedulingConstraints {
    /// At most one entry: every pod in one domain of that node label.
    #[serde(deserialize_with = "nullable")]
    pub topology: Vec<TopologyConstraint>,
}

/// One topology constraint.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologyConstraint {
    /// Node label key.
    #[serde(deserialize_with = "nullable")]
    pub key: String,
}

/// `PodGroup.spec` of `v1alpha2`, `v1alpha3` and `v1beta1`, and `CompositePodGroup.spec`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UpstreamPodGroupSpec {
    /// Basic or gang.
    pub scheduling_policy: Option<SchedulingPolicy>,
    /// Topology.
    pub scheduling_constraints: Option<SchedulingConstraints>,
    /// `{"single":{}}` / `{"all":{}}` (v1beta1, v1alpha3) or `"Pod"` / `"PodGroup"` (v1alpha2).
    pub disruption_mode: Option<Value>,
    /// Priority class.
    pub priority_class_name: Option<String>,
    /// Priority (authoritative for the group).
    pub priority: Option<i64>,
    /// `PreemptLowerPriority` or `Never`.
    pub preemption_policy: Option<String>,
    /// Parent CompositePodGroup (v1alpha3).
    pub parent_composite_pod_group_name: Option<String>,
}

/// Upstream PodGroup or CompositePodGroup.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct UpstreamPodGroup {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(deserialize_with = "nullable")]
    pub spec: UpstreamPodGroupSpec,
}

/// `scheduling.k8s.io/v1alpha1` Workload (1.35).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct WorkloadV1alpha1 {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(deserialize_with = "nullable")]
    pub spec: WorkloadV1alpha1Spec,
}

/// Its spec.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadV1alpha1Spec {
    /// Pod groups, inline.
    #[serde(deserialize_with = "nullable")]
    pub pod_groups: Vec<WorkloadPodGroup>,
}

/// One inline pod group of a 1.35 Workload.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkloadPodGroup {
    /// Name pods refer to in `workloadRef.podGroup`.
    #[serde(deserialize_with = "nullable")]
    pub name: String,
    /// Basic or gang.
    pub policy: Option<SchedulingPolicy>,
}

// ---------------------------------------------------------------------------------------
// scheduler-plugins coscheduling, Volcano

/// `scheduling.x-k8s.io/v1alpha1` PodGroup (coscheduling).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct CoschedulingPodGroup {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(deserialize_with = "nullable")]
    pub spec: CoschedulingSpec,
}

/// Its spec.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CoschedulingSpec {
    /// Gang size.
    pub min_member: Option<i64>,
}

/// `scheduling.volcano.sh/v1beta1` PodGroup.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct VolcanoPodGroup {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(deserialize_with = "nullable")]
    pub spec: VolcanoSpec,
}

/// Its spec.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoSpec {
    /// Gang size.
    pub min_member: Option<i64>,
    /// Per-task minimum (key: the pod's `volcano.sh/task-spec`).
    #[serde(deserialize_with = "nullable")]
    pub min_task_member: BTreeMap<String, i64>,
    /// Volcano queue.
    pub queue: Option<String>,
    /// Priority class of the job.
    pub priority_class_name: Option<String>,
    /// HyperNode network topology.
    pub network_topology: Option<VolcanoNetworkTopology>,
    /// Sub-group policies.
    #[serde(deserialize_with = "nullable")]
    pub sub_group_policy: Vec<VolcanoSubGroupPolicy>,
}

/// `networkTopology`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoNetworkTopology {
    /// `hard` (default) or `soft`.
    pub mode: Option<String>,
}

/// One `subGroupPolicy` entry.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoSubGroupPolicy {
    /// Name.
    pub name: Option<String>,
    /// Sub-group gang.
    pub min_sub_groups: Option<i64>,
    /// Topology of each sub-group.
    pub network_topology: Option<VolcanoNetworkTopology>,
}

// ---------------------------------------------------------------------------------------
// Kueue

/// `kueue.x-k8s.io` Topology.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct KueueTopology {
    /// Metadata.
    pub metadata: ObjectMeta,
    /// Spec.
    #[serde(deserialize_with = "nullable")]
    pub spec: KueueTopologySpec,
}

/// Its spec.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KueueTopologySpec {
    /// Levels, broad to narrow.
    #[serde(deserialize_with = "nullable")]
    pub levels: Vec<KueueTopologyLevel>,
}

/// One level.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KueueTopologyLevel {
    /// Node label of the level.
    #[serde(deserialize_with = "nullable")]
    pub node_label: String,
}
