//! The Kueue baselines `kueue` (Kueue v0.19 defaults: the Mixed profile, LeastFreeCapacity
//! for unconstrained requests and BestFit for required/preferred ones) and
//! `kueue-bestfit` (gate `TASProfileMixed` off: BestFit everywhere), built on the TAS port
//! of the parent module.
//!
//! How an instance maps to Kueue: the cluster is one TAS ResourceFlavor whose Topology has
//! the instance's levels plus `kubernetes.io/hostname` (the node name is the hostname);
//! nodes missing a level label are not in the flavor. A pod group is a Workload, each task
//! with pods to place a PodSet (count = `count`, minCount = `minCount`, both rounded to
//! whole slices). The group's `required` / `preferred` level is every PodSet's
//! `podset-required-topology` / `podset-preferred-topology`, a task's `slice` its
//! `podset-slice-required-topology` / `podset-slice-size`; a PodSet with neither is a TAS
//! PodSet without annotations ("implied", unconstrained at the hostname level), as on a
//! ClusterQueue whose only flavor is a TAS flavor. Node filters (nodeSelector, node
//! affinity, taints) exclude leaves as Kueue's `matchNode` does.
//!
//! Scheduling (kubernetes-sigs/kueue `pkg/scheduler/scheduler.go`, `flavorassigner`):
//! workloads one at a time, highest priority first, then oldest (`createdAt`), then input
//! order (BestEffortFIFO); each workload is admitted whole or not at all: quota first (with
//! queues, the instance's YuniKorn queue limits are read as quota along the queue path:
//! `max` per resource and `maxapplications`), then a topology assignment for every PodSet
//! (the PodSets of one workload in task order, each placement's usage assumed for the next,
//! as `FindTopologyAssignmentsForFlavor`). When the full counts do not fit and some PodSet
//! may shrink (`PartialAdmission`, Beta, on), Kueue's `PodSetReducer` binary-searches the
//! largest proportional reduction towards the minimums that fits. A basic group is a
//! workload whose PodSets may shrink to one pod each (v0.19 has no `minCount: 0`).
//! Within each chosen leaf the pods go to that node (kube-scheduler binds them there; with
//! fractional devices the per-device fit is the node's).
//!
//! Two modelling choices, where the instance format says more than a Kueue Workload can:
//! a `required` level binds every pod of the group, bound members included (rule 5), while
//! Kueue binds each PodSet on its own; so the first PodSet's domain at that level (or the
//! domain bound members pin) confines the later PodSets, with the same leaf restriction
//! Kueue applies when it replaces a failed node (`requiredReplacementDomain`). And a group
//! rejected by its queue (rule 7) is never admitted. No preemption.

use super::{find_topology_assignment, Exclusion, Gates, LeafFit, PodSetRequest, TopologyRequest, Tree};
use crate::baselines::common::{meets_min, queue_order};
use crate::engine::assemble::assemble;
use crate::engine::assignment::{Assignment, NewPod};
use crate::engine::cycle::{filter_failure, passes_filters, pods_fitting, Cycle, NodeState};
use crate::engine::ledger::Ledger;
use crate::engine::Solver;
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::Decision;
use crate::wire::decision::Status;

/// A Kueue profile as a solver.
pub struct Kueue {
    /// `TASProfileMixed` (on by default in v0.19).
    pub mixed: bool,
}

impl Solver for Kueue {
    fn name(&self) -> &'static str {
        if self.mixed {
            "kueue"
        } else {
            "kueue-bestfit"
        }
    }
    fn describe(&self) -> &'static str {
        if self.mixed {
            "Kueue v0.19 TAS, default gates (TASProfileMixed on): workloads by priority then FIFO, all-or-nothing with partial admission; required/preferred BestFit (preferred climbs levels before spreading), unconstrained and topology-free PodSets LeastFreeCapacity; level-by-level assignment; slices"
        } else {
            "Kueue v0.19 TAS with TASProfileMixed off: as kueue, but BestFit for every request (unconstrained and topology-free PodSets too)"
        }
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let gates = Gates { profile_mixed: self.mixed, ..Gates::V0_19 };
        let a = run(&cycle, gates);
        let mut d = assemble(&cycle, &a, Status::Feasible, f64::NAN);
        d.stats.solver = Some(self.name().into());
        d.stats.solve_millis = Some(start.elapsed().as_millis() as u64);
        d
    }
}

/// The flavor: the domain tree over the nodes carrying every level label, and per leaf
/// its node.
struct Flavor {
    tree: Tree,
    node_of_leaf: Vec<NodeId>,
}

impl Flavor {
    fn new(inst: &Instance) -> Flavor {
        let mut levels: Vec<String> = inst.levels.clone();
        // The implicit finest level is the hostname; Kueue names it by its label.
        if let Some(last) = levels.last_mut() {
            *last = super::HOSTNAME.to_string();
        }
        let values =
            |n: NodeId| -> Option<Vec<String>> { (0..inst.levels.len()).map(|l| inst.domain_of(n, l).map(str::to_string)).collect() };
        let all: Vec<Vec<String>> = (0..inst.nodes.len()).filter_map(values).collect();
        let tree = Tree::new(&levels, &all);
        let index: std::collections::BTreeMap<Vec<String>, usize> =
            tree.leaves().into_iter().enumerate().map(|(i, v)| (v.to_vec(), i)).collect();
        let mut node_of_leaf = vec![0; index.len()];
        for n in 0..inst.nodes.len() {
            if let Some(v) = values(n) {
                node_of_leaf[index[&v]] = n;
            }
        }
        Flavor { tree, node_of_leaf }
    }
}

/// Pods of task `t` a PodSet may hold: (count, minimum), both in whole slices.
fn podset_bounds(inst: &Instance, g: GroupId, t: TaskId) -> (i64, i64) {
    let task = &inst.tasks[t];
    let k = task.slice.map_or(1, |(_, k)| k);
    let count = task.count / k * k;
    let min = match inst.groups[g].policy {
        Policy::Gang => (task.min_count + k - 1) / k * k,
        Policy::Basic => k,
    };
    (count, min.min(count))
}

fn run(cycle: &Cycle, gates: Gates) -> Assignment {
    let inst = cycle.inst;
    let flavor = Flavor::new(inst);
    let mut states = cycle.nodes.clone();
    let mut ledger = Ledger::new(cycle);
    let mut a = Assignment::empty(inst);
    for g in queue_order(cycle) {
        if cycle.rejected[g].is_some() || matches!(cycle.pinned[g], Some(Err(_))) {
            continue;
        }
        let tasks: Vec<TaskId> = inst.groups[g].tasks.iter().copied().filter(|&t| podset_bounds(inst, g, t).0 > 0).collect();
        if tasks.is_empty() {
            continue;
        }
        let bounds: Vec<(i64, i64)> = tasks.iter().map(|&t| podset_bounds(inst, g, t)).collect();
        let full: Vec<i64> = bounds.iter().map(|b| b.0).collect();
        let mut attempt = |counts: &[i64]| admit(cycle, &flavor, &states, ledger.as_ref(), g, &tasks, counts, gates);
        let mut found = attempt(&full);
        if found.is_none() {
            found = reduce(&bounds, &mut attempt);
        }
        if let Some((trial, pods, dom)) = found {
            states = trial;
            if let Some(l) = ledger.as_mut() {
                l.take(g, &pods);
            }
            a.pods[g] = pods;
            a.domain[g] = dom;
        }
    }
    a
}

/// Kueue's `PodSetReducer.Search` (proportional): the smallest reduction `i` of
/// `totalDelta` (each PodSet giving up `delta * i / totalDelta`) that is admitted; slices
/// stay whole (counts rounded down to whole slices, never below the minimum).
fn reduce<R>(bounds: &[(i64, i64)], fits: &mut dyn FnMut(&[i64]) -> Option<R>) -> Option<R> {
    let deltas: Vec<i64> = bounds.iter().map(|&(c, m)| c - m).collect();
    let total: i64 = deltas.iter().sum();
    if total == 0 {
        return None;
    }
    let counts_at = |i: i64| -> Vec<i64> { bounds.iter().zip(&deltas).map(|(&(c, _), &d)| c - d * i / total).collect() };
    let mut last = None;
    let (mut lo, mut hi) = (0i64, total);
    while lo < hi {
        let h = lo + (hi - lo) / 2;
        match fits(&counts_at(h)) {
            Some(r) => {
                last = Some(r);
                hi = h;
            }
            None => lo = h + 1,
        }
    }
    if let Some(r) = fits(&counts_at(lo)) {
        last = Some(r);
    }
    last
}

type Admitted = (Vec<NodeState>, Vec<NewPod>, Option<usize>);

/// One admission attempt of group `g` with PodSet `counts`: quota, then a topology
/// assignment per PodSet in order on a copy of the node states.
#[allow(clippy::too_many_arguments)]
fn admit(
    cycle: &Cycle,
    flavor: &Flavor,
    states: &[NodeState],
    ledger: Option<&Ledger>,
    g: GroupId,
    tasks: &[TaskId],
    counts: &[i64],
    gates: Gates,
) -> Option<Admitted> {
    let inst = cycle.inst;
    let grp = &inst.groups[g];
    // Slices whole: round each count down to whole slices.
    let counts: Vec<i64> = tasks
        .iter()
        .zip(counts)
        .map(|(&t, &c)| {
            let k = inst.tasks[t].slice.map_or(1, |(_, k)| k);
            c / k * k
        })
        .collect();
    // Quota (the flavor assigner checks it before topology).
    if let Some(l) = ledger {
        let virtual_pods: Vec<NewPod> = tasks
            .iter()
            .zip(&counts)
            .flat_map(|(&t, &c)| (0..c).map(move |_| NewPod { task: t, node: 0, devices: Default::default() }))
            .collect();
        if !l.fits(g, &virtual_pods) {
            return None;
        }
    }
    let mut trial = states.to_vec();
    let mut pods: Vec<NewPod> = Vec::new();
    // The domain at the required level: pinned by bound members, else chosen by the first PodSet.
    let mut dom: Option<usize> = match &cycle.pinned[g] {
        Some(Ok(d)) => Some(*d),
        _ => None,
    };
    for (&t, &count) in tasks.iter().zip(&counts) {
        if count == 0 {
            continue;
        }
        let task = &inst.tasks[t];
        let level = |l: usize| flavor.tree.levels()[l].clone();
        let topology = match (grp.required, grp.preferred, task.slice) {
            (None, None, None) => None,
            (r, p, s) => Some(TopologyRequest {
                required: r.map(level),
                preferred: if r.is_none() { p.map(level) } else { None },
                slice_required_topology: s.map(|(l, _)| level(l)),
                slice_size: s.map(|(_, k)| k),
                ..Default::default()
            }),
        };
        let implied = topology.is_none();
        let req = PodSetRequest { topology, count, implied };
        let fixed = grp.required.zip(dom);
        let st = &trial;
        let fit = |leaf: usize| -> LeafFit {
            let n = flavor.node_of_leaf[leaf];
            if !passes_filters(inst, t, n) {
                let why = filter_failure(inst, t, n).unwrap_or_default();
                let excluded = if why.starts_with("taint ") {
                    Exclusion::Taint(why.trim_start_matches("taint ").to_string())
                } else if why == "nodeAffinity" {
                    Exclusion::Affinity
                } else {
                    Exclusion::NodeSelector
                };
                return LeafFit { excluded: Some(excluded), ..Default::default() };
            }
            if let Some((l, d)) = fixed {
                if cycle.domain_of[l][n] != Some(d) {
                    return LeafFit { excluded: Some(Exclusion::TopologyDomain), ..Default::default() };
                }
            }
            let s = &st[n];
            let k = pods_fitting(inst, &cycle.shared_ids, &s.free, &s.devices, &task.requests).min(count);
            LeafFit { excluded: None, state: k, leader_state: 0, state_with_leader: k, limiting: None }
        };
        let assignment = find_topology_assignment(&flavor.tree, "default", &req, false, &fit, gates).ok()?;
        let placed: i64 = assignment.worker_leaves.iter().map(|x| x.1).sum();
        if placed != count {
            return None;
        }
        for (leaf, k) in assignment.worker_leaves {
            let n = flavor.node_of_leaf[leaf];
            for _ in 0..k {
                let devices = trial[n].take(inst, &cycle.shared_ids, &task.requests)?;
                pods.push(NewPod { task: t, node: n, devices });
            }
        }
        if let (Some(l), None) = (grp.required, dom) {
            dom = pods.first().and_then(|p| cycle.domain_of[l][p.node]);
        }
    }
    if !meets_min(cycle, g, &pods) {
        return None;
    }
    Some((trial, pods, if grp.required.is_some() { dom } else { None }))
}
