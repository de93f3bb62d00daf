//! Rule 6 for the solvers that evict greedily: an eviction must be needed by the groups
//! allowed to make it (semantics.md). With the unit put back and the new pods of every
//! group that could not evict it set aside, some hard rule must break: capacity or a
//! device on one of its nodes, or a queue's `max` / `maxapplications`.
//!
//! [`enforce`] repairs an assignment until that holds for every eviction: an unneeded
//! eviction is undone when the unit fits back beside everything placed; when it does not,
//! a group that may not evict it is using its room, and the lowest-ranked such group is
//! taken out (a priority inversion is never kept). The exact engine states the same rule
//! as rows (`exact/witness.rs`); the validator checks it with its own code.

use super::assignment::Assignment;
use super::cycle::{Cycle, UNLIMITED};
use crate::model::*;
use std::collections::BTreeSet;

/// Leaves only needed evictions in `a` (see the module documentation). Groups are taken
/// out lowest rank first, then latest first; units are examined most important first.
///
/// The groups `kept` stay placed where they can: when only kept groups use the room of
/// an unneeded eviction (a group placed before, which may not evict the unit, sitting
/// where later victims left room), the placed groups that are not kept and have pods on
/// the unit's nodes are taken out instead, lowest rank first, until the unit fits back. A
/// search that adds groups to a valid assignment keeps what it started from this way,
/// rather than losing an earlier group, possibly of higher priority, to rule 6. Returns
/// the groups taken out this way.
pub fn enforce(cycle: &Cycle, a: &mut Assignment, kept: &dyn Fn(GroupId) -> bool) -> Vec<GroupId> {
    let mut instead = Vec::new();
    if a.evicted.is_empty() {
        return instead;
    }
    let need = NeedTest::new(cycle);
    loop {
        let mut order = a.evicted.clone();
        order.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), u));
        let Some(u) = order.into_iter().find(|&u| !need.is_needed(a, u)) else {
            return instead;
        };
        if !breaks(cycle, &need.on, a, u, &|g| a.is_placed(g)) {
            a.evicted.retain(|&v| v != u);
            continue;
        }
        let taker = room_taker(cycle, a, u, &|g| !cycle.may_preempt(g, u) && !kept(g)).or_else(|| {
            // Only kept groups use the room: a group not kept with pods there goes instead.
            let held = room_taker(cycle, a, u, &|g| !cycle.may_preempt(g, u))?;
            let other = room_taker(cycle, a, u, &|g| !kept(g));
            instead.extend(other);
            Some(other.unwrap_or(held))
        });
        match taker {
            Some(g) => {
                a.pods[g].clear();
                a.domain[g] = None;
            }
            // Unreachable: without a group set aside, "not needed" means it fits back.
            None => return instead,
        }
    }
}

/// The rule-6 test for one eviction at a time, for searches that ask it often: the bound
/// pods are indexed by node once.
pub struct NeedTest<'c> {
    cycle: &'c Cycle<'c>,
    on: PodsOn,
}

impl<'c> NeedTest<'c> {
    pub fn new(cycle: &'c Cycle<'c>) -> NeedTest<'c> {
        NeedTest { cycle, on: PodsOn::new(cycle) }
    }

    /// Whether the eviction of unit `u` in `a` is needed by the placed groups that may
    /// preempt it (see the module documentation).
    pub fn is_needed(&self, a: &Assignment, u: usize) -> bool {
        let cycle = self.cycle;
        breaks(cycle, &self.on, a, u, &|g| a.is_placed(g) && cycle.may_preempt(g, u))
    }

    /// Whether the eviction of unit `u` in `a` is a priority inversion that a group
    /// `kept` takes part in: not needed by the groups allowed to make it, not fitting back
    /// beside everything placed, and a kept group that may not make it using its room.
    pub fn inverted_with(&self, a: &Assignment, u: usize, kept: &dyn Fn(GroupId) -> bool) -> bool {
        let cycle = self.cycle;
        !self.is_needed(a, u)
            && breaks(cycle, &self.on, a, u, &|g| a.is_placed(g))
            && room_taker(cycle, a, u, &|g| kept(g) && !cycle.may_preempt(g, u)).is_some()
    }
}

/// Bound pods per node.
struct PodsOn(Vec<Vec<PodId>>);

impl PodsOn {
    fn new(cycle: &Cycle) -> PodsOn {
        let mut on = vec![Vec::new(); cycle.inst.nodes.len()];
        for (p, pod) in cycle.inst.pods.iter().enumerate() {
            on[pod.node].push(p);
        }
        PodsOn(on)
    }
}

/// The bound pods that stay: not in an evicted unit.
fn kept(cycle: &Cycle, a: &Assignment) -> Vec<bool> {
    let mut keep = vec![true; cycle.inst.pods.len()];
    for &u in &a.evicted {
        for &p in &cycle.victims[u].pods {
            keep[p] = false;
        }
    }
    keep
}

/// Whether unit `u`, put back beside the kept pods and the new pods of the groups `counted`,
/// breaks capacity, a device or a queue limit.
fn breaks(cycle: &Cycle, on: &PodsOn, a: &Assignment, u: usize, counted: &dyn Fn(GroupId) -> bool) -> bool {
    let inst = cycle.inst;
    let mut keep = kept(cycle, a);
    for &p in &cycle.victims[u].pods {
        keep[p] = true;
    }
    let nodes: BTreeSet<NodeId> = cycle.victims[u].pods.iter().map(|&p| inst.pods[p].node).collect();
    nodes.iter().any(|&n| node_breaks(cycle, &on.0[n], a, (u, n), &keep, counted)) || queue_breaks(cycle, a, u, &keep, counted)
}

fn node_breaks(
    cycle: &Cycle,
    here: &[PodId],
    a: &Assignment,
    (u, n): (usize, NodeId),
    keep: &[bool],
    counted: &dyn Fn(GroupId) -> bool,
) -> bool {
    let inst = cycle.inst;
    let node = &inst.nodes[n];
    let mine: Vec<PodId> = cycle.victims[u].pods.iter().copied().filter(|&p| inst.pods[p].node == n).collect();
    let news: Vec<&super::assignment::NewPod> =
        cycle.pending.iter().filter(|&&g| counted(g)).flat_map(|&g| &a.pods[g]).filter(|p| p.node == n).collect();
    for r in 0..inst.resources.len() {
        let back: i64 = mine.iter().map(|&p| inst.pods[p].requests[r]).sum();
        if inst.shared[r] || back == 0 || cycle.nodes[n].free[r] == UNLIMITED {
            continue;
        }
        let bound: i64 = here.iter().filter(|&&p| keep[p]).map(|&p| inst.pods[p].requests[r]).sum();
        let new: i64 = news.iter().map(|p| inst.tasks[p.task].requests[r]).sum();
        if bound + new > node.allocatable[r] {
            return true;
        }
    }
    // Devices the unit holds: whole users count 1000, so exclusivity is "above 1000" too.
    for &r in &cycle.shared_ids {
        for d in mine.iter().flat_map(|&p| inst.pods[p].devices.get(&r).cloned().unwrap_or_default()) {
            let use_of = |req: i64| req.min(1000);
            let bound: i64 = here
                .iter()
                .filter(|&&p| keep[p] && inst.pods[p].devices.get(&r).is_some_and(|ids| ids.contains(&d)))
                .map(|&p| use_of(inst.pods[p].requests[r]))
                .sum();
            let new: i64 = news
                .iter()
                .filter(|p| p.devices.get(&r).is_some_and(|ids| ids.contains(&d)))
                .map(|p| use_of(inst.tasks[p.task].requests[r]))
                .sum();
            if bound + new > 1000 {
                return true;
            }
        }
    }
    false
}

fn queue_breaks(cycle: &Cycle, a: &Assignment, u: usize, keep: &[bool], counted: &dyn Fn(GroupId) -> bool) -> bool {
    let inst = cycle.inst;
    let Some(queues) = &inst.queues else { return false };
    let Some(own) = cycle.victims[u].pods.first().and_then(|&p| inst.pods[p].group) else { return false };
    let Some(leaf) = inst.groups[own].queue_id else { return false };
    for q in queues.tree.ancestors(leaf) {
        let under = &queues.groups_under[q];
        let in_q = |g: &GroupId| under.contains(g);
        for &(r, max) in &queues.max[q] {
            if cycle.victims[u].pods.iter().all(|&p| inst.pods[p].requests[r] == 0) {
                continue;
            }
            let bound: i64 = under
                .iter()
                .flat_map(|&g| &inst.groups[g].bound)
                .filter(|&&p| keep[p] && !inst.pods[p].releasing)
                .map(|&p| inst.pods[p].requests[r])
                .sum();
            let new: i64 = under.iter().filter(|&&g| counted(g)).flat_map(|&g| &a.pods[g]).map(|p| inst.tasks[p.task].requests[r]).sum();
            if bound + new > max {
                return true;
            }
        }
        if let Some(m) = queues.tree.queues[q].max_applications {
            let running = inst
                .groups
                .iter()
                .enumerate()
                .filter(|(g, _)| in_q(g))
                .filter(|&(g, grp)| grp.bound.iter().any(|&p| keep[p] && !inst.pods[p].releasing) || (a.is_placed(g) && counted(g)))
                .count() as u64;
            if running > m {
                return true;
            }
        }
    }
    false
}

/// The group to take out so that `u` can come back: a placed group among `eligible` that
/// uses its room (a new pod on one of its nodes, or one in a queue on its path); lowest
/// rank first, then the latest in input order.
fn room_taker(cycle: &Cycle, a: &Assignment, u: usize, eligible: &dyn Fn(GroupId) -> bool) -> Option<GroupId> {
    let inst = cycle.inst;
    let nodes: BTreeSet<NodeId> = cycle.victims[u].pods.iter().map(|&p| inst.pods[p].node).collect();
    let path: Vec<usize> = cycle.victims[u]
        .pods
        .first()
        .and_then(|&p| inst.pods[p].group)
        .and_then(|g| inst.groups[g].queue_id)
        .zip(inst.queues.as_ref())
        .map(|(leaf, qs)| qs.tree.ancestors(leaf).collect())
        .unwrap_or_default();
    let in_path = |g: GroupId| inst.queues.as_ref().is_some_and(|qs| path.iter().any(|&q| qs.groups_under[q].contains(&g)));
    cycle
        .pending
        .iter()
        .copied()
        .filter(|&g| a.is_placed(g) && eligible(g))
        .filter(|&g| a.pods[g].iter().any(|p| nodes.contains(&p.node)) || in_path(g))
        .min_by_key(|&g| (inst.groups[g].rank, std::cmp::Reverse(inst.groups[g].order)))
}
