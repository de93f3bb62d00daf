//! Building blocks the baselines share: the queue order, Kubernetes
//! `NodeResourcesFit`-style node scores, and placement of one pod (or one slice of pods)
//! on the node a rule picks.

use crate::engine::assemble::assemble;
use crate::engine::assignment::{Assignment, NewPod};
use crate::engine::cycle::{Cycle, NodeState};
use crate::model::*;
use crate::wire::decision::{Decision, Status};

/// Term-1 level (priority, or effective queue key) highest first, then FIFO by
/// `createdAt`, then input order.
pub(crate) fn queue_order(cycle: &Cycle) -> Vec<GroupId> {
    let inst = cycle.inst;
    let mut order = cycle.pending.clone();
    order.sort_by_key(|&g| (std::cmp::Reverse(inst.groups[g].rank), inst.groups[g].created_at, inst.groups[g].order, g));
    order
}

/// How a pod-by-pod loop picks a node among the feasible ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeRule {
    /// Nodes in input order, the first that fits.
    FirstFit,
    /// Kubernetes `NodeResourcesFit` `LeastAllocated`: highest mean of
    /// (allocatable - requested) / allocatable after placement.
    LeastAllocated,
    /// Kubernetes `NodeResourcesFit` `MostAllocated`: highest mean of
    /// requested / allocatable after placement.
    MostAllocated,
    /// Best fit: least remaining normalized capacity (summed over every resource but
    /// `pods`) after placement.
    BestFit,
}

/// (allocatable, free) of resource `r` on node `n` as the scores see it; shared devices
/// count their milli-shares over all devices.
fn alloc_free(cycle: &Cycle, st: &NodeState, n: NodeId, r: ResourceId) -> (f64, f64) {
    let inst = cycle.inst;
    if inst.shared[r] {
        let si = cycle.shared_ids.iter().position(|&x| x == r).unwrap();
        let alloc = inst.device_count(n, r) as f64 * 1000.0;
        let free: i64 = st.devices[si].iter().map(|&f| f.max(0)).sum();
        (alloc, free as f64)
    } else {
        (inst.nodes[n].allocatable[r] as f64, st.free[r].max(0) as f64)
    }
}

/// The resources a score looks at for task `t`: cpu and memory (NodeResourcesFit's
/// default, weight 1 each), plus every shared device the task requests.
fn score_resources(cycle: &Cycle, t: TaskId) -> Vec<ResourceId> {
    let inst = cycle.inst;
    let mut rs: Vec<ResourceId> = ["cpu", "memory"].iter().filter_map(|n| inst.resource_id(n)).collect();
    for &r in &cycle.shared_ids {
        if inst.tasks[t].requests[r] > 0 {
            rs.push(r);
        }
    }
    rs
}

/// Mean over `rs` of free/allocatable on node `n`, after removing `req` (if given).
fn mean_free_fraction(cycle: &Cycle, st: &NodeState, n: NodeId, rs: &[ResourceId], req: Option<&[i64]>) -> f64 {
    let mut sum = 0.0;
    let mut k = 0;
    for &r in rs {
        let (alloc, free) = alloc_free(cycle, st, n, r);
        if alloc <= 0.0 {
            continue;
        }
        let q = req.map_or(0, |q| q[r]) as f64;
        sum += ((free - q).max(0.0)) / alloc;
        k += 1;
    }
    if k == 0 {
        1.0
    } else {
        sum / k as f64
    }
}

/// Whether one pod of `t` fits on node `n` now.
pub(crate) fn fits(cycle: &Cycle, st: &NodeState, t: TaskId) -> bool {
    st.clone().take(cycle.inst, &cycle.shared_ids, &cycle.inst.tasks[t].requests).is_some()
}

/// Picks a node for one pod of `t` among `cands` (those that fit), by `rule`; ties go to
/// the lower node index.
pub(crate) fn pick(cycle: &Cycle, states: &[NodeState], t: TaskId, cands: &[NodeId], rule: NodeRule) -> Option<NodeId> {
    let inst = cycle.inst;
    let req = &inst.tasks[t].requests;
    let rs = score_resources(cycle, t);
    let mut best: Option<(f64, NodeId)> = None;
    for &n in cands {
        if !fits(cycle, &states[n], t) {
            continue;
        }
        if rule == NodeRule::FirstFit {
            return Some(n);
        }
        // Lower is better.
        let key = match rule {
            NodeRule::FirstFit => 0.0,
            NodeRule::LeastAllocated => -mean_free_fraction(cycle, &states[n], n, &rs, Some(req)),
            NodeRule::MostAllocated => mean_free_fraction(cycle, &states[n], n, &rs, Some(req)),
            NodeRule::BestFit => {
                let all: Vec<ResourceId> = (0..inst.resources.len()).filter(|&r| Some(r) != inst.resource_id(PODS)).collect();
                let mut s = 0.0;
                for r in all {
                    let (alloc, free) = alloc_free(cycle, &states[n], n, r);
                    if alloc > 0.0 {
                        s += (free - req[r] as f64).max(0.0) / alloc;
                    }
                }
                s
            }
        };
        // Round so that float noise never decides a tie (ties go to node order).
        let key = (key * 1e9).round() / 1e9;
        if best.is_none_or(|(b, _)| key < b) {
            best = Some((key, n));
        }
    }
    best.map(|b| b.1)
}

/// Pods of one unit of task `t`: the slice size, else 1.
pub(crate) fn unit_size(cycle: &Cycle, t: TaskId) -> i64 {
    cycle.inst.tasks[t].slice.map_or(1, |(_, k)| k)
}

/// Places one unit (one pod, or one slice) of task `t` on the nodes `allowed` permits,
/// each pod on the node `rule` picks; a slice stays in the slice domain of its first pod.
/// All or nothing: on failure the states are unchanged.
pub(crate) fn place_unit(
    cycle: &Cycle,
    states: &mut [NodeState],
    t: TaskId,
    allowed: &dyn Fn(NodeId) -> bool,
    rule: NodeRule,
) -> Option<Vec<NewPod>> {
    let inst = cycle.inst;
    let size = unit_size(cycle, t);
    let base: Vec<NodeId> = cycle.eligible[t].iter().copied().filter(|&n| allowed(n)).collect();
    let mut pods: Vec<NewPod> = Vec::new();
    let mut saved: Vec<(NodeId, NodeState)> = Vec::new();
    let mut slice_dom: Option<usize> = None;
    for _ in 0..size {
        let cands: Vec<NodeId> = match (inst.tasks[t].slice, slice_dom) {
            (Some((l, _)), Some(d)) => base.iter().copied().filter(|&n| cycle.domain_of[l][n] == Some(d)).collect(),
            _ => base.clone(),
        };
        let Some(n) = pick(cycle, states, t, &cands, rule) else {
            for (m, st) in saved.into_iter().rev() {
                states[m] = st;
            }
            return None;
        };
        saved.push((n, states[n].clone()));
        let devices = states[n].take(inst, &cycle.shared_ids, &inst.tasks[t].requests).expect("pick checked the fit");
        if let Some((l, _)) = inst.tasks[t].slice {
            slice_dom = cycle.domain_of[l][n];
        }
        pods.push(NewPod { task: t, node: n, devices });
    }
    Some(pods)
}

/// Whether new pods `pods` meet group `g`'s minimum (rule 4: every task its minCount, the
/// group its minCount; a basic group one pod).
pub(crate) fn meets_min(cycle: &Cycle, g: GroupId, pods: &[NewPod]) -> bool {
    let inst = cycle.inst;
    if pods.is_empty() {
        return false;
    }
    if inst.groups[g].policy == Policy::Gang {
        for &t in &inst.groups[g].tasks {
            let have = pods.iter().filter(|p| p.task == t).count() as i64;
            if have < inst.tasks[t].min_count {
                return false;
            }
        }
    }
    pods.len() as i64 >= inst.min_new_pods(g)
}

/// Units of task `t` needed for its minimum (whole slices), and units in all.
pub(crate) fn min_and_max_units(cycle: &Cycle, t: TaskId) -> (i64, i64) {
    let task = &cycle.inst.tasks[t];
    let k = unit_size(cycle, t);
    let max = task.count / k;
    // Never more than `count` pods: a minimum that rounds above it cannot be met.
    (((task.min_count + k - 1) / k).min(max), max)
}

/// The required-level domain restriction of group `g`: `(level, domain)` when the domain
/// is fixed (pinned by bound members or chosen), else `None`.
pub(crate) fn in_domain(cycle: &Cycle, lvl_dom: Option<(usize, usize)>, n: NodeId) -> bool {
    match lvl_dom {
        None => true,
        Some((l, d)) => cycle.domain_of[l][n] == Some(d),
    }
}

/// The domain group `g` is pinned to by its bound members, if any.
pub(crate) fn pinned_domain(cycle: &Cycle, g: GroupId) -> Option<(usize, usize)> {
    let l = cycle.inst.groups[g].required?;
    match &cycle.pinned[g] {
        Some(Ok(d)) => Some((l, *d)),
        _ => None,
    }
}

/// Runs a sequence of units of group `g` (tasks, one entry per unit) on `states`, each
/// unit placed by `rule` on nodes `allowed` permits. With a required level and no fixed
/// domain, the first placed pod fixes the domain. Units that do not fit are skipped.
/// Returns the pods and the domain (states keep the pods).
pub(crate) fn run_units(
    cycle: &Cycle,
    states: &mut [NodeState],
    g: GroupId,
    seq: &[TaskId],
    allowed: &dyn Fn(NodeId) -> bool,
    fixed: Option<(usize, usize)>,
    rule: NodeRule,
) -> (Vec<NewPod>, Option<usize>) {
    let required = cycle.inst.groups[g].required;
    let mut dom = fixed.or_else(|| pinned_domain(cycle, g));
    let mut pods = Vec::new();
    for &t in seq {
        let d = dom;
        if let Some(u) = place_unit(cycle, states, t, &|n| allowed(n) && in_domain(cycle, d, n), rule) {
            if dom.is_none() {
                if let Some(l) = required {
                    dom = cycle.domain_of[l][u[0].node].map(|x| (l, x));
                }
            }
            pods.extend(u);
        }
    }
    (pods, dom.map(|x| x.1))
}

/// The usual all-or-nothing group placement of a group-at-a-time scheduler: the units of
/// the minimum first (`min_tasks` order), then the elastic units (`tasks` order); kept if
/// the minimum is met, else rolled back.
pub(crate) fn place_group_min_first(
    cycle: &Cycle,
    states: &mut Vec<NodeState>,
    g: GroupId,
    tasks: &[TaskId],
    allowed: &dyn Fn(NodeId) -> bool,
    fixed: Option<(usize, usize)>,
    rule: NodeRule,
) -> Option<(Vec<NewPod>, Option<usize>)> {
    let mut seq = Vec::new();
    for &t in tasks {
        let (min, _) = min_and_max_units(cycle, t);
        seq.extend(std::iter::repeat_n(t, min as usize));
    }
    for &t in tasks {
        let (min, max) = min_and_max_units(cycle, t);
        seq.extend(std::iter::repeat_n(t, (max - min).max(0) as usize));
    }
    let saved = states.clone();
    let (pods, dom) = run_units(cycle, states, g, &seq, allowed, fixed, rule);
    if meets_min(cycle, g, &pods) {
        Some((pods, dom))
    } else {
        *states = saved;
        None
    }
}

/// Assembles a heuristic's assignment into a decision with the usual stats.
pub(crate) fn finish(cycle: &Cycle, a: &Assignment, name: &str, start: std::time::Instant) -> Decision {
    // The schedulers modelled here place by their own rules; queue quotas (rule 7) are
    // applied after them, as an admission step in term-1 order.
    let mut a = a.clone();
    crate::engine::ledger::enforce(cycle, &mut a);
    let mut d = assemble(cycle, &a, Status::Feasible, f64::NAN);
    d.stats.solver = Some(name.into());
    d.stats.solve_millis = Some(start.elapsed().as_millis() as u64);
    d
}
