//! The queue tree of an instance in engine ids: limits per resource id, which groups each
//! queue's subtree holds, and what the bound pods already use (built and checked against
//! rule 7 in `build.rs`).
//!
//! This is input model, shared by the solvers and the validator the way
//! [`super::Instance`] is; what a decision uses of a quota is computed separately by each
//! of them.

use super::ids::{GroupId, ResourceId};
use super::queues::{QueueId, QueueTree};

/// Queues of one cycle (rule 7 of semantics.md).
#[derive(Clone, Debug)]
pub struct Queues {
    /// The validated queue tree.
    pub tree: QueueTree,
    /// Per queue: `(resource, max)` for the resources this instance uses. A resource the
    /// instance does not use is requested by no pod, so its limit can never bind.
    pub max: Vec<Vec<(ResourceId, i64)>>,
    /// Per queue: `(resource, guaranteed)`, same convention.
    pub guaranteed: Vec<Vec<(ResourceId, i64)>>,
    /// Per queue: the groups whose leaf queue is in its subtree.
    pub groups_under: Vec<Vec<GroupId>>,
    /// Per queue, per resource: requests of the bound pods of its subtree before any
    /// eviction.
    pub(super) bound: Vec<Vec<i64>>,
    /// Per queue: groups of its subtree running before the cycle (holding a bound pod).
    pub(super) running: Vec<usize>,
}

impl Queues {
    /// Requests in resource `r` of the bound pods of queue `q`'s subtree (before any
    /// eviction).
    pub fn bound_usage(&self, q: QueueId, r: ResourceId) -> i64 {
        self.bound[q][r]
    }

    /// Groups of queue `q`'s subtree running before the cycle (holding a bound pod).
    pub fn running_before(&self, q: QueueId) -> usize {
        self.running[q]
    }
}
