//! kube-scheduler pod by pod, with the 1.35 gang (Permit barrier): `k8s-pod`
//! (LeastAllocated scoring, the default) and `k8s-pod-mostalloc` (MostAllocated).
//!
//! Where the behaviour comes from:
//! - the scheduling queue pops one pod at a time, ordered by `PrioritySort` (priority,
//!   then the pod's timestamp); each pod runs Filter (here: the filters of
//!   [`cycle::passes_filters`](crate::engine::cycle::passes_filters) and resource/device fit
//!   via `NodeState::take`) and Score with `NodeResourcesFit`: `LeastAllocated` (default
//!   profile) or `MostAllocated`, per resource (cpu, memory, weight 1 each; plus a shared
//!   device the pod requests) the fraction (allocatable - requested)/allocatable, resp.
//!   requested/allocatable, after placing the pod, averaged; ties by node order (the real
//!   scheduler breaks ties at random: node order makes it deterministic);
//! - gang scheduling in 1.35 (seed talk `shared/seeds/004_*`): "each pod goes through the
//!   scheduling cycle and then at the Permit extension point ... until we see all members
//!   to be schedulable we stop all pods here"; pods of a gang that reach Permit are
//!   *assumed* (they hold their capacity) and wait until `minCount` members are assumed;
//!   "multiple gangs partially reserve their places and then they deadlock each other".
//!
//! Modelling choices:
//! - queue order: priority (highest first), then the group's `createdAt`, then the pod's
//!   index inside its group (task order as written, pod index), then input order. So pods
//!   of groups with the same priority and creation time alternate (A0, B0, A1, B1, ...), as
//!   pods created together do in the real queue; this is what makes gangs interleave;
//! - one queue pass; a pod that does not fit is unschedulable for this cycle;
//! - at the end of the queue, a gang that has not reached its minimum (every task its
//!   `minCount`, the group its `minCount`) is rejected at Permit and its assumed pods are
//!   released. The release happens only at the end of the cycle (the Permit wait times out
//!   after the queue is drained), so a partial gang holds its capacity while every later
//!   pod is scheduled: that is the known weakness this baseline shows. Released capacity
//!   is not reused in the same cycle;
//! - basic groups bind every pod that fits;
//! - a `required` topology group stays in the domain of its first pod (or of its bound
//!   members), like a required pod affinity to its siblings; slices are placed whole.

use super::common::*;
use crate::engine::assignment::Assignment;
use crate::engine::cycle::Cycle;
use crate::engine::Solver;
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::Decision;

pub struct K8sPod {
    pub most_allocated: bool,
}

impl Solver for K8sPod {
    fn name(&self) -> &'static str {
        if self.most_allocated {
            "k8s-pod-mostalloc"
        } else {
            "k8s-pod"
        }
    }
    fn describe(&self) -> &'static str {
        if self.most_allocated {
            "kube-scheduler pod by pod (priority, FIFO), NodeResourcesFit MostAllocated; 1.35 gang via a Permit barrier (partial gangs hold capacity until the queue is drained, then are released)"
        } else {
            "kube-scheduler pod by pod (priority, FIFO), NodeResourcesFit LeastAllocated (default); 1.35 gang via a Permit barrier (partial gangs hold capacity until the queue is drained, then are released)"
        }
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let rule = if self.most_allocated { NodeRule::MostAllocated } else { NodeRule::LeastAllocated };
        let a = run(&cycle, rule);
        finish(&cycle, &a, self.name(), start)
    }
}

fn run(cycle: &Cycle, rule: NodeRule) -> Assignment {
    let inst = cycle.inst;
    // The queue: one entry per unit (pod, or slice).
    let mut queue: Vec<((std::cmp::Reverse<i64>, i64, i64, usize), GroupId, TaskId)> = Vec::new();
    for &g in &cycle.pending {
        let grp = &inst.groups[g];
        let mut idx = 0i64;
        for &t in &grp.tasks {
            let (_, max) = min_and_max_units(cycle, t);
            for _ in 0..max {
                queue.push(((std::cmp::Reverse(grp.priority), grp.created_at, idx, grp.order), g, t));
                idx += 1;
            }
        }
    }
    queue.sort_by_key(|e| (e.0, e.1));
    let mut states = cycle.nodes.clone();
    let mut a = Assignment::empty(inst);
    let mut dom: Vec<Option<(usize, usize)>> = (0..inst.groups.len()).map(|g| pinned_domain(cycle, g)).collect();
    for (_, g, t) in queue {
        let d = dom[g];
        if let Some(u) = place_unit(cycle, &mut states, t, &|n| in_domain(cycle, d, n), rule) {
            if d.is_none() {
                if let Some(l) = inst.groups[g].required {
                    dom[g] = cycle.domain_of[l][u[0].node].map(|x| (l, x));
                }
            }
            a.pods[g].extend(u);
        }
    }
    // End of the queue: gangs short of their minimum are rejected at Permit.
    for &g in &cycle.pending {
        if !meets_min(cycle, g, &a.pods[g]) {
            a.pods[g].clear();
        } else {
            a.domain[g] = dom[g].map(|x| x.1);
        }
    }
    a
}
