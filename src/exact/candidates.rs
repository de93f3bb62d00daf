//! Candidate domains per group, screened in parallel.
//!
//! For every pending group with a required level, each domain of that level gets a
//! verdict for the group *alone* (the rest of the cycle empty, every evictable pod gone):
//!
//! 1. necessary capacity on the rolled-up topology graph — per task, the pods its
//!    eligible nodes there can hold (slices counted whole); per resource, the minimum's
//!    demand against the domain's free total. Failing any: `Infeasible`, with the numbers.
//! 2. a greedy fit (the warm start's rule) on the domain: success proves `Feasible`.
//! 3. otherwise an exact sub-model: the cycle MILP for this group on this domain alone,
//!    `y = 1` fixed — infeasible proves `Infeasible`; a verified solution `Feasible`;
//!    stopped by the deadline: `Unknown` (kept, never pruned).
//!
//! A domain where the group cannot fit even alone cannot host it in any joint placement,
//! so removing it from the joint model is exact. Work is split per group (coarse grains
//! for rayon) and collected in group order, so the verdicts do not depend on the thread
//! count; only an `Unknown` (sub-model deadline) depends on time.

use super::highs::{self, MipParams, MipStatus};
use super::milp::CycleModel;
use super::topology::TopologyGraph;
use crate::engine::cycle::{Cycle, NodeState};
use crate::engine::greedy;
use crate::model::*;
use crate::wire::quantity;
use std::time::Instant;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Feasible,
    Infeasible,
    Unknown,
}

#[derive(Clone, Debug)]
pub struct Candidate {
    pub domain: usize,
    pub verdict: Verdict,
    /// Why it is infeasible, in words (empty otherwise).
    pub why: String,
    /// How close the domain came: the smallest have/need ratio of the capacity checks
    /// (1 when all pass); used to name the closest domains in explanations.
    pub closeness: f64,
    /// How the verdict was reached: 0 capacity check, 1 greedy fit, 2 exact sub-model.
    pub stage: u8,
}

#[derive(Clone, Debug, Default)]
pub struct Screening {
    /// Per group (all groups; empty unless pending with a required level).
    pub candidates: Vec<Vec<Candidate>>,
    pub sub_models: usize,
}

impl Screening {
    pub fn infeasible(&self, g: GroupId, d: usize) -> bool {
        self.candidates[g].iter().any(|c| c.domain == d && c.verdict == Verdict::Infeasible)
    }
}

/// Candidate domains of `g` at its required level: the pinned one, or every domain
/// holding an eligible node of some task.
pub fn candidate_domains(cycle: &Cycle, g: GroupId) -> Vec<usize> {
    let inst = cycle.inst;
    let l = match inst.groups[g].required {
        Some(l) => l,
        None => return Vec::new(),
    };
    match &cycle.pinned[g] {
        Some(Err(_)) => Vec::new(),
        Some(Ok(d)) => vec![*d],
        None => {
            let mut seen = vec![false; cycle.domain_names[l].len()];
            for &t in &inst.groups[g].tasks {
                for &n in &cycle.eligible[t] {
                    if let Some(d) = cycle.domain_of[l][n] {
                        seen[d] = true;
                    }
                }
            }
            (0..seen.len()).filter(|&d| seen[d]).collect()
        }
    }
}

/// Screens every (group, candidate domain) pair; runs on the current rayon pool.
pub fn screen(cycle: &Cycle, topo: &TopologyGraph, deadline: Instant) -> Screening {
    use rayon::prelude::*;
    let inst = cycle.inst;
    let groups: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| inst.groups[g].required.is_some()).collect();
    let per: Vec<(GroupId, Vec<Candidate>, usize)> = groups
        .par_iter()
        // One copy of the node states per rayon job, not per group: every fit restores
        // what it touched, so the copy stays as the cycle began; groups are the grains.
        .map_init(
            || cycle.nodes.clone(),
            |states: &mut Vec<NodeState>, &g| {
                let mut subs = 0;
                let cands = candidate_domains(cycle, g)
                    .into_iter()
                    .map(|d| {
                        let c = evaluate(cycle, topo, states, g, d, deadline);
                        subs += (c.stage == 2) as usize;
                        c
                    })
                    .collect();
                (g, cands, subs)
            },
        )
        .collect();
    let mut s = Screening { candidates: vec![Vec::new(); inst.groups.len()], sub_models: 0 };
    for (g, c, subs) in per {
        s.candidates[g] = c;
        s.sub_models += subs;
    }
    s
}

fn fmt_q(inst: &Instance, r: ResourceId, v: i64) -> String {
    quantity::format(v, inst.scale(r))
}

fn evaluate(cycle: &Cycle, topo: &TopologyGraph, states: &mut Vec<NodeState>, g: GroupId, d: usize, deadline: Instant) -> Candidate {
    let inst = cycle.inst;
    let grp = &inst.groups[g];
    let l = grp.required.expect("screened groups have a required level");
    let dname = &cycle.domain_names[l][d];
    let level = &inst.levels[l];
    let gang = grp.policy == Policy::Gang;
    let mut closeness: f64 = 1.0;
    let mut why: Vec<String> = Vec::new();
    // 1a. Pods per task the domain can hold (each node alone, slices whole).
    let mut cap_total = 0;
    let mut need_total = 0;
    let mut caps = Vec::new();
    for &t in &grp.tasks {
        let task = &inst.tasks[t];
        if task.count == 0 {
            continue;
        }
        // Both lists are sorted by node id; the domain's is the short one.
        let nodes: Vec<NodeId> = cycle.domain_nodes[l][d].iter().copied().filter(|n| cycle.eligible[t].binary_search(n).is_ok()).collect();
        let cap = match task.slice {
            None => nodes.iter().map(|&n| cycle.max_pods(t, n)).sum::<i64>(),
            Some((sl, k)) => {
                let mut per: std::collections::BTreeMap<usize, i64> = Default::default();
                for &n in &nodes {
                    *per.entry(cycle.domain_of[sl][n].unwrap_or(usize::MAX)).or_default() += cycle.max_pods(t, n);
                }
                per.into_iter().filter(|&(sd, _)| sd != usize::MAX).map(|(_, c)| c / k * k).sum()
            }
        }
        .min(task.count);
        let need = if gang {
            match task.slice {
                Some((_, k)) => (task.min_count + k - 1) / k * k,
                None => task.min_count,
            }
        } else {
            0
        };
        if cap < need {
            closeness = closeness.min(cap as f64 / need as f64);
            why.push(format!("task {} fits {cap} of {need} pods", task.name));
        }
        cap_total += cap;
        need_total += need;
        caps.push((t, need));
    }
    let min_new = inst.min_new_pods(g);
    if cap_total < min_new {
        closeness = closeness.min(cap_total as f64 / min_new as f64);
        why.push(format!("room for {cap_total} of {min_new} pods"));
    }
    // 1b. Demand of the minimum per resource against the rolled-up free capacity. Pods
    // beyond the task minimums count at the smallest request of any task.
    let roll = &topo.rollup[l][d];
    let beyond = (min_new - need_total).max(0);
    for r in 0..inst.resources.len() {
        let smallest = grp.tasks.iter().filter(|&&t| inst.tasks[t].count > 0).map(|&t| inst.tasks[t].requests[r]).min().unwrap_or(0);
        let need: i64 = caps.iter().map(|&(t, k)| inst.tasks[t].requests[r] * k).sum::<i64>() + beyond * smallest;
        if need == 0 {
            continue;
        }
        let have = if inst.shared[r] && caps.iter().all(|&(t, _)| inst.tasks[t].requests[r] >= 1000 || inst.tasks[t].requests[r] == 0) {
            // Integral requests need completely free devices.
            roll.whole_devices[r] * 1000
        } else {
            roll.free[r]
        };
        if have < need {
            closeness = closeness.min(have as f64 / need as f64);
            why.push(format!("needs {} {}, has {} free", fmt_q(inst, r, need), inst.resources[r], fmt_q(inst, r, have)));
        }
    }
    let mk = |verdict, why: String, stage| Candidate { domain: d, verdict, why, closeness, stage };
    if !why.is_empty() {
        return mk(Verdict::Infeasible, format!("{level} {dname}: {}", why.join("; ")), 0);
    }
    // 2. Greedy fit.
    if greedy::fits_alone_in(cycle, states, g, d) {
        return mk(Verdict::Feasible, String::new(), 1);
    }
    // 3. Exact sub-model of the group alone in the domain.
    match exact_alone(cycle, g, l, d, deadline) {
        Some(true) => mk(Verdict::Feasible, String::new(), 2),
        Some(false) => Candidate {
            closeness: closeness.min(0.999),
            ..mk(Verdict::Infeasible, format!("{level} {dname}: no packing even alone (exact)"), 2)
        },
        None => mk(Verdict::Unknown, String::new(), 2),
    }
}

/// The cycle MILP restricted to group `g` in domain `d` of level `l`, with every
/// evictable pod there gone: `Some(feasible)` when proven, `None` at the deadline.
fn exact_alone(cycle: &Cycle, g: GroupId, l: usize, d: usize, deadline: Instant) -> Option<bool> {
    let inst = cycle.inst;
    let mut nodes = cycle.nodes.clone();
    for &n in &cycle.domain_nodes[l][d] {
        let (free, devices) = cycle.reachable(n);
        nodes[n] = NodeState { free, devices };
    }
    let eligible = (0..inst.tasks.len())
        .map(|t| {
            if inst.tasks[t].group != g {
                return Vec::new();
            }
            cycle.eligible[t].iter().copied().filter(|&n| cycle.domain_of[l][n] == Some(d)).collect()
        })
        .collect();
    let sub = Cycle {
        inst,
        pending: vec![g],
        shared_ids: cycle.shared_ids.clone(),
        nodes,
        eligible,
        domain_of: cycle.domain_of.clone(),
        domain_names: cycle.domain_names.clone(),
        domain_nodes: cycle.domain_nodes.clone(),
        pinned: cycle.pinned.clone(),
        victims: Vec::new(),
        victims_on: vec![Vec::new(); inst.nodes.len()],
        rejected: cycle.rejected.clone(),
        yunikorn: None,
        notes: Vec::new(),
        max_allocatable: cycle.max_allocatable.clone(),
        diag: cycle.diag.clone(),
        cancel: cycle.cancel.clone(),
        work: cycle.work,
    };
    let model = CycleModel::build(&sub);
    let mut mip = model.mip.clone();
    let (_, coefs, _) = model.term1_weights(&sub);
    for &(c, _) in &coefs {
        mip.col_lower[c] = 1.0;
    }
    let res = highs::solve(&mip, None, &MipParams::of_cycle(deadline, 0.0, 0.5, cycle));
    match res.status {
        MipStatus::Infeasible => Some(false),
        MipStatus::Optimal | MipStatus::Interrupted if model.verified(&res.values).is_some() => Some(true),
        _ => None,
    }
}

/// Removes from the group's eligible nodes every domain where it cannot fit alone, and
/// records the per-level explanation of groups left with no domain at all.
pub fn prune(cycle: &mut Cycle, s: &Screening) {
    let inst = cycle.inst;
    for &g in &cycle.pending.clone() {
        let l = match inst.groups[g].required {
            Some(l) => l,
            None => continue,
        };
        let cands = &s.candidates[g];
        // A gang with a needed task no node can run is never placed anyway; its
        // explanation names the filter, so leave it as it is.
        let grp = &inst.groups[g];
        let unrunnable =
            grp.policy == Policy::Gang && grp.tasks.iter().any(|&t| inst.tasks[t].min_count > 0 && cycle.eligible[t].is_empty());
        if cands.is_empty() || unrunnable {
            continue;
        }
        for &t in &inst.groups[g].tasks {
            let dom_of = &cycle.domain_of[l];
            cycle.eligible[t].retain(|&n| dom_of[n].is_none_or(|d| !s.infeasible(g, d)));
        }
        if cands.iter().all(|c| c.verdict == Verdict::Infeasible) {
            let mut close: Vec<&Candidate> = cands.iter().collect();
            close.sort_by(|a, b| b.closeness.partial_cmp(&a.closeness).unwrap_or(std::cmp::Ordering::Equal).then(a.domain.cmp(&b.domain)));
            let list: Vec<&str> = close.iter().take(3).map(|c| c.why.as_str()).collect();
            let level = &inst.levels[l];
            cycle.notes[g] = Some(format!(
                "required {level}: no single {level} can hold its minimum even alone ({} checked); closest: {}",
                cands.len(),
                list.join(" | ")
            ));
        }
    }
}
