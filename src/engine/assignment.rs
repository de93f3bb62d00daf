//! A solver's answer in engine ids (pods per group, chosen domains, evicted victim
//! units), and its objective terms as the solver counts them.

use super::cycle::{DeviceIds, VictimUnit};
use crate::model::*;
use crate::wire::decision::*;
use std::collections::BTreeMap;

/// One new pod of a group: its task, node and devices.
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

/// Whether `a` is better than `b` under terms 1-3 (lexicographically).
pub fn beats(inst: &Instance, victims: &[VictimUnit], a: &Assignment, b: &Assignment) -> bool {
    objective(inst, victims, a).compare(&objective(inst, victims, b)).is_gt()
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
