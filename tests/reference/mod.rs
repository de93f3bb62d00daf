//! Brute-force reference solver for tiny instances.
//!
//! Written from `shared/spec/semantics.md` alone, independently of `src/solve`: for every
//! admissible set of evictions (all subsets of the bound pods that may be victims) it
//! enumerates every assignment of new pods (per pending group: unplaced, or a domain
//! choice for required topology and, per task, every distribution of 0..=count pods over
//! the nodes the task may use), applies hard rules 1-6 itself and keeps the
//! lexicographically best objective (terms 1-3).
//!
//! Interpretation notes (kept deliberately literal):
//! - a node without `pods` in its allocatable has no pod limit;
//! - a task with a `slice` can only use nodes that lie in some domain of the slice level
//!   (each slice must sit entirely inside one domain);
//! - extra pods of a group = new pods - `Instance::min_new_pods(g)`; term 3 maximizes
//!   them per priority level, higher priority first (semantics.md: "Maximize pods placed
//!   beyond the minimums (elastic members), higher priority first"); the reported
//!   `extraPods` is their sum. [`Term3::Total`] instead maximizes the plain sum (what
//!   `Objective::compare` compares), kept to show where the two readings differ;
//! - rule 6 as the contract reads it: for each eviction unit (a pod, or a
//!   `disruptionMode: PodGroup` group's bound members together, whose priority is its
//!   highest member's), put the unit back and set aside the new pods of every group that
//!   may not evict it (not placed, `Never`, priority not above the unit's, or forbidden by
//!   YuniKorn's rules); some hard rule must then break: capacity on one of its nodes, a
//!   device it holds (with the decision's device ids: some arrangement of the new pods on
//!   the devices, valid by rule 3, must give every such unit its witness at once), or a
//!   queue's `max` / `maxapplications` on its path;
//! - term 2 counts evicted pods per (raw) pod priority; `evictedByPriority` lists the
//!   levels with at least one eviction, highest first.
//!
//! Queues (rule 7 and `models/queues.md`), read from the input's tree and limits only:
//! - term 1 levels are [`Group::rank`] (the raw priority without queues, the dense rank
//!   of the effective key with them); rows show [`Instance::level_key`];
//! - admission: a rejected gang (fair leaf, or minimum ask above a `max` on its path) is
//!   only ever left unplaced;
//! - `max` and `maxapplications` are a filter on every complete assignment: subtree usage
//!   of bound pods kept plus new pods, running groups (placed, or keeping a bound pod);
//! - `preemptionModel: yunikorn`: pods of no queue or under a `disabled` nearest setting
//!   are never candidates (1); a group may preempt a pod only if the pod lies under the
//!   deepest `fence` of its path (2) and a queue on its path is below a guarantee in a
//!   resource it requests (3) (this narrows the groups of rule 6's "names a placed
//!   preemptor"); complete assignments where a queue's usage after (kept bound pods plus
//!   new pods) is below min(guarantee, bound usage before) are skipped (4);

// Per-resource vectors are indexed side by side, as in the model itself.
#![allow(dead_code, clippy::needless_range_loop, clippy::type_complexity)]

use std::collections::{BTreeMap, BTreeSet};
use tessera::model::queues::{PreemptionPolicy, SortPolicy};
use tessera::model::{
    AffinityOperator, AffinityRequirement, BoundPod, DisruptionMode, GroupId, Instance, Node, Policy, Taint, Task, Toleration, PODS,
};
use tessera::wire::decision::{EvictedRow, ExtraRow, Objective, PlacedRow};

/// How term 3 (extra pods) is optimized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term3 {
    /// Per priority level, highest first (semantics.md).
    ByPriority,
    /// One sum over all groups.
    Total,
}

/// The optimum found by exhaustive search, and how many complete assignments were scored.
pub struct RefResult {
    pub objective: Objective,
    /// The optimal lexicographic key: placed groups per pending level (highest first),
    /// minus evicted pods per victim level (all bound-pod priorities, highest first), then
    /// extra pods per pending level for [`Term3::ByPriority`] or their sum for
    /// [`Term3::Total`]. Compare with [`decision_key`].
    pub key: Vec<i64>,
    pub leaves: u64,
    /// New pods per pending group in one optimal assignment (0 = unplaced), for debugging.
    pub best_new_pods: Vec<(String, i64)>,
    /// Bound pods evicted in that assignment.
    pub best_evicted: Vec<String>,
    /// That optimal assignment as a decision (for the validator), status Optimal.
    pub witness: tessera::Decision,
}

pub fn optimum(inst: &Instance) -> Objective {
    solve(inst).objective
}

pub fn solve(inst: &Instance) -> RefResult {
    solve_with(inst, Term3::ByPriority)
}

fn is_pending(inst: &Instance, g: GroupId) -> bool {
    inst.groups[g].tasks.iter().any(|&t| inst.tasks[t].count > 0)
}

/// Term-1 levels of pending groups ([`tessera::model::Group::rank`]), highest first.
pub fn levels_of(inst: &Instance) -> Vec<i64> {
    let set: BTreeSet<i64> = (0..inst.groups.len()).filter(|&g| is_pending(inst, g)).map(|g| inst.groups[g].rank).collect();
    set.into_iter().rev().collect()
}

/// Priorities of bound pods (possible victim levels), highest first.
pub fn victim_levels_of(inst: &Instance) -> Vec<i64> {
    let set: BTreeSet<i64> = inst.pods.iter().map(|p| p.priority).collect();
    set.into_iter().rev().collect()
}

/// The objective key (as [`RefResult::key`]) of an assignment given as new pods per
/// pending group (absent or 0 = unplaced) and the names of evicted bound pods.
pub fn key_of(inst: &Instance, new_pods: &BTreeMap<String, i64>, evicted: &[String], mode: Term3) -> Vec<i64> {
    let levels = levels_of(inst);
    let vlevels = victim_levels_of(inst);
    let (nl, nv) = (levels.len(), vlevels.len());
    let mut key = vec![0i64; nl + nv + if mode == Term3::ByPriority { nl } else { 1 }];
    for g in 0..inst.groups.len() {
        let n = new_pods.get(&inst.groups[g].name).copied().unwrap_or(0);
        if n <= 0 {
            continue;
        }
        let Some(l) = levels.iter().position(|&p| p == inst.groups[g].rank) else { continue };
        key[l] += 1;
        let extra = n - inst.min_new_pods(g);
        match mode {
            Term3::ByPriority => key[nl + nv + l] += extra,
            Term3::Total => key[nl + nv] += extra,
        }
    }
    for name in evicted {
        if let Some(p) = inst.pod_id(name) {
            let l = vlevels.iter().position(|&v| v == inst.pods[p].priority).unwrap();
            key[nl + l] -= 1;
        }
    }
    key
}

/// The key of a decision, computed from its placements and evictions alone (not from its
/// reported objective).
pub fn decision_key(inst: &Instance, d: &tessera::Decision, mode: Term3) -> Vec<i64> {
    let mut new_pods = BTreeMap::new();
    for p in &d.placements {
        *new_pods.entry(p.pod_group.clone()).or_insert(0) += p.pods.len() as i64;
    }
    let evicted: Vec<String> = d.evictions.iter().map(|e| e.pod.clone()).collect();
    key_of(inst, &new_pods, &evicted, mode)
}

/// Kubernetes toleration matching (`ToleratesTaint`).
pub fn tolerates(tol: &Toleration, taint: &Taint) -> bool {
    if !tol.effect.is_empty() && tol.effect != taint.effect {
        return false;
    }
    if !tol.key.is_empty() && tol.key != taint.key {
        return false;
    }
    if tol.exists {
        true
    } else {
        tol.value == taint.value
    }
}

/// Rule 2: nodeSelector, cordon, NoSchedule/NoExecute taints.
pub fn node_fits(task: &Task, node: &Node) -> bool {
    if node.unschedulable {
        return false;
    }
    for (k, v) in &task.node_selector {
        if node.labels.get(k) != Some(v) {
            return false;
        }
    }
    for taint in &node.taints {
        if taint.effect != "NoSchedule" && taint.effect != "NoExecute" {
            continue;
        }
        if !task.tolerations.iter().any(|tol| tolerates(tol, taint)) {
            return false;
        }
    }
    task.node_affinity.as_ref().is_none_or(|terms| terms.iter().any(|term| term.iter().all(|req| affinity_holds(req, node))))
}

/// Kubernetes' `NodeSelectorRequirement` on a node's labels: a missing label fails `In`,
/// `Exists`, `Gt` and `Lt` and passes `NotIn` and `DoesNotExist`; `Gt`/`Lt` compare
/// integers (a label that is not one fails).
fn affinity_holds(req: &AffinityRequirement, node: &Node) -> bool {
    let label = node.labels.get(&req.key);
    let number = |s: &String| s.parse::<i64>().ok();
    match req.operator {
        AffinityOperator::In => label.is_some_and(|l| req.values.contains(l)),
        AffinityOperator::NotIn => !label.is_some_and(|l| req.values.contains(l)),
        AffinityOperator::Exists => label.is_some(),
        AffinityOperator::DoesNotExist => label.is_none(),
        AffinityOperator::Gt => label.and_then(number).zip(number(&req.values[0])).is_some_and(|(a, b)| a > b),
        AffinityOperator::Lt => label.and_then(number).zip(number(&req.values[0])).is_some_and(|(a, b)| a < b),
    }
}

/// Whether `new` requests of one shared resource fit on devices whose current usage (by
/// bound pods) is `used` (milli per device). An integral request k (>= 1000) takes k
/// devices with no other user; a fractional one sits on one device.
pub fn devices_fit(used: &[i64], new: &[i64]) -> bool {
    assign_devices(used, new).is_some()
}

/// Device ids for each request of `new` (empty for a zero request), if they fit.
pub fn assign_devices(used: &[i64], new: &[i64]) -> Option<Vec<Vec<usize>>> {
    let mut used = used.to_vec();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); new.len()];
    let mut fracs: Vec<(i64, usize)> = Vec::new();
    // Integral requests first: completely free devices are interchangeable, so taking the
    // first free ones loses nothing.
    for (i, &r) in new.iter().enumerate() {
        if r == 0 {
            continue;
        }
        if r >= 1000 {
            let k = (r / 1000) as usize;
            let free: Vec<usize> = (0..used.len()).filter(|&d| used[d] == 0).take(k).collect();
            if free.len() < k {
                return None;
            }
            for &d in &free {
                used[d] = 1000;
            }
            out[i] = free;
        } else {
            fracs.push((r, i));
        }
    }
    fracs.sort_unstable_by_key(|f| std::cmp::Reverse(f.0));
    let mut choice = Vec::new();
    if !pack(&mut used, &fracs, &mut choice) {
        return None;
    }
    for (&(_, i), &d) in fracs.iter().zip(&choice) {
        out[i] = vec![d];
    }
    Some(out)
}

/// Backtracking bin packing of fractional requests onto devices.
fn pack(used: &mut Vec<i64>, fracs: &[(i64, usize)], choice: &mut Vec<usize>) -> bool {
    let Some((&(r, _), rest)) = fracs.split_first() else { return true };
    let mut tried: BTreeSet<i64> = BTreeSet::new();
    for d in 0..used.len() {
        if used[d] + r > 1000 || !tried.insert(used[d]) {
            continue;
        }
        used[d] += r;
        choice.push(d);
        let ok = pack(used, rest, choice);
        used[d] -= r;
        if ok {
            return true;
        }
        choice.pop();
    }
    false
}

struct Search<'a> {
    inst: &'a Instance,
    pending: Vec<GroupId>,
    /// Priority levels of pending groups, highest first.
    levels: Vec<i64>,
    /// Priority levels of bound pods, highest first.
    vlevels: Vec<i64>,
    pods_r: Option<usize>,
    shared: Vec<usize>,
    /// Bound pods evicted in this branch.
    evicted: Vec<bool>,
    /// Per node, per resource: requests of kept bound pods plus new pods so far.
    used: Vec<Vec<i64>>,
    /// Per node, per shared resource (index into `shared`): milli used per device by kept
    /// bound pods.
    bound_dev: Vec<Vec<Vec<i64>>>,
    /// Per node, per shared resource: requests of new pods placed so far.
    new_dev: Vec<Vec<Vec<i64>>>,
    /// New pods per task and node.
    task_node: Vec<Vec<i64>>,
    /// New pods per pending group (index into `pending`), -1 = unplaced.
    new_pods: Vec<i64>,
    best: Option<Best>,
    leaves: u64,
    mode: Term3,
    /// Device arrangements chosen by the last rule-6 check (see [`Best::devices`]).
    devices: BTreeMap<(usize, usize), Vec<(usize, Vec<usize>)>>,
}

#[derive(Clone)]
struct Best {
    key: Vec<i64>,
    new_pods: Vec<i64>,
    evicted: Vec<bool>,
    task_node: Vec<Vec<i64>>,
    /// Device ids of the new pods per (node, shared resource) where rule 6 needed a
    /// particular arrangement: per pod in task order, its devices.
    devices: BTreeMap<(usize, usize), Vec<(usize, Vec<usize>)>>,
}

/// Bound pods that may ever be evicted: preemptible, and some pending group could preempt them.
fn candidates(inst: &Instance) -> Vec<usize> {
    if !inst.options.preemption {
        return vec![];
    }
    (0..inst.pods.len())
        .filter(|&p| {
            let pod = &inst.pods[p];
            pod.preemptible
                && !pod.releasing
                && (0..inst.groups.len()).any(|g| is_pending(inst, g) && may_preempt(inst, g, pod.priority, pod))
        })
        .collect()
}

pub fn solve_with(inst: &Instance, mode: Term3) -> RefResult {
    let pending: Vec<GroupId> = (0..inst.groups.len()).filter(|&g| is_pending(inst, g)).collect();
    let shared: Vec<usize> = (0..inst.resources.len()).filter(|&r| inst.shared[r]).collect();
    let nn = inst.nodes.len();
    let cands = candidates(inst);
    assert!(cands.len() <= 12, "too many possible victims for brute force");
    let mut best: Option<Best> = None;
    let mut leaves = 0;
    let levels = levels_of(inst);
    for mask in 0u32..(1u32 << cands.len()) {
        let mut evicted = vec![false; inst.pods.len()];
        for (i, &p) in cands.iter().enumerate() {
            evicted[p] = mask & (1 << i) != 0;
        }
        // disruptionMode PodGroup: all bound members go together.
        let all_or_none = (0..inst.groups.len()).all(|g| {
            inst.groups[g].disruption != DisruptionMode::PodGroup || {
                let b = &inst.groups[g].bound;
                b.iter().all(|&p| evicted[p]) || b.iter().all(|&p| !evicted[p])
            }
        });
        if !all_or_none {
            continue;
        }
        let mut used = vec![vec![0i64; inst.resources.len()]; nn];
        let mut bound_dev: Vec<Vec<Vec<i64>>> =
            (0..nn).map(|n| shared.iter().map(|&r| vec![0i64; (inst.nodes[n].allocatable[r] / 1000) as usize]).collect()).collect();
        for (pi, p) in inst.pods.iter().enumerate() {
            if evicted[pi] {
                continue;
            }
            for r in 0..inst.resources.len() {
                used[p.node][r] += p.requests[r];
            }
            for (si, &r) in shared.iter().enumerate() {
                if p.requests[r] > 0 {
                    let ids = p.devices.get(&r).expect("bound pod with a shared request has device ids after validation");
                    for &d in ids {
                        bound_dev[p.node][si][d] += p.requests[r].min(1000);
                    }
                }
            }
        }
        let mut s = Search {
            inst,
            pods_r: inst.resources.iter().position(|r| r == PODS),
            levels: levels.clone(),
            vlevels: victim_levels_of(inst),
            new_pods: vec![-1; pending.len()],
            pending: pending.clone(),
            shared: shared.clone(),
            evicted,
            used,
            bound_dev,
            new_dev: vec![vec![Vec::new(); shared.len()]; nn],
            task_node: vec![vec![0; nn]; inst.tasks.len()],
            best: best.take(),
            leaves: 0,
            mode,
            devices: BTreeMap::new(),
        };
        s.group(0);
        leaves += s.leaves;
        best = s.best.take();
    }
    let vlevels = victim_levels_of(inst);
    let best = best.expect("the all-unplaced assignment without evictions is always valid");
    let (key, best_pods, best_evicted) = (best.key.clone(), best.new_pods.clone(), best.evicted.clone());
    let (nl, nv) = (levels.len(), vlevels.len());
    let extra_pods: i64 = key[nl + nv..].iter().sum();
    let mut rows = Vec::new();
    for (i, &lvl) in levels.iter().enumerate() {
        let pending = pending.iter().filter(|&&g| inst.groups[g].rank == lvl).count() as i64;
        rows.push(PlacedRow { priority: inst.level_key(lvl), placed: key[i], pending });
    }
    let evicted_rows = vlevels
        .iter()
        .enumerate()
        .filter(|&(i, _)| key[nl + i] != 0)
        .map(|(i, &lvl)| EvictedRow { priority: lvl, pods: -key[nl + i] })
        .collect();
    // Extra pods per level, counted from the assignment (the key holds only their sum
    // for `Term3::Total`).
    let mut extra_by_level: BTreeMap<i64, i64> = BTreeMap::new();
    for (&g, &n) in pending.iter().zip(&best_pods) {
        if n > 0 {
            *extra_by_level.entry(inst.groups[g].rank).or_default() += n - inst.min_new_pods(g);
        }
    }
    assert_eq!(extra_by_level.values().sum::<i64>(), extra_pods, "the key's term 3 and the assignment's disagree");
    let extra_by_priority = extra_by_level
        .into_iter()
        .rev()
        .filter(|&(_, pods)| pods != 0)
        .map(|(rank, pods)| ExtraRow { priority: inst.level_key(rank), pods })
        .collect();
    let objective = Objective { placed_by_priority: rows, evicted_by_priority: evicted_rows, extra_pods, extra_by_priority };
    let best_new_pods = pending.iter().zip(&best_pods).map(|(&g, &n)| (inst.groups[g].name.clone(), n.max(0))).collect();
    let best_evicted = (0..inst.pods.len()).filter(|&p| best_evicted[p]).map(|p| inst.pods[p].name.clone()).collect();
    let mut witness = witness(inst, &pending, &best);
    witness.objective = objective.clone();
    RefResult { objective, key, leaves, best_new_pods, best_evicted, witness }
}

impl<'a> Search<'a> {
    /// Rule 6 for a complete assignment (see module notes): victims belong to no placed
    /// group, and every eviction unit is needed by the groups allowed to evict it. When
    /// devices must witness, the arrangement that does it is kept in `self.devices`.
    fn evictions_justified(&mut self) -> bool {
        let inst = self.inst;
        self.devices.clear();
        let placed = |g: GroupId| self.pending.iter().position(|&x| x == g).is_some_and(|i| self.new_pods[i] > 0);
        let mut units: Vec<Vec<usize>> = Vec::new();
        for (p, pod) in inst.pods.iter().enumerate().filter(|&(p, _)| self.evicted[p]) {
            if pod.group.is_some_and(placed) || !pod.preemptible || pod.releasing {
                return false;
            }
            match pod.group {
                Some(g) if inst.groups[g].disruption == DisruptionMode::PodGroup => {
                    if !units.iter().any(|u| u.contains(&p)) {
                        units.push(inst.groups[g].bound.clone());
                    }
                }
                _ => units.push(vec![p]),
            }
        }
        let mut by_devices = Vec::new();
        for unit in units {
            let prio = unit.iter().map(|&p| inst.pods[p].priority).max().unwrap();
            let allowed = |g: GroupId| placed(g) && unit.iter().all(|&p| may_preempt(inst, g, prio, &inst.pods[p]));
            if !self.pending.iter().any(|&g| allowed(g)) {
                return false;
            }
            if self.capacity_witness(&unit, &allowed) || self.queue_witness(&unit, &allowed) {
                continue;
            }
            by_devices.push(unit);
        }
        by_devices.is_empty() || self.device_witnesses(&by_devices)
    }

    /// Kept bound pods (not evicted) plus the given unit, per node and resource.
    fn kept_with(&self, unit: &[usize]) -> Vec<Vec<i64>> {
        let inst = self.inst;
        let mut load = vec![vec![0i64; inst.resources.len()]; inst.nodes.len()];
        for (p, pod) in inst.pods.iter().enumerate() {
            if !self.evicted[p] || unit.contains(&p) {
                for r in 0..inst.resources.len() {
                    load[pod.node][r] += pod.requests[r];
                }
            }
        }
        load
    }

    /// Capacity on one of the unit's nodes breaks with it back and only allowed new pods.
    fn capacity_witness(&self, unit: &[usize], allowed: &dyn Fn(GroupId) -> bool) -> bool {
        let inst = self.inst;
        let mut load = self.kept_with(unit);
        for (t, task) in inst.tasks.iter().enumerate() {
            if allowed(task.group) {
                for n in 0..inst.nodes.len() {
                    for r in 0..inst.resources.len() {
                        load[n][r] += self.task_node[t][n] * task.requests[r];
                    }
                }
            }
        }
        unit.iter().any(|&p| {
            let pod = &inst.pods[p];
            let node = &inst.nodes[pod.node];
            (0..inst.resources.len()).any(|r| {
                !inst.shared[r]
                    && (Some(r) != self.pods_r || node.limits_pods)
                    && unit.iter().any(|&m| inst.pods[m].node == pod.node && inst.pods[m].requests[r] > 0)
                    && load[pod.node][r] > node.allocatable[r]
            })
        })
    }

    /// A `max` or `maxapplications` on the unit's queue path breaks with it back and only
    /// allowed new pods.
    fn queue_witness(&self, unit: &[usize], allowed: &dyn Fn(GroupId) -> bool) -> bool {
        let inst = self.inst;
        let Some(qs) = inst.queues.as_ref() else { return false };
        let path = pod_path(inst, &inst.pods[unit[0]]);
        if path.is_empty() {
            return false;
        }
        let mut back = self.evicted.clone();
        for &p in unit {
            back[p] = false;
        }
        let (usage, running) = self.queue_load_with(&back, allowed);
        path.iter().any(|&q| {
            qs.max[q].iter().any(|&(r, m)| unit.iter().any(|&p| inst.pods[p].requests[r] > 0) && usage[q][r] > m)
                || qs.tree.queues[q].max_applications.is_some_and(|n| running[q] > n)
        })
    }

    /// Some arrangement of the new pods on the devices (valid by rule 3) gives every unit
    /// of `units` a device it holds that overflows with it back and only its allowed
    /// groups' new pods (whole users counting 1000). The arrangement is kept.
    fn device_witnesses(&mut self, units: &[Vec<usize>]) -> bool {
        let inst = self.inst;
        // Per (node, shared resource) with new pods and devices of these units: the sets
        // of units each arrangement witnesses, with one arrangement per set.
        let mut choices: Vec<((usize, usize), Vec<(u64, Vec<(usize, Vec<usize>)>)>)> = Vec::new();
        for n in 0..inst.nodes.len() {
            for &r in &self.shared {
                let holders: Vec<usize> = (0..units.len())
                    .filter(|&i| units[i].iter().any(|&p| inst.pods[p].node == n && inst.pods[p].requests[r] > 0))
                    .collect();
                let pods: Vec<usize> = (0..inst.tasks.len())
                    .filter(|&t| inst.tasks[t].requests[r] > 0)
                    .flat_map(|t| std::iter::repeat_n(t, self.task_node[t][n] as usize))
                    .collect();
                if holders.is_empty() || pods.is_empty() {
                    continue;
                }
                let options = self.arrangements(n, r, &pods, units, &holders);
                choices.push(((n, r), options));
            }
        }
        let all: u64 = (1u64 << units.len()) - 1;
        let mut chosen = Vec::new();
        if !cover(&choices, 0, 0, all, &mut chosen) {
            return false;
        }
        for (i, arrangement) in chosen.into_iter().enumerate() {
            self.devices.insert(choices[i].0, arrangement);
        }
        true
    }

    /// Every valid arrangement of `pods` (task ids, one per new pod) on the devices of
    /// resource `r` of node `n`, reduced to the distinct sets of `holders` it witnesses.
    fn arrangements(
        &self,
        n: usize,
        r: usize,
        pods: &[usize],
        units: &[Vec<usize>],
        holders: &[usize],
    ) -> Vec<(u64, Vec<(usize, Vec<usize>)>)> {
        let inst = self.inst;
        let count = (inst.nodes[n].allocatable[r] / 1000) as usize;
        let mut kept = vec![0i64; count];
        for (p, pod) in inst.pods.iter().enumerate() {
            if pod.node == n && !self.evicted[p] && pod.requests[r] > 0 {
                for &d in &pod.devices[&r] {
                    kept[d] += pod.requests[r].min(1000);
                }
            }
        }
        let mut found: BTreeMap<u64, Vec<(usize, Vec<usize>)>> = BTreeMap::new();
        let mut used = kept.clone();
        let mut current: Vec<(usize, Vec<usize>)> = Vec::new();
        self.arrange(r, pods, 0, (&mut used, &mut current), &mut |arr: &[(usize, Vec<usize>)]| {
            let mut mask = 0u64;
            for &i in holders {
                let prio = units[i].iter().map(|&p| inst.pods[p].priority).max().unwrap();
                let mine: Vec<usize> =
                    units[i].iter().copied().filter(|&p| inst.pods[p].node == n && inst.pods[p].requests[r] > 0).collect();
                let witnessed = mine.iter().flat_map(|&p| inst.pods[p].devices[&r].clone()).any(|d| {
                    let back: i64 =
                        mine.iter().filter(|&&p| inst.pods[p].devices[&r].contains(&d)).map(|&p| inst.pods[p].requests[r].min(1000)).sum();
                    let new: i64 = arr
                        .iter()
                        .filter(|(t, ids)| {
                            ids.contains(&d) && units[i].iter().all(|&p| may_preempt(inst, inst.tasks[*t].group, prio, &inst.pods[p]))
                        })
                        .map(|(t, _)| inst.tasks[*t].requests[r].min(1000))
                        .sum();
                    kept[d] + back + new > 1000
                });
                if witnessed {
                    mask |= 1 << i;
                }
            }
            found.entry(mask).or_insert_with(|| arr.to_vec());
        });
        found.into_iter().collect()
    }

    /// Enumerates device choices for `pods[k..]` (rule 3: a fractional pod on one device
    /// with room, an integral one on that many completely free devices); identical pods of
    /// one task take devices in non-decreasing order.
    fn arrange(
        &self,
        r: usize,
        pods: &[usize],
        k: usize,
        (used, current): (&mut Vec<i64>, &mut Vec<(usize, Vec<usize>)>),
        visit: &mut dyn FnMut(&[(usize, Vec<usize>)]),
    ) {
        let Some(&t) = pods.get(k) else {
            visit(current);
            return;
        };
        let q = self.inst.tasks[t].requests[r];
        let from = if k > 0 && pods[k - 1] == t { current[k - 1].1[0] } else { 0 };
        if q < 1000 {
            for d in from..used.len() {
                if used[d] + q <= 1000 {
                    used[d] += q;
                    current.push((t, vec![d]));
                    self.arrange(r, pods, k + 1, (used, current), visit);
                    current.pop();
                    used[d] -= q;
                }
            }
        } else {
            let need = (q / 1000) as usize;
            let free: Vec<usize> = (from..used.len()).filter(|&d| used[d] == 0).collect();
            for combo in combinations(&free, need) {
                for &d in &combo {
                    used[d] = 1000;
                }
                current.push((t, combo.clone()));
                self.arrange(r, pods, k + 1, (used, current), visit);
                current.pop();
                for &d in &combo {
                    used[d] = 0;
                }
            }
        }
    }

    fn queues_ok(&self) -> bool {
        let Some(qs) = self.inst.queues.as_ref() else { return true };
        let (usage, running) = self.queue_load(&|_| true);
        // YuniKorn rule 4: usage after (kept + new) >= min(guarantee, bound usage before).
        let guarantees = |q: usize| {
            !self.inst.options.yunikorn_preemption
                || qs.guaranteed[q].iter().all(|&(r, gv)| usage[q][r] >= gv.min(bound_usage(self.inst, q, r, None)))
        };
        (0..qs.tree.queues.len()).all(|q| {
            qs.max[q].iter().all(|&(r, m)| usage[q][r] <= m)
                && qs.tree.queues[q].max_applications.is_none_or(|n| running[q] <= n)
                && guarantees(q)
        })
    }

    /// Per queue: usage per resource and running groups, from the kept bound pods and
    /// the new pods of the placed groups that `counts` selects.
    fn queue_load(&self, counts: &dyn Fn(GroupId) -> bool) -> (Vec<Vec<i64>>, Vec<u64>) {
        self.queue_load_with(&self.evicted, counts)
    }

    /// [`Search::queue_load`] with the given evictions.
    fn queue_load_with(&self, evicted: &[bool], counts: &dyn Fn(GroupId) -> bool) -> (Vec<Vec<i64>>, Vec<u64>) {
        let inst = self.inst;
        let qs = inst.queues.as_ref().expect("queues");
        let (nq, nr) = (qs.tree.queues.len(), inst.resources.len());
        let mut usage = vec![vec![0i64; nr]; nq];
        let mut running_group = vec![false; inst.groups.len()];
        for (p, pod) in inst.pods.iter().enumerate() {
            // A pod being released holds its node but counts in no queue.
            if evicted[p] || pod.releasing {
                continue;
            }
            if let Some(g) = pod.group {
                running_group[g] = true;
            }
            for q in pod_path(inst, pod) {
                for r in 0..nr {
                    usage[q][r] += pod.requests[r];
                }
            }
        }
        for (i, &g) in self.pending.iter().enumerate() {
            if self.new_pods[i] <= 0 || !counts(g) {
                continue;
            }
            running_group[g] = true;
            let path = queue_path(inst, g);
            for &t in &inst.groups[g].tasks {
                let c: i64 = self.task_node[t].iter().sum();
                for &q in &path {
                    for r in 0..nr {
                        usage[q][r] += c * inst.tasks[t].requests[r];
                    }
                }
            }
        }
        let mut running = vec![0u64; nq];
        for g in (0..inst.groups.len()).filter(|&g| running_group[g]) {
            for q in queue_path(inst, g) {
                running[q] += 1;
            }
        }
        (usage, running)
    }

    fn score(&mut self) {
        self.leaves += 1;
        if !self.queues_ok() || !self.evictions_justified() {
            return;
        }
        let inst = self.inst;
        let (nl, nv) = (self.levels.len(), self.vlevels.len());
        let mut key = vec![0i64; nl + nv + if self.mode == Term3::ByPriority { nl } else { 1 }];
        for (i, &g) in self.pending.iter().enumerate() {
            let n = self.new_pods[i];
            if n < 0 {
                continue;
            }
            let lvl = self.levels.iter().position(|&l| l == inst.groups[g].rank).unwrap();
            key[lvl] += 1;
            let extra = n - inst.min_new_pods(g);
            match self.mode {
                Term3::ByPriority => key[nl + nv + lvl] += extra,
                Term3::Total => key[nl + nv] += extra,
            }
        }
        for (p, pod) in inst.pods.iter().enumerate() {
            if self.evicted[p] {
                let l = self.vlevels.iter().position(|&v| v == pod.priority).unwrap();
                key[nl + l] -= 1;
            }
        }
        if self.best.as_ref().is_none_or(|b| key > b.key) {
            self.best = Some(Best {
                key,
                new_pods: self.new_pods.clone(),
                evicted: self.evicted.clone(),
                task_node: self.task_node.clone(),
                devices: self.devices.clone(),
            });
        }
    }

    fn group(&mut self, gi: usize) {
        if gi == self.pending.len() {
            self.score();
            return;
        }
        // Unplaced.
        self.new_pods[gi] = -1;
        self.group(gi + 1);
        let inst = self.inst;
        let g = self.pending[gi];
        let grp = &inst.groups[g];
        // A group with an evicted member is not placed (rule 6).
        if grp.bound.iter().any(|&p| self.evicted[p]) {
            return;
        }
        // Admission (rule 7): a rejected gang is never placed.
        if rejected(inst, g) {
            return;
        }
        // Placed: choose the domain of the required level (if any), then distribute.
        let nn = inst.nodes.len();
        let domains: Vec<Vec<bool>> = match grp.required {
            None => vec![vec![true; nn]],
            Some(l) => {
                let values: BTreeSet<&str> = (0..nn).filter_map(|n| inst.domain_of(n, l)).collect();
                values
                    .into_iter()
                    .filter(|v| grp.bound.iter().all(|&p| inst.domain_of(inst.pods[p].node, l) == Some(*v)))
                    .map(|v| (0..nn).map(|n| inst.domain_of(n, l) == Some(v)).collect())
                    .collect()
            }
        };
        for allowed in domains {
            self.task(gi, 0, &allowed, 0);
        }
        self.new_pods[gi] = -1;
    }

    /// Distribute the pods of task `ti` of pending group `gi`; `total` = new pods so far.
    fn task(&mut self, gi: usize, ti: usize, allowed: &[bool], total: i64) {
        let inst = self.inst;
        let g = self.pending[gi];
        let grp = &inst.groups[g];
        if ti == grp.tasks.len() {
            let ok = match grp.policy {
                Policy::Basic => total >= 1,
                Policy::Gang => total >= inst.min_new_pods(g) && total + grp.bound.len() as i64 >= grp.min_count && total >= 1,
            };
            if ok {
                self.new_pods[gi] = total;
                self.group(gi + 1);
                self.new_pods[gi] = -1;
            }
            return;
        }
        let t = grp.tasks[ti];
        let task = &inst.tasks[t];
        let nodes: Vec<usize> = (0..inst.nodes.len())
            .filter(|&n| allowed[n] && node_fits(task, &inst.nodes[n]))
            .filter(|&n| match task.slice {
                Some((l, _)) => inst.domain_of(n, l).is_some(),
                None => true,
            })
            .collect();
        let mut counts = vec![0i64; inst.nodes.len()];
        self.dist(gi, ti, allowed, total, &nodes, 0, task.count, &mut counts);
    }

    #[allow(clippy::too_many_arguments)]
    fn dist(&mut self, gi: usize, ti: usize, allowed: &[bool], total: i64, nodes: &[usize], k: usize, left: i64, counts: &mut Vec<i64>) {
        let inst = self.inst;
        let g = self.pending[gi];
        let t = inst.groups[g].tasks[ti];
        let task = &inst.tasks[t];
        if k == nodes.len() {
            let placed = task.count - left;
            if inst.groups[g].policy == Policy::Gang && placed < task.min_count {
                return;
            }
            if let Some((l, size)) = task.slice {
                let mut per: std::collections::BTreeMap<&str, i64> = Default::default();
                for &n in nodes {
                    *per.entry(inst.domain_of(n, l).unwrap()).or_default() += counts[n];
                }
                if per.values().any(|&c| c % size != 0) {
                    return;
                }
            }
            self.task(gi, ti + 1, allowed, total + placed);
            return;
        }
        let n = nodes[k];
        for c in 0..=left {
            if c > 0 && !self.add(n, t, c) {
                break; // more pods of the same task fit no better
            }
            counts[n] = c;
            self.dist(gi, ti, allowed, total, nodes, k + 1, left - c, counts);
            counts[n] = 0;
            if c > 0 {
                self.remove(n, t, c);
            }
        }
    }

    /// Put `c` pods of task `t` on node `n` (on top of what is there); false (and no
    /// change) if capacity or devices do not allow it.
    fn add(&mut self, n: usize, t: usize, c: i64) -> bool {
        let inst = self.inst;
        let node = &inst.nodes[n];
        let req = &inst.tasks[t].requests;
        for r in 0..inst.resources.len() {
            if Some(r) == self.pods_r && !node.limits_pods {
                continue;
            }
            if req[r] > 0 && self.used[n][r] + c * req[r] > node.allocatable[r] {
                return false;
            }
        }
        for (si, &r) in self.shared.iter().enumerate() {
            if req[r] == 0 {
                continue;
            }
            let mut trial = self.new_dev[n][si].clone();
            trial.extend(std::iter::repeat_n(req[r], c as usize));
            if !devices_fit(&self.bound_dev[n][si], &trial) {
                return false;
            }
        }
        for r in 0..inst.resources.len() {
            self.used[n][r] += c * req[r];
        }
        self.task_node[t][n] += c;
        for (si, &r) in self.shared.iter().enumerate() {
            if req[r] > 0 {
                self.new_dev[n][si].extend(std::iter::repeat_n(req[r], c as usize));
            }
        }
        true
    }

    fn remove(&mut self, n: usize, t: usize, c: i64) {
        let inst = self.inst;
        let req = &inst.tasks[t].requests;
        for r in 0..inst.resources.len() {
            self.used[n][r] -= c * req[r];
        }
        self.task_node[t][n] -= c;
        for (si, &r) in self.shared.iter().enumerate() {
            if req[r] > 0 {
                let len = self.new_dev[n][si].len();
                self.new_dev[n][si].truncate(len - c as usize);
            }
        }
    }
}

/// The optimal assignment as a [`tessera::Decision`]: pods in task order per group, device
/// ids packed per node, each eviction named after the highest-priority placed group that
/// may preempt it and has new pods on its node.
fn witness(inst: &Instance, pending: &[GroupId], best: &Best) -> tessera::Decision {
    use tessera::wire::decision::{Eviction, PlacedPod, Placement, Unplaced};
    let shared: Vec<usize> = (0..inst.resources.len()).filter(|&r| inst.shared[r]).collect();
    let nn = inst.nodes.len();
    // Device ids per (task, node): the i-th pod of task t on node n gets ids[t][n][i].
    let mut ids: Vec<Vec<Vec<BTreeMap<String, Vec<usize>>>>> =
        (0..inst.tasks.len()).map(|t| (0..nn).map(|n| vec![BTreeMap::new(); best.task_node[t][n] as usize]).collect()).collect();
    for n in 0..nn {
        for &r in &shared {
            let mut used = vec![0i64; (inst.nodes[n].allocatable[r] / 1000) as usize];
            for (p, pod) in inst.pods.iter().enumerate() {
                if pod.node == n && !best.evicted[p] && pod.requests[r] > 0 {
                    for &d in &pod.devices[&r] {
                        used[d] += pod.requests[r].min(1000);
                    }
                }
            }
            let mut reqs = Vec::new();
            let mut owners = Vec::new();
            for t in 0..inst.tasks.len() {
                for i in 0..best.task_node[t][n] as usize {
                    if inst.tasks[t].requests[r] > 0 {
                        reqs.push(inst.tasks[t].requests[r]);
                        owners.push((t, i));
                    }
                }
            }
            // The arrangement rule 6 needed, if any (pods in task order), else any that fits.
            let got: Vec<Vec<usize>> = match best.devices.get(&(n, r)) {
                Some(arrangement) => arrangement.iter().map(|(_, ids)| ids.clone()).collect(),
                None => assign_devices(&used, &reqs).expect("the optimum fits its devices"),
            };
            for ((t, i), d) in owners.into_iter().zip(got) {
                ids[t][n][i].insert(inst.resources[r].clone(), d);
            }
        }
    }
    let mut placements = Vec::new();
    let mut unplaced = Vec::new();
    for (gi, &g) in pending.iter().enumerate() {
        let grp = &inst.groups[g];
        if best.new_pods[gi] <= 0 {
            let reason = if rejected(inst, g) { "rejected: reference" } else { "reference" };
            unplaced.push(Unplaced { pod_group: grp.name.clone(), reason_code: None, reason: reason.into() });
            continue;
        }
        let mut pods = Vec::new();
        for &t in &grp.tasks {
            for n in 0..nn {
                for i in 0..best.task_node[t][n] as usize {
                    pods.push(PlacedPod {
                        task: inst.tasks[t].name.clone(),
                        node: inst.nodes[n].name.clone(),
                        device_ids: ids[t][n][i].clone(),
                    });
                }
            }
        }
        let mut domains = BTreeMap::new();
        if let Some(l) = grp.required {
            let n = grp.tasks.iter().flat_map(|&t| (0..nn).filter(move |&n| best.task_node[t][n] > 0)).next().unwrap();
            domains.insert(inst.levels[l].clone(), inst.domain_of(n, l).unwrap().to_string());
        }
        placements.push(Placement { pod_group: grp.name.clone(), domains, pods });
    }
    let mut evictions = Vec::new();
    for (p, pod) in inst.pods.iter().enumerate() {
        if !best.evicted[p] {
            continue;
        }
        // The unit's victims (PodGroup mode) are named after the preemptor of any member.
        let unit: Vec<usize> = match pod.group {
            Some(g) if inst.groups[g].disruption == DisruptionMode::PodGroup => inst.groups[g].bound.clone(),
            _ => vec![p],
        };
        let top = unit.iter().map(|&m| inst.pods[m].priority).max().unwrap();
        // An allowed placed group, one with a new pod on the unit's nodes first (a queue
        // witness lets it be elsewhere).
        let preemptor = pending
            .iter()
            .enumerate()
            .filter(|&(gi, &g)| best.new_pods[gi] > 0 && unit.iter().all(|&m| may_preempt(inst, g, top, &inst.pods[m])))
            .max_by_key(|&(_, &g)| {
                let near = unit.iter().any(|&m| inst.groups[g].tasks.iter().any(|&t| best.task_node[t][inst.pods[m].node] > 0));
                (near, inst.groups[g].priority, std::cmp::Reverse(g))
            })
            .map(|(_, &g)| inst.groups[g].name.clone())
            .unwrap_or_default();
        evictions.push(Eviction { pod: pod.name.clone(), preemptor });
    }
    tessera::Decision {
        status: tessera::Status::Optimal,
        objective: Objective::default(),
        gap: 0.0,
        bounds: None,
        placements,
        unplaced,
        evictions,
        stats: Default::default(),
    }
}

/// Chooses one option per entry of `choices` (each a set of covered units, as a bit mask,
/// with its arrangement) so that together they cover `all`; the arrangements in `chosen`.
fn cover(
    choices: &[((usize, usize), Vec<(u64, Vec<(usize, Vec<usize>)>)>)],
    k: usize,
    got: u64,
    all: u64,
    chosen: &mut Vec<Vec<(usize, Vec<usize>)>>,
) -> bool {
    if k == choices.len() {
        return got & all == all;
    }
    for (mask, arrangement) in &choices[k].1 {
        chosen.push(arrangement.clone());
        if cover(choices, k + 1, got | mask, all, chosen) {
            return true;
        }
        chosen.pop();
    }
    false
}

/// The `k`-element subsets of `items`, in lexicographic order.
fn combinations(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &x) in items.iter().enumerate() {
        for mut rest in combinations(&items[i + 1..], k - 1) {
            rest.insert(0, x);
            out.push(rest);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Queues (models/queues.md), from the input's tree and limits alone.

/// The leaf queue of group `g`, its parent, ..., root (empty without queues).
pub fn queue_path(inst: &Instance, g: GroupId) -> Vec<usize> {
    let (Some(qs), Some(leaf)) = (inst.queues.as_ref(), inst.groups[g].queue_id) else { return Vec::new() };
    let mut out = vec![leaf];
    while let Some(p) = qs.tree.queues[*out.last().unwrap()].parent {
        out.push(p);
    }
    out
}

/// The queue path of a bound pod: its group's (empty for a pod of no group).
fn pod_path(inst: &Instance, pod: &BoundPod) -> Vec<usize> {
    pod.group.map(|g| queue_path(inst, g)).unwrap_or_default()
}

/// Gang admission: a gang in a leaf sorting `fair`, or whose minimum ask (every task's
/// minCount pods) exceeds a `max` on its path, is rejected.
pub fn rejected(inst: &Instance, g: GroupId) -> bool {
    let Some(qs) = inst.queues.as_ref() else { return false };
    let grp = &inst.groups[g];
    let path = queue_path(inst, g);
    if grp.policy != Policy::Gang || path.is_empty() {
        return false;
    }
    if qs.tree.queues[path[0]].sort_policy == SortPolicy::Fair {
        return true;
    }
    path.iter().any(|&q| {
        qs.max[q].iter().any(|&(r, m)| grp.tasks.iter().map(|&t| inst.tasks[t].min_count * inst.tasks[t].requests[r]).sum::<i64>() > m)
    })
}

/// Requests in `r` of the bound pods under queue `q` (those not `evicted`, if given).
fn bound_usage(inst: &Instance, q: usize, r: usize, evicted: Option<&[bool]>) -> i64 {
    inst.pods
        .iter()
        .enumerate()
        .filter(|&(p, pod)| evicted.is_none_or(|e| !e[p]) && !pod.releasing && pod_path(inst, pod).contains(&q))
        .map(|(_, pod)| pod.requests[r])
        .sum()
}

/// Whether pending group `g` may evict `pod` (or the `disruptionMode: PodGroup` unit it
/// belongs to, whose highest priority is `prio`): rule 6 (strictly higher raw priority,
/// not `Never`) and, under `preemptionModel: yunikorn`, rules 1-3 of models/queues.md.
pub fn may_preempt(inst: &Instance, g: GroupId, prio: i64, pod: &BoundPod) -> bool {
    let grp = &inst.groups[g];
    if grp.preempt_never || grp.priority <= prio {
        return false;
    }
    if !inst.options.yunikorn_preemption {
        return true;
    }
    let qs = inst.queues.as_ref().expect("yunikorn needs queues");
    let victim = pod_path(inst, pod);
    // 1. No queue, or the nearest preemption.policy on the victim's path is disabled.
    if victim.is_empty() || victim.iter().find_map(|&q| qs.tree.queues[q].preemption_policy) == Some(PreemptionPolicy::Disabled) {
        return false;
    }
    // 2. Victims lie under the deepest fenced queue of the preemptor's path.
    let path = queue_path(inst, g);
    if let Some(&f) = path.iter().find(|&&q| qs.tree.queues[q].preemption_policy == Some(PreemptionPolicy::Fence)) {
        if !victim.contains(&f) {
            return false;
        }
    }
    // 3. Some queue on the path is below a guarantee in a resource the group requests.
    path.iter().any(|&q| {
        qs.guaranteed[q]
            .iter()
            .any(|&(r, gv)| grp.tasks.iter().any(|&t| inst.tasks[t].requests[r] > 0) && bound_usage(inst, q, r, None) < gv)
    })
}
