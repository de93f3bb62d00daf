//! Allocation of asks, one at a time, as YuniKorn's scheduling loop does it.
//!
//! Sources (apache/yunikorn-core): `pkg/scheduler/context.go` (`schedule`: one allocation
//! per partition per call, called again at once after an allocation),
//! `pkg/scheduler/partition.go` (`tryAllocate` -> `root.TryAllocate`),
//! `pkg/scheduler/objects/queue.go` (`TryAllocate`: depth first over the sorted child
//! queues; in a leaf the headroom, then the sorted applications, skipping an accepted
//! application that `canRunApp` refuses), `pkg/scheduler/objects/application.go`
//! (`tryAllocate`: the application's asks in order; an ask that does not fit the headroom
//! is skipped, not the application; `tryNodes`: the first node of the iterator the ask
//! fits on; `canReplace`, `tryPlaceholderAllocate`: real pods replace placeholders on
//! their nodes), `sorters.go` (`sortAskByPriority`: priority, then creation time).

use super::nodes::{sorted_nodes, NodeSort};
use super::queues::QueueState;
use crate::engine::assignment::NewPod;
use crate::engine::cycle::{passes_filters, Cycle, NodeState};
use crate::model::*;

/// One ask of an application: `pods` pods of task `task` allocated together (one pod, or
/// one slice of the task's slice size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ask {
    /// The task.
    pub task: TaskId,
    /// Pods in the ask: 1, or the slice size.
    pub pods: i64,
    /// A gang placeholder (same size as the task's pods).
    pub placeholder: bool,
}

/// What YuniKorn's allocation of one ask looks at: node state, queue usage, and per group
/// the domain its `required` level is confined to.
#[derive(Clone)]
pub(crate) struct World<'c, 'a> {
    /// The cycle.
    pub cycle: &'c Cycle<'a>,
    /// Free capacity per node, every allocation so far included.
    pub nodes: Vec<NodeState>,
    /// Queue usage and running applications.
    pub queues: QueueState,
    /// Node sorting policy.
    pub sort: NodeSort,
    /// Per group: the domain of its required level, once fixed (bound members or its
    /// first allocation: the pod-affinity predicate of its pods).
    pub domain: Vec<Option<usize>>,
}

impl<'c, 'a> World<'c, 'a> {
    /// The world before the cycle.
    pub(crate) fn new(cycle: &'c Cycle<'a>, sort: NodeSort) -> World<'c, 'a> {
        let inst = cycle.inst;
        let domain = (0..inst.groups.len())
            .map(|g| match (&cycle.pinned[g], inst.groups[g].required) {
                (Some(Ok(d)), Some(_)) => Some(*d),
                _ => None,
            })
            .collect();
        World { cycle, nodes: cycle.nodes.clone(), queues: QueueState::new(inst), sort, domain }
    }

    /// Requests of `ask` summed over its pods.
    fn ask_requests(&self, ask: &Ask) -> Vec<i64> {
        self.cycle.inst.tasks[ask.task].requests.iter().map(|&q| q * ask.pods).collect()
    }

    /// Whether `n` passes the predicates for group `g`'s task `t`: filters, the required
    /// domain (once fixed), and a label for the task's slice level.
    fn predicates(&self, g: GroupId, t: TaskId, n: NodeId, slice_dom: Option<(usize, usize)>) -> bool {
        let cycle = self.cycle;
        let inst = cycle.inst;
        if !passes_filters(inst, t, n) {
            return false;
        }
        if let Some(l) = inst.groups[g].required {
            match self.domain[g] {
                Some(d) if cycle.domain_of[l][n] != Some(d) => return false,
                _ if cycle.domain_of[l][n].is_none() => return false,
                _ => {}
            }
        }
        if let Some((l, _)) = inst.tasks[t].slice {
            if cycle.domain_of[l][n].is_none() {
                return false;
            }
        }
        slice_dom.is_none_or(|(l, d)| cycle.domain_of[l][n] == Some(d))
    }

    /// YuniKorn's allocation of one ask of group `g`: the ask must fit the queue headroom
    /// (and `canRunApp` for an application that is not running yet); then each pod goes
    /// to the first node of the node iterator (sorted anew after each pod) that passes the
    /// predicates and has room; the pods of a slice stay in the slice domain of its first
    /// pod. All or nothing: on failure nothing changes. On success the node states, queue
    /// usage and the group's domain are updated and the pods returned.
    pub(crate) fn try_ask(&mut self, g: GroupId, ask: &Ask) -> Option<Vec<NewPod>> {
        let cycle = self.cycle;
        let inst = cycle.inst;
        let req = self.ask_requests(ask);
        if !self.queues.can_run(inst, g) || !self.queues.fits_headroom(inst, g, &req) {
            return None;
        }
        let t = ask.task;
        let mut pods: Vec<NewPod> = Vec::new();
        let mut slice_dom: Option<(usize, usize)> = None;
        let saved_domain = self.domain[g];
        for _ in 0..ask.pods {
            let order = sorted_nodes(cycle, &self.nodes, self.sort);
            let mut placed = false;
            for n in order {
                if !self.predicates(g, t, n, slice_dom) {
                    continue;
                }
                if let Some(devices) = self.nodes[n].take(inst, &cycle.shared_ids, &inst.tasks[t].requests) {
                    if slice_dom.is_none() {
                        slice_dom = inst.tasks[t].slice.and_then(|(l, _)| cycle.domain_of[l][n].map(|d| (l, d)));
                    }
                    if let (Some(l), None) = (inst.groups[g].required, self.domain[g]) {
                        self.domain[g] = cycle.domain_of[l][n];
                    }
                    pods.push(NewPod { task: t, node: n, devices });
                    placed = true;
                    break;
                }
            }
            if !placed {
                for p in pods.iter().rev() {
                    self.nodes[p.node].release(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
                }
                self.domain[g] = saved_domain;
                return None;
            }
        }
        self.queues.allocate(inst, g, &req, ask.pods);
        Some(pods)
    }

    /// Places one application's asks member by member, in ask order, each against the
    /// queue headroom and node state of that moment (as repeated scheduling cycles with
    /// only this application pending would); an ask that does not fit is skipped and the
    /// next one tried. Returns per ask the pods placed (`None`: not placed). The entry
    /// point for a cycle-by-cycle simulation that keeps a `World` between cycles.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn place_app_asks(&mut self, g: GroupId, asks: &[Ask]) -> Vec<Option<Vec<NewPod>>> {
        asks.iter().map(|a| self.try_ask(g, a)).collect()
    }

    /// Releases pods of group `g` (placeholders at their timeout): node capacity and queue
    /// usage come back; with `last` the application slot too.
    pub(crate) fn release(&mut self, g: GroupId, pods: &[NewPod], last: bool) {
        let inst = self.cycle.inst;
        let mut req = vec![0; inst.resources.len()];
        for p in pods {
            self.nodes[p.node].release(inst, &self.cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
            for (r, &q) in inst.tasks[p.task].requests.iter().enumerate() {
                req[r] += q;
            }
        }
        self.queues.release(inst, g, &req, pods.len() as i64, last);
        if last && inst.groups[g].required.is_some() && !matches!(self.cycle.pinned[g], Some(Ok(_))) {
            self.domain[g] = None;
        }
    }
}
