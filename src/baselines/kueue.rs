//! Kueue Topology-Aware Scheduling (TAS) domain choice: `kueue-bestfit` and
//! `kueue-leastfree`.
//!
//! Where the behaviour comes from: the Kueue documentation on Topology-Aware Scheduling
//! (concepts page "Topology Aware Scheduling", kueue.sigs.k8s.io, and the task page "Run
//! Workloads with Topology-Aware Scheduling", which the docs search of this project
//! returns; the algorithm profiles are described on the concepts page). Kueue admits a
//! workload (PodSet) only when a domain of the requested level has enough free capacity
//! for all of it, counting capacity per domain as the number of the PodSet's pods that
//! fit there; with `required` the whole PodSet goes to ONE domain, with `preferred` it
//! may span several. The profiles choose domains as follows:
//! - `BestFit` (the default profile): with `preferred`, take domains by DEcreasing free
//!   capacity until the PodSet fits (the fewest domains), then replace the last one by
//!   the domain with the least free capacity that still fits the remainder; with
//!   `required`: the domain with the least free capacity that fits the whole PodSet;
//! - `LeastFreeCapacity`: take domains by INcreasing free capacity, the first (for
//!   `required`) or the shortest prefix (for `preferred`) that fits.
//!   For `required` both profiles pick the same domain (the tightest one that fits); they
//!   differ on `preferred`.
//!
//! Modelling choices: Kueue admits one workload at a time, here in queue order
//! (priority, then FIFO by `createdAt`, then input order), with no joint choice and no
//! preemption. A domain's free capacity is the number of pods of the group's largest task
//! (by normalized size) that fit on its nodes, node by node, at that moment; "fits" is
//! decided by actually placing the whole group there (minimum first, then elastic pods)
//! first fit over the domain's nodes in input order (Kueue then assigns pods to nodes of
//! the domain; kube-scheduler binds them there). Groups without topology fall back to
//! first fit ([`greedy::place_group`](crate::engine::greedy::place_group)). Multi-PodSet
//! groups are treated as one PodSet (one domain for the whole group).

use super::common::*;
use crate::engine::assignment::{Assignment, NewPod};
use crate::engine::cycle::{pods_fitting, Cycle, NodeState};
use crate::engine::greedy;
use crate::engine::Solver;
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::Decision;

pub struct Kueue {
    pub least_free: bool,
}

impl Solver for Kueue {
    fn name(&self) -> &'static str {
        if self.least_free {
            "kueue-leastfree"
        } else {
            "kueue-bestfit"
        }
    }
    fn describe(&self) -> &'static str {
        if self.least_free {
            "Kueue TAS LeastFreeCapacity: one workload at a time by priority/FIFO; required: the tightest domain that fits; preferred: fill domains by increasing free capacity; no topology: first fit"
        } else {
            "Kueue TAS BestFit: one workload at a time by priority/FIFO; required: the tightest domain that fits; preferred: fewest domains by decreasing free capacity, last one best fit; no topology: first fit"
        }
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let a = run(&cycle, self.least_free);
        finish(&cycle, &a, self.name(), start)
    }
}

/// Pods of task `t` that node state `st` holds alone.
fn pods_fit(cycle: &Cycle, st: &NodeState, t: TaskId) -> i64 {
    let task = &cycle.inst.tasks[t];
    match pods_fitting(cycle.inst, &cycle.shared_ids, &st.free, &st.devices, &task.requests) {
        i64::MAX => task.count.max(1),
        best => best,
    }
}

fn capacity(cycle: &Cycle, states: &[NodeState], t: TaskId, nodes: &[NodeId]) -> i64 {
    nodes.iter().filter(|&&n| cycle.eligible[t].contains(&n)).map(|&n| pods_fit(cycle, &states[n], t)).sum()
}

fn tasks_of(cycle: &Cycle, g: GroupId) -> Vec<TaskId> {
    let inst = cycle.inst;
    inst.groups[g].tasks.iter().copied().filter(|&t| inst.tasks[t].count > 0).collect()
}

/// Places group `g` on the nodes of `allowed` (first fit), on a copy; the copy if it fits.
fn try_on(
    cycle: &Cycle,
    states: &[NodeState],
    g: GroupId,
    allowed: &[bool],
    fixed: Option<(usize, usize)>,
) -> Option<(Vec<NodeState>, Vec<NewPod>, Option<usize>)> {
    let mut trial = states.to_vec();
    let tasks = tasks_of(cycle, g);
    let (pods, dom) = place_group_min_first(cycle, &mut trial, g, &tasks, &|n| allowed[n], fixed, NodeRule::FirstFit)?;
    Some((trial, pods, dom))
}

fn run(cycle: &Cycle, least_free: bool) -> Assignment {
    let inst = cycle.inst;
    let mut states = cycle.nodes.clone();
    let mut a = Assignment::empty(inst);
    for g in queue_order(cycle) {
        let grp = &inst.groups[g];
        let tasks = tasks_of(cycle, g);
        let Some(&big) = tasks.iter().max_by(|&&x, &&y| {
            greedy::task_size(cycle, x).partial_cmp(&greedy::task_size(cycle, y)).unwrap_or(std::cmp::Ordering::Equal).then(y.cmp(&x))
        }) else {
            continue;
        };
        let level = grp.required.or(grp.preferred);
        let Some(l) = level else {
            if let Some((pods, _)) = greedy::place_group(cycle, &mut states, g) {
                a.pods[g] = pods;
            }
            continue;
        };
        let doms: Vec<usize> = match (grp.required, &cycle.pinned[g]) {
            (Some(_), Some(Err(_))) => vec![],
            (Some(_), Some(Ok(d))) => vec![*d],
            _ => (0..cycle.domain_names[l].len()).collect(),
        };
        let cap: Vec<(i64, usize)> = doms.iter().map(|&d| (capacity(cycle, &states, big, &cycle.domain_nodes[l][d]), d)).collect();
        let mask = |ds: &[usize]| -> Vec<bool> {
            let mut m = vec![false; inst.nodes.len()];
            for &d in ds {
                for &n in &cycle.domain_nodes[l][d] {
                    m[n] = true;
                }
            }
            m
        };
        let mut found: Option<(Vec<NodeState>, Vec<NewPod>, Option<usize>)> = None;
        if grp.required.is_some() {
            // The tightest domain that fits (both profiles).
            let mut asc = cap.clone();
            asc.sort();
            for &(_, d) in &asc {
                if let Some(r) = try_on(cycle, &states, g, &mask(&[d]), Some((l, d))) {
                    found = Some(r);
                    break;
                }
            }
        } else {
            let mut sorted = cap.clone();
            if least_free {
                sorted.sort();
            } else {
                sorted.sort_by_key(|&(c, d)| (std::cmp::Reverse(c), d));
            }
            let order: Vec<usize> = sorted.iter().map(|x| x.1).collect();
            for k in 1..=order.len() {
                if let Some(r) = try_on(cycle, &states, g, &mask(&order[..k]), None) {
                    found = Some(r);
                    if !least_free {
                        // BestFit: the last domain replaced by the tightest one that still fits.
                        let mut rest: Vec<(i64, usize)> = sorted[k - 1..].to_vec();
                        rest.sort();
                        for &(_, d) in &rest {
                            let mut ds = order[..k - 1].to_vec();
                            ds.push(d);
                            if let Some(r2) = try_on(cycle, &states, g, &mask(&ds), None) {
                                found = Some(r2);
                                break;
                            }
                        }
                    }
                    break;
                }
            }
        }
        if let Some((trial, pods, dom)) = found {
            states = trial;
            a.pods[g] = pods;
            a.domain[g] = if grp.required.is_some() { dom } else { None };
        }
    }
    a
}
