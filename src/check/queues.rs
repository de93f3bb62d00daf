//! Rule 7 (queues: `max`, `maxapplications`, gang admission) and the four rules of
//! `options.preemptionModel: yunikorn`, from the definitions of `models/queues.md`.
//!
//! Written here from those definitions alone: the solver encodes them in its own way and
//! the brute-force reference (`tests/reference`) a third time. This reads the queue tree
//! and the limits of the input ([`Instance::queues`]) and nothing else of the solvers or
//! of `Queues::rejection`.

use super::{qty, Placements, Violation};
use crate::model::queues::{PreemptionPolicy, QueueId, SortPolicy};
use crate::model::Queues;
use crate::model::{GroupId, Instance, PodId, Policy, ResourceId};
use std::collections::{BTreeMap, BTreeSet};

/// What the queues hold after the decision, for rule 7 and for the "needed" test of
/// evictions (undoing an eviction, with only the allowed groups' new pods counted, must
/// break a limit).
pub(super) struct QueueUse {
    /// Per group: its leaf queue, the leaf's parent, ..., `root` (empty: no queue).
    paths: Vec<Vec<QueueId>>,
    /// Per queue, per resource: subtree usage after the decision (bound pods that are not
    /// evicted plus new pods).
    usage: Vec<Vec<i128>>,
    /// Per queue: running groups after the decision.
    running: Vec<i64>,
    /// Per group: placed now, or keeps a bound pod that is not evicted.
    group_running: Vec<bool>,
    /// Per group: keeps a bound pod that is not evicted (and is not being released).
    keeps_bound: Vec<bool>,
    /// Per queue: new pods' requests per group of its subtree.
    new: Vec<BTreeMap<GroupId, Vec<i128>>>,
}

/// `leaf`, its parent, ..., `root`.
fn path_up(qs: &Queues, leaf: QueueId) -> Vec<QueueId> {
    let mut out = vec![leaf];
    let mut q = leaf;
    while let Some(p) = qs.tree.queues[q].parent {
        out.push(p);
        q = p;
    }
    out
}

fn names(inst: &Instance, pods: &[PodId]) -> String {
    pods.iter().map(|&p| inst.pods[p].name.as_str()).collect::<Vec<_>>().join(", ")
}

/// Checks rule 7 and, under `preemptionModel: yunikorn`, YuniKorn's preemption rules;
/// returns the queue usage after the decision (`None` without queues).
pub(super) fn check_queues(
    inst: &Instance,
    pl: &Placements,
    evictions: &BTreeMap<PodId, Option<GroupId>>,
    v: &mut Vec<Violation>,
) -> Option<QueueUse> {
    let qs = inst.queues.as_ref()?;
    let nq = qs.tree.queues.len();
    let nres = inst.resources.len();
    let paths: Vec<Vec<QueueId>> = inst.groups.iter().map(|g| g.queue_id.map(|l| path_up(qs, l)).unwrap_or_default()).collect();
    let pod_path = |p: PodId| inst.pods[p].group.map_or(&[][..], |g| paths[g].as_slice());

    // Bound usage before the cycle, and what is kept after the evictions.
    let mut before = vec![vec![0i128; nres]; nq];
    let mut kept = vec![vec![0i128; nres]; nq];
    for (p, pod) in inst.pods.iter().enumerate() {
        // A pod being released holds its node but counts in no queue.
        if pod.releasing {
            continue;
        }
        for &q in pod_path(p) {
            for r in 0..nres {
                before[q][r] += pod.requests[r] as i128;
                if !evictions.contains_key(&p) {
                    kept[q][r] += pod.requests[r] as i128;
                }
            }
        }
    }
    // New pods per queue, per group under it.
    let mut new: Vec<BTreeMap<GroupId, Vec<i128>>> = vec![BTreeMap::new(); nq];
    for np in &pl.pods {
        for &q in &paths[np.group] {
            let e = new[q].entry(np.group).or_insert_with(|| vec![0; nres]);
            for (acc, &x) in e.iter_mut().zip(&inst.tasks[np.task].requests) {
                *acc += x as i128;
            }
        }
    }
    let usage: Vec<Vec<i128>> =
        (0..nq).map(|q| (0..nres).map(|r| kept[q][r] + new[q].values().map(|u| u[r]).sum::<i128>()).collect()).collect();

    // Limits: max per resource of the subtree usage.
    for q in 0..nq {
        let path = &qs.tree.queues[q].path;
        for &(r, m) in &qs.max[q] {
            if usage[q][r] > m as i128 {
                let parts: Vec<String> = new[q]
                    .iter()
                    .filter(|(_, u)| u[r] > 0)
                    .map(|(&g, u)| format!("{}: {}", inst.groups[g].name, qty(inst, r, u[r])))
                    .collect();
                v.push(Violation::new(
                    7,
                    format!(
                        "queue {path} {} over its max: {} > {} (bound {}, new pods of {})",
                        inst.resources[r],
                        qty(inst, r, usage[q][r]),
                        qty(inst, r, m as i128),
                        qty(inst, r, kept[q][r]),
                        if parts.is_empty() { "none".to_string() } else { parts.join(", ") }
                    ),
                ));
            }
        }
    }

    // Running groups: placed now, or keeping a bound pod that is not evicted.
    let keeps_bound: Vec<bool> = (0..inst.groups.len())
        .map(|g| inst.groups[g].bound.iter().any(|&p| !evictions.contains_key(&p) && !inst.pods[p].releasing))
        .collect();
    let group_running: Vec<bool> = (0..inst.groups.len()).map(|g| pl.placed.contains(&g) || keeps_bound[g]).collect();
    let mut running = vec![0i64; nq];
    let mut running_names: Vec<Vec<&str>> = vec![Vec::new(); nq];
    for g in (0..inst.groups.len()).filter(|&g| group_running[g]) {
        for &q in &paths[g] {
            running[q] += 1;
            running_names[q].push(&inst.groups[g].name);
        }
    }
    for (q, queue) in qs.tree.queues.iter().enumerate() {
        if let Some(n) = queue.max_applications {
            if running[q] as u64 > n {
                v.push(Violation::new(
                    7,
                    format!(
                        "queue {} runs {} groups, above its maxapplications {n}: {}",
                        queue.path,
                        running[q],
                        running_names[q].join(", ")
                    ),
                ));
            }
        }
    }

    // Admission: a placed gang must not be one its queues reject.
    for &g in &pl.placed {
        let grp = &inst.groups[g];
        let Some(&leaf) = paths[g].first() else { continue };
        if grp.policy != Policy::Gang {
            continue;
        }
        if qs.tree.queues[leaf].sort_policy == SortPolicy::Fair {
            v.push(Violation::new(
                7,
                format!(
                    "gang {} is placed, but its queue {} sorts applications fair, where gangs are rejected",
                    grp.name, qs.tree.queues[leaf].path
                ),
            ));
        }
        let ask: Vec<i128> = (0..nres)
            .map(|r| grp.tasks.iter().map(|&t| inst.tasks[t].min_count as i128 * inst.tasks[t].requests[r] as i128).sum())
            .collect();
        for &q in &paths[g] {
            for &(r, m) in &qs.max[q] {
                if ask[r] > m as i128 {
                    v.push(Violation::new(
                        7,
                        format!(
                            "gang {} is placed, but its minimum asks {} {}, above the max {} of queue {} (rejected)",
                            grp.name,
                            qty(inst, r, ask[r]),
                            inst.resources[r],
                            qty(inst, r, m as i128),
                            qs.tree.queues[q].path
                        ),
                    ));
                }
            }
        }
    }

    if inst.options.yunikorn_preemption {
        check_yunikorn(inst, qs, &paths, &before, &usage, evictions, v);
    }
    Some(QueueUse { paths, usage, running, group_running, keeps_bound, new })
}

/// The four rules of `options.preemptionModel: yunikorn` (models/queues.md), reported as
/// rule 6 (they restrict it).
fn check_yunikorn(
    inst: &Instance,
    qs: &Queues,
    paths: &[Vec<QueueId>],
    before: &[Vec<i128>],
    usage: &[Vec<i128>],
    evictions: &BTreeMap<PodId, Option<GroupId>>,
    v: &mut Vec<Violation>,
) {
    let queue = |q: QueueId| &qs.tree.queues[q];
    let path_text = |g: GroupId| queue(paths[g][0]).path.as_str();
    for (&p, &pre) in evictions {
        let pod = &inst.pods[p];
        let victim_path: &[QueueId] = pod.group.map_or(&[][..], |g| paths[g].as_slice());
        // 1. disabled: the nearest preemption.policy on the victim's path, leaf up.
        match victim_path.first() {
            None => v.push(Violation::new(
                6,
                format!("pod {} is evicted but belongs to no queue (preemptionModel yunikorn takes victims only from queues)", pod.name),
            )),
            Some(&leaf) => {
                if let Some(&q) = victim_path.iter().find(|&&q| queue(q).preemption_policy.is_some()) {
                    if queue(q).preemption_policy == Some(PreemptionPolicy::Disabled) {
                        v.push(Violation::new(
                            6,
                            format!(
                                "pod {} of queue {} is evicted, but preemption.policy is disabled there (set on {})",
                                pod.name,
                                queue(leaf).path,
                                queue(q).path
                            ),
                        ));
                    }
                }
            }
        }
        let Some(pg) = pre else { continue };
        if paths[pg].is_empty() {
            continue;
        }
        let pname = &inst.groups[pg].name;
        // 2. fence: victims lie under the deepest fenced queue on the preemptor's path.
        if let Some(&f) = paths[pg].iter().find(|&&q| queue(q).preemption_policy == Some(PreemptionPolicy::Fence)) {
            if !victim_path.is_empty() && !victim_path.contains(&f) {
                v.push(Violation::new(
                    6,
                    format!(
                        "pod {} of queue {} is evicted for group {pname} of queue {}, which is fenced at {} (preemption.policy: fence): victims must lie under it",
                        pod.name,
                        queue(victim_path[0]).path,
                        path_text(pg),
                        queue(f).path
                    ),
                ));
            }
        }
        // 3. the preemptor's path has a queue below a guarantee in a resource it requests.
        let requests = |r: ResourceId| inst.groups[pg].tasks.iter().any(|&t| inst.tasks[t].requests[r] > 0);
        let below = paths[pg].iter().any(|&q| qs.guaranteed[q].iter().any(|&(r, g)| requests(r) && before[q][r] < g as i128));
        if !below {
            v.push(Violation::new(
                6,
                format!(
                    "pod {} is evicted for group {pname} of queue {}, but no queue on that path is below a guaranteed resource the group requests",
                    pod.name,
                    path_text(pg)
                ),
            ));
        }
    }
    // 4. victims never take a queue below its guarantee: with an evicted pod requesting
    //    r in its subtree, the queue's usage after the decision (kept bound pods plus new
    //    pods) is at least min(guarantee, bound usage before the cycle).
    for q in 0..qs.tree.queues.len() {
        for &(r, g) in &qs.guaranteed[q] {
            let victims: Vec<PodId> = evictions
                .keys()
                .copied()
                .filter(|&p| inst.pods[p].requests[r] > 0 && inst.pods[p].group.is_some_and(|h| paths[h].contains(&q)))
                .collect();
            let floor = (g as i128).min(before[q][r]);
            if !victims.is_empty() && usage[q][r] < floor {
                v.push(Violation::new(
                    6,
                    format!(
                        "queue {} is taken below its guaranteed {} {}: it uses {} after evicting {}, below min(guarantee, {} before)",
                        queue(q).path,
                        qty(inst, r, g as i128),
                        inst.resources[r],
                        qty(inst, r, usage[q][r]),
                        names(inst, &victims),
                        qty(inst, r, before[q][r])
                    ),
                ));
            }
        }
    }
}

/// YuniKorn's rules 1-3 (`models/queues.md`) for preemptor `g` and victim pod `p`: the
/// victim's nearest `preemption.policy` is not `disabled` (and it is in a queue), it lies
/// under the deepest fence of `g`'s path, and a queue on `g`'s path is below a guarantee
/// in a resource `g` requests (usage before the cycle).
pub(super) fn yunikorn_may_evict(inst: &Instance, g: GroupId, p: PodId) -> bool {
    let Some(qs) = inst.queues.as_ref() else { return false };
    let path_of = |h: GroupId| inst.groups[h].queue_id.map(|l| path_up(qs, l)).unwrap_or_default();
    let victim_path = inst.pods[p].group.map(path_of).unwrap_or_default();
    let nearest = victim_path.iter().find_map(|&q| qs.tree.queues[q].preemption_policy);
    if victim_path.is_empty() || nearest == Some(PreemptionPolicy::Disabled) {
        return false;
    }
    let path = path_of(g);
    if path.is_empty() {
        return false;
    }
    let fence = path.iter().copied().find(|&q| qs.tree.queues[q].preemption_policy == Some(PreemptionPolicy::Fence));
    if fence.is_some_and(|f| !victim_path.contains(&f)) {
        return false;
    }
    let requests = |r: ResourceId| inst.groups[g].tasks.iter().any(|&t| inst.tasks[t].requests[r] > 0);
    let before = |q: QueueId, r: ResourceId| -> i128 {
        inst.pods
            .iter()
            .filter(|pod| !pod.releasing && pod.group.is_some_and(|h| path_of(h).contains(&q)))
            .map(|pod| pod.requests[r] as i128)
            .sum()
    };
    path.iter().any(|&q| qs.guaranteed[q].iter().any(|&(r, gv)| requests(r) && before(q, r) < gv as i128))
}

impl QueueUse {
    /// Whether putting the bound pods `unit` (evicted now) back breaks a queue limit when
    /// only the new pods of the groups `allowed` to evict it are counted: some queue on
    /// their path goes over its max in a resource they request, or over its
    /// maxapplications because a group of theirs runs again.
    pub(super) fn undo_breaks(&self, inst: &Instance, unit: &[PodId], allowed: &dyn Fn(GroupId) -> bool) -> bool {
        let Some(qs) = inst.queues.as_ref() else { return false };
        let mut add: BTreeMap<QueueId, Vec<i128>> = BTreeMap::new();
        let mut again: BTreeMap<QueueId, BTreeSet<GroupId>> = BTreeMap::new();
        for &p in unit {
            let pod = &inst.pods[p];
            let Some(g) = pod.group else { continue };
            for &q in &self.paths[g] {
                let a = add.entry(q).or_insert_with(|| vec![0; inst.resources.len()]);
                for (acc, &x) in a.iter_mut().zip(&pod.requests) {
                    *acc += x as i128;
                }
                if !self.group_running[g] {
                    again.entry(q).or_default().insert(g);
                }
            }
        }
        // The groups set aside: their new pods leave the usage; one that runs only because
        // it is placed now stops counting as running.
        let set_aside = |q: QueueId| self.new[q].keys().copied().filter(|&g| !allowed(g));
        let usage = |q: QueueId, r: ResourceId| self.usage[q][r] - set_aside(q).map(|g| self.new[q][&g][r]).sum::<i128>();
        let running = |q: QueueId| self.running[q] - set_aside(q).filter(|&g| !self.keeps_bound[g]).count() as i64;
        let over_max = add.iter().any(|(&q, a)| qs.max[q].iter().any(|&(r, m)| a[r] > 0 && usage(q, r) + a[r] > m as i128));
        let over_apps =
            again.iter().any(|(&q, gs)| qs.tree.queues[q].max_applications.is_some_and(|n| (running(q) + gs.len() as i64) as u64 > n));
        over_max || over_apps
    }
}

#[cfg(test)]
mod tests;

/// The group's queue rejects it (instance-format.md, "Reason codes"): a gang in a leaf
/// that sorts applications fair, or whose minimum asks more than some queue's max on its
/// path.
pub(super) fn queue_rejected(inst: &Instance, g: GroupId) -> bool {
    let (Some(qs), Some(leaf)) = (inst.queues.as_ref(), inst.groups[g].queue_id) else { return false };
    let grp = &inst.groups[g];
    if grp.policy != Policy::Gang {
        return false;
    }
    let ask = minimum_ask(inst, g);
    qs.tree.queues[leaf].sort_policy == SortPolicy::Fair
        || path_up(qs, leaf).iter().any(|&q| qs.max[q].iter().any(|&(r, m)| ask[r] > m as i128))
}

/// The group's minimum does not fit what its queues have left after the decision: some
/// queue on its path already runs its `maxapplications` groups (the group not among
/// them), or its usage plus the minimum exceeds a `max`.
pub(super) fn queue_full(inst: &Instance, u: &QueueUse, g: GroupId) -> bool {
    let Some(qs) = inst.queues.as_ref() else { return false };
    let ask = minimum_ask(inst, g);
    u.paths[g].iter().any(|&q| {
        let apps_full = qs.tree.queues[q].max_applications.is_some_and(|n| !u.group_running[g] && u.running[q] as u64 >= n);
        apps_full || qs.max[q].iter().any(|&(r, m)| u.usage[q][r] + ask[r] > m as i128)
    })
}

/// Per resource: the group's minimum (each task's minCount pods).
fn minimum_ask(inst: &Instance, g: GroupId) -> Vec<i128> {
    let grp = &inst.groups[g];
    (0..inst.resources.len())
        .map(|r| grp.tasks.iter().map(|&t| inst.tasks[t].min_count.max(0) as i128 * inst.tasks[t].requests[r] as i128).sum())
        .collect()
}
