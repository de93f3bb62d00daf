//! Queue quotas on the solver side (rule 7, `models/queues.md`): a ledger that keeps the
//! greedy solvers and heuristics inside every queue's `max` and `maxapplications`. The
//! MILP's rows are in `crate::exact::quota_rows`; the validator counts usage with its
//! own code.

use super::assignment::{Assignment, NewPod};
use super::cycle::Cycle;
use crate::model::*;

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
    /// Per group: its bound pods still running (not releasing, not released here).
    kept: Vec<usize>,
    /// A group whose last bound pod is released stops running and frees its application
    /// slot: true only for a final decision's ledger (what is left after it), never while
    /// placing, where a released pod may yet be put back.
    frees_slots: bool,
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
            room.push(queues.max[q].iter().map(|&(r, m)| m - queues.bound_usage(q, r)).collect());
            let running = queues.running_before(q) as i64;
            apps_room.push(queues.tree.queues[q].max_applications.map_or(i64::MAX, |m| m as i64 - running));
        }
        let kept: Vec<usize> = inst.groups.iter().map(|g| g.bound.iter().filter(|&&p| !inst.pods[p].releasing).count()).collect();
        let running = kept.iter().map(|&k| k > 0).collect();
        Some(Ledger { inst, queues, room, apps_room, running, kept, frees_slots: false })
    }

    /// The ledger after assignment `a` (its evictions and new pods).
    pub fn after(cycle: &Cycle<'a>, a: &Assignment) -> Option<Ledger<'a>> {
        Ledger::replay(cycle, a, false)
    }

    /// What a final decision leaves: as [`Ledger::after`], with the application slots of
    /// groups whose every bound pod it evicts freed (rule 7 counts only running groups).
    pub fn settled(cycle: &Cycle<'a>, a: &Assignment) -> Option<Ledger<'a>> {
        Ledger::replay(cycle, a, true)
    }

    fn replay(cycle: &Cycle<'a>, a: &Assignment, frees_slots: bool) -> Option<Ledger<'a>> {
        let mut l = Ledger::new(cycle)?;
        l.frees_slots = frees_slots;
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
            if self.inst.pods[p].releasing {
                continue;
            }
            self.kept[g] = self.kept[g].saturating_sub(1);
            let stops = self.frees_slots && self.kept[g] == 0 && self.running[g];
            for q in self.path(g) {
                for (i, &(r, _)) in self.queues.max[q].iter().enumerate() {
                    self.room[q][i] += self.inst.pods[p].requests[r];
                }
                if stops {
                    self.apps_room[q] = self.apps_room[q].saturating_add(1);
                }
            }
            if stops {
                self.running[g] = false;
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
                    let fmt = |v: i64| crate::wire::quantity::format(v, inst.scale(r));
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
            let before = queues.bound_usage(q, r);
            let lost: i64 =
                under.iter().flat_map(|&h| &inst.groups[h].bound).filter(|&&p| gone[p]).map(|&p| inst.pods[p].requests[r]).sum();
            let kept = before - lost;
            let new: i64 = under.iter().flat_map(|&h| &a.pods[h]).map(|p| inst.tasks[p.task].requests[r]).sum();
            kept + new >= g.min(before)
        })
    })
}
