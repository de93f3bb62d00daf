//! The queue tree of an instance in engine ids: limits per [`ResourceId`], which groups
//! each queue's subtree holds, and the input checks of rule 7 (bound pods already within
//! every `max` and `maxapplications`).
//!
//! This is input model, shared by the solvers and the validator the way [`Instance`] is;
//! what a decision uses of a quota is computed separately by each of them.

use crate::model::*;
use crate::queues::{QueueId, QueueTree, SortPolicy};
use crate::spec::InputError;

/// Queues of one cycle (rule 7 of semantics.md).
#[derive(Clone, Debug)]
pub struct Queues {
    pub tree: QueueTree,
    /// Per queue: `(resource, max)` for the resources this instance uses. A resource the
    /// instance does not use is requested by no pod, so its limit can never bind.
    pub max: Vec<Vec<(ResourceId, i64)>>,
    /// Per queue: `(resource, guaranteed)`, same convention.
    pub guaranteed: Vec<Vec<(ResourceId, i64)>>,
    /// Per queue: the groups whose leaf queue is in its subtree.
    pub groups_under: Vec<Vec<GroupId>>,
}

impl Queues {
    pub fn new(inst: &Instance, tree: QueueTree) -> Result<Queues, InputError> {
        let mut max = Vec::with_capacity(tree.queues.len());
        let mut guaranteed = Vec::with_capacity(tree.queues.len());
        for q in &tree.queues {
            let limits = |m: &indexmap::IndexMap<String, i64>, kind: &str| -> Result<Vec<(ResourceId, i64)>, InputError> {
                let mut out = Vec::new();
                for (name, &v) in m {
                    match inst.resource_id(name) {
                        Some(r) => out.push((r, v)),
                        // Every pod counts one `pods`, but this instance does not count pods
                        // (no node declares them): a limit on them cannot be honoured.
                        None if name == PODS => {
                            return Err(InputError::new(
                                format!("{}.resources.{kind}.pods", q.source),
                                "a pods limit needs the pods resource (declare pods in the nodes' allocatable)",
                            ))
                        }
                        None => {}
                    }
                }
                Ok(out)
            };
            max.push(limits(&q.max, "max")?);
            guaranteed.push(limits(&q.guaranteed, "guaranteed")?);
        }
        let mut groups_under = vec![Vec::new(); tree.queues.len()];
        for (g, grp) in inst.groups.iter().enumerate() {
            if let Some(leaf) = grp.queue_id {
                for q in tree.ancestors(leaf) {
                    groups_under[q].push(g);
                }
            }
        }
        Ok(Queues { tree, max, guaranteed, groups_under })
    }

    /// Requests in resource `r` of the bound pods of queue `q`'s subtree (before any
    /// eviction).
    pub fn bound_usage(&self, inst: &Instance, q: QueueId, r: ResourceId) -> i64 {
        self.groups_under[q].iter().flat_map(|&g| &inst.groups[g].bound).map(|&p| inst.pods[p].requests[r]).sum()
    }

    /// Groups of queue `q`'s subtree running before the cycle (holding a bound pod).
    pub fn running_before(&self, inst: &Instance, q: QueueId) -> usize {
        self.groups_under[q].iter().filter(|&&g| !inst.groups[g].bound.is_empty()).count()
    }

    /// Where a queue's resource limit is written, for messages.
    fn at(&self, q: QueueId, field: &str) -> String {
        let src = &self.tree.queues[q].source;
        if src.is_empty() {
            field.to_string()
        } else {
            format!("{src}.{field}")
        }
    }

    /// The input must already satisfy rule 7 (as bound pods must fit their nodes): a queue
    /// whose bound pods exceed its `max`, or whose running groups exceed
    /// `maxapplications`, is an input error naming the limit.
    pub fn check_bound_usage(&self, inst: &Instance) -> Result<(), InputError> {
        for (q, queue) in self.tree.queues.iter().enumerate() {
            for &(r, m) in &self.max[q] {
                let used = self.bound_usage(inst, q, r);
                if used > m {
                    return Err(InputError::new(
                        self.at(q, &format!("resources.max.{}", inst.resources[r])),
                        format!(
                            "bound pods of queue {} already use {} {}, above its max {}",
                            queue.path,
                            quantity_text(inst, r, used),
                            inst.resources[r],
                            quantity_text(inst, r, m)
                        ),
                    ));
                }
            }
            if let Some(n) = queue.max_applications {
                let running = self.running_before(inst, q) as u64;
                if running > n {
                    return Err(InputError::new(
                        self.at(q, "maxapplications"),
                        format!("queue {} already runs {running} groups, above its maxapplications {n}", queue.path),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Gang admission (rule 7): why pending group `g` can never be placed in its queue,
    /// if that is so. A gang is rejected when its leaf queue sorts `fair`, or when its
    /// total minimum request (every task's minCount pods) exceeds `max` of its leaf queue or
    /// an ancestor in some resource: YuniKorn asks for the placeholders of the whole
    /// minimum at once and refuses the application when that ask can never fit.
    pub fn rejection(&self, inst: &Instance, g: GroupId) -> Option<String> {
        let grp = &inst.groups[g];
        let leaf = grp.queue_id?;
        if grp.policy != Policy::Gang {
            return None;
        }
        if self.tree.queues[leaf].sort_policy == SortPolicy::Fair {
            return Some(format!("rejected: queue {} sorts applications fair, where gangs are not admitted", self.tree.queues[leaf].path));
        }
        for q in self.tree.ancestors(leaf) {
            for &(r, m) in &self.max[q] {
                let ask: i64 = grp.tasks.iter().map(|&t| inst.tasks[t].min_count.saturating_mul(inst.tasks[t].requests[r])).sum();
                if ask > m {
                    return Some(format!(
                        "rejected: its minimum asks {} {} but queue {} has max {}",
                        quantity_text(inst, r, ask),
                        inst.resources[r],
                        self.tree.queues[q].path,
                        quantity_text(inst, r, m)
                    ));
                }
            }
        }
        None
    }
}

fn quantity_text(inst: &Instance, r: ResourceId, v: i64) -> String {
    crate::quantity::format(v, inst.scale(r))
}
