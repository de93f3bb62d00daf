//! Brute-force reference solver for tiny instances.
//!
//! Written from `shared/spec/semantics.md` alone (rules 1-5, no evictions), independently
//! of `src/solve`: it enumerates every assignment of new pods (per pending group: unplaced,
//! or a domain choice for required topology and, per task, every distribution of
//! 0..=count pods over the nodes the task may use), applies the hard rules itself and
//! keeps the lexicographically best objective (terms 1 and 3; term 2 is always empty).
//!
//! Interpretation notes (kept deliberately literal):
//! - a node without `pods` in its allocatable has no pod limit;
//! - a task with a `slice` can only use nodes that lie in some domain of the slice level
//!   (each slice must sit entirely inside one domain);
//! - extra pods of a group = new pods - `Instance::min_new_pods(g)`; term 3 maximizes
//!   them per priority level, higher priority first (semantics.md: "Maximize pods placed
//!   beyond the minimums (elastic members), higher priority first"); the reported
//!   `extraPods` is their sum. [`Term3::Total`] instead maximizes the plain sum (what
//!   `Objective::compare` compares), kept to show where the two readings differ.

#![allow(dead_code)]

use std::collections::BTreeSet;
use tessera::decision::{Objective, PlacedRow};
use tessera::model::{GroupId, Instance, Node, Policy, Task, Taint, Toleration, PODS};

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
    /// The optimal lexicographic key: placed groups per level (highest first), then extra
    /// pods per level (highest first) for [`Term3::ByPriority`] or their sum for
    /// [`Term3::Total`]. Compare with [`decision_key`].
    pub key: Vec<i64>,
    pub leaves: u64,
    /// New pods per pending group in one optimal assignment (0 = unplaced), for debugging.
    pub best_new_pods: Vec<(String, i64)>,
}

pub fn optimum(inst: &Instance) -> Objective {
    solve(inst).objective
}

pub fn solve(inst: &Instance) -> RefResult {
    solve_with(inst, Term3::ByPriority)
}

/// Priority levels of pending groups, highest first.
fn levels_of(inst: &Instance) -> Vec<i64> {
    let set: BTreeSet<i64> = (0..inst.groups.len())
        .filter(|&g| inst.groups[g].tasks.iter().any(|&t| inst.tasks[t].count > 0))
        .map(|g| inst.groups[g].priority)
        .collect();
    set.into_iter().rev().collect()
}

/// The objective key (as [`RefResult::key`]) of an assignment given as new pods per
/// pending group (absent or 0 = unplaced).
pub fn key_of(inst: &Instance, new_pods: &std::collections::BTreeMap<String, i64>, mode: Term3) -> Vec<i64> {
    let levels = levels_of(inst);
    let nl = levels.len();
    let mut key = vec![0i64; nl + if mode == Term3::ByPriority { nl } else { 1 }];
    for g in 0..inst.groups.len() {
        let n = new_pods.get(&inst.groups[g].name).copied().unwrap_or(0);
        if n <= 0 {
            continue;
        }
        let Some(l) = levels.iter().position(|&p| p == inst.groups[g].priority) else { continue };
        key[l] += 1;
        let extra = n - inst.min_new_pods(g);
        match mode {
            Term3::ByPriority => key[nl + l] += extra,
            Term3::Total => key[nl] += extra,
        }
    }
    key
}

/// The key of a decision, computed from its placements alone (not its reported objective).
pub fn decision_key(inst: &Instance, d: &tessera::Decision, mode: Term3) -> Vec<i64> {
    let mut new_pods = std::collections::BTreeMap::new();
    for p in &d.placements {
        *new_pods.entry(p.pod_group.clone()).or_insert(0) += p.pods.len() as i64;
    }
    key_of(inst, &new_pods, mode)
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
    true
}

/// Whether `new` requests of one shared resource fit on devices whose current usage (by
/// bound pods) is `used` (milli per device). An integral request k (>= 1000) takes k
/// devices with no other user; a fractional one sits on one device.
pub fn devices_fit(used: &[i64], new: &[i64]) -> bool {
    let mut used = used.to_vec();
    let mut fracs: Vec<i64> = Vec::new();
    // Integral requests first: completely free devices are interchangeable, so taking the
    // first free ones loses nothing.
    for &r in new {
        if r == 0 {
            continue;
        }
        if r >= 1000 {
            let k = (r / 1000) as usize;
            let free: Vec<usize> = (0..used.len()).filter(|&d| used[d] == 0).take(k).collect();
            if free.len() < k {
                return false;
            }
            for d in free {
                used[d] = 1000;
            }
        } else {
            fracs.push(r);
        }
    }
    fracs.sort_unstable_by(|a, b| b.cmp(a));
    pack(&mut used, &fracs)
}

/// Backtracking bin packing of fractional requests onto devices.
fn pack(used: &mut Vec<i64>, fracs: &[i64]) -> bool {
    let Some((&r, rest)) = fracs.split_first() else { return true };
    let mut tried: BTreeSet<i64> = BTreeSet::new();
    for d in 0..used.len() {
        if used[d] + r > 1000 || !tried.insert(used[d]) {
            continue;
        }
        used[d] += r;
        let ok = pack(used, rest);
        used[d] -= r;
        if ok {
            return true;
        }
    }
    false
}

struct Search<'a> {
    inst: &'a Instance,
    pending: Vec<GroupId>,
    /// Priority levels of pending groups, highest first.
    levels: Vec<i64>,
    pods_r: Option<usize>,
    shared: Vec<usize>,
    /// Per node, per resource: requests of bound pods plus new pods so far.
    used: Vec<Vec<i64>>,
    /// Per node, per shared resource (index into `shared`): milli used per device by bound pods.
    bound_dev: Vec<Vec<Vec<i64>>>,
    /// Per node, per shared resource: requests of new pods placed so far.
    new_dev: Vec<Vec<Vec<i64>>>,
    /// New pods per pending group (index into `pending`), -1 = unplaced.
    new_pods: Vec<i64>,
    best: Option<(Vec<i64>, Vec<i64>)>,
    leaves: u64,
    mode: Term3,
}

pub fn solve_with(inst: &Instance, mode: Term3) -> RefResult {
    let pending: Vec<GroupId> = (0..inst.groups.len())
        .filter(|&g| inst.groups[g].tasks.iter().any(|&t| inst.tasks[t].count > 0))
        .collect();
    let levels = levels_of(inst);
    let shared: Vec<usize> = (0..inst.resources.len()).filter(|&r| inst.shared[r]).collect();
    let nn = inst.nodes.len();
    let mut used = vec![vec![0i64; inst.resources.len()]; nn];
    let mut bound_dev: Vec<Vec<Vec<i64>>> = (0..nn)
        .map(|n| shared.iter().map(|&r| vec![0i64; (inst.nodes[n].allocatable[r] / 1000) as usize]).collect())
        .collect();
    for p in &inst.pods {
        for r in 0..inst.resources.len() {
            used[p.node][r] += p.requests[r];
        }
        for (si, &r) in shared.iter().enumerate() {
            let req = p.requests[r];
            if req == 0 {
                continue;
            }
            let ids = p.devices.get(&r).expect("bound pod with a shared request has device ids after validation");
            for &d in ids {
                bound_dev[p.node][si][d] += req.min(1000);
            }
        }
    }
    let mut s = Search {
        inst,
        pods_r: inst.resources.iter().position(|r| r == PODS),
        levels,
        new_pods: vec![-1; pending.len()],
        pending,
        shared,
        used,
        bound_dev,
        new_dev: Vec::new(),
        best: None,
        leaves: 0,
        mode,
    };
    s.new_dev = vec![vec![Vec::new(); s.shared.len()]; nn];
    s.group(0);
    let (key, best_pods) = s.best.clone().expect("the all-unplaced assignment is always valid");
    let nl = s.levels.len();
    let extra_pods: i64 = key[nl..].iter().sum();
    let mut rows = Vec::new();
    for (i, &lvl) in s.levels.iter().enumerate() {
        let pending = s.pending.iter().filter(|&&g| inst.groups[g].priority == lvl).count() as i64;
        rows.push(PlacedRow { priority: lvl, placed: key[i], pending });
    }
    let objective = Objective { placed_by_priority: rows, evicted_by_priority: vec![], extra_pods };
    let best_new_pods = s.pending.iter().zip(&best_pods).map(|(&g, &n)| (inst.groups[g].name.clone(), n.max(0))).collect();
    RefResult { objective, key, leaves: s.leaves, best_new_pods }
}

impl<'a> Search<'a> {
    fn score(&mut self) {
        self.leaves += 1;
        let inst = self.inst;
        let nl = self.levels.len();
        let mut key = vec![0i64; nl + if self.mode == Term3::ByPriority { nl } else { 1 }];
        for (i, &g) in self.pending.iter().enumerate() {
            let n = self.new_pods[i];
            if n < 0 {
                continue;
            }
            let lvl = self.levels.iter().position(|&l| l == inst.groups[g].priority).unwrap();
            key[lvl] += 1;
            let extra = n - inst.min_new_pods(g);
            match self.mode {
                Term3::ByPriority => key[nl + lvl] += extra,
                Term3::Total => key[nl] += extra,
            }
        }
        if self.best.as_ref().map_or(true, |(b, _)| key > *b) {
            self.best = Some((key, self.new_pods.clone()));
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
        // Placed: choose the domain of the required level (if any), then distribute.
        let inst = self.inst;
        let g = self.pending[gi];
        let grp = &inst.groups[g];
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
                Policy::Gang => {
                    total >= inst.min_new_pods(g) && total + grp.bound.len() as i64 >= grp.min_count && total >= 1
                }
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
            trial.extend(std::iter::repeat(req[r]).take(c as usize));
            if !devices_fit(&self.bound_dev[n][si], &trial) {
                return false;
            }
        }
        for r in 0..inst.resources.len() {
            self.used[n][r] += c * req[r];
        }
        for (si, &r) in self.shared.iter().enumerate() {
            if req[r] > 0 {
                self.new_dev[n][si].extend(std::iter::repeat(req[r]).take(c as usize));
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
        for (si, &r) in self.shared.iter().enumerate() {
            if req[r] > 0 {
                let len = self.new_dev[n][si].len();
                self.new_dev[n][si].truncate(len - c as usize);
            }
        }
    }
}
