//! Queue quotas on the solver side (rule 7, `models/queues.md`): the MILP rows, and a
//! ledger that keeps the greedy solvers and heuristics inside every queue's `max` and
//! `maxapplications`. The validator counts usage with its own code.

use super::assemble::{Assignment, NewPod};
use super::cycle::Cycle;
use super::highs::{Mip, INF};
use crate::model::*;
use crate::queues::QueueId;
use std::collections::BTreeMap;

/// Room left under every queue limit while a greedy pass places groups.
///
/// Conservative on purpose: evictions give back resources but never application slots
/// (a group only stops running when all its bound pods go), so whatever the ledger
/// admits is valid.
pub struct Ledger<'a> {
    inst: &'a Instance,
    queues: &'a Queues,
    /// Per queue: room per entry of `queues.max[q]`.
    room: Vec<Vec<i64>>,
    /// Per queue: application slots left (`i64::MAX` when unlimited).
    apps_room: Vec<i64>,
    /// Per group: counts as a running application already.
    running: Vec<bool>,
}

impl<'a> Ledger<'a> {
    /// The ledger before the cycle (every bound pod counted), `None` without queues.
    pub fn new(cycle: &Cycle<'a>) -> Option<Ledger<'a>> {
        let inst = cycle.inst;
        let queues = inst.queues.as_ref()?;
        let n = queues.tree.queues.len();
        let mut room = Vec::with_capacity(n);
        let mut apps_room = Vec::with_capacity(n);
        for q in 0..n {
            room.push(queues.max[q].iter().map(|&(r, m)| m - queues.bound_usage(inst, q, r)).collect());
            let running = queues.running_before(inst, q) as i64;
            apps_room.push(queues.tree.queues[q].max_applications.map_or(i64::MAX, |m| m as i64 - running));
        }
        let running = inst.groups.iter().map(|g| !g.bound.is_empty()).collect();
        Some(Ledger { inst, queues, room, apps_room, running })
    }

    /// The ledger after assignment `a` (its evictions and new pods).
    pub fn after(cycle: &Cycle<'a>, a: &Assignment) -> Option<Ledger<'a>> {
        let mut l = Ledger::new(cycle)?;
        for &u in &a.evicted {
            l.release(&cycle.victims[u].pods);
        }
        for &g in &cycle.pending {
            if a.is_placed(g) {
                l.take(g, &a.pods[g]);
            }
        }
        Some(l)
    }

    fn path(&self, g: GroupId) -> Vec<QueueId> {
        match self.inst.groups[g].queue_id {
            Some(leaf) => self.queues.tree.ancestors(leaf).collect(),
            None => Vec::new(),
        }
    }

    /// Evicted bound pods give their requests back to their queues.
    pub fn release(&mut self, pods: &[PodId]) {
        for &p in pods {
            let Some(g) = self.inst.pods[p].group else { continue };
            for q in self.path(g) {
                for (i, &(r, _)) in self.queues.max[q].iter().enumerate() {
                    self.room[q][i] += self.inst.pods[p].requests[r];
                }
            }
        }
    }

    /// Whether group `g` may add `pods` (and, if it is not running yet, start).
    pub fn fits(&self, g: GroupId, pods: &[NewPod]) -> bool {
        let starts = !self.running[g] && !pods.is_empty();
        self.path(g).into_iter().all(|q| {
            (!starts || self.apps_room[q] >= 1)
                && self.queues.max[q]
                    .iter()
                    .enumerate()
                    .all(|(i, &(r, _))| pods.iter().map(|p| self.inst.tasks[p.task].requests[r]).sum::<i64>() <= self.room[q][i])
        })
    }

    pub fn take(&mut self, g: GroupId, pods: &[NewPod]) {
        if pods.is_empty() {
            return;
        }
        for q in self.path(g) {
            if !self.running[g] {
                self.apps_room[q] = self.apps_room[q].saturating_sub(1);
            }
            for (i, &(r, _)) in self.queues.max[q].iter().enumerate() {
                self.room[q][i] -= pods.iter().map(|p| self.inst.tasks[p.task].requests[r]).sum::<i64>();
            }
        }
        self.running[g] = true;
    }

    /// How many more pods of task `t` (of running group `g`) the quotas admit.
    pub fn room_for(&self, g: GroupId, t: TaskId) -> i64 {
        let mut most = i64::MAX;
        for q in self.path(g) {
            for (i, &(r, _)) in self.queues.max[q].iter().enumerate() {
                let req = self.inst.tasks[t].requests[r];
                if req > 0 {
                    most = most.min(self.room[q][i].max(0) / req);
                }
            }
        }
        most
    }

    /// Trims `pods` of group `g` until they fit: elastic pods first (last placed first,
    /// never one of a slice), and all of them when the minimum does not fit.
    pub fn trim(&self, g: GroupId, pods: &mut Vec<NewPod>) {
        while !self.fits(g, pods) {
            match removable(self.inst, g, pods) {
                Some(i) => {
                    pods.remove(i);
                }
                None => {
                    pods.clear();
                    return;
                }
            }
        }
    }

    /// Why group `g`'s minimum cannot start under the quotas left, if so.
    pub fn blocking(&self, g: GroupId) -> Option<String> {
        let inst = self.inst;
        let grp = &inst.groups[g];
        for q in self.path(g) {
            let queue = &self.queues.tree.queues[q];
            if !self.running[g] && self.apps_room[q] < 1 {
                return Some(format!(
                    "queue {} already runs its maxapplications {} groups",
                    queue.path,
                    queue.max_applications.unwrap_or_default()
                ));
            }
            for (i, &(r, m)) in self.queues.max[q].iter().enumerate() {
                let ask: i64 = grp.tasks.iter().map(|&t| inst.tasks[t].min_count.max(0) * inst.tasks[t].requests[r]).sum();
                if ask > self.room[q][i] {
                    let fmt = |v: i64| crate::quantity::format(v, inst.scale(r));
                    return Some(format!(
                        "queue {} has {} {} of its max {} left, its minimum needs {}",
                        queue.path,
                        fmt(self.room[q][i].max(0)),
                        inst.resources[r],
                        fmt(m),
                        fmt(ask)
                    ));
                }
            }
        }
        None
    }
}

/// Makes an assignment without evictions respect the quotas: groups in term-1 order
/// keep what fits; elastic pods are trimmed first (last placed first, never breaking a
/// slice), and a group whose minimum does not fit is dropped whole.
pub fn enforce(cycle: &Cycle, a: &mut Assignment) {
    let Some(mut ledger) = Ledger::new(cycle) else { return };
    let inst = cycle.inst;
    for &u in &a.evicted {
        ledger.release(&cycle.victims[u].pods);
    }
    let mut order: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| a.is_placed(g)).collect();
    order.sort_by_key(|&g| (std::cmp::Reverse(inst.groups[g].rank), inst.groups[g].created_at, inst.groups[g].order, g));
    for g in order {
        ledger.trim(g, &mut a.pods[g]);
        if a.pods[g].is_empty() {
            a.domain[g] = None;
        }
        ledger.take(g, &a.pods[g]);
    }
}

/// The last pod of `pods` that can go while the group stays placed: an elastic pod of a
/// task without slices (removing one pod of a slice would break it).
fn removable(inst: &Instance, g: GroupId, pods: &[NewPod]) -> Option<usize> {
    let grp = &inst.groups[g];
    let total = pods.len() as i64;
    if total <= inst.min_new_pods(g) {
        return None;
    }
    (0..pods.len()).rev().find(|&i| {
        let t = pods[i].task;
        let task = &inst.tasks[t];
        let of_task = pods.iter().filter(|p| p.task == t).count() as i64;
        task.slice.is_none() && (grp.policy == Policy::Basic || of_task > task.min_count)
    })
}

/// Rule 7 and the YuniKorn guarantee rule as MILP rows over the placement counts `x`,
/// group binaries `y` and eviction binaries `e` (see `models/queues.md`).
pub fn add_rows(
    cycle: &Cycle,
    mip: &mut Mip,
    x: &BTreeMap<(TaskId, NodeId), usize>,
    y: &[Option<usize>],
    e_col: &[Option<usize>],
    knapsack: fn(&mut Mip, Vec<(usize, i64)>, i64),
) -> Vec<(usize, Vec<usize>)> {
    let inst = cycle.inst;
    let mut gone = Vec::new();
    let Some(queues) = &inst.queues else { return gone };
    let mut x_of_task: BTreeMap<TaskId, Vec<usize>> = BTreeMap::new();
    for (&(t, _), &c) in x {
        x_of_task.entry(t).or_default().push(c);
    }
    // Which victim unit holds each bound pod.
    let mut unit_of: Vec<Option<usize>> = vec![None; inst.pods.len()];
    for (u, unit) in cycle.victims.iter().enumerate() {
        for &p in &unit.pods {
            unit_of[p] = Some(u);
        }
    }
    for (q, under) in queues.groups_under.iter().enumerate() {
        let bound = |r: ResourceId| queues.bound_usage(inst, q, r);
        // Evictable requests of the subtree per unit column.
        let freed = |r: ResourceId| -> BTreeMap<usize, i64> {
            let mut m = BTreeMap::new();
            for &g in under {
                for &p in &inst.groups[g].bound {
                    if let Some(c) = unit_of[p].and_then(|u| e_col[u]) {
                        *m.entry(c).or_default() += inst.pods[p].requests[r];
                    }
                }
            }
            m
        };
        for &(r, max) in &queues.max[q] {
            let mut row: Vec<(usize, i64)> = Vec::new();
            let mut worst = 0i64;
            for &g in under {
                for &t in &inst.groups[g].tasks {
                    let req = inst.tasks[t].requests[r];
                    if req > 0 {
                        for &c in x_of_task.get(&t).map(|v| v.as_slice()).unwrap_or(&[]) {
                            row.push((c, req));
                            worst = worst.saturating_add(req.saturating_mul(mip.col_upper[c] as i64));
                        }
                    }
                }
            }
            let room = max - bound(r);
            if worst <= room {
                continue; // cannot bind
            }
            row.extend(freed(r).into_iter().filter(|&(_, v)| v > 0).map(|(c, v)| (c, -v)));
            knapsack(mip, row, room);
        }
        if let Some(m) = queues.tree.queues[q].max_applications {
            let mut row: Vec<(usize, f64)> = Vec::new();
            let mut running = 0i64;
            for &g in under {
                let grp = &inst.groups[g];
                if grp.bound.is_empty() {
                    if let Some(yc) = y[g] {
                        row.push((yc, 1.0));
                    }
                    continue;
                }
                running += 1;
                // a_g <= e_u for every unit holding a member: 1 only when all went.
                let units: Option<Vec<usize>> = grp.bound.iter().map(|&p| unit_of[p].and_then(|u| e_col[u])).collect();
                if let Some(mut cols) = units {
                    cols.sort_unstable();
                    cols.dedup();
                    let ac = mip.add_col(0.0, 1.0, false, format!("gone[{}]", grp.name));
                    for &c in &cols {
                        mip.add_row(-INF, 0.0, vec![(ac, 1.0), (c, -1.0)]);
                    }
                    row.push((ac, -1.0));
                    gone.push((ac, cols));
                }
            }
            let room = m as f64 - running as f64;
            if row.iter().filter(|e| e.1 > 0.0).count() as f64 > room {
                mip.add_row(-INF, room, row);
            }
        }
        if inst.options.yunikorn_preemption {
            for &(r, g) in &queues.guaranteed[q] {
                // usage after >= min(g, before), that is:
                // freed - new <= before - min(g, before) = max(0, before - g).
                let mut row: Vec<(usize, i64)> = freed(r).into_iter().filter(|&(_, v)| v > 0).collect();
                if row.is_empty() {
                    continue;
                }
                for &h in under {
                    for &t in &inst.groups[h].tasks {
                        let req = inst.tasks[t].requests[r];
                        if req > 0 {
                            row.extend(x_of_task.get(&t).into_iter().flatten().map(|&c| (c, -req)));
                        }
                    }
                }
                knapsack(mip, row, (bound(r) - g).max(0));
            }
        }
    }
    gone
}

/// The YuniKorn guarantee rule (4 in `models/queues.md`) on an assignment: for the
/// heuristics that evict.
pub fn guarantees_hold(cycle: &Cycle, a: &Assignment) -> bool {
    let inst = cycle.inst;
    let Some(queues) = inst.queues.as_ref().filter(|_| inst.options.yunikorn_preemption) else { return true };
    let mut gone = vec![false; inst.pods.len()];
    for &u in &a.evicted {
        for &p in &cycle.victims[u].pods {
            gone[p] = true;
        }
    }
    queues.groups_under.iter().enumerate().all(|(q, under)| {
        queues.guaranteed[q].iter().all(|&(r, g)| {
            let before = queues.bound_usage(inst, q, r);
            let lost: i64 =
                under.iter().flat_map(|&h| &inst.groups[h].bound).filter(|&&p| gone[p]).map(|&p| inst.pods[p].requests[r]).sum();
            let kept = before - lost;
            let new: i64 = under.iter().flat_map(|&h| &a.pods[h]).map(|p| inst.tasks[p.task].requests[r]).sum();
            kept + new >= g.min(before)
        })
    })
}

/// YuniKorn rule 1: the nearest `preemption.policy` on the pod's queue path is not
/// `disabled`; a pod without a queue is no victim under this model.
pub fn yunikorn_victim_ok(inst: &Instance, p: PodId) -> bool {
    let (Some(queues), Some(g)) = (&inst.queues, inst.pods[p].group) else { return false };
    let Some(leaf) = inst.groups[g].queue_id else { return false };
    let nearest = queues.tree.ancestors(leaf).find_map(|q| queues.tree.queues[q].preemption_policy);
    nearest != Some(crate::queues::PreemptionPolicy::Disabled)
}

/// YuniKorn rule 3: some queue on the group's path guarantees a resource the group
/// requests and is below that guarantee before the cycle.
pub fn yunikorn_preemptor_ok(inst: &Instance, g: GroupId) -> bool {
    let (Some(queues), Some(leaf)) = (&inst.queues, inst.groups[g].queue_id) else { return false };
    let requests = |r: ResourceId| inst.groups[g].tasks.iter().any(|&t| inst.tasks[t].requests[r] > 0);
    queues.tree.ancestors(leaf).any(|q| queues.guaranteed[q].iter().any(|&(r, gv)| requests(r) && queues.bound_usage(inst, q, r) < gv))
}

/// YuniKorn rule 2: the deepest queue on the group's path with `preemption.policy: fence`.
pub fn yunikorn_fence(inst: &Instance, g: GroupId) -> Option<QueueId> {
    let queues = inst.queues.as_ref()?;
    let leaf = inst.groups[g].queue_id?;
    queues.tree.ancestors(leaf).find(|&q| queues.tree.queues[q].preemption_policy == Some(crate::queues::PreemptionPolicy::Fence))
}
