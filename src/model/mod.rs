//! The validated engine model: dense integer IDs, `Vec`-indexed arenas, quantities as
//! integers. Built once from an [`InstanceDoc`](crate::wire::InstanceDoc); every cross-reference is checked here so
//! that solvers and the validator can index without failing.

mod build;
mod ids;
mod limits;
pub mod queues;

pub use ids::*;
pub use limits::Queues;
pub use queues::{PreemptionPolicy, QueueId, QueueTree, SortPolicy};

use crate::wire::decision::PriorityKey;
use crate::wire::quantity::Scale;
use crate::wire::InputError;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The implicit finest topology level.
pub const HOSTNAME: &str = "kubernetes.io/hostname";
/// Most physical devices of one shared resource on one node.
pub const MAX_DEVICES: i64 = 1024;
/// Resource counted once per pod when nodes declare it.
pub const PODS: &str = "pods";

/// A node taint (from `nodes[].taints`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Taint value (empty when none).
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// A task's toleration (from `tolerations`), with Kubernetes' defaults applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Toleration {
    /// Taint key tolerated; empty with `exists` tolerates every key.
    pub key: String,
    /// `Exists` or `Equal`.
    pub exists: bool,
    /// Value matched by `Equal`.
    pub value: String,
    /// Empty matches every effect.
    pub effect: String,
}

/// A node of the arena [`Instance::nodes`].
#[derive(Clone, Debug)]
pub struct Node {
    /// Unique node name.
    pub name: String,
    /// Node labels (topology domains, selectors, affinity).
    pub labels: BTreeMap<String, String>,
    /// Allocatable per resource (engine units).
    pub allocatable: Vec<i64>,
    /// Taints its new pods must tolerate.
    pub taints: Vec<Taint>,
    /// Cordoned: takes no new pod.
    pub unschedulable: bool,
    /// Whether the node declares `pods` in allocatable (else pods are unlimited).
    pub limits_pods: bool,
}

/// `policy` of a pod group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// All-or-nothing: at least the gang minimum is placed, or nothing.
    Gang,
    /// Each pod independent, best effort.
    Basic,
}

/// `disruptionMode` of a pod group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DisruptionMode {
    /// Members are evictable one by one.
    Pod,
    /// Evicting any member evicts every bound member.
    PodGroup,
}

/// A pod group of the arena [`Instance::groups`], running or pending.
#[derive(Clone, Debug)]
pub struct Group {
    /// Unique group name.
    pub name: String,
    /// Kubernetes namespace and uid, carried through for exports.
    pub namespace: Option<String>,
    /// Kubernetes uid, carried through for exports.
    pub uid: Option<String>,
    /// Full dotted queue path (`root.default` when the instance has queues and none is given).
    pub queue: Option<String>,
    /// The leaf queue, when the instance has queues (then every group has one).
    pub queue_id: Option<QueueId>,
    /// Raw priority: what rule 6 (eviction eligibility) compares.
    pub priority: i64,
    /// Level of objective term 1, higher first: the priority without queues; with queues
    /// the rank of the group's effective priority key among pending groups (see
    /// [`Instance::level_key`]).
    pub rank: i64,
    /// `preemptionPolicy: Never`: the group evicts nothing.
    pub preempt_never: bool,
    /// How evictions of its members spread (`disruptionMode`).
    pub disruption: DisruptionMode,
    /// Gang or basic (`policy`).
    pub policy: Policy,
    /// Gang minimum over the whole group, bound members included.
    pub min_count: i64,
    /// Level index into [`Instance::levels`].
    pub required: Option<usize>,
    /// Preferred topology: level index into [`Instance::levels`].
    pub preferred: Option<usize>,
    /// `createdAt` in seconds; file position when absent (FIFO order among equals).
    pub created_at: i64,
    /// Position in the input, the last FIFO tie-break.
    pub order: usize,
    /// Its tasks, in input order.
    pub tasks: Vec<TaskId>,
    /// Bound pods that are members of this group.
    pub bound: Vec<PodId>,
}

/// A task of the arena [`Instance::tasks`].
#[derive(Clone, Debug)]
pub struct Task {
    /// Task name, unique within its group.
    pub name: String,
    /// The group it belongs to.
    pub group: GroupId,
    /// Pods still pending for this task.
    pub count: i64,
    /// Gang minimum of this task.
    pub min_count: i64,
    /// Requests per resource, `pods` included when the instance uses it.
    pub requests: Vec<i64>,
    /// Node labels that must all match (`nodeSelector`).
    pub node_selector: BTreeMap<String, String>,
    /// Taints the task's pods tolerate.
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
    /// The label's value is one of `values`.
    In,
    /// The label's value is none of `values` (or the label is absent).
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label's value, as an integer, is greater than the one value.
    Gt,
    /// The label's value, as an integer, is less than the one value.
    Lt,
}

/// One validated node affinity requirement. For `Gt`/`Lt`, `values` holds exactly one
/// integer, already checked to parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AffinityRequirement {
    /// Node label key.
    pub key: String,
    /// The operator.
    pub operator: AffinityOperator,
    /// Values compared with the label's value.
    pub values: Vec<String>,
}

/// A pod already bound to a node (arena [`Instance::pods`]).
#[derive(Clone, Debug)]
pub struct BoundPod {
    /// Unique pod name.
    pub name: String,
    /// Kubernetes namespace, carried through for exports.
    pub namespace: Option<String>,
    /// Kubernetes uid, carried through for exports.
    pub uid: Option<String>,
    /// The node it is bound to.
    pub node: NodeId,
    /// Its pod group, if any.
    pub group: Option<GroupId>,
    /// Its task within the group, if any.
    pub task: Option<String>,
    /// Priority: its own, else its group's, else 0.
    pub priority: i64,
    /// Requests per resource (engine units).
    pub requests: Vec<i64>,
    /// Per shared-device resource id: the devices it holds.
    pub devices: BTreeMap<ResourceId, Vec<usize>>,
    /// A YuniKorn placeholder pod.
    pub placeholder: bool,
    /// Being released: holds its node (rules 1-3), counts in no queue, never a victim.
    pub releasing: bool,
    /// May be a victim (`preemptible`, default true).
    pub preemptible: bool,
}

/// `options` of the instance, with defaults applied.
#[derive(Clone, Debug)]
pub struct InstanceOptions {
    /// Evictions allowed (`preemption`, default true).
    pub preemption: bool,
    /// `options.preemptionModel`: YuniKorn's queue rules on top of rule 6.
    pub yunikorn_preemption: bool,
    /// Wall-clock budget (`timeLimit`), when given.
    pub time_limit: Option<std::time::Duration>,
    /// Stop within this relative gap (`relativeGap`; 0 = prove optimal).
    pub relative_gap: f64,
    /// `options.workLimit`: deterministic budget in solver work units; 0 = none.
    pub work_limit: u64,
}

/// A validated scheduling-cycle snapshot.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Resource names; [`ResourceId`] indexes them and every per-resource `Vec`.
    pub resources: Vec<String>,
    /// Per resource: counted in shared physical devices.
    pub shared: Vec<bool>,
    /// Topology levels, coarse to fine, ending with the implicit hostname level.
    pub levels: Vec<String>,
    /// The nodes, indexed by [`NodeId`].
    pub nodes: Vec<Node>,
    /// The pod groups, running and pending, indexed by [`GroupId`].
    pub groups: Vec<Group>,
    /// The tasks of all groups, indexed by [`TaskId`].
    pub tasks: Vec<Task>,
    /// The bound pods, indexed by [`PodId`].
    pub pods: Vec<BoundPod>,
    /// Solve options of the instance.
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
        let doc: crate::wire::InstanceDoc = crate::wire::from_text(text)?;
        Instance::from_doc(&doc)
    }

    /// Reads YAML or JSON from `reader` (to its end) and validates it.
    pub fn from_reader(mut reader: impl std::io::Read) -> Result<Instance, InputError> {
        let mut text = String::new();
        reader.read_to_string(&mut text).map_err(|e| InputError::new("", format!("cannot read the instance: {e}")))?;
        Instance::from_text(&text)
    }

    /// The node named `name`.
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_index.get(name).copied()
    }
    /// The group named `name`.
    pub fn group_id(&self, name: &str) -> Option<GroupId> {
        self.group_index.get(name).copied()
    }
    /// The bound pod named `name`.
    pub fn pod_id(&self, name: &str) -> Option<PodId> {
        self.pod_index.get(name).copied()
    }
    /// The resource named `name`.
    pub fn resource_id(&self, name: &str) -> Option<ResourceId> {
        self.resources.iter().position(|r| r == name)
    }
    /// How resource `r` is held: millis for cpu and shared devices, base units otherwise.
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
    /// The groups with pods still to place, in input order.
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
    /// The index of topology level `name` in [`Instance::levels`].
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

impl Instance {
    /// Gang admission (rule 7): why pending group `g` can never be placed in its queue,
    /// if that is so. A gang is rejected when its leaf queue sorts `fair`, or when its
    /// total minimum request (every task's minCount pods) exceeds `max` of its leaf queue or
    /// an ancestor in some resource: YuniKorn asks for the placeholders of the whole
    /// minimum at once and refuses the application when that ask can never fit.
    pub fn queue_rejection(&self, g: GroupId) -> Option<String> {
        let inst = self;
        let queues = self.queues.as_ref()?;
        let grp = &inst.groups[g];
        let leaf = grp.queue_id?;
        if grp.policy != Policy::Gang {
            return None;
        }
        if queues.tree.queues[leaf].sort_policy == SortPolicy::Fair {
            return Some(format!(
                "rejected: queue {} sorts applications fair, where gangs are not admitted",
                queues.tree.queues[leaf].path
            ));
        }
        for q in queues.tree.ancestors(leaf) {
            for &(r, m) in &queues.max[q] {
                let ask: i64 = grp.tasks.iter().map(|&t| inst.tasks[t].min_count.saturating_mul(inst.tasks[t].requests[r])).sum();
                if ask > m {
                    return Some(format!(
                        "rejected: its minimum asks {} {} but queue {} has max {}",
                        quantity_text(inst, r, ask),
                        inst.resources[r],
                        queues.tree.queues[q].path,
                        quantity_text(inst, r, m)
                    ));
                }
            }
        }
        None
    }
}

fn quantity_text(inst: &Instance, r: ResourceId, v: i64) -> String {
    crate::wire::quantity::format(v, inst.scale(r))
}
