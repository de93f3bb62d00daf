//! What every solver needs to know about one cycle before deciding anything: free
//! capacity per node and per device, which nodes each task may use, and the topology
//! domains as dense ids. Solver-side code only; the validator (`check`) does not use it.

use crate::model::*;
use std::collections::BTreeMap;

/// Free capacity of one node: plain resources and each shared device.
#[derive(Clone, Debug)]
pub struct NodeState {
    /// Per resource; `i64::MAX / 4` where the node sets no limit (`pods` undeclared).
    pub free: Vec<i64>,
    /// Per shared resource (index into `Cycle::shared_ids`): free milli per device.
    pub devices: Vec<Vec<i64>>,
}

/// Device choice of one new pod: resource id -> device indices.
pub type DeviceIds = BTreeMap<ResourceId, Vec<usize>>;

pub struct Cycle<'a> {
    pub inst: &'a Instance,
    pub pending: Vec<GroupId>,
    pub shared_ids: Vec<ResourceId>,
    pub nodes: Vec<NodeState>,
    /// Per task: nodes that pass the filters and can hold at least one pod of it.
    pub eligible: Vec<Vec<NodeId>>,
    /// `[level][node]` -> domain id at that level.
    pub domain_of: Vec<Vec<Option<usize>>>,
    /// `[level][domain]` -> label value.
    pub domain_names: Vec<Vec<String>>,
    /// `[level][domain]` -> nodes of the domain.
    pub domain_nodes: Vec<Vec<Vec<NodeId>>>,
    /// Per group with a required level: the domain its bound members pin it to;
    /// `Err` when they cannot all be in one domain.
    pub pinned: Vec<Option<Result<usize, String>>>,
    /// Per group: why queue admission rejects it (rule 7), if it does. A rejected group
    /// has no eligible node, so no solver can place it.
    pub rejected: Vec<Option<String>>,
    /// Bound pods that may be evicted, grouped into units evicted together.
    pub victims: Vec<VictimUnit>,
    /// Per node: the victim units with a pod there.
    pub victims_on: Vec<Vec<usize>>,
    /// Per group: a reason found while screening topology candidates (no domain of its
    /// required level can hold it even alone), used first by the explanations.
    pub notes: Vec<Option<String>>,
    /// Per resource: the largest allocatable of any node (pod sizes are relative to it).
    pub max_allocatable: Vec<i64>,
    /// Per group, with `preemptionModel: yunikorn`: whether it may preempt at all (rule 3
    /// of `models/queues.md`) and the fenced queue its victims must lie under (rule 2).
    pub yunikorn: Option<Vec<(bool, Option<crate::model::queues::QueueId>)>>,
    /// Diagnostic switches of this solve (defaults unless the caller set them).
    pub diag: std::sync::Arc<crate::options::Diagnostics>,
    /// The caller's cancel handle (never cancelled unless the caller set one).
    pub cancel: crate::options::CancelHandle,
    /// `options.workLimit`: the node limit of every MILP run, whose time limits are then
    /// only a safety net (deterministic mode); `None`: the wall clock bounds the phases.
    pub work: Option<u64>,
}

/// Pods evicted together: one pod (`disruptionMode: Pod`), or every bound member of a
/// `disruptionMode: PodGroup` group.
#[derive(Clone, Debug)]
pub struct VictimUnit {
    pub pods: Vec<PodId>,
    /// The highest priority among the pods: a preemptor must be strictly above it.
    pub priority: i64,
    /// The pending group the pods belong to, if any (then it is a victim only if that
    /// group is not placed).
    pub pending_group: Option<GroupId>,
}

/// Rule 6: the victim units of a cycle.
fn victim_units(inst: &Instance) -> Vec<VictimUnit> {
    if !inst.options.preemption {
        return Vec::new();
    }
    let mut units = Vec::new();
    let mut done_groups = vec![false; inst.groups.len()];
    for (i, p) in inst.pods.iter().enumerate() {
        match p.group {
            Some(g) if inst.groups[g].disruption == DisruptionMode::PodGroup => {
                if done_groups[g] {
                    continue;
                }
                done_groups[g] = true;
                let members = &inst.groups[g].bound;
                // Evicting one member evicts all: only if every member may be evicted (a
                // pod being released never is).
                if members.iter().all(|&m| inst.pods[m].preemptible && !inst.pods[m].releasing) {
                    units.push(VictimUnit {
                        pods: members.clone(),
                        priority: members.iter().map(|&m| inst.pods[m].priority).max().unwrap_or(0),
                        pending_group: inst.is_pending(g).then_some(g),
                    });
                }
            }
            _ => {
                if p.preemptible && !p.releasing {
                    units.push(VictimUnit { pods: vec![i], priority: p.priority, pending_group: p.group.filter(|&g| inst.is_pending(g)) });
                }
            }
        }
    }
    // YuniKorn's model: only pods of queues whose preemption is not disabled.
    if inst.options.yunikorn_preemption {
        units.retain(|u| u.pods.iter().all(|&p| super::yunikorn_rules::yunikorn_victim_ok(inst, p)));
    }
    // Only units some pending preemptor could ever evict.
    let top = inst.pending_groups().filter(|&g| !inst.groups[g].preempt_never).map(|g| inst.groups[g].priority).max();
    units.retain(|u| top.is_some_and(|t| u.priority < t));
    units
}

pub const UNLIMITED: i64 = i64::MAX / 4;

/// One node affinity requirement against a node's labels, as Kubernetes matches it
/// (`Gt`/`Lt` compare integers; a label that is not an integer fails them).
fn affinity_holds(req: &AffinityRequirement, labels: &BTreeMap<String, String>) -> bool {
    let have = labels.get(&req.key);
    let int = |s: &str| s.trim().parse::<i64>().ok();
    match req.operator {
        AffinityOperator::In => have.is_some_and(|v| req.values.contains(v)),
        AffinityOperator::NotIn => have.is_none_or(|v| !req.values.contains(v)),
        AffinityOperator::Exists => have.is_some(),
        AffinityOperator::DoesNotExist => have.is_none(),
        AffinityOperator::Gt => matches!((have.and_then(|v| int(v)), int(&req.values[0])), (Some(a), Some(b)) if a > b),
        AffinityOperator::Lt => matches!((have.and_then(|v| int(v)), int(&req.values[0])), (Some(a), Some(b)) if a < b),
    }
}

/// Kubernetes taint/toleration and selector filtering of one task on one node.
pub fn passes_filters(inst: &Instance, t: TaskId, n: NodeId) -> bool {
    filter_failure(inst, t, n).is_none()
}

/// The first filter a node fails for a task, in words (used for explanations).
pub fn filter_failure(inst: &Instance, t: TaskId, n: NodeId) -> Option<String> {
    let task = &inst.tasks[t];
    let node = &inst.nodes[n];
    if node.unschedulable {
        return Some("unschedulable".into());
    }
    for (k, v) in &task.node_selector {
        if node.labels.get(k) != Some(v) {
            return Some(format!("nodeSelector {k}={v}"));
        }
    }
    if let Some(terms) = &task.node_affinity {
        if !terms.iter().any(|term| term.iter().all(|req| affinity_holds(req, &node.labels))) {
            return Some("nodeAffinity".into());
        }
    }
    for taint in &node.taints {
        if taint.effect == "PreferNoSchedule" {
            continue;
        }
        let tolerated = task.tolerations.iter().any(|tol| {
            let key_ok = (tol.exists && tol.key.is_empty()) || tol.key == taint.key;
            let value_ok = tol.exists || tol.value == taint.value;
            let effect_ok = tol.effect.is_empty() || tol.effect == taint.effect;
            key_ok && value_ok && effect_ok
        });
        if !tolerated {
            return Some(format!("taint {}={}:{}", taint.key, taint.value, taint.effect));
        }
    }
    None
}

impl<'a> Cycle<'a> {
    pub fn new(inst: &'a Instance) -> Cycle<'a> {
        let shared_ids: Vec<ResourceId> = (0..inst.resources.len()).filter(|&r| inst.shared[r]).collect();
        let pods_rid = inst.resource_id(PODS);
        let mut nodes: Vec<NodeState> = inst
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| NodeState {
                free: (0..inst.resources.len())
                    .map(|r| if Some(r) == pods_rid && !node.limits_pods { UNLIMITED } else { node.allocatable[r] })
                    .collect(),
                devices: shared_ids.iter().map(|&r| vec![1000; inst.device_count(n, r)]).collect(),
            })
            .collect();
        for p in &inst.pods {
            let st = &mut nodes[p.node];
            for r in 0..inst.resources.len() {
                if st.free[r] != UNLIMITED {
                    st.free[r] -= p.requests[r];
                }
            }
            for (si, &r) in shared_ids.iter().enumerate() {
                if let Some(ids) = p.devices.get(&r) {
                    let per = p.requests[r].min(1000);
                    for &d in ids {
                        // A whole-device user leaves nothing to share.
                        st.devices[si][d] -= if p.requests[r] >= 1000 { 1000 } else { per };
                    }
                }
            }
        }
        // Domains per level, ids in order of first appearance over nodes.
        let mut domain_of = Vec::new();
        let mut domain_names = Vec::new();
        let mut domain_nodes = Vec::new();
        for l in 0..inst.levels.len() {
            let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
            let mut names: Vec<String> = Vec::new();
            let mut members: Vec<Vec<NodeId>> = Vec::new();
            let mut of = Vec::with_capacity(inst.nodes.len());
            for n in 0..inst.nodes.len() {
                match inst.domain_of(n, l) {
                    None => of.push(None),
                    Some(v) => {
                        let id = *ids.entry(v).or_insert_with(|| {
                            names.push(v.to_string());
                            members.push(Vec::new());
                            names.len() - 1
                        });
                        members[id].push(n);
                        of.push(Some(id));
                    }
                }
            }
            domain_of.push(of);
            domain_names.push(names);
            domain_nodes.push(members);
        }
        let pinned = inst
            .groups
            .iter()
            .map(|g| {
                let l = g.required?;
                let mut dom: Option<usize> = None;
                for &p in &g.bound {
                    let node = inst.pods[p].node;
                    match domain_of[l][node] {
                        None => {
                            return Some(Err(format!(
                                "bound member {} runs on node {} which has no {} label",
                                inst.pods[p].name, inst.nodes[node].name, inst.levels[l]
                            )))
                        }
                        Some(d) if dom.is_some_and(|x| x != d) => {
                            return Some(Err(format!("bound members already span several {} domains", inst.levels[l])))
                        }
                        Some(d) => dom = Some(d),
                    }
                }
                dom.map(Ok)
            })
            .collect();
        let pending: Vec<GroupId> = inst.pending_groups().collect();
        let victims = victim_units(inst);
        let mut victims_on = vec![Vec::new(); inst.nodes.len()];
        for (u, unit) in victims.iter().enumerate() {
            for &p in &unit.pods {
                let n = inst.pods[p].node;
                if !victims_on[n].contains(&u) {
                    victims_on[n].push(u);
                }
            }
        }
        let rejected: Vec<Option<String>> =
            (0..inst.groups.len()).map(|g| if inst.is_pending(g) { inst.queue_rejection(g) } else { None }).collect();
        let yunikorn = inst.options.yunikorn_preemption.then(|| {
            (0..inst.groups.len())
                .map(|g| (super::yunikorn_rules::yunikorn_preemptor_ok(inst, g), super::yunikorn_rules::yunikorn_fence(inst, g)))
                .collect()
        });
        let mut cycle = Cycle {
            inst,
            pending,
            yunikorn,
            rejected,
            shared_ids,
            nodes,
            eligible: vec![Vec::new(); inst.tasks.len()],
            domain_of,
            domain_names,
            domain_nodes,
            pinned,
            victims,
            victims_on,
            notes: vec![None; inst.groups.len()],
            max_allocatable: (0..inst.resources.len()).map(|r| inst.nodes.iter().map(|n| n.allocatable[r]).max().unwrap_or(0)).collect(),
            diag: Default::default(),
            cancel: Default::default(),
            work: None,
        };
        // Eligibility of every (task, node) pair: independent checks, run in parallel;
        // collected in task order, so the result does not depend on the thread count.
        use rayon::prelude::*;
        let eligible: Vec<Vec<NodeId>> = (0..inst.tasks.len())
            .into_par_iter()
            .map(|t| {
                let task = &inst.tasks[t];
                if task.count == 0 || cycle.rejected[task.group].is_some() {
                    return Vec::new();
                }
                let g = &inst.groups[task.group];
                (0..inst.nodes.len())
                    .filter(|&n| {
                        if let Some(l) = g.required {
                            match (&cycle.pinned[task.group], cycle.domain_of[l][n]) {
                                (_, None) => return false,
                                (Some(Err(_)), _) => return false,
                                (Some(Ok(d)), Some(x)) if *d != x => return false,
                                _ => {}
                            }
                        }
                        if let Some((l, _)) = task.slice {
                            if cycle.domain_of[l][n].is_none() {
                                return false;
                            }
                        }
                        passes_filters(inst, t, n) && cycle.max_pods(t, n) > 0
                    })
                    .collect()
            })
            .collect();
        cycle.eligible = eligible;
        cycle
    }

    /// Whether placed group `g` may evict victim unit `u`: rule 6 (priority strictly
    /// above, preemptionPolicy, not its own members) and, with `preemptionModel:
    /// yunikorn`, the queue rules of `models/queues.md`.
    pub fn may_preempt(&self, g: GroupId, u: usize) -> bool {
        let inst = self.inst;
        let grp = &inst.groups[g];
        let unit = &self.victims[u];
        if grp.preempt_never || unit.priority >= grp.priority || unit.pending_group == Some(g) {
            return false;
        }
        let Some(yk) = &self.yunikorn else { return true };
        let (may, fence) = yk[g];
        may && fence.is_none_or(|f| {
            let queues = inst.queues.as_ref().expect("yunikorn model has queues");
            unit.pods
                .iter()
                .all(|&p| inst.pods[p].group.and_then(|h| inst.groups[h].queue_id).is_some_and(|leaf| queues.tree.is_under(leaf, f)))
        })
    }

    /// Capacity of node `n` with every victim unit there evicted: (free per resource,
    /// free milli per device per shared resource). Not only what `g` may evict itself:
    /// capacity another placed preemptor frees is usable by any group (rule 6 asks
    /// that each eviction is attributed and needed, not who uses the room).
    pub fn reachable(&self, n: NodeId) -> (Vec<i64>, Vec<Vec<i64>>) {
        let inst = self.inst;
        let mut free = self.nodes[n].free.clone();
        let mut devices = self.nodes[n].devices.clone();
        for u in self.victims_on[n].iter().copied() {
            for &p in &self.victims[u].pods {
                let pod = &inst.pods[p];
                if pod.node != n {
                    continue;
                }
                for r in 0..inst.resources.len() {
                    if free[r] != UNLIMITED {
                        free[r] += pod.requests[r];
                    }
                }
                for (si, &r) in self.shared_ids.iter().enumerate() {
                    if let Some(ids) = pod.devices.get(&r) {
                        for &d in ids {
                            devices[si][d] += if pod.requests[r] >= 1000 { 1000 } else { pod.requests[r] };
                        }
                    }
                }
            }
        }
        (free, devices)
    }

    /// An upper bound on pods of task `t` that node `n` can hold alone (exact per
    /// resource; per device for shared resources), counting what the task's group may
    /// evict there.
    pub fn max_pods(&self, t: TaskId, n: NodeId) -> i64 {
        let task = &self.inst.tasks[t];
        let (free, devices) = if self.victims_on[n].is_empty() {
            (std::borrow::Cow::Borrowed(&self.nodes[n].free), std::borrow::Cow::Borrowed(&self.nodes[n].devices))
        } else {
            let (f, d) = self.reachable(n);
            (std::borrow::Cow::Owned(f), std::borrow::Cow::Owned(d))
        };
        task.count.min(pods_fitting(self.inst, &self.shared_ids, &free, &devices, &task.requests))
    }
}

/// How many pods requesting `requests` fit alone on free capacity `free` / `devices`
/// (per resource; fractional requests per device share, whole ones on free devices);
/// `i64::MAX` when nothing is requested.
pub fn pods_fitting(inst: &Instance, shared_ids: &[ResourceId], free: &[i64], devices: &[Vec<i64>], requests: &[i64]) -> i64 {
    let mut best = i64::MAX;
    for r in 0..inst.resources.len() {
        let q = requests[r];
        if q == 0 {
            continue;
        }
        if inst.shared[r] {
            let si = shared_ids.iter().position(|&x| x == r).expect("shared resources are listed in shared_ids");
            let devs = &devices[si];
            let fit = if q < 1000 {
                devs.iter().map(|&f| f.max(0) / q).sum::<i64>()
            } else {
                devs.iter().filter(|&&f| f == 1000).count() as i64 / (q / 1000)
            };
            best = best.min(fit);
        } else {
            best = best.min(free[r].max(0) / q);
        }
    }
    best
}

impl NodeState {
    /// Places one pod of `task` here if it fits; returns its devices.
    pub fn take(&mut self, inst: &Instance, shared_ids: &[ResourceId], requests: &[i64]) -> Option<DeviceIds> {
        for r in 0..requests.len() {
            if !inst.shared[r] && requests[r] > self.free[r] {
                return None;
            }
        }
        let mut chosen = DeviceIds::new();
        for (si, &r) in shared_ids.iter().enumerate() {
            let q = requests[r];
            if q == 0 {
                continue;
            }
            let devs = &self.devices[si];
            if q < 1000 {
                // Best fit: the fullest device that still holds the share, so whole
                // devices stay free for integral requests.
                let d = (0..devs.len()).filter(|&d| devs[d] >= q).min_by_key(|&d| (devs[d], d))?;
                chosen.insert(r, vec![d]);
            } else {
                let k = (q / 1000) as usize;
                let free: Vec<usize> = (0..devs.len()).filter(|&d| devs[d] == 1000).take(k).collect();
                if free.len() < k {
                    return None;
                }
                chosen.insert(r, free);
            }
        }
        self.apply(inst, shared_ids, requests, &chosen);
        Some(chosen)
    }

    /// Undoes [`NodeState::apply`] of the same pod.
    pub fn release(&mut self, inst: &Instance, shared_ids: &[ResourceId], requests: &[i64], devices: &DeviceIds) {
        for r in 0..requests.len() {
            if self.free[r] != UNLIMITED {
                self.free[r] += requests[r];
            }
        }
        for (si, &r) in shared_ids.iter().enumerate() {
            if let Some(ids) = devices.get(&r) {
                for &d in ids {
                    self.devices[si][d] += if requests[r] >= 1000 { 1000 } else { requests[r] };
                }
            }
        }
        let _ = inst;
    }

    pub fn apply(&mut self, inst: &Instance, shared_ids: &[ResourceId], requests: &[i64], devices: &DeviceIds) {
        for r in 0..requests.len() {
            if self.free[r] != UNLIMITED {
                self.free[r] -= requests[r];
            }
        }
        for (si, &r) in shared_ids.iter().enumerate() {
            if let Some(ids) = devices.get(&r) {
                for &d in ids {
                    self.devices[si][d] -= if requests[r] >= 1000 { 1000 } else { requests[r] };
                }
            }
        }
        let _ = inst;
    }
}
