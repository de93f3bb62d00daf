//! Why a group was not placed, in words a person can act on.
//!
//! Reasons are found from the most specific to the least: a bound-member conflict, a
//! task no node can run (which filter), a pod larger than any free node, a minimum that
//! exceeds what all eligible nodes (or the best domain) have free, and only then
//! competition with the groups that were placed.

use super::assignment::Assignment;
use super::cycle::{filter_failure, Cycle};
use super::greedy;
use crate::model::*;
use crate::wire::decision::ReasonCode;
use crate::wire::quantity;
use std::collections::BTreeMap;

/// How much of the objective the decision is proven optimal on: it decides whether "not
/// placed" can be blamed on the groups that were placed or only on the time budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proven {
    Nothing,
    /// Term 1 (groups placed per priority) only: the budget ended in a later term.
    Term1,
    /// Terms 1-3 (status `Optimal`).
    All,
}

/// Per unplaced group: its reason code (instance-format.md, "Reason codes") and the text.
pub fn reasons(cycle: &Cycle, a: &Assignment, proven: Proven) -> BTreeMap<GroupId, (ReasonCode, String)> {
    use rayon::prelude::*;
    let unplaced: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| !a.is_placed(g)).collect();
    unplaced.into_par_iter().map(|g| (g, reason(cycle, a, g, proven))).collect()
}

/// A needed task whose pod fits no node even on an empty cluster view: no node passes its
/// filters with allocatable for its requests. A minimum above the group's pods counts as
/// such a task too: the pods it lacks fit nowhere.
pub fn fits_no_node(inst: &Instance, g: GroupId) -> Option<String> {
    let grp = &inst.groups[g];
    if grp.policy == Policy::Gang && grp.min_count > inst.max_new_pods(g) + grp.bound.len() as i64 {
        return Some(format!(
            "group minCount {} exceeds its {} pending and {} running pods: it cannot start until more pods exist",
            grp.min_count,
            inst.max_new_pods(g),
            grp.bound.len()
        ));
    }
    if grp.policy == Policy::Gang {
        for &t in &grp.tasks {
            let task = &inst.tasks[t];
            if let Some((_, k)) = task.slice {
                let need = (task.min_count + k - 1) / k * k;
                if need > task.count {
                    return Some(format!(
                        "task {}: minCount {} needs {} pods in slices of {k}, but count is {}",
                        task.name, task.min_count, need, task.count
                    ));
                }
            }
        }
    }
    for t in needed_tasks(inst, g) {
        let task = &inst.tasks[t];
        let passing: Vec<NodeId> = (0..inst.nodes.len()).filter(|&n| filter_failure(inst, t, n).is_none()).collect();
        let fits = |n: NodeId| task.requests.iter().zip(&inst.nodes[n].allocatable).all(|(&q, &have)| q <= have);
        if passing.iter().any(|&n| fits(n)) {
            continue;
        }
        if passing.is_empty() {
            return Some(no_node_passes(inst, t));
        }
        // Nodes pass the filters, but none has the allocatable: name what is too large.
        let mut over: Vec<String> = Vec::new();
        for r in 0..inst.resources.len() {
            let q = task.requests[r];
            let most = passing.iter().map(|&n| inst.nodes[n].allocatable[r]).max().unwrap_or(0);
            if q > most {
                over.push(format!(
                    "{} {} (largest allocatable on a matching node: {})",
                    inst.resources[r],
                    fmt_q(inst, r, q),
                    fmt_q(inst, r, most)
                ));
            }
        }
        if over.is_empty() {
            over.push("a combination of resources no matching node has at once".into());
        }
        return Some(format!("task {}: no node can hold one pod even when empty: needs {}", task.name, over.join(", ")));
    }
    None
}

/// Task `t` passes the filters of no node: the three commonest failures, with counts.
fn no_node_passes(inst: &Instance, t: TaskId) -> String {
    let mut why: BTreeMap<String, usize> = BTreeMap::new();
    for n in 0..inst.nodes.len() {
        if let Some(f) = filter_failure(inst, t, n) {
            *why.entry(f).or_default() += 1;
        }
    }
    let mut parts: Vec<(usize, String)> = why.into_iter().map(|(k, v)| (v, k)).collect();
    parts.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    let list: Vec<String> = parts.iter().take(3).map(|(c, f)| format!("{c} fail {f}")).collect();
    format!("task {}: no node passes the filters ({} nodes: {})", inst.tasks[t].name, inst.nodes.len(), list.join(", "))
}

fn fmt_q(inst: &Instance, r: ResourceId, v: i64) -> String {
    quantity::format(v, inst.scale(r))
}

fn needed_tasks(inst: &Instance, g: GroupId) -> Vec<TaskId> {
    let grp = &inst.groups[g];
    grp.tasks.iter().copied().filter(|&t| inst.tasks[t].count > 0 && (grp.policy == Policy::Basic || inst.tasks[t].min_count > 0)).collect()
}

/// The code and text of one unplaced group: the codes in the spec's order, each text the
/// most specific one for its code.
fn reason(cycle: &Cycle, a: &Assignment, g: GroupId, proven: Proven) -> (ReasonCode, String) {
    let inst = cycle.inst;
    if let Some(why) = fits_no_node(inst, g) {
        return (ReasonCode::NoNodeFits, why);
    }
    if let Some(why) = topology_reason(cycle, g) {
        return (ReasonCode::TopologyDomainTooSmall, why);
    }
    if let Some(why) = &cycle.rejected[g] {
        return (ReasonCode::QueueRejected, why.clone());
    }
    // Queue quota left after this cycle's placements (rule 7).
    if let Some(why) = super::ledger::Ledger::settled(cycle, a).and_then(|l| l.blocking(g)) {
        return (ReasonCode::QueueFull, why);
    }
    if let Some(why) = capacity_reason(cycle, g) {
        let code = if inst.groups[g].required.is_some() && why.contains(" in one ") {
            ReasonCode::TopologyDomainTooSmall
        } else {
            ReasonCode::NotAllowedToPreempt
        };
        return (code, why);
    }
    competition_reason(cycle, a, g, proven)
}

/// Required topology that no domain can meet: bound members already apart, no domain
/// with nodes for every task, or the screening found none that holds the group alone.
fn topology_reason(cycle: &Cycle, g: GroupId) -> Option<String> {
    let inst = cycle.inst;
    let grp = &inst.groups[g];
    if let Some(Err(why)) = &cycle.pinned[g] {
        return Some(why.clone());
    }
    let tasks = needed_tasks(inst, g);
    // 0b. Required topology: some domain must have room for every needed task at all.
    if let (Some(l), None) = (grp.required, &cycle.pinned[g]) {
        let doms_of =
            |t: TaskId| -> std::collections::BTreeSet<usize> { cycle.eligible[t].iter().filter_map(|&n| cycle.domain_of[l][n]).collect() };
        let mut common: Option<std::collections::BTreeSet<usize>> = None;
        for &t in &tasks {
            let d = doms_of(t);
            common = Some(match common {
                None => d,
                Some(c) => c.intersection(&d).copied().collect(),
            });
        }
        if common.is_some_and(|c| c.is_empty()) && tasks.iter().all(|&t| !cycle.eligible[t].is_empty()) {
            let per: Vec<String> = tasks
                .iter()
                .map(|&t| {
                    let names: Vec<&str> = doms_of(t).iter().take(3).map(|&d| cycle.domain_names[l][d].as_str()).collect();
                    format!("task {}: {}", inst.tasks[t].name, names.join(", "))
                })
                .collect();
            return Some(format!("no single {} has nodes for every task ({})", inst.levels[l], per.join("; ")));
        }
    }
    // Screening of the required level's domains: none holds it even alone.
    cycle.notes.get(g).cloned().flatten()
}

/// The group's minimum against what the nodes have free, counting the evictions it may
/// make: a task no node passes, one pod larger than any free node, a gang task above what
/// its nodes hold, or the whole minimum above the free room (of the best domain).
fn capacity_reason(cycle: &Cycle, g: GroupId) -> Option<String> {
    let inst = cycle.inst;
    let grp = &inst.groups[g];
    let tasks = needed_tasks(inst, g);
    // 1. Filters.
    for &t in &tasks {
        let task = &inst.tasks[t];
        let passing: Vec<NodeId> = (0..inst.nodes.len()).filter(|&n| filter_failure(inst, t, n).is_none()).collect();
        if passing.is_empty() {
            return Some(no_node_passes(inst, t));
        }
        if let Some(l) = grp.required {
            if passing.iter().all(|&n| cycle.domain_of[l][n].is_none()) {
                return Some(format!("task {}: no node that passes the filters has a {} label", task.name, inst.levels[l]));
            }
        }
        // 2. A single pod larger than any free node.
        if cycle.eligible[t].is_empty() {
            let mut req: Vec<String> = Vec::new();
            for r in 0..inst.resources.len() {
                let q = task.requests[r];
                if q == 0 {
                    continue;
                }
                let best = passing.iter().map(|&n| free_for(cycle, n, r, q)).max().unwrap_or(0);
                let best = if inst.shared[r] && q < 1000 {
                    // A share must fit in one device: report the largest single share.
                    passing.iter().map(|&n| largest_share(cycle, n, r)).max().unwrap_or(0)
                } else {
                    best
                };
                if best < q {
                    req.push(format!(
                        "{} {} (most free on a matching node: {})",
                        inst.resources[r],
                        fmt_q(inst, r, q),
                        fmt_q(inst, r, best)
                    ));
                }
            }
            if req.is_empty() {
                req.push("a combination of resources no single node has free at once".into());
            }
            return Some(format!("task {}: no matching node has room for one pod: needs {}", task.name, req.join(", ")));
        }
    }
    // 2b. Each node alone: how many pods of the task it could hold at most.
    if grp.policy == Policy::Gang {
        for &t in &tasks {
            let task = &inst.tasks[t];
            let per: Vec<(NodeId, i64)> = cycle.eligible[t].iter().map(|&n| (n, cycle.max_pods(t, n))).collect();
            let total: i64 = per.iter().map(|p| p.1).sum();
            if total < task.min_count {
                let mut list: Vec<String> = per.iter().take(4).map(|&(n, k)| format!("{}: {k}", inst.nodes[n].name)).collect();
                if per.len() > 4 {
                    list.push(format!("{} more nodes", per.len() - 4));
                }
                return Some(format!(
                    "task {}: needs {} pods, but the matching nodes hold at most {total} ({})",
                    task.name,
                    task.min_count,
                    list.join(", ")
                ));
            }
        }
    }
    // 3. Aggregate demand of the minimum versus what eligible nodes have free.
    let min_pods = |t: TaskId| if grp.policy == Policy::Basic { 0 } else { inst.tasks[t].min_count };
    let scope: Vec<Option<usize>> = match grp.required {
        None => vec![None],
        Some(l) => match &cycle.pinned[g] {
            Some(Ok(d)) => vec![Some(*d)],
            _ => (0..cycle.domain_names[l].len()).map(Some).collect(),
        },
    };
    let mut shortfalls: Vec<(String, i64, i64, Option<usize>)> = Vec::new(); // (resource, need, have, domain)
    for r in 0..inst.resources.len() {
        let need: i64 = tasks.iter().map(|&t| inst.tasks[t].requests[r] * min_pods(t)).sum();
        if need == 0 {
            continue;
        }
        let mut best: Option<(i64, Option<usize>)> = None;
        for &dom in &scope {
            let mut nodes: Vec<NodeId> = tasks.iter().flat_map(|&t| cycle.eligible[t].iter().copied()).collect();
            nodes.sort_unstable();
            nodes.dedup();
            let have: i64 = nodes
                .into_iter()
                .filter(|&n| dom.is_none_or(|d| cycle.domain_of[grp.required.unwrap()][n] == Some(d)))
                .map(|n| free_for(cycle, n, r, 1).min(super::cycle::UNLIMITED / 1024))
                .sum();
            if best.is_none_or(|b| have > b.0) {
                best = Some((have, dom));
            }
        }
        if let Some((have, dom)) = best {
            if have < need {
                shortfalls.push((inst.resources[r].clone(), need, have, dom));
                let (name, need, have, dom) = shortfalls.last().unwrap();
                let r = inst.resource_id(name).unwrap();
                return Some(match (grp.required, dom) {
                    (Some(l), Some(d)) => format!(
                        "needs {} {name} in one {}; best {} {} has {} free",
                        fmt_q(inst, r, *need),
                        inst.levels[l],
                        inst.levels[l],
                        cycle.domain_names[l][*d],
                        fmt_q(inst, r, *have)
                    ),
                    _ => format!(
                        "needs {} {name} for its minimum of {} pods; matching nodes have {} free",
                        fmt_q(inst, r, *need),
                        inst.min_new_pods(g),
                        fmt_q(inst, r, *have)
                    ),
                });
            }
        }
    }
    None
}

/// Nothing rules the group out on its own: it competes with the placed groups. They may
/// be blamed only as far as the decision is proven.
fn competition_reason(cycle: &Cycle, a: &Assignment, g: GroupId, proven: Proven) -> (ReasonCode, String) {
    let inst = cycle.inst;
    let grp = &inst.groups[g];
    // 4. Would it fit alone, in the cluster as it was before this cycle?
    let mut states = cycle.nodes.clone();
    let alone = greedy::place_group(cycle, &mut states, g).is_some();
    let competitors: Vec<&str> = cycle
        .pending
        .iter()
        .copied()
        .filter(|&h| a.is_placed(h) && inst.groups[h].rank >= grp.rank)
        .map(|h| inst.groups[h].name.as_str())
        .collect();
    let list = |v: &[&str]| -> String {
        let mut s = v.iter().take(3).copied().collect::<Vec<_>>().join(", ");
        if v.len() > 3 {
            s.push_str(&format!(" and {} more", v.len() - 3));
        }
        s
    };
    let what = match grp.required {
        Some(l) => format!(" (in one {})", inst.levels[l]),
        None => String::new(),
    };
    let alone_note = if alone { format!("it fits alone{what}") } else { format!("first fit finds no room for it even alone{what}") };
    // Term 1 proven is enough to blame the placed groups: a decision that also placed
    // this one, keeping every placed group of equal or higher priority, would have a
    // better term 1.
    let terms = match proven {
        Proven::Nothing => return (ReasonCode::Budget, format!("no placement found within the time budget; {alone_note}")),
        Proven::Term1 => "objective term 1 (groups placed per priority; proven optimal, later terms were not)",
        Proven::All => "objective terms 1-3 (proven)",
    };
    if competitors.is_empty() {
        // Proven unplaceable, and nothing of equal or higher priority is in its way: what
        // blocks it are pods it may not evict.
        (
            ReasonCode::NotAllowedToPreempt,
            format!("cannot be added to this cycle's placements without a worse result on {terms}; {alone_note}"),
        )
    } else {
        let proof = if proven == Proven::All { "proven optimal" } else { "term 1 proven optimal" };
        let code = if alone { ReasonCode::Outranked } else { ReasonCode::NotAllowedToPreempt };
        (
            code,
            format!(
                "cannot be added without displacing a placed group of equal or higher priority ({}) ({proof}); {alone_note}",
                list(&competitors)
            ),
        )
    }
}

/// Free amount of resource `r` on node `n` usable by pods requesting `q` of it
/// (shared devices: whole free devices for integral requests, largest share otherwise).
/// (Evictions the group may make there included.)
fn free_for(cycle: &Cycle, n: NodeId, r: ResourceId, q: i64) -> i64 {
    let inst = cycle.inst;
    let (free, devices) = cycle.reachable(n);
    if inst.shared[r] {
        let si = cycle.shared_ids.iter().position(|&x| x == r).unwrap();
        if q >= 1000 {
            devices[si].iter().filter(|&&f| f == 1000).count() as i64 * 1000
        } else {
            devices[si].iter().map(|&f| f.max(0)).sum()
        }
    } else {
        free[r].max(0)
    }
}

fn largest_share(cycle: &Cycle, n: NodeId, r: ResourceId) -> i64 {
    let si = cycle.shared_ids.iter().position(|&x| x == r).unwrap();
    cycle.reachable(n).1[si].iter().copied().max().unwrap_or(0).max(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::assignment::NewPod;

    /// `high` (priority 10, 3 cpu) took the 4-cpu node; `low` (2 cpu) fits alone but
    /// not beside it. Whether the reason may blame `high` depends on what is proven.
    #[test]
    fn the_reason_blames_placed_groups_only_when_term_1_is_proven() {
        let yaml = "nodes:\n  - {name: n1, allocatable: {cpu: \"4\"}}\npodGroups:
  - {name: high, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"3\"}}]}
  - {name: low, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}\n";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let mut a = Assignment::empty(&inst);
        a.pods[0].push(NewPod { task: inst.groups[0].tasks[0], node: 0, devices: Default::default() });
        let why = |p| reasons(&cycle, &a, p)[&1].1.clone();
        let code = |p| reasons(&cycle, &a, p)[&1].0;
        assert_eq!((code(Proven::Nothing), code(Proven::Term1)), (ReasonCode::Budget, ReasonCode::Outranked));
        assert_eq!(why(Proven::Nothing), "no placement found within the time budget; it fits alone");
        assert_eq!(
            why(Proven::Term1),
            "cannot be added without displacing a placed group of equal or higher priority (high) (term 1 proven optimal); it fits alone"
        );
        assert_eq!(
            why(Proven::All),
            "cannot be added without displacing a placed group of equal or higher priority (high) (proven optimal); it fits alone"
        );
    }
}
