//! Fewer evictions for a given set of placed groups: a local search on an assignment.
//!
//! The exact solver's term-1 tier decides which groups are placed, but the solution
//! HiGHS returns for it may evict freely (term 1 does not count evictions). Before the
//! `evicted@` tiers this repair hands the solver a better incumbent for the same placed
//! groups: elastic pods are taken off (they are added back afterwards by
//! [`super::greedy::fill_elastic`]), then each evicted unit, most important first, is put
//! back if the new pods on its nodes can move to other nodes without any eviction. The
//! set of placed groups and every task's pod count stay at least their minimums, so the
//! result places the same groups. A heuristic: it proves nothing, and the caller keeps
//! its result only after checking it against every row of the model.

use super::assemble::{Assignment, NewPod};
use super::cycle::{Cycle, NodeState, UNLIMITED};
use super::k8s_preempt::{release, restore_unit};
use crate::model::*;

/// Pods of task `t` may move between nodes without touching a topology rule.
fn movable(inst: &Instance, t: TaskId) -> bool {
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

fn states_of(cycle: &Cycle, a: &Assignment) -> Vec<NodeState> {
    let inst = cycle.inst;
    let mut st = cycle.nodes.clone();
    for &u in &a.evicted {
        for &p in &cycle.victims[u].pods {
            release(cycle, &mut st[inst.pods[p].node], p);
        }
    }
    for pods in &a.pods {
        for p in pods {
            st[p.node].apply(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
        }
    }
    st
}

/// Keeps only the pods the placed groups' minimums need (tasks that may move), taking
/// off first the pods on nodes where something is evicted.
fn strip_elastic(cycle: &Cycle, a: &mut Assignment) {
    let inst = cycle.inst;
    let mut evicted_on = vec![false; inst.nodes.len()];
    for &u in &a.evicted {
        for &p in &cycle.victims[u].pods {
            evicted_on[inst.pods[p].node] = true;
        }
    }
    for &g in &cycle.pending {
        if !a.is_placed(g) || inst.groups[g].required.is_some() {
            continue;
        }
        let grp = &inst.groups[g];
        let mut pods = std::mem::take(&mut a.pods[g]);
        // Pods on nodes with evictions last, so they are the ones dropped.
        pods.sort_by_key(|p| (evicted_on[p.node], p.node));
        let mut kept: Vec<NewPod> = Vec::new();
        let mut rest: Vec<NewPod> = Vec::new();
        let mut per_task = vec![0i64; inst.tasks.len()];
        for p in pods {
            let t = p.task;
            let keep_min = if grp.policy == Policy::Gang { inst.tasks[t].min_count } else { 0 };
            if !movable(inst, t) || per_task[t] < keep_min {
                per_task[t] += 1;
                kept.push(p);
            } else {
                rest.push(p);
            }
        }
        let need = inst.min_new_pods(g);
        for p in rest {
            if (kept.len() as i64) < need {
                kept.push(p);
            }
        }
        a.pods[g] = kept;
    }
}

/// Is evicted unit `u` still attributed: an allowed preemptor has a new pod on its nodes.
fn attributed(cycle: &Cycle, a: &Assignment, u: usize) -> bool {
    let inst = cycle.inst;
    let unit = &cycle.victims[u];
    cycle.pending.iter().any(|&g| {
        let grp = &inst.groups[g];
        !grp.preempt_never
            && grp.priority > unit.priority
            && unit.pending_group != Some(g)
            && a.pods[g].iter().any(|p| unit.pods.iter().any(|&q| inst.pods[q].node == p.node))
    })
}

/// Tries to put evicted unit `u` back by moving new pods off its nodes; all or nothing.
fn try_unevict(cycle: &Cycle, a: &mut Assignment, st: &mut Vec<NodeState>, u: usize) -> bool {
    let inst = cycle.inst;
    let unit = &cycle.victims[u];
    let mut nodes_u: Vec<NodeId> = unit.pods.iter().map(|&p| inst.pods[p].node).collect();
    nodes_u.sort_unstable();
    nodes_u.dedup();
    let (saved_st, saved_pods) = (st.clone(), a.pods.clone());
    let rollback = |a: &mut Assignment, st: &mut Vec<NodeState>| {
        *st = saved_st.clone();
        a.pods = saved_pods.clone();
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
                    let size = super::greedy::task_size(cycle, p.task);
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
        if !placed {
            rollback(a, st);
            return false;
        }
    }
    let evicted: Vec<usize> = a.evicted.iter().copied().filter(|&x| x != u).collect();
    let before = std::mem::replace(&mut a.evicted, evicted);
    // Every other eviction must keep a preemptor with a pod on its nodes (rule 6).
    if !a.evicted.iter().all(|&x| attributed(cycle, a, x)) {
        a.evicted = before;
        rollback(a, st);
        return false;
    }
    true
}

/// The same placed groups with fewer evictions where the local search finds a way.
pub fn reduce_evictions(cycle: &Cycle, a: &Assignment) -> Assignment {
    let orig = a;
    let mut a = a.clone();
    if a.evicted.is_empty() {
        return a;
    }
    strip_elastic(cycle, &mut a);
    let mut st = states_of(cycle, &a);
    // An eviction whose only preemptor pods were elastic ones: back if it fits, else
    // keep the elastic pods after all.
    for u in a.evicted.clone() {
        if !attributed(cycle, &a, u) {
            if restore_unit(cycle, &mut st, &cycle.victims[u].pods) {
                a.evicted.retain(|&x| x != u);
            } else {
                a = orig.clone();
                st = states_of(cycle, &a);
                break;
            }
        }
    }
    let mut order = a.evicted.clone();
    order.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), std::cmp::Reverse(cycle.victims[u].pods.len()), u));
    for u in order {
        try_unevict(cycle, &mut a, &mut st, u);
    }
    a
}
