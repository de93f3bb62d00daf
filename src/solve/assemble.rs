//! Turns a solver's assignment (pods per group, chosen domains) into the public
//! [`Decision`]: placements, objective terms, and a reason for every unplaced group.

use super::cycle::{Cycle, DeviceIds};
use super::explain;
use crate::decision::*;
use crate::model::*;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
pub struct NewPod {
    pub task: TaskId,
    pub node: NodeId,
    pub devices: DeviceIds,
}

/// A solver's answer in engine ids.
#[derive(Clone, Debug)]
pub struct Assignment {
    /// Per group: its new pods (empty = not placed).
    pub pods: Vec<Vec<NewPod>>,
    /// Per group: the domain chosen at its required level.
    pub domain: Vec<Option<usize>>,
}

impl Assignment {
    pub fn empty(inst: &Instance) -> Assignment {
        Assignment { pods: vec![Vec::new(); inst.groups.len()], domain: vec![None; inst.groups.len()] }
    }
    pub fn is_placed(&self, g: GroupId) -> bool {
        !self.pods[g].is_empty()
    }
}

/// Terms 1-3 of an assignment (the solver's own count; `check` recounts independently).
pub fn objective(inst: &Instance, a: &Assignment) -> Objective {
    let mut rows: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    let mut extra = 0;
    for g in inst.pending_groups() {
        let e = rows.entry(inst.groups[g].priority).or_default();
        e.1 += 1;
        if a.is_placed(g) {
            e.0 += 1;
            extra += a.pods[g].len() as i64 - inst.min_new_pods(g);
        }
    }
    Objective {
        placed_by_priority: rows.into_iter().rev().map(|(priority, (placed, pending))| PlacedRow { priority, placed, pending }).collect(),
        evicted_by_priority: Vec::new(),
        extra_pods: extra,
    }
}

pub fn assemble(cycle: &Cycle, a: &Assignment, status: Status, gap: f64) -> Decision {
    let inst = cycle.inst;
    let mut placements = Vec::new();
    let mut unplaced = Vec::new();
    let reasons = explain::reasons(cycle, a, status == Status::Optimal);
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
            unplaced.push(Unplaced { pod_group: grp.name.clone(), reason: reasons.get(&g).cloned().unwrap_or_else(|| "not placed".into()) });
        }
    }
    Decision {
        status,
        objective: objective(inst, a),
        gap: if gap.is_finite() { gap } else { 0.0 },
        placements,
        unplaced,
        evictions: Vec::new(),
        stats: Default::default(),
    }
}
