//! Independent validator: checks a [`Decision`] against the hard rules 1-7 of
//! `shared/spec/semantics.md` and recomputes objective terms 1-3. Rule 7 (queues) and
//! YuniKorn's preemption rules live in the submodule `queues` (definitions of
//! `models/queues.md`).
//!
//! Everything here is written from first principles on [`Instance`] and [`Decision`]; it
//! shares no constraint-building or fit code with the solvers, so that a bug in one is
//! not silently repeated in the other.
//!
//! New pods have no names; messages call the `k`-th entry of a group's placement
//! `group/task#k` (`k` = index in that placement's `pods` list).

use crate::model::{
    AffinityOperator, AffinityRequirement, DisruptionMode, GroupId, Instance, NodeId, PodId, Policy, ResourceId, Taint, TaskId, Toleration,
    PODS,
};
use crate::wire::decision::{Decision, EvictedRow, ExtraRow, Objective, PlacedRow, Status};
use crate::wire::quantity::{self, Scale};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

mod queues;
mod reasons;

/// One broken hard rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Rule number of semantics.md (1-7); 0 for a malformed decision or a misreported objective.
    pub rule: u8,
    /// Human-readable, starting with `rule N: ` and naming the pods, nodes and groups involved.
    pub message: String,
}

impl Violation {
    fn new(rule: u8, message: impl fmt::Display) -> Violation {
        Violation { rule, message: format!("rule {rule}: {message}") }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What the validator found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// One entry per hard rule the decision breaks; empty when it is valid.
    pub violations: Vec<Violation>,
    /// Terms 1-3 recomputed from the decision itself.
    pub objective: Objective,
}

impl Report {
    /// No hard rule broken and the objective reported correctly.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }
}

/// One new pod of the decision, with every name resolved.
struct NewPod {
    group: GroupId,
    task: TaskId,
    node: NodeId,
    /// `group/task#k`, for messages.
    label: String,
    /// Device ids as listed, per shared resource (out-of-range ids included; they are
    /// reported as rule 0 and ignored for device usage).
    devices: BTreeMap<ResourceId, Vec<usize>>,
}

/// The placements of the decision, resolved.
struct Placements {
    /// Every known group that appears in `placements` -> its placement indices.
    groups: BTreeMap<GroupId, Vec<usize>>,
    /// Pod entries listed per group (all of them, resolvable or not).
    listed: BTreeMap<GroupId, i64>,
    /// Pending groups with at least one listed pod: the groups the decision places.
    placed: BTreeSet<GroupId>,
    pods: Vec<NewPod>,
}

/// Checks every hard rule and recomputes objective terms 1-3.
pub fn check(inst: &Instance, d: &Decision) -> Report {
    let mut v: Vec<Violation> = Vec::new();
    if d.status == Status::Invalid {
        if !d.placements.is_empty() {
            v.push(Violation::new(0, format!("status Invalid, but the decision has {} placement(s)", d.placements.len())));
        }
        if !d.evictions.is_empty() {
            v.push(Violation::new(0, format!("status Invalid, but the decision has {} eviction(s)", d.evictions.len())));
        }
    }
    let pl = read_placements(inst, d, &mut v);
    check_unplaced(inst, d, &pl, &mut v);
    let evictions = check_evictions(inst, d, &pl, &mut v);
    let evicted: BTreeSet<PodId> = evictions.keys().copied().collect();
    let queue_use = queues::check_queues(inst, &pl, &evictions, &mut v);
    check_capacity(inst, &pl, &evicted, &mut v);
    check_fit(inst, &pl, &mut v);
    check_devices(inst, &pl, &evicted, &mut v);
    check_gang(inst, &pl, &mut v);
    check_topology(inst, d, &pl, &evicted, &mut v);
    check_needed(inst, &pl, &evictions, queue_use.as_ref(), &mut v);
    reasons::check_reason_codes(inst, d, queue_use.as_ref(), &mut v);
    let objective = recompute_objective(inst, &pl, &evicted);
    // An Invalid decision carries no answer, so there is no objective to compare.
    if d.status != Status::Invalid {
        compare_objective(&d.objective, &objective, &mut v);
    }
    v.sort_by_key(|x| x.rule);
    Report { violations: v, objective }
}

/// The human-readable report printed by `tessera check`.
pub fn render(report: &Report) -> String {
    let mut s = String::new();
    for x in &report.violations {
        s.push_str(&x.message);
        s.push('\n');
    }
    let o = &report.objective;
    s.push_str("placed by priority (placed/pending): ");
    if o.placed_by_priority.is_empty() {
        s.push_str("no pending groups");
    } else {
        s.push_str(&placed_rows(&o.placed_by_priority));
    }
    s.push('\n');
    s.push_str("evicted by priority: ");
    if o.evicted_by_priority.is_empty() {
        s.push_str("none");
    } else {
        s.push_str(&evicted_rows(&o.evicted_by_priority));
    }
    s.push('\n');
    if o.extra_by_priority.is_empty() {
        s.push_str(&format!("extra pods: {}\n", o.extra_pods));
    } else {
        s.push_str(&format!("extra pods: {} (by priority {})\n", o.extra_pods, extra_rows(&o.extra_by_priority)));
    }
    if report.violations.is_empty() {
        s.push_str("VALID\n");
    } else {
        s.push_str(&format!("INVALID ({} violations)\n", report.violations.len()));
    }
    s
}

fn placed_rows(rows: &[PlacedRow]) -> String {
    rows.iter().map(|r| format!("{}: {}/{}", r.priority, r.placed, r.pending)).collect::<Vec<_>>().join(", ")
}

fn evicted_rows(rows: &[EvictedRow]) -> String {
    rows.iter().map(|r| format!("{}: {} pod{}", r.priority, r.pods, if r.pods == 1 { "" } else { "s" })).collect::<Vec<_>>().join(", ")
}

fn extra_rows(rows: &[ExtraRow]) -> String {
    rows.iter().map(|r| format!("{}: {}", r.priority, r.pods)).collect::<Vec<_>>().join(", ")
}

fn qty(inst: &Instance, r: ResourceId, value: i128) -> String {
    let scale = inst.scale(r);
    match i64::try_from(value) {
        Ok(x) => quantity::format(x, scale),
        Err(_) => match scale {
            Scale::Milli => format!("{value}m"),
            Scale::Base => value.to_string(),
        },
    }
}

/// Domain value of node `n` at level `l`: the hostname level is the node name, any other
/// level the node's label (none if the node lacks it).
fn domain(inst: &Instance, n: NodeId, l: usize) -> Option<&str> {
    if l + 1 == inst.levels.len() {
        Some(inst.nodes[n].name.as_str())
    } else {
        inst.nodes[n].labels.get(&inst.levels[l]).map(String::as_str)
    }
}

fn task_label(inst: &Instance, t: TaskId) -> String {
    let task = &inst.tasks[t];
    format!("{}/{}", inst.groups[task.group].name, task.name)
}

// ---------------------------------------------------------------------------------------
// Rule 0: the decision's own structure.

fn read_placements(inst: &Instance, d: &Decision, v: &mut Vec<Violation>) -> Placements {
    let mut groups: BTreeMap<GroupId, Vec<usize>> = BTreeMap::new();
    let mut listed: BTreeMap<GroupId, i64> = BTreeMap::new();
    let mut pods = Vec::new();
    for (i, p) in d.placements.iter().enumerate() {
        let Some(g) = inst.group_id(&p.pod_group) else {
            v.push(Violation::new(0, format!("placements[{i}]: unknown pod group {:?}", p.pod_group)));
            continue;
        };
        let grp = &inst.groups[g];
        let entry = groups.entry(g).or_default();
        if let Some(&first) = entry.first() {
            v.push(Violation::new(0, format!("group {} is placed twice (placements[{first}] and placements[{i}])", grp.name)));
        }
        entry.push(i);
        if !inst.is_pending(g) {
            v.push(Violation::new(0, format!("group {} is placed but is not pending (no task has pods to place)", grp.name)));
        }
        if p.pods.is_empty() {
            v.push(Violation::new(0, format!("placements[{i}] of group {} has no pods", grp.name)));
        }
        *listed.entry(g).or_default() += p.pods.len() as i64;
        for key in p.domains.keys() {
            if inst.level_id(key).is_none() {
                v.push(Violation::new(0, format!("placement of group {} names domain of unknown topology level {key:?}", grp.name)));
            }
        }
        for (k, pp) in p.pods.iter().enumerate() {
            let label = format!("{}/{}#{k}", grp.name, pp.task);
            let Some(t) = grp.tasks.iter().copied().find(|&t| inst.tasks[t].name == pp.task) else {
                v.push(Violation::new(0, format!("new pod {label}: group {} has no task {:?}", grp.name, pp.task)));
                continue;
            };
            let Some(n) = inst.node_id(&pp.node) else {
                v.push(Violation::new(0, format!("new pod {label}: unknown node {:?}", pp.node)));
                continue;
            };
            let mut devices = BTreeMap::new();
            for (res, ids) in &pp.device_ids {
                let r = match inst.resource_id(res) {
                    Some(r) if inst.shared[r] => r,
                    _ => {
                        v.push(Violation::new(
                            0,
                            format!("new pod {label} on node {}: deviceIds names {res:?}, which is not in sharedDevices", pp.node),
                        ));
                        continue;
                    }
                };
                let count = inst.device_count(n, r);
                for &id in ids {
                    if id >= count {
                        v.push(Violation::new(
                            0,
                            format!("new pod {label}: {res} device {id} does not exist on node {} ({count} devices)", pp.node),
                        ));
                    }
                }
                devices.insert(r, ids.clone());
            }
            pods.push(NewPod { group: g, task: t, node: n, label, devices });
        }
    }
    let placed = groups.keys().copied().filter(|&g| inst.is_pending(g) && listed.get(&g).copied().unwrap_or(0) > 0).collect();
    Placements { groups, listed, placed, pods }
}

fn check_unplaced(inst: &Instance, d: &Decision, pl: &Placements, v: &mut Vec<Violation>) {
    let mut seen: BTreeSet<GroupId> = BTreeSet::new();
    for (i, u) in d.unplaced.iter().enumerate() {
        let Some(g) = inst.group_id(&u.pod_group) else {
            v.push(Violation::new(0, format!("unplaced[{i}]: unknown pod group {:?}", u.pod_group)));
            continue;
        };
        let name = &inst.groups[g].name;
        if !seen.insert(g) {
            v.push(Violation::new(0, format!("group {name} is listed twice in unplaced")));
            continue;
        }
        if pl.groups.contains_key(&g) {
            v.push(Violation::new(0, format!("group {name} is both placed and listed in unplaced")));
        }
        if !inst.is_pending(g) {
            v.push(Violation::new(0, format!("group {name} is listed in unplaced but is not pending")));
        }
        if u.reason.trim().is_empty() {
            v.push(Violation::new(0, format!("unplaced group {name} has an empty reason")));
        }
    }
    if d.status == Status::Invalid {
        return;
    }
    for g in inst.pending_groups() {
        if !pl.groups.contains_key(&g) && !seen.contains(&g) {
            v.push(Violation::new(0, format!("pending group {} is neither placed nor listed in unplaced", inst.groups[g].name)));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Rule 6: evictions.

/// Validates every eviction; returns the evicted bound pods (those that exist), which
/// free their capacity and devices for rules 1 and 3, with the preemptor each names (if
/// it is a pod group).
fn check_evictions(inst: &Instance, d: &Decision, pl: &Placements, v: &mut Vec<Violation>) -> BTreeMap<PodId, Option<GroupId>> {
    let mut evicted: BTreeMap<PodId, Option<GroupId>> = BTreeMap::new();
    for (i, e) in d.evictions.iter().enumerate() {
        let Some(p) = inst.pod_id(&e.pod) else {
            v.push(Violation::new(6, format!("evictions[{i}]: pod {:?} does not exist", e.pod)));
            continue;
        };
        if evicted.contains_key(&p) {
            v.push(Violation::new(0, format!("pod {} is evicted twice", e.pod)));
            continue;
        }
        let pre = inst.group_id(&e.preemptor);
        if pre.is_none() {
            v.push(Violation::new(6, format!("eviction of pod {}: preemptor {:?} is not a pod group", e.pod, e.preemptor)));
        }
        evicted.insert(p, pre);
    }
    for (&p, &pre) in &evicted {
        let pod = &inst.pods[p];
        let node = &inst.nodes[pod.node].name;
        if !inst.options.preemption {
            v.push(Violation::new(6, format!("pod {} is evicted but options.preemption is false", pod.name)));
        }
        if !pod.preemptible {
            v.push(Violation::new(6, format!("pod {} on node {node} is evicted but is not preemptible", pod.name)));
        }
        if pod.releasing {
            v.push(Violation::new(6, format!("pod {} on node {node} is evicted but is being released (never a victim)", pod.name)));
        }
        if let Some(g) = pod.group {
            if pl.groups.contains_key(&g) {
                v.push(Violation::new(
                    6,
                    format!("pod {} is evicted but belongs to group {}, which this decision places", pod.name, inst.groups[g].name),
                ));
            }
        }
        let Some(pg) = pre else { continue };
        let pgrp = &inst.groups[pg];
        if !pl.placed.contains(&pg) {
            v.push(Violation::new(6, format!("pod {} is evicted for group {}, which is not placed", pod.name, pgrp.name)));
            continue;
        }
        if pgrp.preempt_never {
            v.push(Violation::new(6, format!("pod {} is evicted for group {}, whose preemptionPolicy is Never", pod.name, pgrp.name)));
        }
        if pod.priority >= pgrp.priority {
            v.push(Violation::new(
                6,
                format!(
                    "pod {} (priority {}) is evicted for group {} (priority {}): not strictly lower",
                    pod.name, pod.priority, pgrp.name, pgrp.priority
                ),
            ));
        }
    }
    // PodGroup disruption: evicting one member evicts all bound members.
    let mut groups_hit: BTreeSet<GroupId> = BTreeSet::new();
    for &p in evicted.keys() {
        if let Some(g) = inst.pods[p].group {
            if inst.groups[g].disruption == DisruptionMode::PodGroup {
                groups_hit.insert(g);
            }
        }
    }
    for g in groups_hit {
        let grp = &inst.groups[g];
        let missing: Vec<&str> = grp.bound.iter().filter(|m| !evicted.contains_key(m)).map(|&m| inst.pods[m].name.as_str()).collect();
        if !missing.is_empty() {
            v.push(Violation::new(
                6,
                format!(
                    "group {} has disruptionMode PodGroup: some of its bound members are evicted, so all must be, but not: {}",
                    grp.name,
                    missing.join(", ")
                ),
            ));
        }
    }
    evicted
}

/// Rule 6, "needed by the groups allowed to evict": for each eviction unit (a pod, or the
/// evicted bound members of a `disruptionMode: PodGroup` group together, whose priority is
/// its highest member's), put it back, set aside the new pods of every group that could
/// not evict it (not above its priority, `preemptionPolicy: Never`, or forbidden by
/// YuniKorn's rules under `preemptionModel: yunikorn`), and some hard rule must break:
/// capacity (rule 1) or a device (rule 3, whole users counted as the whole device) on one
/// of its nodes, or a queue's max or maxapplications (rule 7). The named preemptor must
/// have a new pod on one of the unit's nodes unless a queue limit is the witness.
fn check_needed(
    inst: &Instance,
    pl: &Placements,
    evicted: &BTreeMap<PodId, Option<GroupId>>,
    queue_use: Option<&queues::QueueUse>,
    v: &mut Vec<Violation>,
) {
    if evicted.is_empty() {
        return;
    }
    let kept = KeptLoad::new(inst, evicted);
    for unit in eviction_units(inst, evicted) {
        let priority = unit.iter().map(|&p| inst.pods[p].priority).max().unwrap_or(0);
        let allowed = |g: GroupId| {
            let grp = &inst.groups[g];
            pl.placed.contains(&g)
                && !grp.preempt_never
                && grp.priority > priority
                && unit.iter().all(|&p| inst.pods[p].group != Some(g))
                && (!inst.options.yunikorn_preemption || unit.iter().all(|&p| queues::yunikorn_may_evict(inst, g, p)))
        };
        let nodes: BTreeSet<NodeId> = unit.iter().map(|&p| inst.pods[p].node).collect();
        let node_witness = nodes.iter().any(|&n| kept.breaks_on(inst, pl, n, &unit, &allowed));
        let queue_witness = queue_use.is_some_and(|q| q.undo_breaks(inst, &unit, &allowed));
        let names: Vec<&str> = unit.iter().map(|&p| inst.pods[p].name.as_str()).collect();
        let node_names: Vec<&str> = nodes.iter().map(|&n| inst.nodes[n].name.as_str()).collect();
        if !node_witness && !queue_witness {
            let mut users: Vec<&str> = pl
                .pods
                .iter()
                .filter(|np| nodes.contains(&np.node) && !allowed(np.group))
                .map(|np| inst.groups[np.group].name.as_str())
                .collect();
            users.sort_unstable();
            users.dedup();
            v.push(Violation::new(
                6,
                format!(
                    "eviction of {} (priority {priority}) on node {} is not needed by the groups allowed to evict it: put back, it fits beside their new pods; {}",
                    names.join(", "),
                    node_names.join(", "),
                    if users.is_empty() {
                        "no other group uses its room".to_string()
                    } else {
                        format!("its room is used by {}, which may not evict it", users.join(", "))
                    }
                ),
            ));
            continue;
        }
        // With a node witness only, the preemptor named must be one of the groups there.
        if !queue_witness {
            for &p in &unit {
                let Some(&Some(pre)) = evicted.get(&p) else { continue };
                if !pl.pods.iter().any(|np| np.group == pre && nodes.contains(&np.node)) {
                    v.push(Violation::new(
                        6,
                        format!(
                            "pod {} on node {} is evicted for group {}, which places no new pod on {}",
                            inst.pods[p].name,
                            inst.nodes[inst.pods[p].node].name,
                            inst.groups[pre].name,
                            node_names.join(", ")
                        ),
                    ));
                }
            }
        }
    }
}

/// The units of eviction: one pod, or the evicted bound members of a PodGroup group.
fn eviction_units(inst: &Instance, evicted: &BTreeMap<PodId, Option<GroupId>>) -> Vec<Vec<PodId>> {
    let mut units: Vec<Vec<PodId>> = Vec::new();
    let mut groups_done: BTreeSet<GroupId> = BTreeSet::new();
    for &p in evicted.keys() {
        match inst.pods[p].group {
            Some(g) if inst.groups[g].disruption == DisruptionMode::PodGroup => {
                if groups_done.insert(g) {
                    units.push(inst.groups[g].bound.iter().copied().filter(|m| evicted.contains_key(m)).collect());
                }
            }
            _ => units.push(vec![p]),
        }
    }
    units
}

/// What the bound pods that stay use, per node and per device.
struct KeptLoad {
    /// Per node, per resource.
    used: Vec<Vec<i128>>,
    /// (node, resource, device) -> milli used, whole users counted as 1000.
    devices: BTreeMap<(NodeId, ResourceId, usize), i128>,
}

impl KeptLoad {
    fn new(inst: &Instance, evicted: &BTreeMap<PodId, Option<GroupId>>) -> KeptLoad {
        let nres = inst.resources.len();
        let mut used = vec![vec![0i128; nres]; inst.nodes.len()];
        let mut devices = BTreeMap::new();
        for (_, p) in inst.pods.iter().enumerate().filter(|(i, _)| !evicted.contains_key(i)) {
            for r in 0..nres {
                used[p.node][r] += p.requests[r] as i128;
            }
            add_device_use(inst, &mut devices, p.node, &p.requests, &p.devices);
        }
        KeptLoad { used, devices }
    }

    /// Whether node `n` breaks capacity or a device with `unit` put back beside the kept
    /// pods and the new pods of the `allowed` groups on `n`.
    fn breaks_on(&self, inst: &Instance, pl: &Placements, n: NodeId, unit: &[PodId], allowed: &dyn Fn(GroupId) -> bool) -> bool {
        let node = &inst.nodes[n];
        let nres = inst.resources.len();
        let pods_rid = inst.resource_id(PODS);
        let mut used = self.used[n].clone();
        let mut back = vec![0i128; nres];
        let mut devices: BTreeMap<(NodeId, ResourceId, usize), i128> = BTreeMap::new();
        for &p in unit.iter().filter(|&&p| inst.pods[p].node == n) {
            let pod = &inst.pods[p];
            for r in 0..nres {
                back[r] += pod.requests[r] as i128;
            }
            add_device_use(inst, &mut devices, n, &pod.requests, &pod.devices);
        }
        for np in pl.pods.iter().filter(|np| np.node == n && allowed(np.group)) {
            let req = &inst.tasks[np.task].requests;
            for r in 0..nres {
                used[r] += req[r] as i128;
            }
            let ids: BTreeMap<ResourceId, Vec<usize>> =
                np.devices.iter().map(|(&r, ids)| (r, ids.iter().copied().collect::<BTreeSet<_>>().into_iter().collect())).collect();
            add_device_use(inst, &mut devices, n, req, &ids);
        }
        let capacity = (0..nres).any(|r| {
            !inst.shared[r] && (Some(r) != pods_rid || node.limits_pods) && back[r] > 0 && used[r] + back[r] > node.allocatable[r] as i128
        });
        // Only the unit's own devices can break by putting it back.
        let unit_devices: BTreeSet<(NodeId, ResourceId, usize)> = unit
            .iter()
            .filter(|&&p| inst.pods[p].node == n)
            .flat_map(|&p| inst.pods[p].devices.iter().flat_map(move |(&r, ids)| ids.iter().map(move |&d| (n, r, d))))
            .collect();
        let device =
            unit_devices.iter().any(|key| self.devices.get(key).copied().unwrap_or(0) + devices.get(key).copied().unwrap_or(0) > 1000);
        capacity || device
    }
}

/// Adds what a pod with `requests` holding `ids` uses of each device: its share, or 1000
/// for a whole-device user (a whole user beside any other user is then above 1000, which
/// is rule 3's exclusivity). Ids beyond the node's devices are ignored (reported elsewhere).
fn add_device_use(
    inst: &Instance,
    devices: &mut BTreeMap<(NodeId, ResourceId, usize), i128>,
    n: NodeId,
    requests: &[i64],
    ids: &BTreeMap<ResourceId, Vec<usize>>,
) {
    for (&r, ids) in ids {
        if !inst.shared[r] || requests[r] <= 0 {
            continue;
        }
        for &d in ids.iter().filter(|&&d| d < inst.device_count(n, r)) {
            *devices.entry((n, r, d)).or_default() += requests[r].min(1000) as i128;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Rule 1: capacity.

#[allow(clippy::needless_range_loop)] // r indexes several per-resource vectors at once
fn check_capacity(inst: &Instance, pl: &Placements, evicted: &BTreeSet<PodId>, v: &mut Vec<Violation>) {
    let nres = inst.resources.len();
    let pods_rid = inst.resource_id(PODS);
    let mut bound = vec![vec![0i128; nres]; inst.nodes.len()];
    for (i, p) in inst.pods.iter().enumerate() {
        if evicted.contains(&i) {
            continue;
        }
        for (acc, &q) in bound[p.node].iter_mut().zip(&p.requests) {
            *acc += q as i128;
        }
    }
    // New pods per node, per task.
    let mut new: Vec<BTreeMap<TaskId, i128>> = vec![BTreeMap::new(); inst.nodes.len()];
    for np in &pl.pods {
        *new[np.node].entry(np.task).or_default() += 1;
    }
    for (n, node) in inst.nodes.iter().enumerate() {
        if new[n].is_empty() {
            continue;
        }
        for r in 0..nres {
            if inst.shared[r] {
                continue; // checked per device (rule 3)
            }
            if Some(r) == pods_rid && !node.limits_pods {
                continue; // no pods limit on this node
            }
            let added: i128 = new[n].iter().map(|(&t, &c)| c * inst.tasks[t].requests[r] as i128).sum();
            let total = bound[n][r] + added;
            let alloc = node.allocatable[r] as i128;
            if total > alloc {
                let parts: Vec<String> = new[n]
                    .iter()
                    .filter(|(&t, _)| inst.tasks[t].requests[r] > 0)
                    .map(|(&t, &c)| format!("{}: {}", task_label(inst, t), qty(inst, r, c * inst.tasks[t].requests[r] as i128)))
                    .collect();
                v.push(Violation::new(
                    1,
                    format!(
                        "node {} {} over capacity: {} > {} (bound {}, new pods of {})",
                        node.name,
                        inst.resources[r],
                        qty(inst, r, total),
                        qty(inst, r, alloc),
                        qty(inst, r, bound[n][r]),
                        parts.join(", ")
                    ),
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Rule 2: node fit.

/// Kubernetes `Toleration.ToleratesTaint`.
fn tolerates(tol: &Toleration, taint: &Taint) -> bool {
    if !tol.effect.is_empty() && tol.effect != taint.effect {
        return false;
    }
    let key_ok = if tol.key.is_empty() { tol.exists } else { tol.key == taint.key };
    key_ok && (tol.exists || tol.value == taint.value)
}

/// Kubernetes' `NodeSelectorRequirement` semantics on the node's labels.
fn requirement_matches(req: &AffinityRequirement, node: &crate::model::Node) -> bool {
    let label = node.labels.get(&req.key).map(String::as_str);
    let listed = label.is_some_and(|l| req.values.iter().any(|v| v == l));
    let compare = |want: std::cmp::Ordering| {
        let node_value = label.and_then(|l| l.trim().parse::<i64>().ok());
        let bound = req.values.first().and_then(|b| b.trim().parse::<i64>().ok());
        matches!((node_value, bound), (Some(a), Some(b)) if a.cmp(&b) == want)
    };
    match req.operator {
        AffinityOperator::In => listed,
        AffinityOperator::NotIn => !listed,
        AffinityOperator::Exists => label.is_some(),
        AffinityOperator::DoesNotExist => label.is_none(),
        AffinityOperator::Gt => compare(std::cmp::Ordering::Greater),
        AffinityOperator::Lt => compare(std::cmp::Ordering::Less),
    }
}

fn check_fit(inst: &Instance, pl: &Placements, v: &mut Vec<Violation>) {
    // Fit depends only on (task, node): report each pair once, with its pod count.
    let mut pairs: BTreeMap<(TaskId, NodeId), usize> = BTreeMap::new();
    for np in &pl.pods {
        *pairs.entry((np.task, np.node)).or_default() += 1;
    }
    for (&(t, n), &count) in &pairs {
        let reasons = fit_failures(inst, t, n);
        if !reasons.is_empty() {
            v.push(Violation::new(
                2,
                format!("{count} new pod(s) of {} on node {}: {}", task_label(inst, t), inst.nodes[n].name, reasons.join("; ")),
            ));
        }
    }
}

/// Why a pod of task `t` may not run on node `n` (rule 2); empty when it may.
fn fit_failures(inst: &Instance, t: TaskId, n: NodeId) -> Vec<String> {
    let task = &inst.tasks[t];
    let node = &inst.nodes[n];
    let mut reasons = Vec::new();
    if node.unschedulable {
        reasons.push("node is unschedulable".to_string());
    }
    for (k, want) in &task.node_selector {
        match node.labels.get(k) {
            Some(have) if have == want => {}
            Some(have) => reasons.push(format!("nodeSelector {k}={want} does not match (node has {k}={have})")),
            None => reasons.push(format!("nodeSelector {k}={want} does not match (node has no label {k})")),
        }
    }
    if let Some(terms) = &task.node_affinity {
        if !terms.iter().any(|term| term.iter().all(|req| requirement_matches(req, node))) {
            reasons.push("no nodeAffinity term matches the node's labels".to_string());
        }
    }
    for taint in &node.taints {
        if taint.effect != "NoSchedule" && taint.effect != "NoExecute" {
            continue;
        }
        if !task.tolerations.iter().any(|tol| tolerates(tol, taint)) {
            let shown = if taint.value.is_empty() {
                format!("{}:{}", taint.key, taint.effect)
            } else {
                format!("{}={}:{}", taint.key, taint.value, taint.effect)
            };
            reasons.push(format!("taint {shown} is not tolerated"));
        }
    }
    reasons
}

// ---------------------------------------------------------------------------------------
// Rule 3: shared devices.

struct DeviceUse {
    used: i128,
    /// (pod, milli taken, holds the device whole)
    users: Vec<(String, i64, bool)>,
}

fn check_devices(inst: &Instance, pl: &Placements, evicted: &BTreeSet<PodId>, v: &mut Vec<Violation>) {
    for r in 0..inst.resources.len() {
        if !inst.shared[r] {
            continue;
        }
        let res = &inst.resources[r];
        let mut dev: Vec<Vec<DeviceUse>> = (0..inst.nodes.len())
            .map(|n| (0..inst.device_count(n, r)).map(|_| DeviceUse { used: 0, users: Vec::new() }).collect())
            .collect();
        for (i, p) in inst.pods.iter().enumerate() {
            if evicted.contains(&i) {
                continue;
            }
            let req = p.requests[r];
            if req <= 0 {
                continue;
            }
            for &id in p.devices.get(&r).map(Vec::as_slice).unwrap_or(&[]) {
                if let Some(u) = dev[p.node].get_mut(id) {
                    u.used += req.min(1000) as i128;
                    u.users.push((format!("bound {}", p.name), req.min(1000), req >= 1000));
                }
            }
        }
        for np in &pl.pods {
            let req = inst.tasks[np.task].requests[r];
            let ids: &[usize] = np.devices.get(&r).map(Vec::as_slice).unwrap_or(&[]);
            let node = &inst.nodes[np.node].name;
            let distinct: BTreeSet<usize> = ids.iter().copied().collect();
            if req <= 0 {
                if !ids.is_empty() {
                    v.push(Violation::new(3, format!("new pod {} on node {node} lists {res} devices {ids:?} but requests none", np.label)));
                }
                continue;
            }
            if req < 1000 {
                if ids.len() != 1 {
                    v.push(Violation::new(
                        3,
                        format!(
                            "new pod {} on node {node} requests {} {res} (a fraction): it must list exactly one device, lists {ids:?}",
                            np.label,
                            quantity::format(req, Scale::Milli)
                        ),
                    ));
                }
            } else {
                if req % 1000 != 0 {
                    v.push(Violation::new(
                        3,
                        format!(
                            "new pod {} requests {} {res}: more than one device must be whole",
                            np.label,
                            quantity::format(req, Scale::Milli)
                        ),
                    ));
                }
                let need = (req / 1000) as usize;
                if ids.len() != need || distinct.len() != ids.len() {
                    v.push(Violation::new(
                        3,
                        format!(
                            "new pod {} on node {node} requests {} {res}: it must list {need} distinct device(s), lists {ids:?}",
                            np.label,
                            quantity::format(req, Scale::Milli)
                        ),
                    ));
                }
            }
            for &id in &distinct {
                if let Some(u) = dev[np.node].get_mut(id) {
                    u.used += req.min(1000) as i128;
                    u.users.push((format!("new {}", np.label), req.min(1000), req >= 1000));
                }
            }
        }
        for (n, devices) in dev.iter().enumerate() {
            let node = &inst.nodes[n].name;
            for (id, u) in devices.iter().enumerate() {
                let users = || {
                    u.users
                        .iter()
                        .map(|(name, m, _)| format!("{name}: {}", quantity::format(*m, Scale::Milli)))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                if u.users.len() > 1 && u.users.iter().any(|x| x.2) {
                    let whole: Vec<&str> = u.users.iter().filter(|x| x.2).map(|x| x.0.as_str()).collect();
                    v.push(Violation::new(
                        3,
                        format!("node {node} {res} device {id} is held whole by {} but has other users ({})", whole.join(" and "), users()),
                    ));
                } else if u.used > 1000 {
                    v.push(Violation::new(
                        3,
                        format!("node {node} {res} device {id} over-committed: {} > 1 ({})", qty(inst, r, u.used), users()),
                    ));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Rule 4: gang and basic minimums.

fn check_gang(inst: &Instance, pl: &Placements, v: &mut Vec<Violation>) {
    for &g in &pl.placed {
        let grp = &inst.groups[g];
        let mut per_task: BTreeMap<TaskId, i64> = grp.tasks.iter().map(|&t| (t, 0)).collect();
        for np in pl.pods.iter().filter(|np| np.group == g) {
            *per_task.entry(np.task).or_default() += 1;
        }
        let total: i64 = per_task.values().sum();
        let gang = grp.policy == Policy::Gang;
        for (&t, &c) in &per_task {
            let task = &inst.tasks[t];
            if c > task.count {
                v.push(Violation::new(4, format!("task {}/{} gets {c} new pods, more than its count {}", grp.name, task.name, task.count)));
            }
            if gang && c < task.min_count {
                v.push(Violation::new(
                    4,
                    format!("gang {}: task {} gets {c} new pods, below its minCount {}", grp.name, task.name, task.min_count),
                ));
            }
        }
        let bound = grp.bound.len() as i64;
        if gang && total + bound < grp.min_count {
            v.push(Violation::new(
                4,
                format!(
                    "gang {} gets {total} new pods + {bound} bound members = {}, below its minCount {}",
                    grp.name,
                    total + bound,
                    grp.min_count
                ),
            ));
        }
        if total < 1 && pl.listed.get(&g).copied().unwrap_or(0) > 0 {
            v.push(Violation::new(4, format!("group {} is placed without any valid new pod", grp.name)));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Rule 5: topology.

fn check_topology(inst: &Instance, d: &Decision, pl: &Placements, evicted: &BTreeSet<PodId>, v: &mut Vec<Violation>) {
    for (&g, placements) in &pl.groups {
        let grp = &inst.groups[g];
        if let Some(l) = grp.required {
            let level = &inst.levels[l];
            let mut doms: BTreeMap<&str, (i64, i64)> = BTreeMap::new(); // domain -> (new, bound)
            let mut unlabeled: BTreeSet<&str> = BTreeSet::new();
            for np in pl.pods.iter().filter(|np| np.group == g) {
                match domain(inst, np.node, l) {
                    Some(x) => doms.entry(x).or_default().0 += 1,
                    None => {
                        unlabeled.insert(&inst.nodes[np.node].name);
                    }
                }
            }
            for &m in grp.bound.iter().filter(|m| !evicted.contains(m)) {
                let n = inst.pods[m].node;
                match domain(inst, n, l) {
                    Some(x) => doms.entry(x).or_default().1 += 1,
                    None => {
                        unlabeled.insert(&inst.nodes[n].name);
                    }
                }
            }
            if !unlabeled.is_empty() {
                v.push(Violation::new(
                    5,
                    format!(
                        "group {} requires one {level} domain but has pods on node(s) without label {level}: {}",
                        grp.name,
                        unlabeled.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            if doms.len() > 1 {
                let parts: Vec<String> = doms.iter().map(|(x, (nw, b))| format!("{x} ({nw} new, {b} bound)")).collect();
                v.push(Violation::new(
                    5,
                    format!("group {} requires one {level} domain but its pods span {}: {}", grp.name, doms.len(), parts.join(", ")),
                ));
            }
            for &i in placements {
                let p = &d.placements[i];
                if p.domains.is_empty() {
                    continue;
                }
                match p.domains.get(level) {
                    None => v.push(Violation::new(
                        5,
                        format!("placement of group {} names domains but not its required level {level}", grp.name),
                    )),
                    Some(named) => {
                        if let Some(bad) = doms.keys().find(|&&x| x != named.as_str()) {
                            v.push(Violation::new(
                                5,
                                format!("placement of group {} names {level}={named} but has pods in {level}={bad}", grp.name),
                            ));
                        }
                    }
                }
            }
        }
        for &t in &grp.tasks {
            let task = &inst.tasks[t];
            let Some((l, size)) = task.slice else { continue };
            let level = &inst.levels[l];
            let mut doms: BTreeMap<&str, i64> = BTreeMap::new();
            let mut unlabeled: BTreeSet<&str> = BTreeSet::new();
            for np in pl.pods.iter().filter(|np| np.task == t) {
                match domain(inst, np.node, l) {
                    Some(x) => *doms.entry(x).or_default() += 1,
                    None => {
                        unlabeled.insert(&inst.nodes[np.node].name);
                    }
                }
            }
            if !unlabeled.is_empty() {
                v.push(Violation::new(
                    5,
                    format!(
                        "task {}/{} comes in slices of {size} per {level} but has pods on node(s) without label {level}: {}",
                        grp.name,
                        task.name,
                        unlabeled.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            for (x, c) in doms {
                if c % size != 0 {
                    v.push(Violation::new(
                        5,
                        format!(
                            "task {}/{} comes in slices of {size} per {level}, but {level}={x} hosts {c} of its new pods",
                            grp.name, task.name
                        ),
                    ));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Objective terms 1-3.

fn recompute_objective(inst: &Instance, pl: &Placements, evicted: &BTreeSet<PodId>) -> Objective {
    // Term 1 levels: the priority, or with queues the effective key (computed by the
    // model from the queue tree; ranks are its dense order).
    let mut levels: BTreeMap<i64, (i64, i64)> = BTreeMap::new(); // rank -> (placed, pending)
    for g in inst.pending_groups() {
        let e = levels.entry(inst.groups[g].rank).or_default();
        e.1 += 1;
        if pl.placed.contains(&g) {
            e.0 += 1;
        }
    }
    let placed_by_priority =
        levels.into_iter().rev().map(|(rank, (placed, pending))| PlacedRow { priority: inst.level_key(rank), placed, pending }).collect();
    let mut ev: BTreeMap<i64, i64> = BTreeMap::new();
    for &p in evicted {
        *ev.entry(inst.pods[p].priority).or_default() += 1;
    }
    let evicted_by_priority = ev.into_iter().rev().filter(|&(_, c)| c > 0).map(|(priority, pods)| EvictedRow { priority, pods }).collect();
    let mut extra: BTreeMap<i64, i64> = BTreeMap::new(); // rank -> extra pods
    for &g in &pl.placed {
        *extra.entry(inst.groups[g].rank).or_default() += pl.listed.get(&g).copied().unwrap_or(0) - inst.min_new_pods(g);
    }
    let extra_pods = extra.values().sum();
    let extra_by_priority =
        extra.into_iter().rev().filter(|&(_, c)| c != 0).map(|(rank, pods)| ExtraRow { priority: inst.level_key(rank), pods }).collect();
    Objective { placed_by_priority, evicted_by_priority, extra_pods, extra_by_priority }
}

fn compare_objective(reported: &Objective, actual: &Objective, v: &mut Vec<Violation>) {
    if reported.placed_by_priority != actual.placed_by_priority {
        v.push(Violation::new(
            0,
            format!(
                "objective misreported: placedByPriority (priority: placed/pending) is [{}], the decision gives [{}]",
                placed_rows(&reported.placed_by_priority),
                placed_rows(&actual.placed_by_priority)
            ),
        ));
    }
    if reported.evicted_by_priority != actual.evicted_by_priority {
        v.push(Violation::new(
            0,
            format!(
                "objective misreported: evictedByPriority is [{}], the decision gives [{}]",
                evicted_rows(&reported.evicted_by_priority),
                evicted_rows(&actual.evicted_by_priority)
            ),
        ));
    }
    if reported.extra_pods != actual.extra_pods {
        v.push(Violation::new(
            0,
            format!("objective misreported: extraPods is {}, the decision gives {}", reported.extra_pods, actual.extra_pods),
        ));
    }
    // `extraByPriority` is optional (decisions written before it have none); when given it
    // must be right.
    if !reported.extra_by_priority.is_empty() && reported.extra_by_priority != actual.extra_by_priority {
        v.push(Violation::new(
            0,
            format!(
                "objective misreported: extraByPriority is [{}], the decision gives [{}]",
                extra_rows(&reported.extra_by_priority),
                extra_rows(&actual.extra_by_priority)
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::decision::{Eviction, PlacedPod, Placement, Unplaced};

    /// Zones a (n1, n2) and b (n3, n5); n4 cordoned and n6 without a zone; gpu shared.
    const MAIN: &str = r#"
topology:
  levels: [zone]
sharedDevices: [gpu]
nodes:
  - {name: n1, labels: {zone: a, pool: gpu}, allocatable: {cpu: "4", memory: 8Gi, gpu: 2, pods: 4}}
  - {name: n2, labels: {zone: a, pool: gpu}, allocatable: {cpu: "4", memory: 8Gi, gpu: 2}}
  - name: n3
    labels: {zone: b, pool: cpu}
    allocatable: {cpu: "8", memory: 16Gi}
    taints: [{key: dedicated, value: infer, effect: NoSchedule}, {key: soft, effect: PreferNoSchedule}]
  - {name: n4, labels: {pool: cpu}, allocatable: {cpu: "8"}, unschedulable: true}
  - {name: n5, labels: {zone: b, pool: gpu}, allocatable: {cpu: "4", gpu: 2}}
  - {name: n6, labels: {pool: gpu}, allocatable: {cpu: "4", gpu: 2}}
podGroups:
  - name: train
    priority: 100
    topology: {required: zone}
    tasks:
      - {name: ps, count: 1, requests: {cpu: "1"}}
      - {name: worker, count: 4, minCount: 2, requests: {cpu: "1", gpu: 1},
         slice: {topology: kubernetes.io/hostname, size: 2}}
  - name: infer
    priority: 100
    policy: basic
    tasks:
      - {name: server, count: 3, requests: {cpu: 500m, gpu: 500m}}
  - name: batch
    priority: 10
    tasks:
      - name: main
        count: 1
        requests: {cpu: "2"}
        nodeSelector: {pool: cpu}
        tolerations: [{key: dedicated, operator: Equal, value: infer, effect: NoSchedule}]
  - name: big
    priority: 10
    tasks: [{name: x, count: 1, requests: {cpu: "100"}}]
  - name: old
    disruptionMode: PodGroup
    tasks: [{name: w, count: 0}]
pods:
  - {name: old-0, node: n2, podGroup: old, task: w, requests: {cpu: "1", gpu: 500m}}
  - {name: old-1, node: n3, podGroup: old, task: w, requests: {cpu: "1"}}
  - {name: sys-0, node: n1, requests: {cpu: 500m}, preemptible: false}
"#;

    fn inst(text: &str) -> Instance {
        Instance::from_text(text).unwrap_or_else(|e| panic!("test instance: {e}"))
    }

    fn p(task: &str, node: &str) -> PlacedPod {
        PlacedPod { task: task.into(), node: node.into(), device_ids: BTreeMap::new() }
    }

    fn pd(task: &str, node: &str, res: &str, ids: &[usize]) -> PlacedPod {
        PlacedPod { task: task.into(), node: node.into(), device_ids: BTreeMap::from([(res.to_string(), ids.to_vec())]) }
    }

    fn placement(group: &str, pods: Vec<PlacedPod>) -> Placement {
        Placement { pod_group: group.into(), domains: BTreeMap::new(), pods }
    }

    fn decision(placements: Vec<Placement>, unplaced: &[&str], evictions: &[(&str, &str)]) -> Decision {
        Decision {
            status: Status::Feasible,
            objective: Objective::default(),
            gap: 0.0,
            bounds: None,
            placements,
            unplaced: unplaced.iter().map(|g| Unplaced { pod_group: g.to_string(), reason_code: None, reason: "no room".into() }).collect(),
            evictions: evictions.iter().map(|(p, g)| Eviction { pod: p.to_string(), preemptor: g.to_string() }).collect(),
            stats: Default::default(),
        }
    }

    /// The decision with its objective set to the recomputed one, so that a test of
    /// one rule is not also about the objective.
    fn fixed(inst: &Instance, mut d: Decision) -> Decision {
        d.objective = check(inst, &d).objective;
        d
    }

    fn rules(r: &Report) -> BTreeSet<u8> {
        r.violations.iter().map(|x| x.rule).collect()
    }

    fn dump(r: &Report) -> String {
        r.violations.iter().map(|x| format!("  {}\n", x.message)).collect()
    }

    #[track_caller]
    fn assert_has(r: &Report, rule: u8, fragment: &str) {
        assert!(
            r.violations.iter().any(|x| x.rule == rule && x.message.contains(fragment)),
            "expected a rule {rule} violation containing {fragment:?}, got:\n{}",
            dump(r)
        );
    }

    #[track_caller]
    fn assert_only(r: &Report, expected: &[u8]) {
        assert_eq!(rules(r), expected.iter().copied().collect::<BTreeSet<u8>>(), "violations:\n{}", dump(r));
    }

    #[track_caller]
    fn assert_valid(r: &Report) {
        assert!(r.violations.is_empty(), "expected no violations, got:\n{}", dump(r));
    }

    fn main_objective() -> Objective {
        Objective {
            placed_by_priority: vec![
                PlacedRow { priority: 100.into(), placed: 2, pending: 2 },
                PlacedRow { priority: 10.into(), placed: 1, pending: 2 },
            ],
            evicted_by_priority: vec![],
            extra_pods: 1,
            extra_by_priority: vec![ExtraRow { priority: 100.into(), pods: 1 }],
        }
    }

    /// train in zone a on n1 (gpus 0 and 1 whole), infer on n2 sharing gpu 0 with old-0,
    /// batch on the tainted n3 it tolerates, big unplaced.
    fn main_valid() -> Decision {
        let mut train = placement("train", vec![p("ps", "n1"), pd("worker", "n1", "gpu", &[0]), pd("worker", "n1", "gpu", &[1])]);
        train.domains.insert("zone".into(), "a".into());
        let mut d = decision(
            vec![
                train,
                placement("infer", vec![pd("server", "n2", "gpu", &[0]), pd("server", "n2", "gpu", &[1])]),
                placement("batch", vec![p("main", "n3")]),
            ],
            &["big"],
            &[],
        );
        d.objective = main_objective();
        d
    }

    /// main_valid with one pod entry replaced.
    fn main_with(group: usize, pod: usize, new: PlacedPod) -> Decision {
        let mut d = main_valid();
        d.placements[group].pods[pod] = new;
        d
    }

    // ----- valid decisions and the objective

    #[test]
    fn valid_decision_passes_with_hand_computed_objective() {
        let i = inst(MAIN);
        let r = check(&i, &main_valid());
        assert_valid(&r);
        // Priority 100: train and infer placed of 2; priority 10: batch placed, big not.
        // Extra: train 3 - 3, infer 2 - 1, batch 1 - 1.
        assert_eq!(r.objective, main_objective());
    }

    #[test]
    fn render_shows_objective_and_verdict() {
        let i = inst(MAIN);
        let text = render(&check(&i, &main_valid()));
        assert!(text.contains("placed by priority (placed/pending): 100: 2/2, 10: 1/2"), "{text}");
        assert!(text.contains("evicted by priority: none"), "{text}");
        assert!(text.contains("extra pods: 1 (by priority 100: 1)\n"), "{text}");
        assert!(text.trim_end().ends_with("VALID"), "{text}");
        let mut d = main_valid();
        d.objective.extra_pods = 7;
        let text = render(&check(&i, &d));
        assert!(text.starts_with("rule 0: objective misreported: extraPods is 7, the decision gives 1\n"), "{text}");
        assert!(text.trim_end().ends_with("INVALID (1 violations)"), "{text}");
    }

    #[test]
    fn extra_by_priority_is_checked_when_given() {
        let i = inst(MAIN);
        // The extra pod is infer's (priority 100); reporting it at 10 is wrong.
        let mut d = main_valid();
        d.objective.extra_by_priority = vec![ExtraRow { priority: 10.into(), pods: 1 }];
        let text = render(&check(&i, &d));
        assert!(text.starts_with("rule 0: objective misreported: extraByPriority is [10: 1], the decision gives [100: 1]\n"), "{text}");
        // A decision written before the field existed has no rows: nothing to check.
        d.objective.extra_by_priority.clear();
        assert_valid(&check(&i, &d));
        // It round-trips, and an empty list is not written.
        let back: Decision = crate::wire::from_text(&main_valid().to_yaml()).unwrap();
        assert_eq!(back.objective, main_objective());
        assert!(!d.to_yaml().contains("extraByPriority"), "{}", d.to_yaml());
    }

    // ----- rule 0

    #[test]
    fn rule0_objective_misreported() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.objective.placed_by_priority[1].placed = 2;
        d.objective.evicted_by_priority.push(EvictedRow { priority: 0, pods: 1 });
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "objective misreported: placedByPriority (priority: placed/pending) is [100: 2/2, 10: 2/2], the decision gives [100: 2/2, 10: 1/2]");
        assert_has(&r, 0, "objective misreported: evictedByPriority is [0: 1 pod], the decision gives []");
        assert_eq!(r.violations.len(), 2);
    }

    #[test]
    fn rule0_unknown_names() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.placements.push(placement("ghost", vec![p("x", "n1")]));
        assert_has(&check(&i, &d), 0, "placements[3]: unknown pod group \"ghost\"");

        let d = main_with(1, 1, pd("server", "n9", "gpu", &[1]));
        let r = check(&i, &fixed(&i, d));
        assert_only(&r, &[0]);
        assert_has(&r, 0, "new pod infer/server#1: unknown node \"n9\"");

        let d = main_with(2, 0, p("chief", "n3"));
        let r = check(&i, &fixed(&i, d));
        assert_has(&r, 0, "new pod batch/chief#0: group batch has no task \"chief\"");
    }

    #[test]
    fn rule0_group_placed_twice() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.placements.push(placement("batch", vec![p("main", "n3")]));
        let r = check(&i, &fixed(&i, d));
        assert_has(&r, 0, "group batch is placed twice (placements[2] and placements[3])");
        assert_has(&r, 4, "task batch/main gets 2 new pods, more than its count 1");
    }

    #[test]
    fn rule0_group_not_pending() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.placements.push(placement("old", vec![p("w", "n5")]));
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "group old is placed but is not pending");
        // A non-pending group does not count in the objective.
        assert_eq!(r.objective, main_objective());

        let mut d = main_valid();
        d.unplaced.push(Unplaced { pod_group: "old".into(), reason_code: None, reason: "done".into() });
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "group old is listed in unplaced but is not pending");
    }

    #[test]
    fn rule0_placed_and_unplaced_coverage() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.unplaced.push(Unplaced { pod_group: "batch".into(), reason_code: None, reason: "oops".into() });
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "group batch is both placed and listed in unplaced");

        let mut d = main_valid();
        d.unplaced.clear();
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "pending group big is neither placed nor listed in unplaced");

        let mut d = main_valid();
        d.unplaced[0].reason = "  ".into();
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "unplaced group big has an empty reason");
    }

    /// big asks 100 cpu, more than any node's allocatable (8 at most): no-node-fits holds,
    /// comes first, and is accepted; any other code is reported.
    #[test]
    fn rule0_no_node_fits_comes_first() {
        use crate::wire::decision::ReasonCode;
        let i = inst(MAIN);
        let mut d = main_valid();
        d.unplaced[0].reason_code = Some(ReasonCode::NoNodeFits);
        assert!(check(&i, &d).violations.is_empty(), "{:?}", check(&i, &d).violations);
        d.unplaced[0].reason_code = Some(ReasonCode::Outranked);
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "group big is unplaced with outranked, but no-node-fits holds and comes first");
    }

    #[test]
    fn rule0_placement_without_pods() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.unplaced.clear();
        d.placements.push(placement("big", vec![]));
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "placements[3] of group big has no pods");
        // Not counted as placed.
        assert_eq!(r.objective, main_objective());
    }

    #[test]
    fn rule0_bad_device_ids() {
        let i = inst(MAIN);
        let d = main_with(0, 1, pd("worker", "n1", "gpu", &[7]));
        let r = check(&i, &d);
        assert_has(&r, 0, "new pod train/worker#1: gpu device 7 does not exist on node n1 (2 devices)");

        let mut d = main_valid();
        d.placements[2].pods[0].device_ids.insert("cpu".into(), vec![0]);
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "new pod batch/main#0 on node n3: deviceIds names \"cpu\", which is not in sharedDevices");
    }

    #[test]
    fn rule0_invalid_status_with_placements() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.status = Status::Invalid;
        let r = check(&i, &d);
        assert_only(&r, &[0]);
        assert_has(&r, 0, "status Invalid, but the decision has 3 placement(s)");

        // An Invalid decision with nothing in it is not itself malformed.
        let empty = decision(vec![], &[], &[]);
        let r = check(&i, &Decision { status: Status::Invalid, ..empty });
        assert_valid(&r);
    }

    // ----- rule 1

    const SMALL: &str = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4", pods: 3}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - name: g
    priority: 10
    policy: basic
    tasks: [{name: w, count: 5, requests: {cpu: "1"}}]
pods:
  - {name: b0, node: n1, requests: {cpu: "2"}}
"#;

    #[test]
    fn rule1_cpu_and_pods_over_capacity() {
        let i = inst(SMALL);
        let d = fixed(&i, decision(vec![placement("g", vec![p("w", "n1"), p("w", "n1"), p("w", "n1")])], &[], &[]));
        let r = check(&i, &d);
        assert_only(&r, &[1]);
        assert_has(&r, 1, "node n1 cpu over capacity: 5 > 4 (bound 2, new pods of g/w: 3)");
        assert_has(&r, 1, "node n1 pods over capacity: 4 > 3 (bound 1, new pods of g/w: 3)");
        assert_eq!(r.violations.len(), 2);
    }

    #[test]
    fn rule1_pods_unlimited_where_not_declared() {
        let i = inst(SMALL);
        let d =
            fixed(&i, decision(vec![placement("g", vec![p("w", "n1"), p("w", "n2"), p("w", "n2"), p("w", "n2"), p("w", "n2")])], &[], &[]));
        let r = check(&i, &d);
        assert_valid(&r);
        assert_eq!(r.objective.extra_pods, 4);

        let d = fixed(&i, decision(vec![placement("g", vec![p("w", "n2"); 5])], &[], &[]));
        let r = check(&i, &d);
        assert_only(&r, &[1]);
        assert_has(&r, 1, "node n2 cpu over capacity: 5 > 4 (bound 0, new pods of g/w: 5)");
    }

    #[test]
    fn rule1_eviction_frees_capacity() {
        let i = inst(SMALL);
        let pods = vec![p("w", "n1"), p("w", "n1"), p("w", "n1")];
        let d = decision(vec![placement("g", pods)], &[], &[("b0", "g")]);
        let r = check(&i, &fixed(&i, d.clone()));
        assert_valid(&r);
        assert_eq!(r.objective.evicted_by_priority, vec![EvictedRow { priority: 0, pods: 1 }]);
        assert_eq!(r.objective.extra_pods, 2);
        // Without the eviction the same pods do not fit.
        let r = check(&i, &fixed(&i, Decision { evictions: vec![], ..d }));
        assert_has(&r, 1, "node n1 cpu over capacity");
    }

    // ----- rule 2

    #[test]
    fn rule2_selector_and_cordon() {
        let i = inst(MAIN);
        let r = check(&i, &main_with(2, 0, p("main", "n2")));
        assert_only(&r, &[2]);
        assert_has(&r, 2, "1 new pod(s) of batch/main on node n2: nodeSelector pool=cpu does not match (node has pool=gpu)");

        let r = check(&i, &main_with(2, 0, p("main", "n4")));
        assert_only(&r, &[2]);
        assert_has(&r, 2, "1 new pod(s) of batch/main on node n4: node is unschedulable");
    }

    #[test]
    fn rule2_taints_and_tolerations() {
        let i = inst(
            r#"
nodes:
  - {name: t1, allocatable: {cpu: "8"}, taints: [{key: a, value: x, effect: NoSchedule}]}
  - {name: t2, allocatable: {cpu: "8"}, taints: [{key: b, effect: NoExecute}, {key: c, value: y, effect: PreferNoSchedule}]}
podGroups:
  - {name: none, policy: basic, tasks: [{name: w, count: 2}]}
  - {name: any, policy: basic, tasks: [{name: w, count: 2, tolerations: [{operator: Exists}]}]}
  - name: eq
    policy: basic
    tasks: [{name: w, count: 2, tolerations: [{key: a, operator: Equal, value: x}, {key: b, operator: Exists, effect: NoExecute}]}]
  - name: wrong
    policy: basic
    tasks: [{name: w, count: 2, tolerations: [{key: a, operator: Equal, value: z}, {key: b, operator: Exists, effect: NoSchedule}]}]
"#,
        );
        let both = || vec![p("w", "t1"), p("w", "t2")];
        let d = fixed(
            &i,
            decision(
                vec![placement("none", both()), placement("any", both()), placement("eq", both()), placement("wrong", both())],
                &[],
                &[],
            ),
        );
        let r = check(&i, &d);
        assert_only(&r, &[2]);
        assert_has(&r, 2, "none/w on node t1: taint a=x:NoSchedule is not tolerated");
        assert_has(&r, 2, "none/w on node t2: taint b:NoExecute is not tolerated");
        assert_has(&r, 2, "wrong/w on node t1: taint a=x:NoSchedule is not tolerated");
        assert_has(&r, 2, "wrong/w on node t2: taint b:NoExecute is not tolerated");
        assert_eq!(r.violations.len(), 4, "{}", dump(&r));
        assert!(!dump(&r).contains("c=y"), "PreferNoSchedule must be ignored:\n{}", dump(&r));
    }

    // ----- rule 3

    #[test]
    fn rule3_fractions_over_one_device() {
        let i = inst(MAIN);
        // old-0 holds 500m of n2 gpu 0 (assigned first-fit by the model).
        let r = check(&i, &main_with(1, 1, pd("server", "n2", "gpu", &[0])));
        assert_only(&r, &[3]);
        assert_has(
            &r,
            3,
            "node n2 gpu device 0 over-committed: 1500m > 1 (bound old-0: 500m, new infer/server#0: 500m, new infer/server#1: 500m)",
        );
    }

    #[test]
    fn rule3_whole_device_shared() {
        let i = inst(MAIN);
        let r = check(&i, &main_with(0, 2, pd("worker", "n1", "gpu", &[0])));
        assert_only(&r, &[3]);
        assert_has(&r, 3, "node n1 gpu device 0 is held whole by new train/worker#1 and new train/worker#2");
    }

    #[test]
    fn rule3_wrong_number_of_device_ids() {
        let i = inst(MAIN);
        let r = check(&i, &main_with(0, 2, p("worker", "n1")));
        assert_only(&r, &[3]);
        assert_has(&r, 3, "new pod train/worker#2 on node n1 requests 1 gpu: it must list 1 distinct device(s), lists []");

        let r = check(&i, &main_with(1, 0, pd("server", "n2", "gpu", &[0, 1])));
        assert_has(
            &r,
            3,
            "new pod infer/server#0 on node n2 requests 500m gpu (a fraction): it must list exactly one device, lists [0, 1]",
        );

        let r = check(&i, &main_with(0, 0, pd("ps", "n1", "gpu", &[0])));
        assert_has(&r, 3, "new pod train/ps#0 on node n1 lists gpu devices [0] but requests none");
    }

    #[test]
    fn rule3_whole_request_needs_distinct_devices() {
        let i = inst(
            r#"
sharedDevices: [gpu]
nodes: [{name: g1, allocatable: {gpu: 4}}]
podGroups: [{name: j, tasks: [{name: w, count: 1, requests: {gpu: 2}}]}]
"#,
        );
        let d = fixed(&i, decision(vec![placement("j", vec![pd("w", "g1", "gpu", &[1, 1])])], &[], &[]));
        let r = check(&i, &d);
        assert_has(&r, 3, "new pod j/w#0 on node g1 requests 2 gpu: it must list 2 distinct device(s), lists [1, 1]");
        let d = fixed(&i, decision(vec![placement("j", vec![pd("w", "g1", "gpu", &[1, 3])])], &[], &[]));
        assert_valid(&check(&i, &d));
    }

    // ----- rule 4

    #[test]
    fn rule4_task_minimum_and_count() {
        let i = inst(MAIN);
        let mut d = main_valid();
        d.placements[0].pods.pop();
        let r = check(&i, &fixed(&i, d));
        assert_has(&r, 4, "gang train: task worker gets 1 new pods, below its minCount 2");
        assert_has(&r, 5, "task train/worker comes in slices of 2 per kubernetes.io/hostname, but kubernetes.io/hostname=n1 hosts 1");

        let mut d = main_valid();
        d.placements[1].pods.push(pd("server", "n5", "gpu", &[0]));
        d.placements[1].pods.push(pd("server", "n5", "gpu", &[0]));
        let r = check(&i, &fixed(&i, d));
        assert_only(&r, &[4]);
        assert_has(&r, 4, "task infer/server gets 4 new pods, more than its count 3");
    }

    #[test]
    fn rule4_bound_members_count_toward_gang_minimum() {
        let i = inst(
            r#"
nodes: [{name: n1, allocatable: {cpu: "16"}}]
podGroups:
  - name: el
    minCount: 4
    tasks: [{name: w, count: 4, minCount: 0, requests: {cpu: "1"}}]
pods:
  - {name: el-0, node: n1, podGroup: el, task: w, requests: {cpu: "1"}}
  - {name: el-1, node: n1, podGroup: el, task: w, requests: {cpu: "1"}}
"#,
        );
        let d = fixed(&i, decision(vec![placement("el", vec![p("w", "n1"), p("w", "n1")])], &[], &[]));
        let r = check(&i, &d);
        assert_valid(&r);
        assert_eq!(r.objective.extra_pods, 0);
        let d = fixed(&i, decision(vec![placement("el", vec![p("w", "n1")])], &[], &[]));
        let r = check(&i, &d);
        assert_only(&r, &[4]);
        assert_has(&r, 4, "gang el gets 1 new pods + 2 bound members = 3, below its minCount 4");
        assert_eq!(r.objective.extra_pods, -1);
    }

    // ----- rule 5

    #[test]
    fn rule5_required_domain_spans_zones() {
        let i = inst(MAIN);
        let r = check(&i, &main_with(0, 0, p("ps", "n5")));
        assert_only(&r, &[5]);
        assert_has(&r, 5, "group train requires one zone domain but its pods span 2: a (2 new, 0 bound), b (1 new, 0 bound)");
        assert_has(&r, 5, "placement of group train names zone=a but has pods in zone=b");

        let r = check(&i, &main_with(0, 0, p("ps", "n6")));
        assert_only(&r, &[5]);
        assert_has(&r, 5, "group train requires one zone domain but has pods on node(s) without label zone: n6");
    }

    const TOPO: &str = r#"
topology: {levels: [zone, rack]}
nodes:
  - {name: a1, labels: {zone: a, rack: r1}, allocatable: {cpu: "4"}}
  - {name: a2, labels: {zone: a, rack: r2}, allocatable: {cpu: "4"}}
  - {name: b1, labels: {zone: b, rack: r3}, allocatable: {cpu: "4"}}
  - {name: d1, allocatable: {cpu: "4"}}
podGroups:
  - name: el
    topology: {required: zone}
    policy: basic
    tasks: [{name: w, count: 3, requests: {cpu: "1"}}]
  - name: sl
    policy: basic
    tasks: [{name: w, count: 8, requests: {cpu: "1"}, slice: {topology: rack, size: 2}}]
pods:
  - {name: el-0, node: b1, podGroup: el, task: w, requests: {cpu: "1"}}
"#;

    #[test]
    fn rule5_bound_members_fix_the_domain() {
        let i = inst(TOPO);
        let sl = || placement("sl", vec![p("w", "a1"), p("w", "a1"), p("w", "a2"), p("w", "a2")]);
        let mut el = placement("el", vec![p("w", "b1")]);
        el.domains.insert("zone".into(), "b".into());
        let r = check(&i, &fixed(&i, decision(vec![el, sl()], &[], &[])));
        assert_valid(&r);

        let d = fixed(&i, decision(vec![placement("el", vec![p("w", "a1")]), sl()], &[], &[]));
        let r = check(&i, &d);
        assert_only(&r, &[5]);
        assert_has(&r, 5, "group el requires one zone domain but its pods span 2: a (1 new, 0 bound), b (0 new, 1 bound)");

        let mut el = placement("el", vec![p("w", "b1")]);
        el.domains.insert("rack".into(), "r3".into());
        let r = check(&i, &fixed(&i, decision(vec![el, sl()], &[], &[])));
        assert_only(&r, &[5]);
        assert_has(&r, 5, "placement of group el names domains but not its required level zone");

        let mut el = placement("el", vec![p("w", "b1")]);
        el.domains.insert("zone".into(), "b".into());
        el.domains.insert("region".into(), "eu".into());
        let r = check(&i, &fixed(&i, decision(vec![el, sl()], &[], &[])));
        assert_only(&r, &[0]);
        assert_has(&r, 0, "placement of group el names domain of unknown topology level \"region\"");
    }

    #[test]
    fn rule5_slices() {
        let i = inst(TOPO);
        let el = || placement("el", vec![p("w", "b1")]);
        let d = fixed(&i, decision(vec![el(), placement("sl", vec![p("w", "a1"), p("w", "a1"), p("w", "a1"), p("w", "a2")])], &[], &[]));
        let r = check(&i, &d);
        assert_only(&r, &[5]);
        assert_has(&r, 5, "task sl/w comes in slices of 2 per rack, but rack=r1 hosts 3 of its new pods");
        assert_has(&r, 5, "task sl/w comes in slices of 2 per rack, but rack=r2 hosts 1 of its new pods");

        let d = fixed(&i, decision(vec![el(), placement("sl", vec![p("w", "d1"), p("w", "d1")])], &[], &[]));
        let r = check(&i, &d);
        assert_only(&r, &[5]);
        assert_has(&r, 5, "task sl/w comes in slices of 2 per rack but has pods on node(s) without label rack: d1");
    }

    // ----- rule 6

    const PREEMPT: &str = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - name: hi
    priority: 100
    tasks: [{name: w, count: 1, requests: {cpu: "3"}}]
  - name: never
    priority: 100
    preemptionPolicy: Never
    tasks: [{name: w, count: 1, requests: {cpu: "3"}}]
  - name: lo
    priority: 5
    disruptionMode: PodGroup
    tasks: [{name: w, count: 0}]
  - name: same
    priority: 100
    tasks: [{name: w, count: 0}]
pods:
  - {name: lo-0, node: n1, podGroup: lo, requests: {cpu: "2"}}
  - {name: lo-1, node: n2, podGroup: lo, requests: {cpu: "2"}}
  - {name: sys, node: n1, requests: {cpu: "1"}, preemptible: false}
  - {name: peer, node: n2, podGroup: same, requests: {cpu: "1"}}
  - {name: loner, node: n2, priority: 1, requests: {cpu: 500m}}
"#;

    fn hi_on(node: &str, evictions: &[(&str, &str)]) -> Decision {
        decision(vec![placement("hi", vec![p("w", node)])], &["never"], evictions)
    }

    #[test]
    fn rule6_valid_podgroup_eviction() {
        let i = inst(PREEMPT);
        let d = fixed(&i, hi_on("n1", &[("lo-0", "hi"), ("lo-1", "hi")]));
        let r = check(&i, &d);
        assert_valid(&r);
        assert_eq!(
            r.objective,
            Objective {
                placed_by_priority: vec![PlacedRow { priority: 100.into(), placed: 1, pending: 2 }],
                evicted_by_priority: vec![EvictedRow { priority: 5, pods: 2 }],
                extra_pods: 0,
                extra_by_priority: vec![],
            }
        );
    }

    #[test]
    fn rule6_podgroup_needs_all_members() {
        let i = inst(PREEMPT);
        let r = check(&i, &fixed(&i, hi_on("n1", &[("lo-0", "hi")])));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "group lo has disruptionMode PodGroup: some of its bound members are evicted, so all must be, but not: lo-1");
    }

    #[test]
    fn rule6_victim_eligibility() {
        let i = inst(PREEMPT);
        let r = check(&i, &fixed(&i, hi_on("n1", &[("lo-0", "hi"), ("lo-1", "hi"), ("sys", "hi")])));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "pod sys on node n1 is evicted but is not preemptible");

        let r = check(&i, &fixed(&i, hi_on("n2", &[("lo-0", "hi"), ("lo-1", "hi"), ("peer", "hi")])));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "pod peer (priority 100) is evicted for group hi (priority 100): not strictly lower");

        let r = check(&i, &fixed(&i, hi_on("n1", &[("lo-0", "hi"), ("lo-1", "hi"), ("loner", "hi")])));
        assert_only(&r, &[6]);
        // hi places nothing on n2, so nothing it may do needs loner gone.
        assert_has(&r, 6, "rule 6: eviction of loner (priority 1) on node n2 is not needed by the groups allowed to evict it");

        let r = check(&i, &fixed(&i, hi_on("n1", &[("lo-0", "hi"), ("lo-1", "hi"), ("ghost", "hi")])));
        assert_has(&r, 6, "evictions[2]: pod \"ghost\" does not exist");

        let r = check(&i, &fixed(&i, hi_on("n1", &[("lo-0", "hi"), ("lo-1", "hi"), ("lo-0", "hi")])));
        assert_only(&r, &[0]);
        assert_has(&r, 0, "pod lo-0 is evicted twice");
    }

    #[test]
    fn rule6_preemptor_eligibility() {
        let i = inst(PREEMPT);
        let d = decision(vec![placement("never", vec![p("w", "n1")])], &["hi"], &[("lo-0", "never"), ("lo-1", "never")]);
        let r = check(&i, &fixed(&i, d));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "pod lo-0 is evicted for group never, whose preemptionPolicy is Never");

        let d = decision(vec![], &["hi", "never"], &[("lo-0", "hi"), ("lo-1", "hi")]);
        let r = check(&i, &fixed(&i, d));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "pod lo-0 is evicted for group hi, which is not placed");

        let d = hi_on("n1", &[("lo-0", "hi"), ("lo-1", "nobody")]);
        let r = check(&i, &fixed(&i, d));
        assert_has(&r, 6, "eviction of pod lo-1: preemptor \"nobody\" is not a pod group");

        let i = inst(&format!("{PREEMPT}options: {{preemption: false}}\n"));
        let r = check(&i, &fixed(&i, hi_on("n1", &[("lo-0", "hi"), ("lo-1", "hi")])));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "pod lo-0 is evicted but options.preemption is false");
    }

    #[test]
    fn rule6_victim_of_a_placed_group() {
        let i = inst(
            r#"
nodes: [{name: n1, allocatable: {cpu: "4"}}]
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "3"}}]}
  - {name: grow, policy: basic, tasks: [{name: w, count: 1, requests: {cpu: 100m}}]}
pods:
  - {name: grow-0, node: n1, podGroup: grow, task: w, requests: {cpu: "2"}}
"#,
        );
        let d = decision(vec![placement("hi", vec![p("w", "n1")]), placement("grow", vec![p("w", "n1")])], &[], &[("grow-0", "hi")]);
        let r = check(&i, &fixed(&i, d));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "pod grow-0 is evicted but belongs to group grow, which this decision places");
    }

    // ----- rule 6: no eviction that is not needed

    /// n1: a (1) + b (2) + lo-0 (1) fill its 4 cpu; lo (PodGroup) also has lo-1 on n2.
    /// n3: one gpu, f holds 250m of it, c takes cpu. n4 has room for 2 pods only.
    const NEEDED: &str = r#"
sharedDevices: [gpu]
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
  - {name: n3, allocatable: {cpu: "4", gpu: 1}}
  - {name: n4, allocatable: {cpu: "8", pods: 2}}
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: whole, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "1", gpu: 1}}]}
  - {name: share, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "1", gpu: 500m}}]}
  - {name: lo, priority: 5, disruptionMode: PodGroup, tasks: [{name: w, count: 0}]}
pods:
  - {name: a, node: n1, priority: 1, requests: {cpu: "1"}}
  - {name: b, node: n1, priority: 1, requests: {cpu: "2"}}
  - {name: lo-0, node: n1, podGroup: lo, requests: {cpu: "1"}}
  - {name: lo-1, node: n2, podGroup: lo, requests: {cpu: "1"}}
  - {name: f, node: n3, priority: 1, requests: {cpu: "1", gpu: 250m}, deviceIds: {gpu: [0]}}
  - {name: c, node: n3, priority: 1, requests: {cpu: "1"}}
  - {name: s1, node: n4, priority: 1, requests: {cpu: 100m, pods: 1}}
  - {name: s2, node: n4, priority: 1, requests: {cpu: 100m, pods: 1}}
"#;

    fn only_hi(node: &str, evictions: &[(&str, &str)]) -> Decision {
        decision(vec![placement("hi", vec![p("w", node)])], &["whole", "share"], evictions)
    }

    fn unneeded(r: &Report) -> BTreeSet<String> {
        r.violations
            .iter()
            .filter(|x| x.message.contains("is not needed by the groups allowed to evict it"))
            .map(|x| x.message.clone())
            .collect()
    }

    #[test]
    fn rule6_needed_evictions_pass() {
        let i = inst(NEEDED);
        // b alone makes room on n1 (a 1 + lo-0 1 + hi 2 = 4).
        assert_valid(&check(&i, &fixed(&i, only_hi("n1", &[("b", "hi")]))));
        // a and the whole of lo: restoring either gives 5 cpu on n1.
        let d = only_hi("n1", &[("a", "hi"), ("lo-0", "hi"), ("lo-1", "hi")]);
        assert_valid(&check(&i, &fixed(&i, d)));
        // A whole gpu needs f gone (but not c: cpu 1 + 1 of 4).
        let d = decision(vec![placement("whole", vec![pd("w", "n3", "gpu", &[0])])], &["hi", "share"], &[("f", "whole")]);
        assert_valid(&check(&i, &fixed(&i, d)));
        // n4 has two pod slots: a new pod needs one of s1, s2 to go (pods, not cpu, is short).
        let i4 = inst(&NEEDED.replace(
            "tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]",
            "tasks: [{name: w, count: 1, requests: {cpu: \"2\", pods: 1}}]",
        ));
        assert_valid(&check(&i4, &fixed(&i4, only_hi("n4", &[("s1", "hi")]))));
    }

    #[test]
    fn rule6_unneeded_eviction_of_a_pod() {
        let i = inst(NEEDED);
        // With b gone, a fits back (a 1 + lo-0 1 + hi 2 = 4); b does not (lo-0 1 + b 2 + hi 2 = 5).
        let r = check(&i, &fixed(&i, only_hi("n1", &[("b", "hi"), ("a", "hi")])));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "rule 6: eviction of a (priority 1) on node n1 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; no other group uses its room");
        assert_eq!(unneeded(&r).len(), 1, "{}", dump(&r));
        // Both single pods on n4 evicted for one new pod: each alone could stay.
        let i4 = inst(&NEEDED.replace(
            "tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]",
            "tasks: [{name: w, count: 1, requests: {cpu: \"2\", pods: 1}}]",
        ));
        let r = check(&i4, &fixed(&i4, only_hi("n4", &[("s1", "hi"), ("s2", "hi")])));
        assert_only(&r, &[6]);
        assert_eq!(
            unneeded(&r),
            BTreeSet::from([
                "rule 6: eviction of s1 (priority 1) on node n4 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; no other group uses its room".to_string(),
                "rule 6: eviction of s2 (priority 1) on node n4 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; no other group uses its room".to_string(),
            ])
        );
    }

    #[test]
    fn rule6_unneeded_eviction_of_a_podgroup_unit() {
        let i = inst(NEEDED);
        // b gone is enough; lo (both members, lo-1 on another node) fits back as a unit,
        // which is reported once.
        let r = check(&i, &fixed(&i, only_hi("n1", &[("b", "hi"), ("lo-0", "hi"), ("lo-1", "hi")])));
        assert_only(&r, &[6]);
        assert_eq!(
            unneeded(&r),
            BTreeSet::from(["rule 6: eviction of lo-0, lo-1 (priority 5) on node n1, n2 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; no other group uses its room".to_string()]),
            "{}",
            dump(&r)
        );
    }

    #[test]
    fn rule6_unneeded_eviction_on_devices() {
        let i = inst(NEEDED);
        // c frees only cpu, which the whole-gpu pod does not lack.
        let d = decision(vec![placement("whole", vec![pd("w", "n3", "gpu", &[0])])], &["hi", "share"], &[("f", "whole"), ("c", "whole")]);
        let r = check(&i, &fixed(&i, d));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "rule 6: eviction of c (priority 1) on node n3 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; no other group uses its room");
        assert_eq!(unneeded(&r).len(), 1, "{}", dump(&r));
        // A 500m share next to f's 250m on the same device: f need not go.
        let d = decision(vec![placement("share", vec![pd("w", "n3", "gpu", &[0])])], &["hi", "whole"], &[("f", "share")]);
        let r = check(&i, &fixed(&i, d));
        assert_only(&r, &[6]);
        assert_has(&r, 6, "rule 6: eviction of f (priority 1) on node n3 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; no other group uses its room");
        // The whole device and f together break rule 3: needed.
        let d = decision(vec![placement("whole", vec![pd("w", "n3", "gpu", &[0])])], &["hi", "share"], &[("f", "whole")]);
        assert!(unneeded(&check(&i, &fixed(&i, d))).is_empty());
    }
}
