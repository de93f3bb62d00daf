//! Ruin and recreate with evictions: an incumbent move for cycles with victims.
//!
//! The plain move ([`crate::engine::greedy::ruin_and_recreate`]) leaves alone every node
//! where the incumbent evicts and every group with a pod on one, so that no eviction
//! loses the pods that need it. In cycles with heavy preemption nearly every placed group
//! evicts, and a left-out group that fits nowhere, even with every victim it may evict
//! removed, stays out: the room it needs is held by placed groups that could go elsewhere.
//! This move clears a few nodes of their pending pods, gives back the evictions no new pod
//! then sits beside, and places the left-out group and the groups taken off again with
//! the Kubernetes-style preemption run ([`k8s_preempt::preempt_from`]: first fit, else
//! lower-priority victims removed and reprieved), keeping the result only when it beats
//! the incumbent under terms 1-3.
//!
//! The second move, [`fewer_evictions`], serves the eviction tiers: the groups beside an
//! eviction at the priority being lowered are placed again with only lower victims
//! evicted.

use crate::baselines::k8s_preempt;
use crate::engine::assignment::{beats, Assignment};
use crate::engine::cycle::Cycle;
use crate::engine::greedy;
use crate::model::*;
use std::time::Instant;

/// Most node sets tried per left-out group (each try is a preemption run).
const TRIES: usize = 3;

/// Most left-out groups one pass tries.
const GROUPS: usize = 16;

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
            let mut nodes = Vec::new();
            let mut room = 0;
            for &(n, holds) in &cands[first..] {
                if room >= need {
                    break;
                }
                nodes.push(n);
                room += holds;
            }
            if room < need {
                break;
            }
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
    let inst = cycle.inst;
    let (mut trial, off) = taken_off(a, nodes, largest_first)?;
    let mut holds_new = vec![false; inst.nodes.len()];
    for p in trial.pods.iter().flatten() {
        holds_new[p.node] = true;
    }
    let before = trial.evicted.len();
    trial.evicted.retain(|&u| cycle.victims[u].pods.iter().any(|&p| holds_new[inst.pods[p].node]));
    (before - trial.evicted.len() <= MOST_GIVEN_BACK).then_some((trial, off))
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
