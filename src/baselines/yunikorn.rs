//! YuniKorn-style scheduling: `yunikorn-fair` and `yunikorn-binpacking`.
//!
//! Where the behaviour comes from:
//! - YuniKorn gang scheduling design (seed document `shared/seeds/000_*`, docs/design/
//!   gang_scheduling.md): the shim creates one placeholder pod per member of each task
//!   group; placeholder asks are allocated by the core "as per the normal behaviour", one
//!   allocation at a time; a queue running gang applications must sort FIFO (or
//!   StateAware), "a gang in a FAIR queue is rejected"; when placeholder asks are still
//!   pending at the placeholder timeout, the application is killed and its allocated
//!   placeholders are released;
//! - YuniKorn priority support (seed document `shared/seeds/003_*`): applications in a
//!   queue sort by priority (`application.sort.priority`), then by submission time (FIFO);
//! - YuniKorn node sorting policies: `fair` orders nodes by available resources, most
//!   available first (spreading), `binpacking` least available first (packing); a node's
//!   "available" is the weighted share of free resources (default weights: vcore 1,
//!   memory 1; here cpu and memory, plus a shared device the pod requests).
//!
//! The algorithm here: applications (pending groups) in priority order, then FIFO by
//! `createdAt`, then input order. A gang application first allocates its placeholders pod
//! by pod: its tasks in the order written, each task's `minCount` pods (slices whole), each
//! pod on the first node in the node-sort order that fits. If every placeholder (and the
//! group's `minCount`) is allocated, the real pods replace them and the elastic pods beyond
//! the minimum are allocated pod by pod the same way. Otherwise the placeholder timeout
//! fires: the timeout is collapsed to the end of this cycle, so the partial placeholders
//! keep their capacity while the later applications are scheduled and are released (the
//! application is not placed) at the end. Basic groups allocate pod by pod, keeping what
//! fits. A `required` group stays in the domain of its first pod. No preemption.

use super::common::*;
use crate::engine::assignment::Assignment;
use crate::engine::cycle::Cycle;
use crate::engine::Solver;
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::Decision;

pub struct YuniKorn {
    pub binpacking: bool,
}

impl Solver for YuniKorn {
    fn name(&self) -> &'static str {
        if self.binpacking {
            "yunikorn-binpacking"
        } else {
            "yunikorn-fair"
        }
    }
    fn describe(&self) -> &'static str {
        if self.binpacking {
            "YuniKorn: apps by priority then FIFO, gang via placeholders pod by pod (partial ones held to the end of the cycle, then released), node sort binpacking (least available first)"
        } else {
            "YuniKorn: apps by priority then FIFO, gang via placeholders pod by pod (partial ones held to the end of the cycle, then released), node sort fair (most available first)"
        }
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let rule = if self.binpacking { NodeRule::LeastAvailable } else { NodeRule::MostAvailable };
        let a = run(&cycle, rule);
        finish(&cycle, &a, self.name(), start)
    }
}

fn run(cycle: &Cycle, rule: NodeRule) -> Assignment {
    let inst = cycle.inst;
    let mut states = cycle.nodes.clone();
    let mut a = Assignment::empty(inst);
    for g in queue_order(cycle) {
        let grp = &inst.groups[g];
        let mut placeholders: Vec<TaskId> = Vec::new();
        let mut real: Vec<TaskId> = Vec::new();
        for &t in &grp.tasks {
            let (min, max) = min_and_max_units(cycle, t);
            let min = if grp.policy == Policy::Gang { min.min(max) } else { 0 };
            placeholders.extend(std::iter::repeat_n(t, min as usize));
            real.extend(std::iter::repeat_n(t, (max - min) as usize));
        }
        if grp.policy == Policy::Gang {
            let (pods, dom) = run_units(cycle, &mut states, g, &placeholders, &|_| true, None, rule);
            let all = pods.len() as i64 == placeholders.iter().map(|&t| unit_size(cycle, t)).sum::<i64>();
            // Placeholders beyond the task minimums for a group minCount: allocated from the
            // elastic pods, still before the application may start.
            let mut pods = pods;
            let fixed = dom.and_then(|d| grp.required.map(|l| (l, d)));
            let (more, dom2) = if all { run_units(cycle, &mut states, g, &real, &|_| true, fixed, rule) } else { (Vec::new(), dom) };
            pods.extend(more);
            if all && meets_min(cycle, g, &pods) {
                a.pods[g] = pods;
                a.domain[g] = if grp.required.is_some() { dom2.or(dom) } else { None };
            }
            // else: timeout at the end of the cycle; the states keep the placeholders.
        } else {
            let (pods, dom) = run_units(cycle, &mut states, g, &real, &|_| true, None, rule);
            if meets_min(cycle, g, &pods) {
                a.pods[g] = pods;
                a.domain[g] = if grp.required.is_some() { dom } else { None };
            }
        }
    }
    a
}
