//! The validated engine model: dense integer IDs, `Vec`-indexed arenas, quantities as
//! integers. Built once from an [`InstanceDoc`]; every cross-reference is checked here so
//! that solvers and the validator can index without failing.

use crate::decision::PriorityKey;
use crate::quantity::{self, Scale};
use crate::queues::{QueueId, QueueTree};
pub use crate::quotas::Queues;
use crate::spec::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub type NodeId = usize;
pub type GroupId = usize;
pub type TaskId = usize;
pub type PodId = usize;
pub type ResourceId = usize;

/// The implicit finest topology level.
pub const HOSTNAME: &str = "kubernetes.io/hostname";
/// Most physical devices of one shared resource on one node.
pub const MAX_DEVICES: i64 = 1024;
/// Resource counted once per pod when nodes declare it.
pub const PODS: &str = "pods";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: String,
    pub effect: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    pub key: String,
    /// `Exists` or `Equal`.
    pub exists: bool,
    pub value: String,
    /// Empty matches every effect.
    pub effect: String,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    /// Allocatable per resource (engine units).
    pub allocatable: Vec<i64>,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    /// Whether the node declares `pods` in allocatable (else pods are unlimited).
    pub limits_pods: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Gang,
    Basic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisruptionMode {
    Pod,
    PodGroup,
}

#[derive(Clone, Debug)]
pub struct Group {
    pub name: String,
    /// Kubernetes namespace and uid, carried through for exports.
    pub namespace: Option<String>,
    pub uid: Option<String>,
    pub queue: Option<String>,
    /// The leaf queue, when the instance has queues (then every group has one).
    pub queue_id: Option<QueueId>,
    /// Raw priority: what rule 6 (eviction eligibility) compares.
    pub priority: i64,
    /// Level of objective term 1, higher first: the priority without queues; with queues
    /// the rank of the group's effective priority key among pending groups (see
    /// [`Instance::level_key`]).
    pub rank: i64,
    pub preempt_never: bool,
    pub disruption: DisruptionMode,
    pub policy: Policy,
    /// Gang minimum over the whole group, bound members included.
    pub min_count: i64,
    /// Level index into [`Instance::levels`].
    pub required: Option<usize>,
    pub preferred: Option<usize>,
    pub created_at: i64,
    /// Position in the input, the last FIFO tie-break.
    pub order: usize,
    pub tasks: Vec<TaskId>,
    /// Bound pods that are members of this group.
    pub bound: Vec<PodId>,
}

#[derive(Clone, Debug)]
pub struct Task {
    pub name: String,
    pub group: GroupId,
    pub count: i64,
    pub min_count: i64,
    /// Requests per resource, `pods` included when the instance uses it.
    pub requests: Vec<i64>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    /// (level index, size).
    pub slice: Option<(usize, i64)>,
    /// Required node affinity: any term (OR) of requirements that must all hold (AND);
    /// `None`: no constraint.
    pub node_affinity: Option<Vec<Vec<AffinityRequirement>>>,
}

/// Operator of a node affinity requirement (Kubernetes' `NodeSelectorOperator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AffinityOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
}

/// One validated node affinity requirement. For `Gt`/`Lt`, `values` holds exactly one
/// integer, already checked to parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinityRequirement {
    pub key: String,
    pub operator: AffinityOperator,
    pub values: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct BoundPod {
    pub name: String,
    pub namespace: Option<String>,
    pub uid: Option<String>,
    pub node: NodeId,
    pub group: Option<GroupId>,
    pub task: Option<String>,
    pub priority: i64,
    pub requests: Vec<i64>,
    /// Per shared-device resource id: the devices it holds.
    pub devices: BTreeMap<ResourceId, Vec<usize>>,
    pub placeholder: bool,
    /// Being released: holds its node (rules 1-3), counts in no queue, never a victim.
    pub releasing: bool,
    pub preemptible: bool,
}

#[derive(Clone, Debug)]
pub struct InstanceOptions {
    pub preemption: bool,
    /// `options.preemptionModel`: YuniKorn's queue rules on top of rule 6.
    pub yunikorn_preemption: bool,
    pub time_limit: Option<std::time::Duration>,
    pub relative_gap: f64,
    /// `options.workLimit`: deterministic budget in solver work units; 0 = none.
    pub work_limit: u64,
}

/// A validated scheduling-cycle snapshot.
#[derive(Clone, Debug)]
pub struct Instance {
    pub resources: Vec<String>,
    /// Per resource: counted in shared physical devices.
    pub shared: Vec<bool>,
    /// Topology levels, coarse to fine, ending with the implicit hostname level.
    pub levels: Vec<String>,
    pub nodes: Vec<Node>,
    pub groups: Vec<Group>,
    pub tasks: Vec<Task>,
    pub pods: Vec<BoundPod>,
    pub options: InstanceOptions,
    /// Queue tree and limits (rule 7), when given.
    pub queues: Option<Queues>,
    /// With queues: the effective key of each rank (index = rank).
    level_keys: Vec<PriorityKey>,
    node_index: HashMap<String, NodeId>,
    group_index: HashMap<String, GroupId>,
    pod_index: HashMap<String, PodId>,
}

impl Instance {
    /// Parses and validates YAML or JSON text.
    pub fn from_text(text: &str) -> Result<Instance, InputError> {
        let doc: InstanceDoc = from_text(text)?;
        Instance::from_doc(&doc)
    }

    /// Reads YAML or JSON from `reader` (to its end) and validates it.
    pub fn from_reader(mut reader: impl std::io::Read) -> Result<Instance, InputError> {
        let mut text = String::new();
        reader.read_to_string(&mut text).map_err(|e| InputError::new("", format!("cannot read the instance: {e}")))?;
        Instance::from_text(&text)
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_index.get(name).copied()
    }
    pub fn group_id(&self, name: &str) -> Option<GroupId> {
        self.group_index.get(name).copied()
    }
    pub fn pod_id(&self, name: &str) -> Option<PodId> {
        self.pod_index.get(name).copied()
    }
    pub fn resource_id(&self, name: &str) -> Option<ResourceId> {
        self.resources.iter().position(|r| r == name)
    }
    pub fn scale(&self, r: ResourceId) -> Scale {
        scale_of(&self.resources[r], self.shared[r])
    }
    /// Number of physical devices of shared resource `r` on node `n`.
    pub fn device_count(&self, n: NodeId, r: ResourceId) -> usize {
        (self.nodes[n].allocatable[r] / 1000) as usize
    }
    /// A group still has pods to place in this cycle.
    pub fn is_pending(&self, g: GroupId) -> bool {
        self.groups[g].tasks.iter().any(|&t| self.tasks[t].count > 0)
    }
    pub fn pending_groups(&self) -> impl Iterator<Item = GroupId> + '_ {
        (0..self.groups.len()).filter(|&g| self.is_pending(g))
    }
    /// Fewest new pods that make the group placed (gang minimum, never below one pod).
    pub fn min_new_pods(&self, g: GroupId) -> i64 {
        let grp = &self.groups[g];
        match grp.policy {
            Policy::Basic => 1,
            Policy::Gang => {
                let tasks: i64 = grp.tasks.iter().map(|&t| self.tasks[t].min_count).sum();
                tasks.max(grp.min_count - grp.bound.len() as i64).max(1)
            }
        }
    }
    /// Most new pods the group can take.
    pub fn max_new_pods(&self, g: GroupId) -> i64 {
        self.groups[g].tasks.iter().map(|&t| self.tasks[t].count).sum()
    }
    /// The domain value of node `n` at level `l` (hostname level: the node name).
    pub fn domain_of(&self, n: NodeId, l: usize) -> Option<&str> {
        if l + 1 == self.levels.len() {
            Some(&self.nodes[n].name)
        } else {
            self.nodes[n].labels.get(&self.levels[l]).map(|s| s.as_str())
        }
    }
    pub fn level_id(&self, name: &str) -> Option<usize> {
        self.levels.iter().position(|l| l == name)
    }
    /// Distinct levels of term 1 among pending groups ([`Group::rank`]), highest first.
    pub fn rank_levels(&self) -> Vec<i64> {
        let set: BTreeSet<i64> = self.pending_groups().map(|g| self.groups[g].rank).collect();
        set.into_iter().rev().collect()
    }
    /// The priority key a level of term 1 is reported as: the priority itself without
    /// queues, the effective key with them.
    pub fn level_key(&self, rank: i64) -> PriorityKey {
        if self.queues.is_some() {
            if let Some(k) = usize::try_from(rank).ok().and_then(|r| self.level_keys.get(r)) {
                return k.clone();
            }
        }
        PriorityKey(vec![rank])
    }
}

fn scale_of(name: &str, shared: bool) -> Scale {
    if shared || name == "cpu" {
        Scale::Milli
    } else {
        Scale::Base
    }
}

fn quantity(q: &QuantityDoc, path: &str, scale: Scale) -> Result<i64, InputError> {
    let text = q.text();
    quantity::parse(&text, scale).map_err(|e| InputError::new(path, format!("{e} {text:?}")))
}

fn check_name(name: &str, path: &str) -> Result<(), InputError> {
    if name.trim().is_empty() {
        return Err(InputError::new(path, "must not be empty"));
    }
    Ok(())
}

impl Instance {
    /// Validates a document into the engine model.
    pub fn from_doc(doc: &InstanceDoc) -> Result<Instance, InputError> {
        let tree = QueueTree::from_instance(doc)?;
        // Topology levels.
        let mut levels: Vec<String> = Vec::new();
        if let Some(t) = &doc.topology {
            for (i, l) in t.levels.iter().enumerate() {
                let p = format!("topology.levels[{i}]");
                check_name(l, &p)?;
                if l == HOSTNAME {
                    return Err(InputError::new(p, format!("{HOSTNAME} is the implicit finest level; do not list it")));
                }
                if levels.contains(l) {
                    return Err(InputError::new(p, format!("duplicate level {l:?}")));
                }
                levels.push(l.clone());
            }
        }
        levels.push(HOSTNAME.to_string());

        let mut shared_set = BTreeSet::new();
        for (i, s) in doc.shared_devices.iter().enumerate() {
            let p = format!("sharedDevices[{i}]");
            check_name(s, &p)?;
            if s == "cpu" || s == "memory" || s == PODS {
                return Err(InputError::new(p, format!("{s:?} cannot be a shared device")));
            }
            if !shared_set.insert(s.clone()) {
                return Err(InputError::new(p, format!("duplicate shared device {s:?}")));
            }
        }

        let mut classes: HashMap<&str, i64> = HashMap::new();
        for (i, pc) in doc.priority_classes.iter().enumerate() {
            let p = format!("priorityClasses[{i}]");
            check_name(&pc.name, &format!("{p}.name"))?;
            check_priority(pc.value, &format!("{p}.value"))?;
            if classes.insert(&pc.name, pc.value).is_some() {
                return Err(InputError::new(format!("{p}.name"), format!("duplicate priority class {:?}", pc.name)));
            }
        }

        // Resource dictionary: every name used anywhere, sorted for determinism.
        let mut names: BTreeSet<String> = shared_set.clone();
        let mut uses_pods = false;
        for n in &doc.nodes {
            for k in n.allocatable.keys() {
                names.insert(k.clone());
                uses_pods |= k == PODS;
            }
        }
        for g in &doc.pod_groups {
            for t in &g.tasks {
                names.extend(t.requests.keys().cloned());
            }
        }
        for p in &doc.pods {
            names.extend(p.requests.keys().cloned());
        }
        if uses_pods {
            names.insert(PODS.to_string());
        }
        let resources: Vec<String> = names.into_iter().collect();
        let shared: Vec<bool> = resources.iter().map(|r| shared_set.contains(r)).collect();
        let rid: HashMap<&str, usize> = resources.iter().enumerate().map(|(i, r)| (r.as_str(), i)).collect();
        let pods_rid = rid.get(PODS).copied();

        let read_resources = |res: &ResourcesDoc, path: &str, is_request: bool| -> Result<Vec<i64>, InputError> {
            let mut v = vec![0i64; resources.len()];
            for (k, q) in res {
                let p = format!("{path}.{k}");
                if k.trim().is_empty() {
                    return Err(InputError::new(p, "empty resource name"));
                }
                let r = rid[k.as_str()];
                let val = quantity(q, &p, scale_of(k, shared[r]))?;
                if shared[r] {
                    if !is_request && val > MAX_DEVICES * 1000 {
                        return Err(InputError::new(p, format!("at most {MAX_DEVICES} devices per node, got {:?}", q.text())));
                    }
                    if !is_request && val % 1000 != 0 {
                        return Err(InputError::new(p, format!("shared device count must be whole, got {:?}", q.text())));
                    }
                    if is_request && val > 1000 && val % 1000 != 0 {
                        return Err(InputError::new(
                            p,
                            format!("a request of more than one shared device must be a whole number, got {:?}", q.text()),
                        ));
                    }
                }
                v[r] = val;
            }
            if is_request {
                if let Some(pr) = pods_rid {
                    if res.get(PODS).is_none() {
                        v[pr] = 1;
                    }
                }
            }
            Ok(v)
        };

        // Nodes.
        let mut nodes = Vec::with_capacity(doc.nodes.len());
        let mut node_index = HashMap::new();
        for (i, n) in doc.nodes.iter().enumerate() {
            let p = format!("nodes[{i}]");
            check_name(&n.name, &format!("{p}.name"))?;
            if node_index.insert(n.name.clone(), i).is_some() {
                return Err(InputError::new(format!("{p}.name"), format!("duplicate node name {:?}", n.name)));
            }
            let allocatable = read_resources(&n.allocatable, &format!("{p}.allocatable"), false)?;
            let mut taints = Vec::new();
            for (j, t) in n.taints.iter().enumerate() {
                let tp = format!("{p}.taints[{j}]");
                check_name(&t.key, &format!("{tp}.key"))?;
                if !matches!(t.effect.as_str(), "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
                    return Err(InputError::new(
                        format!("{tp}.effect"),
                        format!("unknown taint effect {:?} (NoSchedule, PreferNoSchedule, NoExecute)", t.effect),
                    ));
                }
                taints.push(Taint { key: t.key.clone(), value: t.value.clone().unwrap_or_default(), effect: t.effect.clone() });
            }
            nodes.push(Node {
                name: n.name.clone(),
                labels: n.labels.clone(),
                allocatable,
                taints,
                unschedulable: n.unschedulable,
                limits_pods: n.allocatable.contains_key(PODS),
            });
        }

        // Groups and tasks.
        let mut groups = Vec::new();
        let mut tasks = Vec::new();
        let mut group_index = HashMap::new();
        let level_of = |name: &str, path: &str| -> Result<usize, InputError> {
            levels
                .iter()
                .position(|l| l == name)
                .ok_or_else(|| InputError::new(path, format!("unknown topology level {name:?} (levels: {})", levels.join(", "))))
        };
        for (i, g) in doc.pod_groups.iter().enumerate() {
            let p = format!("podGroups[{i}]");
            check_name(&g.name, &format!("{p}.name"))?;
            if group_index.insert(g.name.clone(), i).is_some() {
                return Err(InputError::new(format!("{p}.name"), format!("duplicate pod group name {:?}", g.name)));
            }
            let priority = match (&g.priority, &g.priority_class_name) {
                (Some(v), None) => {
                    check_priority(*v, &format!("{p}.priority"))?;
                    *v
                }
                (None, Some(c)) => *classes
                    .get(c.as_str())
                    .ok_or_else(|| InputError::new(format!("{p}.priorityClassName"), format!("unknown priority class {c:?}")))?,
                (None, None) => 0,
                (Some(v), Some(c)) => {
                    // Both given: they must agree, as the API server enforces for pods.
                    let cv = *classes
                        .get(c.as_str())
                        .ok_or_else(|| InputError::new(format!("{p}.priorityClassName"), format!("unknown priority class {c:?}")))?;
                    if cv != *v {
                        return Err(InputError::new(format!("{p}.priority"), format!("{v} disagrees with priorityClassName {c:?} ({cv})")));
                    }
                    cv
                }
            };
            let preempt_never = match g.preemption_policy.as_deref() {
                None | Some("PreemptLowerPriority") => false,
                Some("Never") => true,
                Some(o) => {
                    return Err(InputError::new(
                        format!("{p}.preemptionPolicy"),
                        format!("unknown preemption policy {o:?} (PreemptLowerPriority, Never)"),
                    ))
                }
            };
            let disruption = match g.disruption_mode.as_deref() {
                None | Some("Pod") => DisruptionMode::Pod,
                Some("PodGroup") => DisruptionMode::PodGroup,
                Some(o) => {
                    return Err(InputError::new(format!("{p}.disruptionMode"), format!("unknown disruption mode {o:?} (Pod, PodGroup)")))
                }
            };
            let policy = match g.policy.as_deref() {
                None | Some("gang") => Policy::Gang,
                Some("basic") => Policy::Basic,
                Some(o) => return Err(InputError::new(format!("{p}.policy"), format!("unknown policy {o:?} (gang, basic)"))),
            };
            let (mut required, mut preferred) = (None, None);
            if let Some(t) = &g.topology {
                if let Some(r) = &t.required {
                    required = Some(level_of(r, &format!("{p}.topology.required"))?);
                }
                if let Some(r) = &t.preferred {
                    preferred = Some(level_of(r, &format!("{p}.topology.preferred"))?);
                }
            }
            if g.tasks.is_empty() {
                return Err(InputError::new(format!("{p}.tasks"), "a pod group needs at least one task"));
            }
            let mut task_ids = Vec::new();
            let mut task_names = BTreeSet::new();
            for (j, t) in g.tasks.iter().enumerate() {
                let tp = format!("{p}.tasks[{j}]");
                check_name(&t.name, &format!("{tp}.name"))?;
                if !task_names.insert(t.name.clone()) {
                    return Err(InputError::new(format!("{tp}.name"), format!("duplicate task name {:?}", t.name)));
                }
                if t.count < 0 || t.count > 1_000_000 {
                    return Err(InputError::new(format!("{tp}.count"), format!("must be between 0 and 1000000, got {}", t.count)));
                }
                let min_count = t.min_count.unwrap_or(t.count);
                if min_count < 0 {
                    return Err(InputError::new(format!("{tp}.minCount"), format!("must not be negative, got {min_count}")));
                }
                if min_count > t.count {
                    return Err(InputError::new(format!("{tp}.minCount"), format!("minCount {min_count} exceeds count {}", t.count)));
                }
                let requests = read_resources(&t.requests, &format!("{tp}.requests"), true)?;
                let mut tolerations = Vec::new();
                for (k, tol) in t.tolerations.iter().enumerate() {
                    let op = format!("{tp}.tolerations[{k}]");
                    let exists = match tol.operator.as_deref() {
                        None | Some("Equal") => false,
                        Some("Exists") => true,
                        Some(o) => {
                            return Err(InputError::new(format!("{op}.operator"), format!("unknown operator {o:?} (Equal, Exists)")))
                        }
                    };
                    if !exists && tol.key.as_deref().unwrap_or("").is_empty() {
                        return Err(InputError::new(format!("{op}.key"), "operator Equal needs a key"));
                    }
                    if exists && tol.value.as_deref().is_some_and(|v| !v.is_empty()) {
                        return Err(InputError::new(format!("{op}.value"), "operator Exists takes no value"));
                    }
                    let effect = tol.effect.clone().unwrap_or_default();
                    if !matches!(effect.as_str(), "" | "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
                        return Err(InputError::new(format!("{op}.effect"), format!("unknown taint effect {effect:?}")));
                    }
                    tolerations.push(Toleration {
                        key: tol.key.clone().unwrap_or_default(),
                        exists,
                        value: tol.value.clone().unwrap_or_default(),
                        effect,
                    });
                }
                let slice = match &t.slice {
                    None => None,
                    Some(s) => {
                        let l = level_of(&s.topology, &format!("{tp}.slice.topology"))?;
                        if s.size < 1 || s.size > 1_000_000 {
                            return Err(InputError::new(
                                format!("{tp}.slice.size"),
                                format!("must be between 1 and 1000000, got {}", s.size),
                            ));
                        }
                        if let Some(r) = required {
                            if l < r {
                                return Err(InputError::new(
                                    format!("{tp}.slice.topology"),
                                    format!("slice level {:?} is coarser than the group's required level {:?}", s.topology, levels[r]),
                                ));
                            }
                        }
                        Some((l, s.size))
                    }
                };
                task_ids.push(tasks.len());
                tasks.push(Task {
                    name: t.name.clone(),
                    group: i,
                    count: t.count,
                    min_count,
                    requests,
                    node_selector: t.node_selector.clone(),
                    tolerations,
                    slice,
                    node_affinity: read_affinity(t.node_affinity.as_deref(), &format!("{tp}.nodeAffinity"))?,
                });
            }
            let sum_min: i64 = task_ids.iter().map(|&t| tasks[t].min_count).sum();
            let min_count = g.min_count.unwrap_or(sum_min);
            if min_count < 0 {
                return Err(InputError::new(format!("{p}.minCount"), format!("must not be negative, got {min_count}")));
            }
            let queue_id = match (&tree, &g.queue) {
                (None, _) => None,
                (Some(tree), Some(q)) => Some(tree.leaf(q, &format!("{p}.queue"))?),
                (Some(_), None) => {
                    return Err(InputError::new(
                        format!("{p}.queue"),
                        "required when queues are given (the full dotted path of a leaf queue, e.g. root.default)",
                    ))
                }
            };
            groups.push(Group {
                name: g.name.clone(),
                namespace: g.namespace.clone(),
                uid: g.uid.clone(),
                queue: g.queue.clone(),
                queue_id,
                priority,
                rank: priority,
                preempt_never,
                disruption,
                policy,
                min_count,
                required,
                preferred,
                created_at: g.created_at.unwrap_or(i as i64),
                order: i,
                tasks: task_ids,
                bound: Vec::new(),
            });
        }

        // Bound pods.
        let mut pods = Vec::new();
        let mut pod_index = HashMap::new();
        for (i, pd) in doc.pods.iter().enumerate() {
            let p = format!("pods[{i}]");
            check_name(&pd.name, &format!("{p}.name"))?;
            if pod_index.insert(pd.name.clone(), i).is_some() {
                return Err(InputError::new(format!("{p}.name"), format!("duplicate pod name {:?}", pd.name)));
            }
            let node =
                *node_index.get(&pd.node).ok_or_else(|| InputError::new(format!("{p}.node"), format!("unknown node {:?}", pd.node)))?;
            let group = match &pd.pod_group {
                None => None,
                Some(gname) => Some(
                    *group_index
                        .get(gname)
                        .ok_or_else(|| InputError::new(format!("{p}.podGroup"), format!("unknown pod group {gname:?}")))?,
                ),
            };
            if let Some(t) = &pd.task {
                match group {
                    None => return Err(InputError::new(format!("{p}.task"), "a task needs a podGroup")),
                    Some(g) => {
                        if !groups[g].tasks.iter().any(|&tid| &tasks[tid].name == t) {
                            return Err(InputError::new(format!("{p}.task"), format!("pod group {:?} has no task {t:?}", groups[g].name)));
                        }
                    }
                }
            }
            let priority = match pd.priority {
                Some(v) => {
                    check_priority(v, &format!("{p}.priority"))?;
                    v
                }
                None => group.map(|g| groups[g].priority).unwrap_or(0),
            };
            let requests = read_resources(&pd.requests, &format!("{p}.requests"), true)?;
            let mut devices = BTreeMap::new();
            for (res, ids) in &pd.device_ids {
                let dp = format!("{p}.deviceIds.{res}");
                let r = match rid.get(res.as_str()) {
                    Some(&r) if shared[r] => r,
                    _ => return Err(InputError::new(dp, format!("{res:?} is not listed in sharedDevices"))),
                };
                let count = (nodes[node].allocatable[r] / 1000) as i64;
                let mut seen = BTreeSet::new();
                for (k, &d) in ids.iter().enumerate() {
                    if d < 0 || d >= count {
                        return Err(InputError::new(
                            format!("{dp}[{k}]"),
                            format!("device {d} does not exist on node {:?} ({count} devices)", pd.node),
                        ));
                    }
                    if !seen.insert(d) {
                        return Err(InputError::new(format!("{dp}[{k}]"), format!("device {d} listed twice")));
                    }
                }
                let req = requests[r];
                let expect = if req < 1000 { (req > 0) as usize } else { (req / 1000) as usize };
                if ids.len() != expect {
                    return Err(InputError::new(
                        dp,
                        format!("request {} needs {expect} device id(s), got {}", quantity::format(req, Scale::Milli), ids.len()),
                    ));
                }
                devices.insert(r, ids.iter().map(|&d| d as usize).collect());
            }
            pods.push(BoundPod {
                name: pd.name.clone(),
                namespace: pd.namespace.clone(),
                uid: pd.uid.clone(),
                node,
                group,
                task: pd.task.clone(),
                priority,
                requests,
                devices,
                placeholder: pd.placeholder,
                releasing: pd.releasing,
                preemptible: pd.preemptible.unwrap_or(true),
            });
            if let Some(g) = group {
                groups[g].bound.push(i);
            }
        }

        let options = match &doc.options {
            None => InstanceOptions { preemption: true, yunikorn_preemption: false, time_limit: None, relative_gap: 0.0, work_limit: 0 },
            Some(o) => {
                let time_limit = match &o.time_limit {
                    None => None,
                    Some(t) => Some(parse_duration(t).map_err(|m| InputError::new("options.timeLimit", m))?),
                };
                let gap = o.relative_gap.unwrap_or(0.0);
                if !(0.0..=1.0).contains(&gap) {
                    return Err(InputError::new("options.relativeGap", format!("must be between 0 and 1, got {gap}")));
                }
                let yunikorn_preemption = match o.preemption_model.as_deref() {
                    None | Some("default") => false,
                    Some("yunikorn") if tree.is_none() => {
                        return Err(InputError::new("options.preemptionModel", "yunikorn needs queues (the queues key or --queues)"))
                    }
                    Some("yunikorn") => true,
                    Some(m) => {
                        return Err(InputError::new(
                            "options.preemptionModel",
                            format!("unknown preemption model {m:?} (default, yunikorn)"),
                        ))
                    }
                };
                InstanceOptions {
                    preemption: o.preemption.unwrap_or(true),
                    yunikorn_preemption,
                    time_limit,
                    relative_gap: gap,
                    work_limit: o.work_limit.unwrap_or(0),
                }
            }
        };

        let mut inst = Instance {
            resources,
            shared,
            levels,
            nodes,
            groups,
            tasks,
            pods,
            options,
            queues: None,
            level_keys: Vec::new(),
            node_index,
            group_index,
            pod_index,
        };
        inst.assign_missing_devices()?;
        inst.check_bound_capacity()?;
        if let Some(tree) = tree {
            let queues = Queues::new(&inst, tree)?;
            queues.check_bound_usage(&inst)?;
            inst.queues = Some(queues);
            inst.rank_by_effective_keys();
        }
        Ok(inst)
    }

    /// With queues, term 1 ranks pending groups by their effective priority keys
    /// (semantics.md): equal keys share a rank, a higher key a higher rank.
    fn rank_by_effective_keys(&mut self) {
        let Some(q) = &self.queues else { return };
        let pending: Vec<GroupId> = self.pending_groups().collect();
        let apps: Vec<crate::queues::App> = pending
            .iter()
            .map(|&g| {
                let grp = &self.groups[g];
                crate::queues::App {
                    name: grp.name.clone(),
                    queue: grp.queue_id.expect("with queues every group has a leaf queue"),
                    priority: grp.priority,
                    created_at: grp.created_at,
                }
            })
            .collect();
        let keys = crate::queues::effective_keys(&q.tree, &apps);
        let mut distinct = keys.clone();
        distinct.sort();
        distinct.dedup();
        for (i, &g) in pending.iter().enumerate() {
            self.groups[g].rank = distinct.binary_search(&keys[i]).expect("key is among the distinct keys") as i64;
        }
        self.level_keys = distinct;
    }

    /// Bound pods that hold shared devices but do not say which get devices assigned
    /// first-fit in input order (traces rarely record device ids).
    fn assign_missing_devices(&mut self) -> Result<(), InputError> {
        for r in 0..self.resources.len() {
            if !self.shared[r] {
                continue;
            }
            let mut used: Vec<Vec<i64>> = self.nodes.iter().enumerate().map(|(n, _)| vec![0; self.device_count(n, r)]).collect();
            let mut whole: Vec<Vec<bool>> = used.iter().map(|u| vec![false; u.len()]).collect();
            // First the pods that say where they are.
            for (i, p) in self.pods.iter().enumerate() {
                if let Some(ids) = p.devices.get(&r) {
                    for &d in ids {
                        let amount = p.requests[r].min(1000);
                        if whole[p.node][d] || (p.requests[r] >= 1000 && used[p.node][d] > 0) || used[p.node][d] + amount > 1000 {
                            return Err(InputError::new(
                                format!("pods[{i}].deviceIds.{}", self.resources[r]),
                                format!("device {d} of node {:?} is over-committed", self.nodes[p.node].name),
                            ));
                        }
                        used[p.node][d] += amount;
                        whole[p.node][d] |= p.requests[r] >= 1000;
                    }
                }
            }
            for i in 0..self.pods.len() {
                let p = &self.pods[i];
                let req = p.requests[r];
                if req == 0 || p.devices.contains_key(&r) {
                    continue;
                }
                let n = p.node;
                let ids: Vec<usize> = if req < 1000 {
                    let best = (0..used[n].len()).find(|&d| !whole[n][d] && used[n][d] + req <= 1000);
                    best.into_iter().collect()
                } else {
                    (0..used[n].len()).filter(|&d| used[n][d] == 0).take((req / 1000) as usize).collect()
                };
                let need = if req < 1000 { 1 } else { (req / 1000) as usize };
                if ids.len() < need {
                    return Err(InputError::new(
                        format!("pods[{i}].requests.{}", self.resources[r]),
                        format!("bound pods already exceed the devices of node {:?} for {}", self.nodes[n].name, self.resources[r]),
                    ));
                }
                for &d in &ids {
                    used[n][d] += req.min(1000);
                    whole[n][d] |= req >= 1000;
                }
                self.pods[i].devices.insert(r, ids);
            }
        }
        Ok(())
    }

    fn check_bound_capacity(&self) -> Result<(), InputError> {
        let mut used = vec![vec![0i64; self.resources.len()]; self.nodes.len()];
        for (i, p) in self.pods.iter().enumerate() {
            for r in 0..self.resources.len() {
                if r == self.resource_id(PODS).unwrap_or(usize::MAX) && !self.nodes[p.node].limits_pods {
                    continue;
                }
                used[p.node][r] = used[p.node][r].saturating_add(p.requests[r]);
                if used[p.node][r] > self.nodes[p.node].allocatable[r] {
                    return Err(InputError::new(
                        format!("pods[{i}]"),
                        format!(
                            "bound pods on node {:?} already exceed its allocatable {} ({} > {})",
                            self.nodes[p.node].name,
                            self.resources[r],
                            quantity::format(used[p.node][r], self.scale(r)),
                            quantity::format(self.nodes[p.node].allocatable[r], self.scale(r)),
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Validates `nodeAffinity` as Kubernetes' API validation does: at least one term;
/// `In`/`NotIn` need values, `Exists`/`DoesNotExist` take none, `Gt`/`Lt` take exactly one
/// integer. An empty term is accepted and, as in Kubernetes, matches no node.
fn read_affinity(terms: Option<&[Vec<NodeSelectorRequirementDoc>]>, path: &str) -> Result<Option<Vec<Vec<AffinityRequirement>>>, InputError> {
    let Some(terms) = terms else { return Ok(None) };
    if terms.is_empty() {
        return Err(InputError::new(path, "needs at least one term (omit nodeAffinity for no constraint)"));
    }
    let mut out = Vec::with_capacity(terms.len());
    for (i, term) in terms.iter().enumerate() {
        let mut reqs = Vec::with_capacity(term.len());
        for (j, r) in term.iter().enumerate() {
            let p = format!("{path}[{i}][{j}]");
            check_name(&r.key, &format!("{p}.key"))?;
            let operator = match r.operator.as_str() {
                "In" => AffinityOperator::In,
                "NotIn" => AffinityOperator::NotIn,
                "Exists" => AffinityOperator::Exists,
                "DoesNotExist" => AffinityOperator::DoesNotExist,
                "Gt" => AffinityOperator::Gt,
                "Lt" => AffinityOperator::Lt,
                o => {
                    return Err(InputError::new(
                        format!("{p}.operator"),
                        format!("unknown operator {o:?} (In, NotIn, Exists, DoesNotExist, Gt, Lt)"),
                    ))
                }
            };
            let values_ok = match operator {
                AffinityOperator::In | AffinityOperator::NotIn => {
                    (!r.values.is_empty()).then_some(()).ok_or(format!("operator {} needs at least one value", r.operator))
                }
                AffinityOperator::Exists | AffinityOperator::DoesNotExist => {
                    r.values.is_empty().then_some(()).ok_or(format!("operator {} takes no values", r.operator))
                }
                AffinityOperator::Gt | AffinityOperator::Lt => match r.values.as_slice() {
                    [v] if v.trim().parse::<i64>().is_ok() => Ok(()),
                    [v] => Err(format!("operator {} needs an integer, got {v:?}", r.operator)),
                    _ => Err(format!("operator {} takes exactly one value", r.operator)),
                },
            };
            values_ok.map_err(|m| InputError::new(format!("{p}.values"), m))?;
            reqs.push(AffinityRequirement { key: r.key.clone(), operator, values: r.values.clone() });
        }
        out.push(reqs);
    }
    Ok(Some(out))
}

fn check_priority(v: i64, path: &str) -> Result<(), InputError> {
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        return Err(InputError::new(path, format!("priority {v} is outside int32")));
    }
    Ok(())
}

/// Parses `10s`, `500ms`, `2m`, `1.5s` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("invalid duration {text:?} (e.g. 10s, 500ms, 2m)"))?;
    let secs = v * mult;
    if !secs.is_finite() || secs < 0.001 || secs > 7.0 * 24.0 * 3600.0 {
        return Err(format!("duration {text:?} must be between 1ms and a week"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}
