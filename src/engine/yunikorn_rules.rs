//! YuniKorn's preemption rules (`options.preemptionModel: yunikorn`, `models/queues.md`),
//! as the solvers apply them on top of rule 6.

use crate::model::*;

/// YuniKorn rule 1: the nearest `preemption.policy` on the pod's queue path is not
/// `disabled`; a pod without a queue is no victim under this model.
pub fn yunikorn_victim_ok(inst: &Instance, p: PodId) -> bool {
    let (Some(queues), Some(g)) = (&inst.queues, inst.pods[p].group) else { return false };
    let Some(leaf) = inst.groups[g].queue_id else { return false };
    let nearest = queues.tree.ancestors(leaf).find_map(|q| queues.tree.queues[q].preemption_policy);
    nearest != Some(PreemptionPolicy::Disabled)
}

/// YuniKorn rule 3: some queue on the group's path guarantees a resource the group
/// requests and is below that guarantee before the cycle.
pub fn yunikorn_preemptor_ok(inst: &Instance, g: GroupId) -> bool {
    let (Some(queues), Some(leaf)) = (&inst.queues, inst.groups[g].queue_id) else { return false };
    let requests = |r: ResourceId| inst.groups[g].tasks.iter().any(|&t| inst.tasks[t].requests[r] > 0);
    queues.tree.ancestors(leaf).any(|q| queues.guaranteed[q].iter().any(|&(r, gv)| requests(r) && queues.bound_usage(q, r) < gv))
}

/// YuniKorn rule 2: the deepest queue on the group's path with `preemption.policy: fence`.
pub fn yunikorn_fence(inst: &Instance, g: GroupId) -> Option<QueueId> {
    let queues = inst.queues.as_ref()?;
    let leaf = inst.groups[g].queue_id?;
    queues.tree.ancestors(leaf).find(|&q| queues.tree.queues[q].preemption_policy == Some(PreemptionPolicy::Fence))
}
