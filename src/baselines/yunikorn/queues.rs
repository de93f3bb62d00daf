//! Queue state of the YuniKorn port: usage per queue, headroom, `maxapplications`, and
//! the sorting of child queues and of applications in a leaf.
//!
//! Sources (apache/yunikorn-core): `pkg/scheduler/objects/queue.go` (`getHeadRoom`,
//! `internalHeadRoom`, `canRunApp`, `sortQueues`, `sortApplications`,
//! `UpdateQueueProperties`: parent queues always sort `fair`, a leaf by its
//! `application.sort.policy`), `pkg/scheduler/objects/sorters.go` at commit 898790d
//! (`sortQueuesByPriorityAndFairness`, `sortApplicationsByPriorityAndSubmissionTime`, ...;
//! StateAware is gone there and is parsed as FIFO since 1.6), and
//! `pkg/common/resources/resources.go` (`FitInMaxUndef`, `getShares`, `compareShares`,
//! `CompUsageRatio`, `CompUsageRatioSeparately`, `StrictlyGreaterThan`).

use crate::model::queues::{QueueId, SortPolicy};
use crate::model::*;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// A YuniKorn resource: quantity per resource name (`pods` included).
pub(crate) type Res = BTreeMap<String, i64>;

/// Usage and application slots of every queue, as the scheduler updates them at each
/// allocation. Without a queue tree every group is in one FIFO leaf without limits.
#[derive(Clone, Debug)]
pub(crate) struct QueueState {
    /// Per queue, per resource id: allocated (bound pods, then every allocation).
    usage: Vec<Vec<i64>>,
    /// Per queue: pods allocated (YuniKorn counts one `pods` per allocation).
    pods: Vec<i64>,
    /// Per queue: running applications, accepted ones that got an allocation included.
    running: Vec<i64>,
    /// Per group: counted as running (bound members, or an allocation this cycle).
    tracked: Vec<bool>,
}

impl QueueState {
    /// The state before the cycle: bound pods counted in their queues.
    pub(crate) fn new(inst: &Instance) -> QueueState {
        let nq = inst.queues.as_ref().map_or(1, |q| q.tree.queues.len());
        let mut s = QueueState {
            usage: vec![vec![0; inst.resources.len()]; nq],
            pods: vec![0; nq],
            running: vec![0; nq],
            tracked: inst.groups.iter().map(|g| g.bound.iter().any(|&p| !inst.pods[p].releasing)).collect(),
        };
        if let Some(qs) = &inst.queues {
            for q in 0..nq {
                for r in 0..inst.resources.len() {
                    s.usage[q][r] = qs.bound_usage(q, r);
                }
                s.pods[q] = qs.groups_under[q]
                    .iter()
                    .map(|&g| inst.groups[g].bound.iter().filter(|&&p| !inst.pods[p].releasing).count() as i64)
                    .sum();
                s.running[q] = qs.running_before(q) as i64;
            }
        }
        s
    }

    /// The queues on group `g`'s path, leaf first (empty without queues).
    pub(crate) fn path(inst: &Instance, g: GroupId) -> Vec<QueueId> {
        match (&inst.queues, inst.groups[g].queue_id) {
            (Some(qs), Some(leaf)) => qs.tree.ancestors(leaf).collect(),
            _ => Vec::new(),
        }
    }

    /// `headRoom.FitInMaxUndef(ask)`: the ask fits under `max` minus usage of every
    /// queue on the path, for the resources `max` names (others are unlimited).
    pub(crate) fn fits_headroom(&self, inst: &Instance, g: GroupId, ask: &[i64]) -> bool {
        let Some(qs) = &inst.queues else { return true };
        Self::path(inst, g).into_iter().all(|q| qs.max[q].iter().all(|&(r, m)| ask[r] <= m - self.usage[q][r]))
    }

    /// `canRunApp`: an application not yet running may start only where every queue on
    /// its path has a free `maxapplications` slot.
    pub(crate) fn can_run(&self, inst: &Instance, g: GroupId) -> bool {
        if self.tracked[g] {
            return true;
        }
        let Some(qs) = &inst.queues else { return true };
        Self::path(inst, g).into_iter().all(|q| qs.tree.queues[q].max_applications.is_none_or(|m| self.running[q] < m as i64))
    }

    /// Adds an allocation of group `g` (its first one makes it running).
    pub(crate) fn allocate(&mut self, inst: &Instance, g: GroupId, ask: &[i64], pods: i64) {
        let path = Self::path(inst, g);
        if !self.tracked[g] {
            self.tracked[g] = true;
            for &q in &path {
                self.running[q] += 1;
            }
        }
        for &q in &path {
            for (u, &a) in self.usage[q].iter_mut().zip(ask) {
                *u += a;
            }
            self.pods[q] += pods;
        }
    }

    /// Removes an allocation of group `g` (placeholders released at the timeout);
    /// `last` also frees the application slot.
    pub(crate) fn release(&mut self, inst: &Instance, g: GroupId, ask: &[i64], pods: i64, last: bool) {
        let path = Self::path(inst, g);
        for &q in &path {
            for (u, &a) in self.usage[q].iter_mut().zip(ask) {
                *u -= a;
            }
            self.pods[q] -= pods;
        }
        if last && self.tracked[g] && inst.groups[g].bound.is_empty() {
            self.tracked[g] = false;
            for &q in &path {
                self.running[q] -= 1;
            }
        }
    }

    /// Queue `q`'s allocated resource in YuniKorn's terms.
    pub(crate) fn allocated(&self, inst: &Instance, q: QueueId) -> Res {
        res_of(inst, &self.usage[q], self.pods[q])
    }
}

/// A resource vector (with a pod count) as a YuniKorn resource; zero entries dropped.
pub(crate) fn res_of(inst: &Instance, v: &[i64], pods: i64) -> Res {
    let mut m = Res::new();
    for (r, &x) in v.iter().enumerate() {
        if x != 0 && inst.resources[r] != PODS {
            m.insert(inst.resources[r].clone(), x);
        }
    }
    if pods != 0 {
        m.insert(PODS.to_string(), pods);
    }
    m
}

/// `getShares`: each non-zero quantity over its total (the quantity itself where the
/// total is missing or 0), ascending.
fn shares(res: &Res, total: Option<&Res>) -> Vec<f64> {
    let mut s: Vec<f64> = res
        .iter()
        .filter(|(_, &v)| v != 0)
        .map(|(k, &v)| match total.and_then(|t| t.get(k)).copied().filter(|&t| t != 0) {
            Some(t) => v as f64 / t as f64,
            None => v as f64,
        })
        .collect();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    s
}

/// `compareShares`: the largest shares first; leftover shares decide by sign.
fn compare_shares(l: &[f64], r: &[f64]) -> Ordering {
    let (mut i, mut j) = (l.len(), r.len());
    while i > 0 && j > 0 {
        let (a, b) = (l[i - 1], r[j - 1]);
        if a > b {
            return Ordering::Greater;
        }
        if a < b {
            return Ordering::Less;
        }
        i -= 1;
        j -= 1;
    }
    for &a in l[..i].iter().rev() {
        if a > 0.0 {
            return Ordering::Greater;
        }
        if a < 0.0 {
            return Ordering::Less;
        }
    }
    for &b in r[..j].iter().rev() {
        if b > 0.0 {
            return Ordering::Less;
        }
        if b < 0.0 {
            return Ordering::Greater;
        }
    }
    Ordering::Equal
}

/// `CompUsageRatioSeparately(l, lTotal, r, rTotal)`.
pub(crate) fn comp_usage_ratio_separately(l: &Res, lt: Option<&Res>, r: &Res, rt: Option<&Res>) -> Ordering {
    compare_shares(&shares(l, lt), &shares(r, rt))
}

/// `StrictlyGreaterThan(l - r, 0)`: every quantity of `l` at least `r`'s, one larger.
pub(crate) fn strictly_greater(l: &Res, r: &Res) -> bool {
    let mut greater = false;
    for k in l.keys().chain(r.keys()) {
        let d = l.get(k).copied().unwrap_or(0) - r.get(k).copied().unwrap_or(0);
        if d < 0 {
            return false;
        }
        greater |= d > 0;
    }
    greater
}

/// One child queue as its parent sorts it.
pub(crate) struct QueueKey {
    pub queue: QueueId,
    pub priority: i64,
    pub allocated: Res,
    pub guaranteed: Option<Res>,
    pub pending: Res,
}

/// `sortQueue` for a parent (always `fair`): with priority sorting, current priority
/// (descending) first, then usage over guaranteed, then larger pending first; without,
/// usage first. Stable: ties keep configuration order.
pub(crate) fn sort_queues(keys: &mut [QueueKey], consider_priority: bool) {
    keys.sort_by(|l, r| {
        let fair = comp_usage_ratio_separately(&l.allocated, l.guaranteed.as_ref(), &r.allocated, r.guaranteed.as_ref());
        let pending = if strictly_greater(&l.pending, &r.pending) {
            Ordering::Less
        } else if strictly_greater(&r.pending, &l.pending) {
            Ordering::Greater
        } else {
            Ordering::Equal
        };
        let prio = r.priority.cmp(&l.priority);
        if consider_priority {
            prio.then(fair).then(pending)
        } else {
            fair.then(prio).then(pending)
        }
    });
}

/// One application as its leaf sorts it.
pub(crate) struct AppKey {
    pub group: GroupId,
    pub priority: i64,
    pub submitted: i64,
    pub allocated: Res,
}

/// `sortApplications` of a leaf (apps with pending asks only): FIFO (StateAware is
/// FIFO) by priority then submission time, or submission time then priority without
/// priority sorting; FAIR by priority then usage over the leaf's guaranteed, or usage
/// then priority. Stable: ties keep input order.
pub(crate) fn sort_apps(apps: &mut [AppKey], policy: SortPolicy, consider_priority: bool, guaranteed: Option<&Res>) {
    apps.sort_by(|l, r| {
        let prio = r.priority.cmp(&l.priority);
        match policy {
            SortPolicy::Fair => {
                let fair = compare_shares(&shares(&l.allocated, guaranteed), &shares(&r.allocated, guaranteed));
                if consider_priority {
                    prio.then(fair)
                } else {
                    fair.then(prio)
                }
            }
            SortPolicy::Fifo | SortPolicy::StateAware => {
                let time = l.submitted.cmp(&r.submitted);
                if consider_priority {
                    prio.then(time)
                } else {
                    time.then(prio)
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(pairs: &[(&str, i64)]) -> Res {
        pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
    }

    /// `compareShares` by hand: (0.5, 0.2) vs (0.5, 0.1): the largest shares tie, the next
    /// decides; an empty side loses against any positive share.
    #[test]
    fn shares_compare_largest_first() {
        let g = res(&[("cpu", 10), ("memory", 10)]);
        let a = res(&[("cpu", 5), ("memory", 2)]);
        let b = res(&[("cpu", 5), ("memory", 1)]);
        assert_eq!(comp_usage_ratio_separately(&a, Some(&g), &b, Some(&g)), Ordering::Greater);
        assert_eq!(comp_usage_ratio_separately(&Res::new(), Some(&g), &b, Some(&g)), Ordering::Less);
        // No guarantee: the raw quantity is the share.
        assert_eq!(comp_usage_ratio_separately(&res(&[("cpu", 3)]), None, &res(&[("cpu", 2)]), None), Ordering::Greater);
    }

    /// Queues below their guarantee first (usage 2 of 10 before 5 of 10); with priority
    /// sorting the higher current priority wins first.
    #[test]
    fn queues_sort_by_priority_then_fairness() {
        let g = res(&[("cpu", 10)]);
        let mk = |queue, priority, used| QueueKey {
            queue,
            priority,
            allocated: res(&[("cpu", used)]),
            guaranteed: Some(g.clone()),
            pending: res(&[("cpu", 1)]),
        };
        let mut k = vec![mk(1, 0, 5), mk(2, 0, 2), mk(3, 5, 9)];
        sort_queues(&mut k, true);
        assert_eq!(k.iter().map(|x| x.queue).collect::<Vec<_>>(), vec![3, 2, 1]);
        sort_queues(&mut k, false);
        assert_eq!(k.iter().map(|x| x.queue).collect::<Vec<_>>(), vec![2, 1, 3]);
    }

    /// FIFO with priority: priority first, then submission; without: submission first.
    #[test]
    fn apps_sort_fifo_with_and_without_priority() {
        let mk = |group, priority, submitted| AppKey { group, priority, submitted, allocated: Res::new() };
        let mut a = vec![mk(0, 0, 1), mk(1, 10, 5), mk(2, 0, 0)];
        sort_apps(&mut a, SortPolicy::Fifo, true, None);
        assert_eq!(a.iter().map(|x| x.group).collect::<Vec<_>>(), vec![1, 2, 0]);
        sort_apps(&mut a, SortPolicy::StateAware, false, None);
        assert_eq!(a.iter().map(|x| x.group).collect::<Vec<_>>(), vec![2, 0, 1]);
    }
}
