//! Incumbent moves that clear room: ruin and recreate with evictions, relocation, and
//! fewer evictions.
//!
//! The plain move ([`crate::engine::greedy::ruin_and_recreate`]) leaves alone every node
//! where the incumbent evicts and every group with a pod on one, so that no eviction
//! loses the pods that need it. In cycles with heavy preemption nearly every placed group
//! evicts, and a left-out group that fits nowhere, even with every victim it may evict
//! removed, stays out: the room it needs is held by placed groups that could go elsewhere.
//! The first move, [`with_evictions`], clears a few nodes of their pending groups, gives
//! back the evictions no new pod then sits beside, and places the left-out group and the
//! groups taken off again with the Kubernetes-style preemption run
//! ([`k8s_preempt::preempt_from`]: first fit, else lower-priority victims removed and
//! reprieved), keeping the result only when it beats the incumbent under terms 1-3.
//!
//! The second move, [`by_relocation`], clears nodes without taking any group off: the new
//! pods there move one by one to other nodes, so a gang that needs whole nodes finds them
//! even where every node holds a pod or two of groups that are placed everywhere.
//!
//! The third move, [`fewer_evictions`], serves the eviction tiers: the groups beside an
//! eviction at the priority being lowered are placed again with only lower victims
//! evicted.

use crate::baselines::k8s_preempt;
use crate::engine::assignment::{beats, Assignment, NewPod};
use crate::engine::cycle::{Cycle, NodeState};
use crate::engine::greedy;
use crate::engine::ledger::Ledger;
use crate::exact::repair;
use crate::model::*;
use std::collections::BTreeMap;
use std::time::Instant;

/// Most node sets tried per left-out group (each try is a preemption run).
const TRIES: usize = 3;

/// Most left-out groups one pass tries.
const GROUPS: usize = 16;

/// Most left-out groups one pass of [`by_relocation`] tries: its tries cost less than a
/// preemption run, and the gangs it is for come last, smallest first.
const RELOCATED: usize = 64;

/// Most groups one try takes off: each is placed again by a preemption run.
const MOST_RUINED: usize = 8;

/// Most evictions one try gives back: each unit given back may be evicted and reprieved
/// again, and a try's time grows with them (`models/decomposition.md` §6).
const MOST_GIVEN_BACK: usize = 64;

/// Places left-out groups of priority level `rank` by ruin and recreate with evictions:
/// for each, smallest first ([`greedy::small_first_order`]), the pending groups with pods
/// on the nodes chosen by [`clearable`] are taken off wholly, evictions beside no new pod
/// are given back, and the group and those taken off (largest first) are placed again by
/// [`k8s_preempt::preempt_from`]. A move is kept when it beats `a` under terms 1-3; each
/// try starts one node further down the list. Stops at `until`. Returns how many moves
/// it kept.
pub fn with_evictions(cycle: &Cycle, a: &mut Assignment, rank: i64, until: Option<Instant>) -> usize {
    let inst = cycle.inst;
    let left: Vec<GroupId> =
        greedy::small_first_order(cycle).into_iter().filter(|&g| inst.groups[g].rank == rank && !a.is_placed(g)).collect();
    let largest_first = greedy::ffd_order(cycle);
    let mut kept = 0;
    // Groups no try placed: one alike to them would fail the same tries.
    let mut failed: Vec<GroupId> = Vec::new();
    for g in left.into_iter().take(GROUPS) {
        if a.is_placed(g) || failed.iter().any(|&h| greedy::alike(cycle, g, h)) {
            continue;
        }
        let Some(&big) = greedy::tasks_largest_first(cycle, g).first() else { continue };
        let cands = clearable(cycle, a, g, big);
        let need = inst.min_new_pods(g).max(1);
        for first in 0..TRIES.min(cands.len()) {
            if until.is_some_and(|t| Instant::now() >= t) {
                return kept;
            }
            let Some(nodes) = greedy::node_set(&cands, first, need) else { break };
            if let Some(better) = recreate(cycle, a, g, &nodes, &largest_first) {
                *a = better;
                kept += 1;
                break;
            }
        }
        if !a.is_placed(g) {
            failed.push(g);
        }
    }
    kept
}

/// Places left-out groups of priority level `rank` on nodes cleared by moving the new pods
/// there elsewhere, pod by pod: the groups that own them stay placed. For each left-out
/// group, smallest first (at most [`RELOCATED`]), with no required level, sliced task or
/// running member: the nodes [`relocatable`] lists are taken in order until they hold its
/// minimum, their new pods are taken off and the evictions beside no new pod given back;
/// the group's minimum pods go on those nodes (evicting there, lowest priority first,
/// what it may evict), then each pod taken off goes, largest first, to the first node
/// with room, else to the one whose evictions weigh least
/// ([`repair::place_evicting_lower`]). A pod that finds no room takes its group off when
/// that group is below `rank`, else the try fails. A move is kept when it beats `a` under
/// terms 1-3; up to [`TRIES`] node sets per group, each one node further down the list.
/// Stops at `until`. Returns how many moves it kept.
pub fn by_relocation(cycle: &Cycle, a: &mut Assignment, rank: i64, until: Option<Instant>) -> usize {
    let inst = cycle.inst;
    let plain = |g: GroupId| {
        let grp = &inst.groups[g];
        grp.bound.is_empty() && grp.tasks.iter().all(|&t| repair::movable(inst, t))
    };
    let left: Vec<GroupId> =
        greedy::small_first_order(cycle).into_iter().filter(|&g| inst.groups[g].rank == rank && !a.is_placed(g) && plain(g)).collect();
    let units_on = repair::single_node_units(cycle);
    let mut kept = 0;
    let mut failed: Vec<GroupId> = Vec::new();
    for g in left.into_iter().take(RELOCATED) {
        if failed.iter().any(|&h| greedy::alike(cycle, g, h)) {
            continue;
        }
        let (Some(&big), Some(need)) = (greedy::tasks_largest_first(cycle, g).first(), repair::minimum_pods(inst, g)) else { continue };
        let cands = relocatable(cycle, a, g, big, &units_on);
        let want = inst.min_new_pods(g).max(1);
        for first in 0..TRIES.min(cands.len()) {
            if until.is_some_and(|t| Instant::now() >= t) {
                return kept;
            }
            let Some(nodes) = greedy::node_set(&cands, first, want) else { break };
            if let Some(better) = relocate(cycle, a, (g, &need), &nodes, &units_on) {
                *a = better;
                kept += 1;
                break;
            }
        }
        if !a.is_placed(g) {
            failed.push(g);
        }
    }
    kept
}

/// One try of [`by_relocation`]: `a` with the new pods on `nodes` moved elsewhere and
/// group `g` placed there with its minimum pods `need`; `Some` when that beats `a`.
/// `nodes` come from [`relocatable`] on `a`, so every new pod there may move.
fn relocate(
    cycle: &Cycle,
    a: &Assignment,
    (g, need): (GroupId, &[(TaskId, i64)]),
    nodes: &[NodeId],
    units_on: &[Vec<usize>],
) -> Option<Assignment> {
    let inst = cycle.inst;
    let mut trial = a.clone();
    let mut st = greedy::states_after(cycle, &trial);
    let mut moving: Vec<(GroupId, TaskId)> = Vec::new();
    for (h, pods) in trial.pods.iter_mut().enumerate() {
        pods.retain(|p| {
            let off = nodes.contains(&p.node);
            if off {
                st[p.node].release(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
                moving.push((h, p.task));
            }
            !off
        });
    }
    for u in beside_no_new_pod(cycle, &trial) {
        if k8s_preempt::restore_unit(cycle, &mut st, &cycle.victims[u].pods) {
            trial.evicted.retain(|&x| x != u);
        }
    }
    for &(t, k) in need {
        for _ in 0..k {
            let pod = place_on(cycle, &mut trial, &mut st, (g, t), nodes, units_on)?;
            trial.pods[g].push(pod);
        }
    }
    moving.sort_by(|x, y| greedy::task_size(cycle, y.1).total_cmp(&greedy::task_size(cycle, x.1)).then(x.cmp(y)));
    let mut dropped: Vec<GroupId> = Vec::new();
    for (h, t) in moving {
        if dropped.contains(&h) {
            continue;
        }
        if let Some(pod) = repair::first_fit(cycle, &mut st, t) {
            trial.pods[h].push(pod);
        } else if !repair::place_evicting_lower(cycle, &mut trial, &mut st, units_on, (h, t), &[], i64::MAX) {
            if inst.groups[h].rank >= inst.groups[g].rank {
                return None;
            }
            for p in std::mem::take(&mut trial.pods[h]) {
                st[p.node].release(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
            }
            dropped.push(h);
        }
    }
    // Queue limits (rule 7): the pods moved keep their queues' usage; `g` adds its own.
    let pods_g = std::mem::take(&mut trial.pods[g]);
    let within = Ledger::after(cycle, &trial).is_none_or(|l| l.fits(g, &pods_g));
    trial.pods[g] = pods_g;
    (within && beats(inst, &cycle.victims, &trial, a)).then_some(trial)
}

/// A pod of task `t` of group `g` on one of `nodes`: the first with room, else the first
/// where evicting the single-node units there that `g` may evict, lowest priority first,
/// makes room ([`repair::room_by_eviction`] keeps only the ones it needs).
fn place_on(
    cycle: &Cycle,
    a: &mut Assignment,
    st: &mut [NodeState],
    (g, t): (GroupId, TaskId),
    nodes: &[NodeId],
    units_on: &[Vec<usize>],
) -> Option<NewPod> {
    let inst = cycle.inst;
    let requests = &inst.tasks[t].requests;
    let eligible = |n: &NodeId| cycle.eligible[t].contains(n);
    for &n in nodes.iter().filter(|n| eligible(n)) {
        if let Some(devices) = st[n].take(inst, &cycle.shared_ids, requests) {
            return Some(NewPod { task: t, node: n, devices });
        }
    }
    for &n in nodes.iter().filter(|n| eligible(n)) {
        let mut cands: Vec<usize> = units_on[n].iter().copied().filter(|&u| cycle.may_preempt(g, u) && !a.evicted.contains(&u)).collect();
        cands.sort_by_key(|&u| (cycle.victims[u].priority, cycle.victims[u].pods.len(), u));
        if let Some(room) = repair::room_by_eviction(cycle, &st[n], &cands, requests) {
            st[n] = room.node;
            a.evicted.extend(room.evicted);
            return Some(NewPod { task: t, node: n, devices: room.devices });
        }
    }
    None
}

/// The nodes [`by_relocation`] may clear for group `g`'s largest task `big`, each with how
/// many of its pods it then holds: eligible for `big`, every new pod there movable and
/// with room on another node ([`nodes_with_room`]), and room for a pod of `big` once
/// those pods are off, the evictions there given back and the single-node units `g` may
/// evict there off; fewest new pods first (each is a pod to move), then fewest victim pods.
fn relocatable(cycle: &Cycle, a: &Assignment, g: GroupId, big: TaskId, units_on: &[Vec<usize>]) -> Vec<(NodeId, i64)> {
    let inst = cycle.inst;
    let states = greedy::states_after(cycle, a);
    let mut pending_on: Vec<Vec<&NewPod>> = vec![Vec::new(); inst.nodes.len()];
    for p in a.pods.iter().flatten() {
        pending_on[p.node].push(p);
    }
    let mut evicted = vec![false; cycle.victims.len()];
    for &u in &a.evicted {
        evicted[u] = true;
    }
    // Per task of a pod that would move: the nodes (at most two) where one of its pods
    // fits now, evicting what its group may evict there. A node whose pods have nowhere
    // else to go is not worth clearing (whole-node pods, typically).
    let mut room_for: BTreeMap<TaskId, Vec<NodeId>> = BTreeMap::new();
    let mut elsewhere = |t: TaskId, n: NodeId| {
        let at = room_for.entry(t).or_insert_with(|| nodes_with_room(cycle, &evicted, &states, t, units_on));
        at.iter().any(|&m| m != n)
    };
    let mut cands: Vec<(usize, usize, NodeId, i64)> = cycle.eligible[big]
        .iter()
        .copied()
        .filter(|&n| pending_on[n].iter().all(|p| repair::movable(inst, p.task) && elsewhere(p.task, n)))
        .filter_map(|n| {
            let mut s = states[n].clone();
            for p in &pending_on[n] {
                s.release(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
            }
            // The evictions there go back once it holds no new pod ([`relocate`]).
            let mut back = Vec::new();
            for &u in units_on[n].iter().filter(|&&u| evicted[u]) {
                let mut t = s.clone();
                if cycle.victims[u].pods.iter().all(|&p| k8s_preempt::restore_pod(cycle, &mut t, p)) {
                    s = t;
                    back.push(u);
                }
            }
            let mut victim_pods = 0;
            let evictable = |u: usize| cycle.may_preempt(g, u) && (!evicted[u] || back.contains(&u));
            for &u in units_on[n].iter().filter(|&&u| evictable(u)) {
                for &p in &cycle.victims[u].pods {
                    k8s_preempt::release(cycle, &mut s, p);
                    victim_pods += 1;
                }
            }
            let holds = greedy::pods_fitting(cycle, &mut s, big);
            (holds > 0).then_some((pending_on[n].len(), victim_pods, n, holds))
        })
        .collect();
    cands.sort_unstable();
    cands.into_iter().map(|(_, _, n, holds)| (n, holds)).collect()
}

/// Up to two nodes where a pod of task `t` fits on `states`, on free room or by evicting
/// single-node units its group may evict there (not already `evicted`).
fn nodes_with_room(cycle: &Cycle, evicted: &[bool], states: &[NodeState], t: TaskId, units_on: &[Vec<usize>]) -> Vec<NodeId> {
    let inst = cycle.inst;
    let g = inst.tasks[t].group;
    let fits = |n: NodeId| {
        let mut s = states[n].clone();
        if greedy::pods_fitting(cycle, &mut s, t) > 0 {
            return true;
        }
        for &u in units_on[n].iter().filter(|&&u| cycle.may_preempt(g, u) && !evicted[u]) {
            for &p in &cycle.victims[u].pods {
                k8s_preempt::release(cycle, &mut s, p);
            }
        }
        greedy::pods_fitting(cycle, &mut s, t) > 0
    };
    cycle.eligible[t].iter().copied().filter(|&n| fits(n)).take(2).collect()
}

/// Most evicted units one pass of [`fewer_evictions`] tries to give back (each try is a
/// preemption run).
const UNITS: usize = 48;

/// Lowers the pods `a` evicts at priority `priority`, with term 1 kept: for each unit it
/// evicts with a pod of that priority (in unit order, at most [`UNITS`]), the pending
/// groups with pods on the unit's nodes are taken off wholly, the unit is given back, and
/// those groups are placed again, largest first, by [`k8s_preempt::preempt_from_below`],
/// which evicts only units below `priority`. A move is kept when it beats `a` under terms
/// 1-3. Stops at `until`. Returns how many moves it kept.
pub fn fewer_evictions(cycle: &Cycle, a: &mut Assignment, priority: i64, until: Option<Instant>) -> usize {
    let inst = cycle.inst;
    let at_priority = |u: usize| cycle.victims[u].pods.iter().any(|&p| inst.pods[p].priority == priority);
    let units: Vec<usize> = a.evicted.iter().copied().filter(|&u| at_priority(u)).take(UNITS).collect();
    let largest_first = greedy::ffd_order(cycle);
    let mut kept = 0;
    for u in units {
        if until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        // An earlier move may have given it back.
        if !a.evicted.contains(&u) {
            continue;
        }
        let nodes: Vec<NodeId> = cycle.victims[u].pods.iter().map(|&p| inst.pods[p].node).collect();
        let Some((mut trial, off)) = taken_off(a, &nodes, &largest_first) else { continue };
        if off.is_empty() {
            continue;
        }
        // The unit goes back; the other evictions of the groups taken off stay, for them
        // to take again, and the rule-6 repairs give back those no pod then needs.
        trial.evicted.retain(|&v| v != u);
        let run = k8s_preempt::preempt_from_below(cycle, &trial, &off, false, priority).assignment;
        if beats(inst, &cycle.victims, &run, a) {
            *a = run;
            kept += 1;
        }
    }
    kept
}

/// `a` with the pending groups that have pods on `nodes` taken off wholly, and those
/// groups largest first; `None` when they are more than [`MOST_RUINED`].
fn taken_off(a: &Assignment, nodes: &[NodeId], largest_first: &[GroupId]) -> Option<(Assignment, Vec<GroupId>)> {
    let off: Vec<GroupId> = largest_first.iter().copied().filter(|&h| a.pods[h].iter().any(|p| nodes.contains(&p.node))).collect();
    if off.len() > MOST_RUINED {
        return None;
    }
    let mut trial = a.clone();
    for &h in &off {
        trial.pods[h].clear();
        trial.domain[h] = None;
    }
    Some((trial, off))
}

/// [`taken_off`], with every eviction beside no new pod then given back (rule 6: an
/// eviction is needed only by new pods on its victims' nodes); `None` also when that gives
/// back more than [`MOST_GIVEN_BACK`] evictions.
fn ruined(cycle: &Cycle, a: &Assignment, nodes: &[NodeId], largest_first: &[GroupId]) -> Option<(Assignment, Vec<GroupId>)> {
    let (mut trial, off) = taken_off(a, nodes, largest_first)?;
    let back = beside_no_new_pod(cycle, &trial);
    trial.evicted.retain(|u| !back.contains(u));
    (back.len() <= MOST_GIVEN_BACK).then_some((trial, off))
}

/// The units `a` evicts with no new pod on any of their nodes: rule 6 asks an eviction to
/// be needed by new pods on its victims' nodes, so nothing left needs these.
fn beside_no_new_pod(cycle: &Cycle, a: &Assignment) -> Vec<usize> {
    let inst = cycle.inst;
    let mut holds_new = vec![false; inst.nodes.len()];
    for p in a.pods.iter().flatten() {
        holds_new[p.node] = true;
    }
    a.evicted.iter().copied().filter(|&u| !cycle.victims[u].pods.iter().any(|&p| holds_new[inst.pods[p].node])).collect()
}

/// One try: `a` with the pending groups on `nodes` taken off, the evictions beside no new
/// pod given back, and `g` and the groups taken off placed again with evictions; `Some`
/// when that beats `a`. `None` also when [`ruined`] refuses the clearing.
fn recreate(cycle: &Cycle, a: &Assignment, g: GroupId, nodes: &[NodeId], largest_first: &[GroupId]) -> Option<Assignment> {
    let (trial, off) = ruined(cycle, a, nodes, largest_first)?;
    let mut order = vec![g];
    order.extend(off.into_iter().filter(|&h| h != g));
    let run = k8s_preempt::preempt_from(cycle, &trial, &order, false).assignment;
    beats(cycle.inst, &cycle.victims, &run, a).then_some(run)
}

/// The nodes whose clearing may make room for group `g`'s largest task `big`, each with
/// how many of its pods it then holds: eligible for `big`, with a pending pod or a victim
/// `g` may evict on it, and room for a pod of `big` once the pending pods and those
/// victims' pods there are off; fewest pods of groups at `g`'s level or above first, then
/// fewest pending pods, then fewest victim pods.
fn clearable(cycle: &Cycle, a: &Assignment, g: GroupId, big: TaskId) -> Vec<(NodeId, i64)> {
    let inst = cycle.inst;
    let states = greedy::states_after(cycle, a);
    let mut pending_on: Vec<Vec<(TaskId, &crate::engine::cycle::DeviceIds)>> = vec![Vec::new(); inst.nodes.len()];
    // Per node: pods of groups at `g`'s level or above (a move that loses one of those
    // groups does not beat the incumbent; one that loses a lower group can).
    let mut level_pods = vec![0usize; inst.nodes.len()];
    for (h, pods) in a.pods.iter().enumerate() {
        for p in pods {
            pending_on[p.node].push((p.task, &p.devices));
            level_pods[p.node] += usize::from(inst.groups[h].rank >= inst.groups[g].rank);
        }
    }
    let mut evicted = vec![false; cycle.victims.len()];
    for &u in &a.evicted {
        evicted[u] = true;
    }
    let mut victims_on: Vec<Vec<PodId>> = vec![Vec::new(); inst.nodes.len()];
    for (u, unit) in cycle.victims.iter().enumerate() {
        if !evicted[u] && cycle.may_preempt(g, u) {
            for &p in &unit.pods {
                victims_on[inst.pods[p].node].push(p);
            }
        }
    }
    let mut cands: Vec<(usize, usize, usize, NodeId, i64)> = cycle.eligible[big]
        .iter()
        .copied()
        .filter(|&n| !pending_on[n].is_empty() || !victims_on[n].is_empty())
        .filter_map(|n| {
            let mut s = states[n].clone();
            for &(t, dev) in &pending_on[n] {
                s.release(inst, &cycle.shared_ids, &inst.tasks[t].requests, dev);
            }
            for &p in &victims_on[n] {
                s.release(inst, &cycle.shared_ids, &inst.pods[p].requests, &inst.pods[p].devices);
            }
            let holds = greedy::pods_fitting(cycle, &mut s, big);
            (holds > 0).then_some((level_pods[n], pending_on[n].len(), victims_on[n].len(), n, holds))
        })
        .collect();
    cands.sort_unstable();
    cands.into_iter().map(|(_, _, _, n, holds)| (n, holds)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::k8s_preempt::tests::start_with;
    use crate::engine::assemble::assemble;
    use crate::engine::assignment::NewPod;
    use crate::wire::decision::Status;

    /// Two 4-cpu nodes. `low1` and `low2` (priority 0, 2 cpu) run on n1 and n2. The start
    /// places `mid1` (priority 10, 2 cpu) beside `low1` and `mid2` (priority 10, 4 cpu) on
    /// n2, evicting `low2`; `top` (priority 100, `top_cpu`) is left out.
    fn held_by_evicting_groups(top_cpu: u32) -> (Instance, Assignment) {
        let yaml = format!(
            "nodes:
  - {{name: n1, allocatable: {{cpu: \"4\"}}}}
  - {{name: n2, allocatable: {{cpu: \"4\"}}}}
podGroups:
  - {{name: top, priority: 100, tasks: [{{name: w, count: 1, requests: {{cpu: \"{top_cpu}\"}}}}]}}
  - {{name: mid1, priority: 10, tasks: [{{name: w, count: 1, requests: {{cpu: \"2\"}}}}]}}
  - {{name: mid2, priority: 10, tasks: [{{name: w, count: 1, requests: {{cpu: \"4\"}}}}]}}
pods:
  - {{name: low1, node: n1, priority: 0, requests: {{cpu: \"2\"}}, preemptible: true}}
  - {{name: low2, node: n2, priority: 0, requests: {{cpu: \"2\"}}, preemptible: true}}
"
        );
        let inst = Instance::from_text(&yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let mut start = start_with(&inst, 1, 0);
        start.pods[2] = vec![NewPod { task: inst.groups[2].tasks[0], node: 1, devices: Default::default() }];
        start.evicted = vec![unit_of(&cycle, "low2")];
        (inst, start)
    }

    fn unit_of(cycle: &Cycle, pod: &str) -> usize {
        (0..cycle.victims.len()).find(|&u| cycle.victims[u].pods.iter().any(|&p| cycle.inst.pods[p].name == pod)).unwrap()
    }

    /// `top` (4 cpu) fits nowhere, even with `low1` evicted (n1: 2 free beside `mid1`;
    /// n2: full with `mid2`), and the plain ruin and recreate leaves it out: n2 evicts, and
    /// n1 cleared of `mid1` still holds `low1`. Clearing n2 gives `low2` back; `top` then
    /// evicts it again and takes n2 (2 + 4 > 4, so the eviction is needed), and `mid2`
    /// fits nowhere (n1: `mid1` and `low1`; evicting `low1` frees 2 of its 4). Terms:
    /// 1 group at priority 100 instead of 0, 1 at priority 10 instead of 2; 10 cpu of
    /// groups on 8 cpu, so no decision places three. One eviction, as in the start.
    #[test]
    fn a_left_out_group_takes_the_node_of_a_group_that_evicts() {
        let (inst, start) = held_by_evicting_groups(4);
        let cycle = Cycle::new(&inst);
        let mut plain = start.clone();
        assert_eq!(greedy::ruin_and_recreate(&cycle, &mut plain, inst.groups[0].rank, None), 0);
        let mut a = start.clone();
        assert_eq!(with_evictions(&cycle, &mut a, inst.groups[0].rank, None), 1);
        let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
        assert_eq!((nodes(0), nodes(1), nodes(2)), (vec![1], vec![0], vec![]));
        assert_eq!(a.evicted, vec![unit_of(&cycle, "low2")]);
        assert!(crate::check::check(&inst, &assemble(&cycle, &a, Status::Feasible, f64::NAN)).is_valid());
    }

    /// Two 4-cpu nodes: n1 holds `peer` (priority 100, 1 cpu), n2 holds `a` and `b`
    /// (priority 10, 1 cpu each); `top` (priority 100, 4 cpu) fits on either once it is
    /// cleared. n2 comes first though it holds more pods: losing `peer` cannot beat the
    /// incumbent at priority 100, losing `a` or `b` can.
    #[test]
    fn nodes_with_groups_below_the_level_are_cleared_first() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"4\"}}
  - {name: n2, allocatable: {cpu: \"4\"}}
podGroups:
  - {name: top, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: \"4\"}}]}
  - {name: peer, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: \"1\"}}]}
  - {name: a, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"1\"}}]}
  - {name: b, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"1\"}}]}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let mut a = start_with(&inst, 1, 0);
        for g in [2, 3] {
            a.pods[g] = start_with(&inst, g, 1).pods[g].clone();
        }
        let big = inst.groups[0].tasks[0];
        assert_eq!(clearable(&cycle, &a, 0, big), vec![(1, 1), (0, 1)]);
    }

    /// With `top` at 5 cpu no node can hold it, cleared or not: nothing moves.
    #[test]
    fn a_group_no_node_can_hold_leaves_the_start_as_it_was() {
        let (inst, start) = held_by_evicting_groups(5);
        let cycle = Cycle::new(&inst);
        let mut a = start.clone();
        assert_eq!(with_evictions(&cycle, &mut a, inst.groups[0].rank, None), 0);
        assert_eq!((a.pods.iter().map(|p| p.len()).collect::<Vec<_>>(), a.evicted.clone()), (vec![0, 1, 1], start.evicted));
    }

    /// Three 4-cpu nodes. `low` (priority 0, 3 cpu) runs on n1. The start places the gang
    /// `a` (priority 10, two pods of 2 cpu) on n1, evicting `low` (3 + 2 > 4: needed), and
    /// on n2, and `big` (priority 100, 4 cpu) on n3; `top` (priority 100, 4 cpu, with
    /// `top_policy`) is left out, and the plain ruin and recreate cannot move `a` (it has
    /// a pod beside an eviction).
    fn a_gang_spread_over_two_nodes(top_policy: &str) -> (Instance, Assignment) {
        let inst = Instance::from_text(&format!(
            "nodes:
  - {{name: n1, allocatable: {{cpu: \"4\"}}}}
  - {{name: n2, allocatable: {{cpu: \"4\"}}}}
  - {{name: n3, allocatable: {{cpu: \"4\"}}}}
podGroups:
  - {{name: top, priority: 100, preemptionPolicy: {top_policy}, tasks: [{{name: w, count: 1, requests: {{cpu: \"4\"}}}}]}}
  - {{name: a, priority: 10, tasks: [{{name: w, count: 2, requests: {{cpu: \"2\"}}}}]}}
  - {{name: big, priority: 100, tasks: [{{name: w, count: 1, requests: {{cpu: \"4\"}}}}]}}
pods:
  - {{name: low, node: n1, priority: 0, requests: {{cpu: \"3\"}}, preemptible: true}}
"
        ))
        .unwrap();
        let cycle = Cycle::new(&inst);
        let mut start = start_with(&inst, 2, 2);
        let pod = |n: NodeId| NewPod { task: inst.groups[1].tasks[0], node: n, devices: Default::default() };
        start.pods[1] = vec![pod(0), pod(1)];
        start.evicted = vec![unit_of(&cycle, "low")];
        (inst, start)
    }

    /// n3 is no candidate: `big`'s pod fits on no other node, even with `low` evicted.
    /// n1 and n2 each hold one pod of `a`, which has room on the other. Cleared, n1 gives
    /// `low` back (no new pod beside it): `top` may evict it again, so n1 holds `top`, but
    /// after n2 (one victim pod to evict against none). `top` takes n2 and `a`'s pod joins
    /// the other on n1 (2 + 2 = 4, `low` still needed). Terms: 2 groups at priority 100
    /// instead of 1, `a` still placed, the same one eviction. With `top` not allowed to
    /// evict, n1 is no candidate (`low` back, 1 cpu free).
    #[test]
    fn a_left_out_group_takes_a_node_whose_pods_move() {
        let (inst, start) = a_gang_spread_over_two_nodes("Never");
        let cycle = Cycle::new(&inst);
        let top = inst.groups[0].tasks[0];
        assert_eq!(relocatable(&cycle, &start, 0, top, &repair::single_node_units(&cycle)), vec![(1, 1)]);
        let (inst, start) = a_gang_spread_over_two_nodes("PreemptLowerPriority");
        let cycle = Cycle::new(&inst);
        assert_eq!(relocatable(&cycle, &start, 0, top, &repair::single_node_units(&cycle)), vec![(1, 1), (0, 1)]);
        let mut plain = start.clone();
        assert_eq!(greedy::ruin_and_recreate(&cycle, &mut plain, inst.groups[0].rank, None), 0);
        let mut a = start.clone();
        assert_eq!(by_relocation(&cycle, &mut a, inst.groups[0].rank, None), 1);
        let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
        assert_eq!((nodes(0), nodes(1), nodes(2)), (vec![1], vec![0, 0], vec![2]));
        assert_eq!(a.evicted, vec![unit_of(&cycle, "low")]);
        assert!(crate::check::check(&inst, &assemble(&cycle, &a, Status::Feasible, f64::NAN)).is_valid());
    }

    /// Two 4-cpu nodes: n1 holds both pods of the gang `a` (2 cpu each), n2 the pod of `c`
    /// (priority 10, 2 cpu); `top` (priority 100, 4 cpu) is left out. n2 is no candidate
    /// (`c`'s pod has no room on n1), n1 is: each pod of `a` has room on n2, but only one
    /// fits there. With `a` at priority 10 it is taken off and `top` takes n1 (one group
    /// at priority 100 for one at 10); with `a` at priority 100, as high as `top`, the try
    /// fails and nothing moves.
    #[test]
    fn a_pod_with_no_room_left_takes_its_group_off_only_below_the_level() {
        for (a_priority, moves) in [(10, 1), (100, 0)] {
            let inst = Instance::from_text(&format!(
                "nodes:
  - {{name: n1, allocatable: {{cpu: \"4\"}}}}
  - {{name: n2, allocatable: {{cpu: \"4\"}}}}
podGroups:
  - {{name: top, priority: 100, tasks: [{{name: w, count: 1, requests: {{cpu: \"4\"}}}}]}}
  - {{name: a, priority: {a_priority}, tasks: [{{name: w, count: 2, requests: {{cpu: \"2\"}}}}]}}
  - {{name: c, priority: 10, tasks: [{{name: w, count: 1, requests: {{cpu: \"2\"}}}}]}}
"
            ))
            .unwrap();
            let cycle = Cycle::new(&inst);
            let mut start = start_with(&inst, 2, 1);
            let pod = NewPod { task: inst.groups[1].tasks[0], node: 0, devices: Default::default() };
            start.pods[1] = vec![pod.clone(), pod];
            let top = inst.groups[0].tasks[0];
            assert_eq!(relocatable(&cycle, &start, 0, top, &repair::single_node_units(&cycle)), vec![(0, 1)]);
            let mut a = start.clone();
            assert_eq!(by_relocation(&cycle, &mut a, inst.groups[0].rank, None), moves, "a at priority {a_priority}");
            let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
            let expected = if moves == 1 { (vec![0], vec![], vec![1]) } else { (vec![], vec![0, 0], vec![1]) };
            assert_eq!((nodes(0), nodes(1), nodes(2)), expected, "a at priority {a_priority}");
            assert!(crate::check::check(&inst, &assemble(&cycle, &a, Status::Feasible, f64::NAN)).is_valid());
        }
    }

    /// Two 4-cpu nodes: n1 holds `mid` (priority 50, 3 cpu), n2 holds `low` (priority 0,
    /// 3 cpu). The start places `g` (priority 100, 2 cpu) on n1 with `mid` evicted (3 + 2 >
    /// 4: needed). Taken off, `g` goes back by first fit only with an eviction below 50:
    /// `low` on n2 (also needed). Same groups, no pod evicted at priority 50, one at 0,
    /// which beats the start at priority 50; at priority 0 there is nothing to lower.
    #[test]
    fn a_group_moves_off_the_victim_of_the_priority_lowered() {
        let inst = Instance::from_text(
            "nodes:
  - {name: n1, allocatable: {cpu: \"4\"}}
  - {name: n2, allocatable: {cpu: \"4\"}}
podGroups:
  - {name: g, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
pods:
  - {name: mid, node: n1, priority: 50, requests: {cpu: \"3\"}, preemptible: true}
  - {name: low, node: n2, priority: 0, requests: {cpu: \"3\"}, preemptible: true}
",
        )
        .unwrap();
        let cycle = Cycle::new(&inst);
        let mut start = start_with(&inst, 0, 0);
        start.evicted = vec![unit_of(&cycle, "mid")];
        let mut at_zero = start.clone();
        assert_eq!(fewer_evictions(&cycle, &mut at_zero, 0, None), 0);
        let mut a = start.clone();
        assert_eq!(fewer_evictions(&cycle, &mut a, 50, None), 1);
        assert_eq!(a.pods[0].iter().map(|p| p.node).collect::<Vec<_>>(), vec![1]);
        assert_eq!(a.evicted, vec![unit_of(&cycle, "low")]);
        assert!(crate::check::check(&inst, &assemble(&cycle, &a, Status::Feasible, f64::NAN)).is_valid());
    }
}
