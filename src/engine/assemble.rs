//! Turns a solver's assignment (pods per group, chosen domains) into the public
//! [`Decision`]: placements, objective terms, and a reason for every unplaced group.

use super::assignment::{objective, Assignment, NewPod};
use super::cycle::Cycle;
use super::explain;
use crate::model::*;
use crate::wire::decision::*;
use std::collections::BTreeMap;

/// The preemptor named for an evicted pod: a placed group allowed to evict its unit, with
/// a new pod on the pod's node if possible, else on another node of the unit, else (the
/// witness is a queue limit) anywhere; highest priority first, then input order.
fn preemptor(cycle: &Cycle, a: &Assignment, u: usize, node: NodeId) -> Option<GroupId> {
    let inst = cycle.inst;
    let unit = &cycle.victims[u];
    let nodes: Vec<NodeId> = unit.pods.iter().map(|&p| inst.pods[p].node).collect();
    let mut best: Option<(u8, i64, std::cmp::Reverse<GroupId>)> = None;
    for &g in cycle.pending.iter().filter(|&&g| a.is_placed(g) && cycle.may_preempt(g, u)) {
        let here = a.pods[g].iter().any(|p| p.node == node);
        let near = a.pods[g].iter().any(|p| nodes.contains(&p.node));
        let key = (here as u8 + near as u8, inst.groups[g].priority, std::cmp::Reverse(g));
        if best.is_none_or(|b| key > b) {
            best = Some(key);
        }
    }
    best.map(|b| b.2 .0)
}

pub fn assemble(cycle: &Cycle, a: &Assignment, status: Status, gap: f64) -> Decision {
    let proven = if status == Status::Optimal { explain::Proven::All } else { explain::Proven::Nothing };
    assemble_with(cycle, a, status, gap, proven)
}

/// [`assemble`], for a solver that knows more than its status says (term 1 proven,
/// status `Feasible`): the reasons for unplaced groups use it.
pub fn assemble_with(cycle: &Cycle, a: &Assignment, status: Status, gap: f64, proven: explain::Proven) -> Decision {
    let inst = cycle.inst;
    let mut placements = Vec::new();
    let mut unplaced = Vec::new();
    let reasons = explain::reasons(cycle, a, proven);
    for &g in &cycle.pending {
        let grp = &inst.groups[g];
        if a.is_placed(g) {
            let mut pods: Vec<&NewPod> = a.pods[g].iter().collect();
            // Stable, readable order: task order, then node order.
            pods.sort_by_key(|p| (p.task, p.node, p.devices.clone()));
            let mut domains = BTreeMap::new();
            if let (Some(l), Some(d)) = (grp.required, a.domain[g]) {
                domains.insert(inst.levels[l].clone(), cycle.domain_names[l][d].clone());
            }
            placements.push(Placement {
                pod_group: grp.name.clone(),
                domains,
                pods: pods
                    .into_iter()
                    .map(|p| PlacedPod {
                        task: inst.tasks[p.task].name.clone(),
                        node: inst.nodes[p.node].name.clone(),
                        device_ids: p.devices.iter().map(|(&r, ids)| (inst.resources[r].clone(), ids.clone())).collect(),
                    })
                    .collect(),
            });
        } else {
            unplaced.push(Unplaced {
                pod_group: grp.name.clone(),
                reason_code: reasons.get(&g).map(|r| r.0),
                reason: reasons.get(&g).map_or_else(|| "not placed".into(), |r| r.1.clone()),
            });
        }
    }
    let mut evictions = Vec::new();
    for &u in &a.evicted {
        let unit = &cycle.victims[u];
        for &p in &unit.pods {
            let by = preemptor(cycle, a, u, inst.pods[p].node);
            evictions
                .push(Eviction { pod: inst.pods[p].name.clone(), preemptor: by.map(|g| inst.groups[g].name.clone()).unwrap_or_default() });
        }
    }
    evictions.sort_by(|x, y| x.pod.cmp(&y.pod));
    Decision {
        status,
        objective: objective(inst, &cycle.victims, a),
        gap: if gap.is_finite() { gap } else { 0.0 },
        bounds: None,
        placements,
        unplaced,
        evictions,
        stats: Default::default(),
    }
}
