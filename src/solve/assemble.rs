//! Turns a solver's assignment (pods per group, chosen domains) into the public
//! [`Decision`]: placements, objective terms, and a reason for every unplaced group.

use super::cycle::{Cycle, DeviceIds, VictimUnit};
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
    /// Victim units evicted (indices into `Cycle::victims`).
    pub evicted: Vec<usize>,
}

impl Assignment {
    pub fn empty(inst: &Instance) -> Assignment {
        Assignment { pods: vec![Vec::new(); inst.groups.len()], domain: vec![None; inst.groups.len()], evicted: Vec::new() }
    }
    pub fn is_placed(&self, g: GroupId) -> bool {
        !self.pods[g].is_empty()
    }
}

/// Terms 1-3 of an assignment (the solver's own count; `check` recounts independently).
pub fn objective(inst: &Instance, victims: &[VictimUnit], a: &Assignment) -> Objective {
    let mut rows: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    let mut extra: BTreeMap<i64, i64> = BTreeMap::new();
    for g in inst.pending_groups() {
        let e = rows.entry(inst.groups[g].rank).or_default();
        e.1 += 1;
        if a.is_placed(g) {
            e.0 += 1;
            *extra.entry(inst.groups[g].rank).or_default() += a.pods[g].len() as i64 - inst.min_new_pods(g);
        }
    }
    let _ = &victims;
    let mut evicted: BTreeMap<i64, i64> = BTreeMap::new();
    for &u in &a.evicted {
        for &p in &victims[u].pods {
            *evicted.entry(inst.pods[p].priority).or_default() += 1;
        }
    }
    Objective {
        placed_by_priority: rows
            .into_iter()
            .rev()
            .map(|(rank, (placed, pending))| PlacedRow { priority: inst.level_key(rank), placed, pending })
            .collect(),
        evicted_by_priority: evicted.into_iter().rev().map(|(priority, pods)| EvictedRow { priority, pods }).collect(),
        extra_pods: extra.values().sum(),
        extra_by_priority: extra
            .into_iter()
            .rev()
            .filter(|&(_, pods)| pods != 0)
            .map(|(rank, pods)| ExtraRow { priority: inst.level_key(rank), pods })
            .collect(),
    }
}

/// The preemptor named for an evicted pod: a placed group allowed to evict its unit,
/// with a new pod on the pod's node if possible (else on another node of the unit);
/// highest priority first, then input order.
fn preemptor(cycle: &Cycle, a: &Assignment, u: usize, node: NodeId) -> Option<GroupId> {
    let inst = cycle.inst;
    let unit = &cycle.victims[u];
    let allowed = |g: GroupId| a.is_placed(g) && cycle.may_preempt(g, u);
    let nodes: Vec<NodeId> = unit.pods.iter().map(|&p| inst.pods[p].node).collect();
    let mut best: Option<(bool, i64, std::cmp::Reverse<GroupId>)> = None;
    for &g in &cycle.pending {
        if !allowed(g) {
            continue;
        }
        let here = a.pods[g].iter().any(|p| p.node == node);
        let near = here || a.pods[g].iter().any(|p| nodes.contains(&p.node));
        if !near {
            continue;
        }
        let key = (here, inst.groups[g].priority, std::cmp::Reverse(g));
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
            unplaced
                .push(Unplaced { pod_group: grp.name.clone(), reason_code: None, reason: reasons.get(&g).cloned().unwrap_or_else(|| "not placed".into()) });
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
