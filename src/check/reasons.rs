//! The reason codes a validator can verify (instance-format.md, "Reason codes"):
//! `no-node-fits`, `queue-rejected` and `queue-full` each claim a condition on the
//! instance and the decision alone; the others depend on what a solver proved. A claimed
//! code must hold, and `no-node-fits`, first in the list, must be claimed whenever it holds.

use super::queues::{queue_full, queue_rejected, QueueUse};
use super::{fit_failures, Violation};
use crate::model::{GroupId, Instance, Policy};
use crate::wire::decision::{Decision, ReasonCode};

pub(super) fn check_reason_codes(inst: &Instance, d: &Decision, queue_use: Option<&QueueUse>, v: &mut Vec<Violation>) {
    for u in &d.unplaced {
        let Some(g) = inst.group_id(&u.pod_group) else { continue };
        let name = &u.pod_group;
        let no_node = fits_no_node(inst, g);
        match u.reason_code {
            Some(ReasonCode::NoNodeFits) if !no_node => {
                v.push(Violation::new(
                    0,
                    format!("group {name} is unplaced with no-node-fits, but every task's pod fits some node of the empty cluster"),
                ));
            }
            Some(code) if no_node && code != ReasonCode::NoNodeFits => {
                v.push(Violation::new(
                    0,
                    format!("group {name} is unplaced with {}, but no-node-fits holds and comes first", code.as_str()),
                ));
            }
            Some(ReasonCode::QueueRejected) if !queue_rejected(inst, g) => {
                v.push(Violation::new(0, format!("group {name} is unplaced with queue-rejected, but its queues admit it")));
            }
            Some(ReasonCode::QueueFull) if !queue_use.is_some_and(|q| queue_full(inst, q, g)) => {
                v.push(Violation::new(
                    0,
                    format!("group {name} is unplaced with queue-full, but its minimum fits under every queue's max and maxapplications after this decision"),
                ));
            }
            _ => {}
        }
    }
}

/// Some pod the group needs fits no node even on an empty cluster view: a needed task
/// (count above 0; for a gang, minCount above 0) with no node that passes its filters
/// and has the allocatable for its requests, or a minimum above the pods the group has.
pub(super) fn fits_no_node(inst: &Instance, g: GroupId) -> bool {
    let grp = &inst.groups[g];
    let tasks: Vec<_> = grp.tasks.iter().copied().filter(|&t| inst.tasks[t].count > 0).collect();
    if grp.policy == Policy::Gang {
        let pods: i64 = tasks.iter().map(|&t| inst.tasks[t].count).sum::<i64>() + grp.bound.len() as i64;
        if grp.min_count > pods {
            return true;
        }
        // Slices: the minimum rounds up to whole slices, which must exist.
        if tasks.iter().any(|&t| inst.tasks[t].slice.is_some_and(|(_, k)| (inst.tasks[t].min_count + k - 1) / k * k > inst.tasks[t].count))
        {
            return true;
        }
    }
    tasks.iter().filter(|&&t| grp.policy == Policy::Basic || inst.tasks[t].min_count > 0).any(|&t| {
        let task = &inst.tasks[t];
        !(0..inst.nodes.len()).any(|n| {
            fit_failures(inst, t, n).is_empty() && task.requests.iter().zip(&inst.nodes[n].allocatable).all(|(&q, &have)| q <= have)
        })
    })
}
