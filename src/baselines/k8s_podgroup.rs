//! kube-scheduler 1.36 pod-group scheduling cycle: `k8s-podgroup`.
//!
//! Where the behaviour comes from:
//! - the seed talk `shared/seeds/004_*` (Kubernetes 1.36): "the cycle itself takes the pod
//!   group, snapshots the cluster state and runs some algorithm that checks the
//!   feasibility of the entire pod group" by running "the pod-by-pod scheduling inside the
//!   single cycle"; all-or-nothing for a gang; "as we process them [the pods] in the
//!   specific fixed order ... for heterogeneous [groups] we may not find the placement"
//!   even if it exists; TAS: "first we generate placements ... for each generated placement
//!   we run the pod group scheduling algorithm ... then we have the scoring ... the best
//!   rack selected, for example it has the most pods from the pod group we can place on
//!   the rack or we try to bin pack"; "it lacks integration with any preemption
//!   algorithm" and has "single level topology constraints";
//! - Kubernetes docs "Topology-Aware Workload Scheduling" (v1.36 alpha): the
//!   `TopologyPlacement` plugin generates one candidate placement per distinct value of
//!   the topology key; `NodeResourcesFit` scores a placement with `MostAllocated` over
//!   the nodes of the placement; `PodGroupPodsCount` scores the number of the group's pods
//!   that can be scheduled; both plugins have equal weights by default.
//!
//! The algorithm here: groups in queue order (priority, then FIFO by `createdAt`, then
//! input order). For a group, candidate placements are the whole cluster, or, with a
//! `required` level, each domain of that level (in order of first appearance; only the
//! pinned one when bound members pin it). For each placement, on a copy of the snapshot,
//! the group's pods go in the FIXED order (tasks as written, pod index; slices whole), each
//! to the node with the best `LeastAllocated` score (the pod-by-pod default), skipping a
//! pod that does not fit. A placement is feasible if the group's minimum is met. Feasible
//! placements are scored `100 * podsPlaced / podsWanted + 100 * MostAllocated`, where
//! MostAllocated is the mean over cpu and memory of requested/allocatable summed over the
//! placement's nodes after placement; the best wins (ties: first candidate). No preemption,
//! no other pod order is tried, `preferred` is ignored.

use super::common::*;
use crate::engine::assignment::{Assignment, NewPod};
use crate::engine::cycle::{Cycle, NodeState};
use crate::engine::Solver;
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::Decision;

pub struct K8sPodGroup;

impl Solver for K8sPodGroup {
    fn name(&self) -> &'static str {
        "k8s-podgroup"
    }
    fn describe(&self) -> &'static str {
        "kube-scheduler 1.36 pod-group cycle: groups by priority/FIFO, pods in a fixed order (LeastAllocated) on one snapshot, all-or-nothing; one placement per required topology value, scored by MostAllocated + pods placed; no preemption"
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let a = run(&cycle);
        finish(&cycle, &a, self.name(), start)
    }
}

/// MostAllocated over a placement: mean over cpu and memory of used/allocatable summed
/// over `nodes`.
fn placement_most_allocated(cycle: &Cycle, states: &[NodeState], nodes: &[NodeId]) -> f64 {
    let inst = cycle.inst;
    let mut sum = 0.0;
    let mut k = 0;
    for r in ["cpu", "memory"].iter().filter_map(|n| inst.resource_id(n)) {
        let alloc: i64 = nodes.iter().map(|&n| inst.nodes[n].allocatable[r]).sum();
        if alloc <= 0 {
            continue;
        }
        let free: i64 = nodes.iter().map(|&n| states[n].free[r].max(0)).sum();
        sum += (alloc - free) as f64 / alloc as f64;
        k += 1;
    }
    if k == 0 {
        0.0
    } else {
        sum / k as f64
    }
}

fn run(cycle: &Cycle) -> Assignment {
    let inst = cycle.inst;
    let mut states = cycle.nodes.clone();
    let mut a = Assignment::empty(inst);
    for g in queue_order(cycle) {
        let grp = &inst.groups[g];
        // Fixed order: tasks as written, pod index.
        let mut seq: Vec<TaskId> = Vec::new();
        for &t in &grp.tasks {
            let (_, max) = min_and_max_units(cycle, t);
            seq.extend(std::iter::repeat_n(t, max as usize));
        }
        let wanted = inst.max_new_pods(g).max(1) as f64;
        let candidates: Vec<Option<(usize, usize)>> = match grp.required {
            None => vec![None],
            Some(l) => match &cycle.pinned[g] {
                Some(Err(_)) => vec![],
                Some(Ok(d)) => vec![Some((l, *d))],
                None => (0..cycle.domain_names[l].len()).map(|d| Some((l, d))).collect(),
            },
        };
        let mut best: Option<(f64, Vec<NodeState>, Vec<NewPod>, Option<usize>)> = None;
        for cand in candidates {
            let mut trial = states.clone();
            let (pods, dom) = run_units(cycle, &mut trial, g, &seq, &|_| true, cand, NodeRule::LeastAllocated);
            if !meets_min(cycle, g, &pods) {
                continue;
            }
            let nodes: Vec<NodeId> = match cand {
                None => (0..inst.nodes.len()).collect(),
                Some((l, d)) => cycle.domain_nodes[l][d].clone(),
            };
            let score = 100.0 * pods.len() as f64 / wanted + 100.0 * placement_most_allocated(cycle, &trial, &nodes);
            let score = (score * 1e9).round() / 1e9;
            if best.as_ref().is_none_or(|b| score > b.0) {
                best = Some((score, trial, pods, dom));
            }
        }
        if let Some((_, trial, pods, dom)) = best {
            states = trial;
            a.pods[g] = pods;
            a.domain[g] = if grp.required.is_some() { dom } else { None };
        }
    }
    a
}
