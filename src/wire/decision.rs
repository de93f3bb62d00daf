//! The decision of one cycle: the one answer type every solver and heuristic returns.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `status` of a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Terms 1-3 of the objective are proven optimal.
    Optimal,
    /// The time budget ended first (or the solver is a heuristic): the best found.
    Feasible,
    /// The input was rejected.
    Invalid,
}

/// The level of term 1 a pending group belongs to: its priority, or with queues its
/// effective priority key (semantics.md, "Effective priority with queues"): the value at
/// `root`, then the inner components of fenced queues, outermost first. Keys compare
/// lexicographically (a strict prefix sorts below: a deterministic tie-break YuniKorn
/// leaves open). Written as a number when it has one component, else as a list.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PriorityKey(pub Vec<i64>);

impl From<i64> for PriorityKey {
    fn from(v: i64) -> PriorityKey {
        PriorityKey(vec![v])
    }
}

impl std::fmt::Display for PriorityKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.len() == 1 {
            write!(f, "{}", self.0[0])
        } else {
            let parts: Vec<String> = self.0.iter().map(|v| v.to_string()).collect();
            write!(f, "[{}]", parts.join(", "))
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum KeyWire {
    One(i64),
    Many(Vec<i64>),
}

impl Serialize for PriorityKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.len() == 1 {
            KeyWire::One(self.0[0]).serialize(s)
        } else {
            KeyWire::Many(self.0.clone()).serialize(s)
        }
    }
}

impl<'de> Deserialize<'de> for PriorityKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<PriorityKey, D::Error> {
        match KeyWire::deserialize(d)? {
            KeyWire::One(v) => Ok(PriorityKey(vec![v])),
            KeyWire::Many(v) if v.is_empty() => Err(serde::de::Error::custom("a priority key needs at least one component")),
            KeyWire::Many(v) => Ok(PriorityKey(v)),
        }
    }
}

/// A row of `objective.placedByPriority`: groups placed at one level of term 1.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlacedRow {
    /// `priority`: the level (priority, or effective priority key with queues).
    pub priority: PriorityKey,
    /// `placed`: pending groups of this level placed.
    pub placed: i64,
    /// `pending`: pending groups of this level.
    pub pending: i64,
}

/// A row of `objective.evictedByPriority`: victims at one priority level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvictedRow {
    /// `priority`: the victims' priority.
    pub priority: i64,
    /// `pods`: bound pods of this priority evicted.
    pub pods: i64,
}

/// Pods placed beyond the minimums at one level of term 1 (an extension of the spec's
/// format: `extraPods` is the sum of these rows).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtraRow {
    /// `priority`: the level of term 1.
    pub priority: PriorityKey,
    /// `pods`: pods placed beyond the minimums at this level.
    pub pods: i64,
}

/// Terms 1-3 of the objective, as reported.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Objective {
    /// `placedByPriority`: term 1, one row per level of pending groups, highest first.
    #[serde(default)]
    pub placed_by_priority: Vec<PlacedRow>,
    /// `evictedByPriority`: term 2, one row per priority level of victims, highest first.
    #[serde(default)]
    pub evicted_by_priority: Vec<EvictedRow>,
    /// `extraPods`: term 3 in total, pods placed beyond the minimums.
    #[serde(default)]
    pub extra_pods: i64,
    /// Term 3 per level of term 1, highest first; levels with no extra pods are left out.
    /// Term 3 is lexicographic over these levels, so `extraPods` alone cannot rank two
    /// decisions. Optional on input: decisions written before it existed have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_by_priority: Vec<ExtraRow>,
}

impl Objective {
    /// Lexicographic comparison of terms 1-3: `Greater` means `self` is better.
    pub fn compare(&self, other: &Objective) -> std::cmp::Ordering {
        let placed = |o: &Objective| o.placed_by_priority.iter().map(|r| (r.priority.clone(), r.placed)).collect();
        let evicted = |o: &Objective| o.evicted_by_priority.iter().map(|r| (r.priority, r.pods)).collect();
        let extra = |o: &Objective| o.extra_by_priority.iter().map(|r| (r.priority.clone(), r.pods)).collect();
        // Term 3 level by level when both sides list their levels (rows that add up to
        // `extraPods`); a decision without the rows can only be compared by the total.
        let rows_complete = |o: &Objective| o.extra_by_priority.iter().map(|r| r.pods).sum::<i64>() == o.extra_pods;
        let by_level = rows_complete(self) && rows_complete(other);
        by_levels(&placed(self), &placed(other))
            // Fewer evictions is better.
            .then_with(|| by_levels(&evicted(other), &evicted(self)))
            .then_with(|| if by_level { by_levels(&extra(self), &extra(other)) } else { std::cmp::Ordering::Equal })
            .then_with(|| self.extra_pods.cmp(&other.extra_pods))
    }
}

/// Counts per level compared from the highest level down (a missing level counts 0):
/// `Greater` when `a` has more at the first level where they differ.
fn by_levels<K: Ord>(a: &BTreeMap<K, i64>, b: &BTreeMap<K, i64>) -> std::cmp::Ordering {
    let mut levels: Vec<&K> = a.keys().chain(b.keys()).collect();
    levels.sort_unstable_by(|x, y| y.cmp(x));
    levels.dedup();
    levels.into_iter().map(|l| a.get(l).unwrap_or(&0).cmp(b.get(l).unwrap_or(&0))).find(|c| c.is_ne()).unwrap_or(std::cmp::Ordering::Equal)
}

/// An entry of a placement's `pods`: one new pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlacedPod {
    /// `task`: the task of the group the pod belongs to.
    pub task: String,
    /// `node`: the node it goes to.
    pub node: String,
    /// `deviceIds`: shared-device resource -> indices of the devices it takes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub device_ids: BTreeMap<String, Vec<usize>>,
}

/// An entry of `placements`: one placed group.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Placement {
    /// `podGroup`: the group placed.
    pub pod_group: String,
    /// `domains`: topology level -> domain chosen for the group's required topology.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub domains: BTreeMap<String, String>,
    /// `pods`: one entry per new pod.
    pub pods: Vec<PlacedPod>,
}

/// Why a pending group is left unplaced, from the closed list of the contract
/// (instance-format.md, "Reason codes"): the first that holds. Schedulers act on the
/// code, people read [`Unplaced::reason`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonCode {
    /// Some task's pod fits no node even on an empty cluster view with no other pending group.
    NoNodeFits,
    /// With required topology, no domain of that level can hold the group's minimum even
    /// with every preemptible pod it may evict removed.
    TopologyDomainTooSmall,
    /// Its queue rejects it (FAIR leaf, or its minimum above a queue's max).
    QueueRejected,
    /// Its minimum exceeds what its queue (or an ancestor) has left under `max` or
    /// `maxapplications` in this decision.
    QueueFull,
    /// It fits only by evicting pods it may not evict.
    NotAllowedToPreempt,
    /// It fits alone, but not beside the groups of equal or higher priority placed here.
    Outranked,
    /// The deadline came before the solver proved it cannot be placed.
    Budget,
}

impl ReasonCode {
    /// The code as written in decisions (`no-node-fits`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::NoNodeFits => "no-node-fits",
            ReasonCode::TopologyDomainTooSmall => "topology-domain-too-small",
            ReasonCode::QueueRejected => "queue-rejected",
            ReasonCode::QueueFull => "queue-full",
            ReasonCode::NotAllowedToPreempt => "not-allowed-to-preempt",
            ReasonCode::Outranked => "outranked",
            ReasonCode::Budget => "budget",
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A pending group left unplaced, with its reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Unplaced {
    /// `podGroup`: the group left unplaced.
    pub pod_group: String,
    /// Always written by Tessera's solvers; optional on input (older decisions have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<ReasonCode>,
    /// `reason`: the reason in words, for people.
    pub reason: String,
}

/// Bound of a maximized row of term 1: no valid decision with the same earlier rows
/// places more groups at this level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlacedBound {
    /// `priority`: the level of term 1.
    pub priority: PriorityKey,
    /// `atMost`: the most groups of this level any such decision places.
    pub at_most: i64,
}

/// Bound of a minimized row of term 2: no valid decision with the same earlier rows
/// evicts fewer pods at this level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvictedBound {
    /// `priority`: the victims' priority.
    pub priority: i64,
    /// `atLeast`: the fewest pods of this priority any such decision evicts.
    pub at_least: i64,
}

/// Bound of a maximized row of term 3 (extra pods at a level of term 1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtraBound {
    /// `priority`: the level of term 1.
    pub priority: PriorityKey,
    /// `atMost`: the most extra pods of this level any such decision places.
    pub at_most: i64,
}

/// What the exact solver proved, row by row (instance-format.md, "Bounds"): a bound for
/// every row of terms 1-3 up to and including the first row not proven, none after it.
/// A proven row's bound equals its value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bounds {
    /// `placedByPriority`: bounds of the rows of term 1.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placed_by_priority: Vec<PlacedBound>,
    /// `evictedByPriority`: bounds of the rows of term 2.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evicted_by_priority: Vec<EvictedBound>,
    /// `extraByPriority`: bounds of the rows of term 3.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_by_priority: Vec<ExtraBound>,
}

/// An entry of `evictions`: a bound pod to evict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Eviction {
    /// `pod`: the bound pod evicted.
    pub pod: String,
    /// `preemptor`: the placed group it makes room for.
    pub preemptor: String,
}

/// The answer for one cycle (the decision document of instance-format.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Decision {
    /// `status`: `Optimal`, `Feasible` or `Invalid`.
    pub status: Status,
    /// `objective`: terms 1-3 as achieved.
    #[serde(default)]
    pub objective: Objective,
    /// `gap`: relative gap of the first objective row not proven optimal (0 when `Optimal`).
    #[serde(default)]
    pub gap: f64,
    /// Row bounds of the exact solver; heuristics give none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// `placements`: one entry per placed group.
    #[serde(default)]
    pub placements: Vec<Placement>,
    /// `unplaced`: one entry per pending group left unplaced, with a reason.
    #[serde(default)]
    pub unplaced: Vec<Unplaced>,
    /// `evictions`: bound pods to evict so the placements fit.
    #[serde(default)]
    pub evictions: Vec<Eviction>,
    /// Diagnostics: which solver, how long, what the exact engine proved and when.
    #[serde(default, skip_serializing_if = "SolveStats::is_empty")]
    pub stats: SolveStats,
}

/// The master's bound on one level of term 1 (topology decomposition).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MasterLevel {
    /// The level of term 1.
    pub priority: i64,
    /// At most this many groups of the level can be placed.
    pub placed: i64,
    /// What settled the bound (the LP relaxation, the master MIP, the hint, ...).
    pub settled_by: String,
}

/// What the look-ahead of the term-1 tier worked on: the next tier, with term 1 held.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LookAhead {
    /// Name of the tier solved next.
    pub tier: String,
    /// Value term 1 was held at while it ran.
    pub term1_held_at: f64,
}

/// Why a solve returned before it proved everything it set out to prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// The wall-clock budget ended.
    Deadline,
    /// The work limit (`options.workLimit`) was used up.
    WorkLimit,
    /// The caller cancelled the solve.
    Cancelled,
}

/// Diagnostics of one solve, serialized as the decision's `stats` (camelCase keys; every
/// field optional). Keys this version does not know (from other producers) are kept in
/// `other`, so a decision round-trips unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SolveStats {
    /// The solver's name (`SolverKind::name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solver: Option<String>,
    /// Wall-clock time of the whole solve, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solve_millis: Option<u64>,
    /// Exact engine: columns and rows of the cycle MILP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<u64>,
    /// Exact engine: rows of the cycle MILP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u64>,
    /// Exact engine: the tiers finished, in order, with when and at which value each was
    /// fixed (what `export-lp --tier K --fix` takes to replay tier K).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiers: Option<Vec<String>>,
    /// Exact engine: milliseconds from the start at which each tier was fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier_millis: Option<Vec<u64>>,
    /// Exact engine: the value each tier was fixed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier_values: Option<Vec<f64>>,
    /// When term 1 was proven.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term1_millis: Option<u64>,
    /// The objective terms (1-3) proven optimal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terms_proven: Option<Vec<u8>>,
    /// Topology decomposition, when used: its master's size, time and bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decomposition: Option<String>,
    /// Topology decomposition: milliseconds spent on the master.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_millis: Option<u64>,
    /// Topology decomposition: columns of the master.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_columns: Option<u64>,
    /// Topology decomposition: rows of the master.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_rows: Option<u64>,
    /// Topology decomposition: whether the master was solved to optimality.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_proven: Option<bool>,
    /// Topology decomposition: the master's bound per level of term 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub master_bound: Option<Vec<MasterLevel>>,
    /// Branch-and-bound nodes of all HiGHS runs of the tiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mip_nodes: Option<i64>,
    /// Topology screening: candidate (group, domain) pairs and their verdicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_domains: Option<u64>,
    /// Topology screening: candidate pairs proven infeasible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates_infeasible: Option<u64>,
    /// Topology screening: candidate pairs left undecided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates_unknown: Option<u64>,
    /// Topology screening: sub-models solved to decide candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_sub_models: Option<u64>,
    /// Topology screening: milliseconds spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_millis: Option<u64>,
    /// The term-1 relaxation bound (weighted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term1_bound: Option<f64>,
    /// The look-ahead of the term-1 tier, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub look_ahead: Option<LookAhead>,
    /// The warm start: groups it places, and where it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_start_placed_groups: Option<u64>,
    /// The warm start's verdict: `accepted (source)` or `rejected`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_start: Option<String>,
    /// Evictions of the warm start that were not needed and were undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unneeded_evictions_undone: Option<u64>,
    /// Set when the wall-clock budget ended the solve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<String>,
    /// Set when the solve stopped before proving all it set out to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<StopReason>,
    /// Work units used (see `options.workLimit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<u64>,
    /// `k8s-preempt`: groups that tried preemption, victim units evicted and reprieved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_attempts: Option<u64>,
    /// `k8s-preempt`: victim units evicted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim_units_evicted: Option<u64>,
    /// `k8s-preempt`: candidate victim units reprieved (kept bound after all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub victim_units_reprieved: Option<u64>,
    /// Keys of other producers, kept as they came.
    #[serde(flatten)]
    pub other: IndexMap<String, serde_json::Value>,
}

impl SolveStats {
    /// Nothing recorded.
    pub fn is_empty(&self) -> bool {
        self == &SolveStats::default()
    }

    /// The same stats with everything that varies from run to run (timings) removed.
    pub fn without_timings(&self) -> SolveStats {
        SolveStats {
            solve_millis: None,
            tier_millis: None,
            term1_millis: None,
            master_millis: None,
            screen_millis: None,
            other: self.other.iter().filter(|(k, _)| !is_timing(k)).map(|(k, v)| (k.clone(), without_timing_keys(v))).collect(),
            ..self.clone()
        }
    }
}

/// Whether a `stats` key holds a timing.
fn is_timing(key: &str) -> bool {
    key == "millis" || key.ends_with("Millis")
}

/// `v` without timing keys at any depth (per-tier details carry their own).
fn without_timing_keys(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m.iter().filter(|(k, _)| !is_timing(k)).map(|(k, v)| (k.clone(), without_timing_keys(v))).collect(),
        serde_json::Value::Array(a) => a.iter().map(without_timing_keys).collect(),
        other => other.clone(),
    }
}

impl Decision {
    /// The decision as YAML.
    pub fn to_yaml(&self) -> String {
        serde_yaml_ng::to_string(self).expect("a decision always serializes")
    }
    /// The decision as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a decision always serializes")
    }
    /// The decision with diagnostics that vary run to run (timings) removed: what
    /// determinism tests compare.
    pub fn without_timings(&self) -> Decision {
        Decision { stats: self.stats.without_timings(), ..self.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    fn objective(extra: &[(i64, i64)], total: i64) -> Objective {
        Objective {
            placed_by_priority: vec![
                PlacedRow { priority: 100.into(), placed: 1, pending: 1 },
                PlacedRow { priority: 10.into(), placed: 1, pending: 1 },
            ],
            evicted_by_priority: vec![],
            extra_pods: total,
            extra_by_priority: extra.iter().map(|&(priority, pods)| ExtraRow { priority: priority.into(), pods }).collect(),
        }
    }

    #[test]
    fn term3_is_compared_level_by_level() {
        // 2 extra pods at priority 100 beat 3 at priority 10 (semantics.md term 3:
        // higher priority first), although the total is smaller.
        let (hi, lo) = (objective(&[(100, 2)], 2), objective(&[(10, 3)], 3));
        assert_eq!(hi.compare(&lo), Ordering::Greater);
        assert_eq!(lo.compare(&hi), Ordering::Less);
        // Equal at 100, then the lower level decides.
        let (a, b) = (objective(&[(100, 2), (10, 1)], 3), objective(&[(100, 2)], 2));
        assert_eq!(a.compare(&b), Ordering::Greater);
        assert_eq!(a.compare(&a.clone()), Ordering::Equal);
    }

    #[test]
    fn term3_without_levels_falls_back_to_the_total() {
        // A decision written before `extraByPriority` existed lists no rows: only the
        // totals can be compared.
        let (old, lo) = (objective(&[], 2), objective(&[(10, 3)], 3));
        assert_eq!(old.compare(&lo), Ordering::Less);
        assert_eq!(lo.compare(&old), Ordering::Greater);
    }
}
