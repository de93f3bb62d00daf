//! The cycle as the decomposition engine sees it: interchangeable pending groups merged
//! into group classes with a count, interchangeable nodes into node classes with a count,
//! victim units with the nodes they free room on. `models/decomposition.md` §2 states
//! when each merge is exact and proves it.

use crate::engine::cycle::Cycle;
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Pending groups that no decision can tell apart: same level, priority, policies,
/// minimums, tasks (counts, requests, filters as eligible nodes), required level; no
/// bound members, no slices. Placing any `k` of them is the same as placing the first
/// `k` in FIFO order (§2.1).
#[derive(Clone, Debug)]
pub struct GroupClass {
    /// FIFO order (createdAt, then input order): the first `Y` are the ones placed.
    pub members: Vec<GroupId>,
    /// Task classes, in the members' task order.
    pub tasks: Vec<usize>,
    /// Term-1 level.
    pub rank: i64,
    pub gang: bool,
    /// Fewest / most new pods of one member (`Instance::min_new_pods` / `max_new_pods`).
    pub lo: i64,
    pub hi: i64,
    /// Required topology level, and the domains of it that hold an eligible node.
    pub required: Option<usize>,
    pub domains: Vec<usize>,
    /// Whether some needed task has no eligible node: never placed.
    pub blocked: bool,
}

/// One task position of a group class: the members' tasks at that position.
#[derive(Clone, Debug)]
pub struct TaskClass {
    pub class: usize,
    /// Per member of the class, its task at this position.
    pub tasks: Vec<TaskId>,
    pub count: i64,
    pub min: i64,
    pub req: Vec<i64>,
    /// A slice at a level other than the hostname: master rows per domain.
    pub slice: Option<(usize, i64)>,
    /// Pods per node come in multiples of this (a hostname-level slice), else 1.
    pub step: i64,
    /// Nodes the task may use (the cycle's eligibility of its first member).
    pub eligible: Vec<NodeId>,
}

/// Nodes that no decision can tell apart (§2.2): same free capacity and devices, same
/// eligible task classes, same domains at every level a row reads, no victim on them.
/// A node with a victim is a class of its own.
#[derive(Clone, Debug)]
pub struct NodeClass {
    pub nodes: Vec<NodeId>,
    /// Free capacity per resource before the cycle (`UNLIMITED` where none is set).
    pub free: Vec<i64>,
    /// Per shared resource (index into `Cycle::shared_ids`): free milli per device.
    pub devices: Vec<Vec<i64>>,
    /// Eligible task classes, ascending.
    pub tasks: Vec<usize>,
    /// Victim units with a pod on this node (empty unless the class is one node).
    pub units: Vec<usize>,
    /// Per topology level: the domain of the class's nodes.
    pub domain: Vec<Option<usize>>,
}

/// A victim unit as the engine uses it.
#[derive(Clone, Debug)]
pub struct UnitInfo {
    /// Distinct nodes of its pods, ascending.
    pub nodes: Vec<NodeId>,
    /// Pods on more than one node: its eviction is a master column (§3.4).
    pub multi: bool,
    /// (priority, pods) of its pods, one entry per priority.
    pub pods_by_priority: Vec<(i64, i64)>,
    /// The class of the pending group it belongs to, if any (then it is a victim only
    /// when that group is not placed).
    pub own_class: Option<usize>,
}

pub struct Problem<'c, 'a> {
    pub cycle: &'c Cycle<'a>,
    pub groups: Vec<GroupClass>,
    pub tasks: Vec<TaskClass>,
    pub nodes: Vec<NodeClass>,
    pub units: Vec<UnitInfo>,
    /// Term-1 levels, highest first.
    pub levels: Vec<i64>,
    /// Victim priorities (term-2 levels), highest first.
    pub victim_levels: Vec<i64>,
}

/// Why the engine does not take a cycle, if it does not (the compact model then does).
pub fn unsupported(cycle: &Cycle) -> Option<&'static str> {
    let inst = cycle.inst;
    if inst.queues.is_some() {
        return Some("queues (rule 7 witnesses are not built)");
    }
    if inst.options.yunikorn_preemption {
        return Some("preemptionModel yunikorn");
    }
    let host = inst.levels.len() - 1;
    if cycle.pending.iter().any(|&g| inst.groups[g].required == Some(host)) {
        return Some("a group requires the hostname level");
    }
    None
}

impl<'c, 'a> Problem<'c, 'a> {
    pub fn new(cycle: &'c Cycle<'a>) -> Problem<'c, 'a> {
        let inst = cycle.inst;
        let host = inst.levels.len() - 1;
        // --- group classes
        #[derive(Hash, PartialEq, Eq)]
        struct TaskKey<'k> {
            count: i64,
            min: i64,
            req: &'k [i64],
            eligible: &'k [NodeId],
        }
        #[derive(Hash, PartialEq, Eq)]
        struct GroupKey<'k> {
            rank: i64,
            priority: i64,
            never: bool,
            gang: bool,
            min_count: i64,
            required: Option<usize>,
            preferred: Option<usize>,
            tasks: Vec<TaskKey<'k>>,
        }
        let mut order: Vec<GroupId> = cycle.pending.clone();
        order.sort_by_key(|&g| (inst.groups[g].created_at, inst.groups[g].order, g));
        let mut by_key: HashMap<GroupKey, usize> = HashMap::new();
        let mut groups: Vec<GroupClass> = Vec::new();
        let mut class_of = vec![None; inst.groups.len()];
        let mut tasks: Vec<TaskClass> = Vec::new();
        let mergeable = |g: GroupId| {
            let grp = &inst.groups[g];
            grp.bound.is_empty() && cycle.pinned[g].is_none() && grp.tasks.iter().all(|&t| inst.tasks[t].slice.is_none())
        };
        for &g in &order {
            let grp = &inst.groups[g];
            let live: Vec<TaskId> = grp.tasks.iter().copied().filter(|&t| inst.tasks[t].count > 0).collect();
            let key = GroupKey {
                rank: grp.rank,
                priority: grp.priority,
                never: grp.preempt_never,
                gang: grp.policy == Policy::Gang,
                min_count: grp.min_count,
                required: grp.required,
                preferred: grp.preferred,
                tasks: live
                    .iter()
                    .map(|&t| TaskKey {
                        count: inst.tasks[t].count,
                        min: inst.tasks[t].min_count,
                        req: &inst.tasks[t].requests,
                        eligible: &cycle.eligible[t],
                    })
                    .collect(),
            };
            if mergeable(g) {
                if let Some(&c) = by_key.get(&key) {
                    groups[c].members.push(g);
                    for (i, &t) in live.iter().enumerate() {
                        let tc = groups[c].tasks[i];
                        tasks[tc].tasks.push(t);
                    }
                    class_of[g] = Some(c);
                    continue;
                }
            }
            let c = groups.len();
            let mut tcs = Vec::new();
            let mut blocked = false;
            for &t in &live {
                let task = &inst.tasks[t];
                let (slice, step) = match task.slice {
                    Some((l, k)) if l == host => (None, k.max(1)),
                    Some((l, k)) => (Some((l, k)), 1),
                    None => (None, 1),
                };
                let needed = grp.policy == Policy::Basic || task.min_count > 0;
                if cycle.eligible[t].is_empty() && needed && grp.policy == Policy::Gang {
                    blocked = true;
                }
                tcs.push(tasks.len());
                tasks.push(TaskClass {
                    class: c,
                    tasks: vec![t],
                    count: task.count,
                    min: if grp.policy == Policy::Gang { task.min_count } else { 0 },
                    req: task.requests.clone(),
                    slice,
                    step,
                    eligible: cycle.eligible[t].clone(),
                });
            }
            if grp.policy == Policy::Basic && live.iter().all(|&t| cycle.eligible[t].is_empty()) {
                blocked = true;
            }
            let domains: Vec<usize> = match grp.required {
                Some(l) => {
                    let set: BTreeSet<usize> =
                        live.iter().flat_map(|&t| cycle.eligible[t].iter().filter_map(|&n| cycle.domain_of[l][n])).collect();
                    set.into_iter().collect()
                }
                None => Vec::new(),
            };
            if grp.required.is_some() && domains.is_empty() {
                blocked = true;
            }
            groups.push(GroupClass {
                members: vec![g],
                tasks: tcs,
                rank: grp.rank,
                gang: grp.policy == Policy::Gang,
                lo: inst.min_new_pods(g),
                hi: inst.max_new_pods(g),
                required: grp.required,
                domains,
                blocked,
            });
            class_of[g] = Some(c);
            if mergeable(g) {
                by_key.insert(key, c);
            }
        }

        // --- victim units
        let units: Vec<UnitInfo> = cycle
            .victims
            .iter()
            .map(|u| {
                let nodes: BTreeSet<NodeId> = u.pods.iter().map(|&p| inst.pods[p].node).collect();
                let mut by_prio: BTreeMap<i64, i64> = BTreeMap::new();
                for &p in &u.pods {
                    *by_prio.entry(inst.pods[p].priority).or_default() += 1;
                }
                UnitInfo {
                    multi: nodes.len() > 1,
                    nodes: nodes.into_iter().collect(),
                    pods_by_priority: by_prio.into_iter().rev().collect(),
                    own_class: u.pending_group.and_then(|g| class_of[g]),
                }
            })
            .collect();
        let victim_levels: Vec<i64> = {
            let set: BTreeSet<i64> = units.iter().flat_map(|u| u.pods_by_priority.iter().map(|&(p, _)| p)).collect();
            set.into_iter().rev().collect()
        };

        // --- node classes
        let mut tasks_on: Vec<Vec<usize>> = vec![Vec::new(); inst.nodes.len()];
        for (tc, t) in tasks.iter().enumerate() {
            for &n in &t.eligible {
                tasks_on[n].push(tc);
            }
        }
        // Levels some row reads: required levels and slice levels of pending classes.
        let mut read_levels: BTreeSet<usize> = groups.iter().filter_map(|c| c.required).collect();
        read_levels.extend(tasks.iter().filter_map(|t| t.slice.map(|s| s.0)));
        #[derive(Hash, PartialEq, Eq)]
        struct NodeKey<'k> {
            tasks: &'k [usize],
            free: &'k [i64],
            devices: &'k [Vec<i64>],
            domains: Vec<Option<usize>>,
        }
        let mut by_node_key: HashMap<NodeKey, usize> = HashMap::new();
        let mut nodes: Vec<NodeClass> = Vec::new();
        for n in 0..inst.nodes.len() {
            let units_here = &cycle.victims_on[n];
            if tasks_on[n].is_empty() && units_here.is_empty() {
                continue;
            }
            let domain: Vec<Option<usize>> = (0..inst.levels.len()).map(|l| cycle.domain_of[l][n]).collect();
            if units_here.is_empty() {
                let key = NodeKey {
                    tasks: &tasks_on[n],
                    free: &cycle.nodes[n].free,
                    devices: &cycle.nodes[n].devices,
                    domains: read_levels.iter().map(|&l| domain[l]).collect(),
                };
                if let Some(&k) = by_node_key.get(&key) {
                    nodes[k].nodes.push(n);
                    continue;
                }
                by_node_key.insert(key, nodes.len());
            }
            let mut us = units_here.clone();
            us.sort_unstable();
            nodes.push(NodeClass {
                nodes: vec![n],
                free: cycle.nodes[n].free.clone(),
                devices: cycle.nodes[n].devices.clone(),
                tasks: tasks_on[n].clone(),
                units: us,
                domain,
            });
        }
        Problem { cycle, groups, tasks, nodes, units, levels: inst.rank_levels(), victim_levels }
    }

    /// The domain a node class is in at the required level of task class `tc`'s group.
    pub fn required_domain(&self, tc: usize, k: usize) -> Option<usize> {
        let c = &self.groups[self.tasks[tc].class];
        c.required.and_then(|l| self.nodes[k].domain[l])
    }

    /// Whether the groups of task class `tc` may evict victim unit `u` (rule 6: not
    /// `Never`, priority strictly above the unit's, not its own group).
    pub fn may_evict(&self, tc: usize, u: usize) -> bool {
        let c = self.tasks[tc].class;
        let g = self.groups[c].members[0];
        // Units of a pending group belong to a singleton class; the cycle's own check.
        self.cycle.may_preempt(g, u)
    }
}
