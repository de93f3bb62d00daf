//! Best-fit decreasing vector bin packing: `bfd`, the companion of `ffd`
//! ([`ffd::FirstFitDecreasing`](super::ffd::FirstFitDecreasing)).
//!
//! Where the behaviour comes from: the classic best-fit-decreasing rule of (vector) bin
//! packing (items by decreasing size, each into the feasible bin it leaves with the least
//! room; e.g. Coffman, Garey and Johnson's survey of bin-packing approximation
//! algorithms, and its vector generalisation by normalized sizes), applied per gang as
//! `ffd` does:
//! - groups in the order of [`greedy::ffd_order`](crate::engine::greedy::ffd_order):
//!   priority (highest first), then decreasing minimum size (sum over resources of the
//!   request's share of the largest node, times minCount), then FIFO;
//! - each group all-or-nothing: its minimum pods first (largest task first, pod by pod,
//!   slices whole), then its elastic pods; each pod goes to the feasible node with the
//!   least remaining normalized capacity after placement (sum over every resource but
//!   `pods` of free/allocatable; ties by node order);
//! - a `required` group: every domain of the level is tried in order (as `ffd` does), the
//!   first where the group fits wins. No preemption.

use super::common::*;
use crate::engine::assignment::Assignment;
use crate::engine::cycle::Cycle;
use crate::engine::greedy;
use crate::engine::Solver;
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::Decision;

pub struct BestFitDecreasing;

impl Solver for BestFitDecreasing {
    fn name(&self) -> &'static str {
        "bfd"
    }
    fn describe(&self) -> &'static str {
        "best-fit decreasing: groups by priority then size, all-or-nothing, each pod on the feasible node with the least normalized capacity left"
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let a = run(&cycle);
        finish(&cycle, &a, self.name(), start)
    }
}

fn run(cycle: &Cycle) -> Assignment {
    let inst = cycle.inst;
    let mut states = cycle.nodes.clone();
    let mut a = Assignment::empty(inst);
    for g in greedy::ffd_order(cycle) {
        let grp = &inst.groups[g];
        let mut tasks: Vec<TaskId> = grp.tasks.iter().copied().filter(|&t| inst.tasks[t].count > 0).collect();
        tasks.sort_by(|&x, &y| {
            greedy::task_size(cycle, y).partial_cmp(&greedy::task_size(cycle, x)).unwrap_or(std::cmp::Ordering::Equal).then(x.cmp(&y))
        });
        let candidates: Vec<Option<(usize, usize)>> = match grp.required {
            None => vec![None],
            Some(l) => match &cycle.pinned[g] {
                Some(Err(_)) => vec![],
                Some(Ok(d)) => vec![Some((l, *d))],
                None => (0..cycle.domain_names[l].len()).map(|d| Some((l, d))).collect(),
            },
        };
        for cand in candidates {
            if let Some((pods, dom)) = place_group_min_first(cycle, &mut states, g, &tasks, &|_| true, cand, NodeRule::BestFit) {
                a.pods[g] = pods;
                a.domain[g] = if grp.required.is_some() { dom } else { None };
                break;
            }
        }
    }
    a
}
