//! Fewer evictions for a given set of placed groups: a local search on an assignment.
//!
//! The exact solver's term-1 tier decides which groups are placed, but the solution
//! HiGHS returns for it may evict freely (term 1 does not count evictions). Before the
//! `evicted@` tiers this repair hands the solver a better incumbent for the same placed
//! groups: elastic pods are taken off (they are added back afterwards by
//! [`crate::engine::greedy::fill_elastic`]), then each evicted unit, most important first,
//! is put back if the new pods on its nodes can move to other nodes, onto free room or onto
//! room made by evicting units of lower priority than it (a trade that lowers the
//! evictions at its level and adds some only below). The set of placed groups and every
//! task's pod count stay at least their minimums, so the result places the same groups.
//! Every eviction whose node changed is checked against rule 6 (needed by the groups that
//! may make it). A heuristic: it proves nothing, and the caller keeps its result only
//! after checking it against every row of the model.

use crate::baselines::k8s_preempt::{release, restore_pod, restore_unit};
use crate::engine::assignment::{Assignment, NewPod};
use crate::engine::cycle::{Cycle, DeviceIds, NodeState, UNLIMITED};
use crate::engine::greedy::states_after;
use crate::engine::needed::NeedTest;
use crate::model::*;

/// Pods of task `t` may move between nodes without touching a topology rule.
pub(crate) fn movable(inst: &Instance, t: TaskId) -> bool {
    let task = &inst.tasks[t];
    task.slice.is_none() && inst.groups[task.group].required.is_none()
}

fn unapply(cycle: &Cycle, st: &mut NodeState, t: TaskId, p: &NewPod) {
    let inst = cycle.inst;
    let req = &inst.tasks[t].requests;
    for r in 0..req.len() {
        if st.free[r] != UNLIMITED {
            st.free[r] += req[r];
        }
    }
    for (si, &r) in cycle.shared_ids.iter().enumerate() {
        if let Some(ids) = p.devices.get(&r) {
            for &d in ids {
                st.devices[si][d] += if req[r] >= 1000 { 1000 } else { req[r] };
            }
        }
    }
}

/// Keeps only the pods the placed groups' minimums need (tasks that may move), taking
/// off first the pods on nodes where something is evicted.
fn strip_elastic(cycle: &Cycle, a: &mut Assignment) {
    let inst = cycle.inst;
    let evicted_on = crate::engine::greedy::evicting_nodes(cycle, a);
    for &g in &cycle.pending {
        if !a.is_placed(g) || inst.groups[g].required.is_some() {
            continue;
        }
        let mut pods = std::mem::take(&mut a.pods[g]);
        // Pods on nodes with evictions last, so they are the ones dropped.
        pods.sort_by_key(|p| (evicted_on[p.node], p.node));
        a.pods[g] = crate::engine::greedy::split_minimum(inst, g, pods, |p| !movable(inst, p.task)).0;
    }
}

/// Is evicted unit `u` still attributed: an allowed preemptor has a new pod on its nodes.
fn attributed(cycle: &Cycle, a: &Assignment, u: usize) -> bool {
    let inst = cycle.inst;
    let unit = &cycle.victims[u];
    cycle
        .pending
        .iter()
        .any(|&g| cycle.may_preempt(g, u) && a.pods[g].iter().any(|p| unit.pods.iter().any(|&q| inst.pods[q].node == p.node)))
}

/// Tries to put evicted unit `u` back by moving new pods off its nodes; all or nothing.
/// A moved pod goes to free room, else to room made by evicting units of lower priority
/// only ([`place_evicting_lower`]): either way there are fewer evictions at `u`'s level and
/// none more above it.
fn try_unevict(cycle: &Cycle, a: &mut Assignment, st: &mut Vec<NodeState>, trades: &Trades, u: usize) -> bool {
    let inst = cycle.inst;
    let unit = &cycle.victims[u];
    let mut nodes_u: Vec<NodeId> = unit.pods.iter().map(|&p| inst.pods[p].node).collect();
    nodes_u.sort_unstable();
    nodes_u.dedup();
    let (saved_st, saved_pods, saved_evicted) = (st.clone(), a.pods.clone(), a.evicted.clone());
    let rollback = |a: &mut Assignment, st: &mut Vec<NodeState>| {
        *st = saved_st.clone();
        a.pods = saved_pods.clone();
        a.evicted = saved_evicted.clone();
    };
    // Take the unit's room back: new pods leave its nodes, largest first, until it fits.
    let mut moving: Vec<(GroupId, NewPod)> = Vec::new();
    loop {
        if restore_unit(cycle, st, &unit.pods) {
            break;
        }
        let mut best: Option<(f64, GroupId, usize)> = None;
        for &g in &cycle.pending {
            for (i, p) in a.pods[g].iter().enumerate() {
                if nodes_u.contains(&p.node) && movable(inst, p.task) {
                    let size = crate::engine::greedy::task_size(cycle, p.task);
                    if best.is_none_or(|(s, _, _)| size > s) {
                        best = Some((size, g, i));
                    }
                }
            }
        }
        let Some((_, g, i)) = best else {
            rollback(a, st);
            return false;
        };
        let p = a.pods[g].remove(i);
        unapply(cycle, &mut st[p.node], p.task, &p);
        moving.push((g, p));
    }
    // Re-place the moved pods elsewhere, on room that needs no new eviction.
    for (g, p) in moving {
        let t = p.task;
        let mut placed = false;
        for &m in &cycle.eligible[t] {
            if nodes_u.contains(&m) {
                continue;
            }
            if let Some(devices) = st[m].take(inst, &cycle.shared_ids, &inst.tasks[t].requests) {
                a.pods[g].push(NewPod { task: t, node: m, devices });
                placed = true;
                break;
            }
        }
        if !placed && !place_evicting_lower(cycle, a, st, &trades.units_on, (g, t), &nodes_u, unit.priority) {
            rollback(a, st);
            return false;
        }
    }
    let added = a.evicted[saved_evicted.len()..].to_vec();
    a.evicted.retain(|&x| x != u);
    // Rule 6 for the evictions whose nodes changed: one no longer needed comes back if it
    // fits; if it does not, a group that may not evict it holds its room, and the move is
    // undone.
    let changed: Vec<usize> = a.evicted.iter().copied().filter(|&x| added.contains(&x) || unit_on(cycle, x, &nodes_u)).collect();
    for x in changed {
        if trades.need.is_needed(a, x) {
            continue;
        }
        if !restore_unit(cycle, st, &cycle.victims[x].pods) {
            rollback(a, st);
            return false;
        }
        a.evicted.retain(|&y| y != x);
    }
    // Every other eviction must keep a preemptor with a pod on its nodes.
    if !a.evicted.iter().all(|&x| attributed(cycle, a, x)) {
        rollback(a, st);
        return false;
    }
    true
}

/// Whether unit `x` has a pod on one of `nodes`.
fn unit_on(cycle: &Cycle, x: usize, nodes: &[NodeId]) -> bool {
    cycle.victims[x].pods.iter().any(|&p| nodes.contains(&cycle.inst.pods[p].node))
}

/// What the trades of [`try_unevict`] read on every try, built once per search.
struct Trades<'c> {
    /// Per node, the units a moved pod may evict there ([`single_node_units`]).
    units_on: Vec<Vec<usize>>,
    need: NeedTest<'c>,
}

/// Per node, the victim units of no pending group whose pods are all on that node: the
/// ones a moved pod can make room from without touching another node.
pub(crate) fn single_node_units(cycle: &Cycle) -> Vec<Vec<usize>> {
    let inst = cycle.inst;
    let mut on = vec![Vec::new(); inst.nodes.len()];
    for (u, unit) in cycle.victims.iter().enumerate() {
        let Some(&first) = unit.pods.first() else { continue };
        let n = inst.pods[first].node;
        if unit.pending_group.is_none() && unit.pods.iter().all(|&p| inst.pods[p].node == n) {
            on[n].push(u);
        }
    }
    on
}

/// Places a moved pod (`pod` = group, task) on a node outside `avoid`, on room made by
/// evicting units there that are strictly below `below` and that the group may preempt.
/// Of the nodes where that works, the one whose evictions weigh least (highest priority
/// evicted, then pods) is taken.
pub(crate) fn place_evicting_lower(
    cycle: &Cycle,
    a: &mut Assignment,
    st: &mut [NodeState],
    units_on: &[Vec<usize>],
    pod: (GroupId, TaskId),
    avoid: &[NodeId],
    below: i64,
) -> bool {
    let (g, t) = pod;
    let victims = &cycle.victims;
    let mut best: Option<((i64, usize), NodeId, Room)> = None;
    for &m in &cycle.eligible[t] {
        if avoid.contains(&m) {
            continue;
        }
        let mut cands: Vec<usize> = units_on[m]
            .iter()
            .copied()
            .filter(|&x| victims[x].priority < below && cycle.may_preempt(g, x) && !a.evicted.contains(&x))
            .collect();
        if cands.is_empty() {
            continue;
        }
        cands.sort_by_key(|&x| (victims[x].priority, victims[x].pods.len(), x));
        let Some(room) = room_by_eviction(cycle, &st[m], &cands, &cycle.inst.tasks[t].requests) else { continue };
        let weight = (
            room.evicted.iter().map(|&x| victims[x].priority).max().unwrap_or(i64::MIN),
            room.evicted.iter().map(|&x| victims[x].pods.len()).sum(),
        );
        if best.as_ref().is_none_or(|(w, _, _)| weight < *w) {
            best = Some((weight, m, room));
        }
    }
    let Some((_, m, room)) = best else { return false };
    st[m] = room.node;
    a.evicted.extend(room.evicted);
    a.pods[g].push(NewPod { task: t, node: m, devices: room.devices });
    true
}

/// A node after a pod took room on it by evictions.
pub(crate) struct Room {
    pub node: NodeState,
    pub evicted: Vec<usize>,
    pub devices: DeviceIds,
}

/// Evicts `cands` in order on a copy of `node` until `requests` fit, takes the room, then
/// puts back each evicted unit that still fits (the last evicted first), so that only the
/// evictions the pod needs remain.
pub(crate) fn room_by_eviction(cycle: &Cycle, node: &NodeState, cands: &[usize], requests: &[i64]) -> Option<Room> {
    let mut trial = node.clone();
    for (i, &x) in cands.iter().enumerate() {
        for &p in &cycle.victims[x].pods {
            release(cycle, &mut trial, p);
        }
        let mut after = trial.clone();
        let Some(devices) = after.take(cycle.inst, &cycle.shared_ids, requests) else { continue };
        let mut evicted = Vec::new();
        for &y in cands[..=i].iter().rev() {
            let mut back = after.clone();
            if cycle.victims[y].pods.iter().all(|&p| restore_pod(cycle, &mut back, p)) {
                after = back;
            } else {
                evicted.push(y);
            }
        }
        return Some(Room { node: after, evicted, devices });
    }
    None
}

/// The same placed groups with fewer evictions where the local search finds a way.
pub fn reduce_evictions(cycle: &Cycle, a: &Assignment) -> Assignment {
    let orig = a;
    let mut a = a.clone();
    if a.evicted.is_empty() {
        return a;
    }
    strip_elastic(cycle, &mut a);
    let mut st = states_after(cycle, &a);
    // An eviction whose only preemptor pods were elastic ones: back if it fits, else
    // keep the elastic pods after all.
    for u in a.evicted.clone() {
        if !attributed(cycle, &a, u) {
            if restore_unit(cycle, &mut st, &cycle.victims[u].pods) {
                a.evicted.retain(|&x| x != u);
            } else {
                a = orig.clone();
                st = states_after(cycle, &a);
                break;
            }
        }
    }
    let mut order = a.evicted.clone();
    order.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), std::cmp::Reverse(cycle.victims[u].pods.len()), u));
    let trades = Trades { units_on: single_node_units(cycle), need: NeedTest::new(cycle) };
    let before = a.evicted.len();
    for u in order {
        try_unevict(cycle, &mut a, &mut st, &trades, u);
    }
    // The elastic pods taken off and the moves can leave room for a unit still evicted
    // (rule 6: an eviction must be needed): such units come back, most important first.
    let mut order = a.evicted.clone();
    order.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), u));
    for u in order {
        if restore_unit(cycle, &mut st, &cycle.victims[u].pods) {
            a.evicted.retain(|&x| x != u);
        }
    }
    if cycle.diag.debug {
        eprintln!("fewer evictions: {before} units evicted before, {} after", a.evicted.len());
    }
    a
}

/// Places the groups of `order` (minimum pods only), pod by pod: first fit without
/// eviction, else on the node where the fewest and least important victims make room
/// (lower-priority units on that node, lowest priority first, then the ones not needed
/// put back), as Kubernetes' per-node preemption does. A group that does not fit whole
/// is rolled back. Groups with a required level or sliced tasks are placed by plain
/// first fit. The warm start of the `evicted@` tiers: room goes to minimums first.
pub fn place_with_node_preemption(cycle: &Cycle, order: &[GroupId]) -> Assignment {
    let inst = cycle.inst;
    let mut st = cycle.nodes.clone();
    let mut a = Assignment::empty(inst);
    let mut evicted = vec![false; cycle.victims.len()];
    let in_order: Vec<bool> = (0..inst.groups.len()).map(|g| order.contains(&g)).collect();
    for &g in order {
        let grp = &inst.groups[g];
        let simple = grp.required.is_none() && grp.tasks.iter().all(|&t| inst.tasks[t].slice.is_none());
        if !simple {
            if let Some((pods, dom)) = crate::engine::greedy::place_group_with(cycle, &mut st, g, false) {
                a.pods[g] = pods;
                a.domain[g] = dom;
            }
            continue;
        }
        if grp.bound.iter().any(|&m| cycle.victims.iter().enumerate().any(|(u, v)| evicted[u] && v.pods.contains(&m))) {
            continue;
        }
        let (saved_st, saved_ev) = (st.clone(), evicted.clone());
        let mut pods: Vec<NewPod> = Vec::new();
        let need = minimum_pods(inst, g);
        let mut ok = need.is_some();
        'pods: for &(t, k) in need.iter().flatten() {
            for _ in 0..k {
                match place_pod(cycle, &mut st, &mut evicted, &in_order, g, t) {
                    Some(p) => pods.push(p),
                    None => {
                        ok = false;
                        break 'pods;
                    }
                }
            }
        }
        if ok {
            a.pods[g] = pods;
        } else {
            st = saved_st;
            evicted = saved_ev;
        }
    }
    // Evictions that turned out not to be needed go back.
    let mut order_u: Vec<usize> = (0..cycle.victims.len()).filter(|&u| evicted[u]).collect();
    order_u.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), u));
    for u in order_u {
        if restore_unit(cycle, &mut st, &cycle.victims[u].pods) {
            evicted[u] = false;
        }
    }
    a.evicted = (0..cycle.victims.len()).filter(|&u| evicted[u]).collect();
    a
}

/// The pods group `g`'s minimums need, per task: each task's own minimum in a gang, then
/// more from the tasks in order until the group's minimum; `None` when its tasks cannot
/// reach it.
pub(crate) fn minimum_pods(inst: &Instance, g: GroupId) -> Option<Vec<(TaskId, i64)>> {
    let grp = &inst.groups[g];
    let mut need: Vec<(TaskId, i64)> = Vec::new();
    let tasks: Vec<TaskId> = grp.tasks.iter().copied().filter(|&t| inst.tasks[t].count > 0).collect();
    let mut total = 0;
    if grp.policy == Policy::Gang {
        for &t in &tasks {
            need.push((t, inst.tasks[t].min_count));
            total += inst.tasks[t].min_count;
        }
    }
    let mut missing = inst.min_new_pods(g) - total;
    for &t in &tasks {
        if missing <= 0 {
            break;
        }
        let have = need.iter().find(|(x, _)| *x == t).map(|x| x.1).unwrap_or(0);
        let more = (inst.tasks[t].count - have).min(missing);
        if more > 0 {
            need.push((t, more));
            missing -= more;
        }
    }
    (missing <= 0).then_some(need)
}

/// A pod of task `t` on the first eligible node with room, without eviction.
pub(crate) fn first_fit(cycle: &Cycle, st: &mut [NodeState], t: TaskId) -> Option<NewPod> {
    let inst = cycle.inst;
    cycle.eligible[t]
        .iter()
        .find_map(|&n| st[n].take(inst, &cycle.shared_ids, &inst.tasks[t].requests).map(|devices| NewPod { task: t, node: n, devices }))
}

/// One pod of task `t` of group `g`: without eviction if possible, else on the node with
/// the cheapest victims (most important victim priority, then pods of that priority, then
/// all pods evicted).
fn place_pod(cycle: &Cycle, st: &mut [NodeState], evicted: &mut [bool], in_order: &[bool], g: GroupId, t: TaskId) -> Option<NewPod> {
    let inst = cycle.inst;
    let req = &inst.tasks[t].requests;
    if let Some(pod) = first_fit(cycle, st, t) {
        return Some(pod);
    }
    let grp = &inst.groups[g];
    if grp.preempt_never {
        return None;
    }
    let mut best: Option<((i64, usize, usize), NodeId, Vec<usize>)> = None;
    for &n in &cycle.eligible[t] {
        let mut cands: Vec<usize> = cycle.victims_on[n]
            .iter()
            .copied()
            .filter(|&u| {
                let v = &cycle.victims[u];
                !evicted[u] && cycle.may_preempt(g, u) && v.pending_group.is_none_or(|h| !in_order[h])
            })
            .collect();
        if cands.is_empty() {
            continue;
        }
        cands.sort_by_key(|&u| (cycle.victims[u].priority, u));
        let mut s = st[n].clone();
        let mut chosen = Vec::new();
        let mut fits = false;
        for &u in &cands {
            for &p in &cycle.victims[u].pods {
                if inst.pods[p].node == n {
                    release(cycle, &mut s, p);
                }
            }
            chosen.push(u);
            let mut probe = s.clone();
            if probe.take(inst, &cycle.shared_ids, req).is_some() {
                fits = true;
                break;
            }
        }
        if !fits {
            continue;
        }
        // Put back what the pod does not need, most important first.
        let mut with_pod = s.clone();
        if with_pod.take(inst, &cycle.shared_ids, req).is_none() {
            continue;
        }
        chosen.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), u));
        let mut keep = Vec::new();
        for u in chosen {
            let here: Vec<PodId> = cycle.victims[u].pods.iter().copied().filter(|&p| inst.pods[p].node == n).collect();
            // Only this node's pods of the unit matter for the fit here.
            let mut trial = with_pod.clone();
            let back = here.iter().all(|&p| super::k8s_preempt::restore_pod(cycle, &mut trial, p));
            if back {
                with_pod = trial;
            } else {
                keep.push(u);
            }
        }
        if keep.is_empty() {
            continue;
        }
        let top = keep.iter().map(|&u| cycle.victims[u].priority).max().unwrap();
        let at_top: usize = keep.iter().filter(|&&u| cycle.victims[u].priority == top).map(|&u| cycle.victims[u].pods.len()).sum();
        let all: usize = keep.iter().map(|&u| cycle.victims[u].pods.len()).sum();
        let key = (top, at_top, all);
        if best.as_ref().is_none_or(|(k, _, _)| key < *k) {
            best = Some((key, n, keep));
        }
    }
    let (_, n, keep) = best?;
    for &u in &keep {
        evicted[u] = true;
        for &p in &cycle.victims[u].pods {
            release(cycle, &mut st[inst.pods[p].node], p);
        }
    }
    let devices = st[n].take(inst, &cycle.shared_ids, req)?;
    Some(NewPod { task: t, node: n, devices })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::decision::Status;

    fn group(inst: &Instance, name: &str) -> GroupId {
        inst.groups.iter().position(|g| g.name == name).unwrap()
    }

    fn unit_of(cycle: &Cycle, name: &str) -> usize {
        let pod = cycle.inst.pods.iter().position(|p| p.name == name).unwrap();
        cycle.victims.iter().position(|u| u.pods == [pod]).unwrap()
    }

    /// Each `(group, node)` gets the group's one pod on that node; `evicted` names the
    /// bound pods whose units are evicted. The start must be valid.
    fn start(cycle: &Cycle, pods: &[(&str, NodeId)], evicted: &[&str]) -> Assignment {
        let inst = cycle.inst;
        let mut a = Assignment::empty(inst);
        for &(name, node) in pods {
            let g = group(inst, name);
            a.pods[g].push(NewPod { task: inst.groups[g].tasks[0], node, devices: Default::default() });
        }
        a.evicted = evicted.iter().map(|&p| unit_of(cycle, p)).collect();
        assert!(valid(cycle, &a), "the start is valid");
        a
    }

    fn valid(cycle: &Cycle, a: &Assignment) -> bool {
        let d = crate::engine::assemble::assemble(cycle, a, Status::Feasible, 1.0);
        crate::check::check(cycle.inst, &d).is_valid()
    }

    /// `job` (priority 1,000) evicts `mid` (100) on n1; n2 is full with `low` (0). Moving
    /// the job to n2 and evicting `low` instead trades one eviction at 100 for one at 0.
    #[test]
    fn an_eviction_is_traded_for_one_of_lower_priority() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"4\"}}
  - {name: n2, allocatable: {cpu: \"4\"}}
podGroups:
  - {name: job, priority: 1000, tasks: [{name: w, count: 1, requests: {cpu: \"4\"}}]}
pods:
  - {name: mid, node: n1, priority: 100, requests: {cpu: \"4\"}}
  - {name: low, node: n2, priority: 0, requests: {cpu: \"4\"}}
options: {preemption: true}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let job = group(&inst, "job");
        let b = reduce_evictions(&cycle, &start(&cycle, &[("job", 0)], &["mid"]));
        assert_eq!(b.pods[job].iter().map(|p| p.node).collect::<Vec<_>>(), vec![1]);
        assert_eq!(b.evicted, vec![unit_of(&cycle, "low")]);
        assert!(valid(&cycle, &b));
    }

    /// As above, but n2 holds `low` (50, 2 cpu) and `lowjob` (10, 2 cpu), and `job` needs
    /// 2 cpu: on n2 it would evict `low` only because `lowjob`, which may not evict `low`,
    /// holds the rest of the node (a priority inversion, rule 6). Nothing changes.
    #[test]
    fn no_trade_leaves_an_eviction_that_only_a_lower_group_needs() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"4\"}}
  - {name: n2, allocatable: {cpu: \"4\"}}
podGroups:
  - {name: job, priority: 1000, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
  - {name: lowjob, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
pods:
  - {name: mid, node: n1, priority: 100, requests: {cpu: \"4\"}}
  - {name: low, node: n2, priority: 50, requests: {cpu: \"2\"}}
options: {preemption: true}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let a = start(&cycle, &[("job", 0), ("lowjob", 1)], &["mid"]);
        let b = reduce_evictions(&cycle, &a);
        let at = |x: &Assignment| x.pods.iter().map(|ps| ps.iter().map(|p| (p.task, p.node)).collect::<Vec<_>>()).collect::<Vec<_>>();
        assert_eq!((at(&b), &b.evicted), (at(&a), &a.evicted));
        assert!(valid(&cycle, &b));
    }

    /// On generated cycles with victims, from the Kubernetes-style baseline made to keep
    /// rule 6: the search places the same groups, evicts no more under term 2, and the
    /// validator accepts the result; over all of them it evicts fewer pods somewhere.
    #[test]
    fn fewer_evictions_keep_the_groups_and_stay_valid() {
        use crate::engine::assignment::objective;
        let mut fewer = 0;
        let cases =
            [("preempt-256", 1), ("preempt-256", 2), ("flat-64", 1), ("flat-64", 2), ("flat-64", 3), ("openb-64", 1), ("openb-64", 2)];
        for (class, seed) in cases {
            let mut doc = crate::tooling::generate::generate(class, seed).expect("a class");
            doc.options.get_or_insert_with(Default::default).preemption = Some(true);
            let inst = Instance::from_doc(&doc).expect("generated instances are valid");
            let cycle = Cycle::new(&inst);
            let mut a = crate::baselines::k8s_preempt::preempt_in_order(&cycle).assignment;
            crate::engine::needed::enforce(&cycle, &mut a, &|_| false);
            let b = reduce_evictions(&cycle, &a);
            let name = format!("{class} s{seed}");
            assert!(cycle.pending.iter().all(|&g| a.is_placed(g) == b.is_placed(g)), "{name}: the placed groups changed");
            let terms = |x: &Assignment| {
                let mut o = objective(&inst, &cycle.victims, x);
                (o.extra_pods, o.extra_by_priority) = (0, Vec::new());
                o
            };
            let (before, after) = (terms(&a), terms(&b));
            assert!(!after.compare(&before).is_lt(), "{name}: more evictions");
            fewer += usize::from(after.compare(&before).is_gt());
            assert!(valid(&cycle, &b), "{name}: not valid");
        }
        assert!(fewer > 0, "no case with fewer evictions");
    }
}
