//! Kubernetes-style workload preemption: the baseline the exact solver's preemption is
//! compared with.
//!
//! Where the behaviour comes from: the Kubernetes 1.36 scheduling talk (seed document
//! `shared/seeds/004_*`, "workload preemption"). After the pod-group scheduling
//! algorithm finds a group infeasible, Kubernetes runs ONE preemption phase for the whole
//! group: the pod group, not each pod, is the preemptor, and "the entire cluster is the
//! domain where we try to evict the victims", not one node at a time. It reuses the
//! concepts of default pod preemption (`selectVictimsOnNode` in kube-scheduler's
//! `DefaultPreemption`): remove every lower-priority pod, check that the preemptor fits,
//! then reprieve the victims one by one, most important first, keeping evicted only
//! those that do not fit back. Victims follow the group's `disruptionMode`: `Pod`
//! members go one by one, `PodGroup` members all together ("you preempt the whole pod
//! group even if preempting only one member is enough").
//!
//! The algorithm here, per cycle:
//! 1. Groups in the order of [`greedy::ffd_order`] (priority, then size, then FIFO).
//! 2. Each group first tries plain first fit ([`greedy::place_group`]) on the current
//!    node states (no eviction).
//! 3. If that fails and the group may preempt (`preemptionPolicy` not `Never`,
//!    `options.preemption` not false), every victim unit of [`Cycle::victims`] with a
//!    priority strictly below the group's, not already evicted, not made of the group's
//!    own bound members and not belonging to a group placed in this cycle, is removed
//!    cluster-wide; the group is placed by first fit on what is then free.
//! 4. If it now fits, victims are reprieved greedily, highest unit priority first (ties:
//!    input order): a unit goes back if all its pods fit back on their nodes and devices
//!    next to the new placement (a `PodGroup` unit all or nothing); the others stay
//!    evicted. Units evicted for earlier groups are offered back in the same pass (what
//!    this group's victims free may exceed what it uses). If the group still does not
//!    fit, everything is restored and the group stays unplaced.
//!
//! The placement found in step 3 is kept while reprieving (Kubernetes re-runs the filters
//! for one pod on one node; for a whole group on the whole cluster that would be a new
//! placement per victim). After the last reprieve pass every evicted unit failed to fit
//! back at its turn and capacity only shrinks afterwards, so no eviction of the final
//! decision is unneeded. Evictions are attributed by `assemble` (a placed group allowed to
//! preempt the unit, with a new pod on one of its nodes). A group whose bound members
//! are evicted by an earlier (higher-priority) group is not placed afterwards (rule 6:
//! victims belong to no placed group).
//!
//! From a start (`preempt_from`, the exact solver's refills of a level with evictions) the
//! start's groups are kept: a preemptor whose eviction would be needed only because a
//! start group that may not make it sits beside the victim is placed again with that
//! node closed, and the end's rule-6 repair takes out the run's own groups before the
//! start's. Neither is upstream behaviour, and neither applies from an empty start.
//!
//! Deterministic: every choice follows input order; no hashing, no threads.

use crate::engine::assemble::assemble;
use crate::engine::assignment::Assignment;
use crate::engine::cycle::{Cycle, NodeState, UNLIMITED};
use crate::engine::ledger as quota;
use crate::engine::{greedy, Solver};
use crate::model::*;
use crate::options::Options;
use crate::wire::decision::{Decision, Status};
use std::collections::{BTreeMap, BTreeSet};

pub struct K8sPreemption;

impl Solver for K8sPreemption {
    fn name(&self) -> &'static str {
        "k8s-preempt"
    }
    fn describe(&self) -> &'static str {
        "Kubernetes 1.36 workload preemption: groups by priority, first fit; a group that does not fit removes all lower-priority victims cluster-wide, is placed by first fit, then victims are reprieved greedily (highest priority first)"
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let run = preempt_in_order(&cycle);
        let mut d = assemble(&cycle, &run.assignment, Status::Feasible, f64::NAN);
        // The generic explanation of a heuristic's unplaced group speaks of a time budget:
        // say what this algorithm actually did instead; a specific one gets it appended.
        for u in d.unplaced.iter_mut() {
            let Some(g) = inst.group_id(&u.pod_group) else { continue };
            if let Some(note) = run.notes.get(&g) {
                u.reason = if u.reason.starts_with("no placement found within the time budget") || run.blocked.contains_key(&g) {
                    note.clone()
                } else {
                    format!("{} ({note})", u.reason)
                };
            }
        }
        d.stats.solver = Some("k8s-preempt".into());
        d.stats.preemption_attempts = Some(run.attempts);
        d.stats.victim_units_evicted = Some(run.evicted);
        d.stats.victim_units_reprieved = Some(run.reprieved);
        d.stats.solve_millis = Some(start.elapsed().as_millis() as u64);
        d
    }
}

/// The outcome of one run, with what the decision's reasons and stats need.
pub(crate) struct Run {
    pub(crate) assignment: Assignment,
    /// Per unplaced group: what happened to it, in words.
    notes: BTreeMap<GroupId, String>,
    /// Groups left out because a bound member was evicted: group -> the evicted member.
    blocked: BTreeMap<GroupId, PodId>,
    attempts: u64,
    evicted: u64,
    reprieved: u64,
}

/// Frees what bound pod `p` holds on its node (it is evicted).
pub(crate) fn release(cycle: &Cycle, st: &mut NodeState, p: PodId) {
    let inst = cycle.inst;
    let pod = &inst.pods[p];
    for r in 0..inst.resources.len() {
        if st.free[r] != UNLIMITED {
            st.free[r] += pod.requests[r];
        }
    }
    for (si, &r) in cycle.shared_ids.iter().enumerate() {
        if let Some(ids) = pod.devices.get(&r) {
            for &d in ids {
                st.devices[si][d] += if pod.requests[r] >= 1000 { 1000 } else { pod.requests[r] };
            }
        }
    }
}

/// Puts bound pod `p` back on its node if its requests and its own devices still fit.
pub(crate) fn restore_pod(cycle: &Cycle, st: &mut NodeState, p: PodId) -> bool {
    let inst = cycle.inst;
    let pod = &inst.pods[p];
    for r in 0..inst.resources.len() {
        if !inst.shared[r] && st.free[r] != UNLIMITED && st.free[r] < pod.requests[r] {
            return false;
        }
    }
    for (si, &r) in cycle.shared_ids.iter().enumerate() {
        if let Some(ids) = pod.devices.get(&r) {
            let need = if pod.requests[r] >= 1000 { 1000 } else { pod.requests[r] };
            if ids.iter().any(|&d| st.devices[si][d] < need) {
                return false;
            }
        }
    }
    for r in 0..inst.resources.len() {
        if st.free[r] != UNLIMITED {
            st.free[r] -= pod.requests[r];
        }
    }
    for (si, &r) in cycle.shared_ids.iter().enumerate() {
        if let Some(ids) = pod.devices.get(&r) {
            for &d in ids {
                st.devices[si][d] -= if pod.requests[r] >= 1000 { 1000 } else { pod.requests[r] };
            }
        }
    }
    true
}

/// Puts every pod of a unit back, all or nothing.
pub(crate) fn restore_unit(cycle: &Cycle, states: &mut [NodeState], pods: &[PodId]) -> bool {
    let inst = cycle.inst;
    let mut saved: Vec<(NodeId, NodeState)> = Vec::new();
    for &p in pods {
        let n = inst.pods[p].node;
        if !saved.iter().any(|(m, _)| *m == n) {
            saved.push((n, states[n].clone()));
        }
        if !restore_pod(cycle, &mut states[n], p) {
            for (m, st) in saved {
                states[m] = st;
            }
            return false;
        }
    }
    true
}

pub(crate) fn preempt_in_order(cycle: &Cycle) -> Run {
    preempt_in_given_order(cycle, &greedy::ffd_order(cycle), true)
}

/// The same algorithm over the groups of `order` only, in that order (the exact solver
/// uses it to re-place a set of groups with few evictions).
/// With `elastic` false each group gets only the pods its minimums need.
pub(crate) fn preempt_in_given_order(cycle: &Cycle, order: &[GroupId], elastic: bool) -> Run {
    preempt_from(cycle, &Assignment::empty(cycle.inst), order, elastic)
}

/// The same algorithm starting from assignment `start`: its pods stay, its evicted units
/// count as evicted and are offered back in each reprieve pass like the others, and the
/// queue ledger starts with its groups. The groups of `order` should be ones `start`
/// leaves out. (The exact solver's fill of a level left open, with evictions.)
pub(crate) fn preempt_from(cycle: &Cycle, start: &Assignment, order: &[GroupId], elastic: bool) -> Run {
    preempt_from_below(cycle, start, order, elastic, i64::MAX)
}

/// [`preempt_from`] with only the victim units whose pods are all below priority
/// `ceiling` evicted. (The exact solver's move that lowers the evictions at one priority.)
pub(crate) fn preempt_from_below(cycle: &Cycle, start: &Assignment, order: &[GroupId], elastic: bool, ceiling: i64) -> Run {
    let inst = cycle.inst;
    let mut states = greedy::states_after(cycle, start);
    let mut a = start.clone();
    let mut unit_evicted = vec![false; cycle.victims.len()];
    // Per bound pod: evicted in this cycle.
    let mut pod_evicted = vec![false; inst.pods.len()];
    for &u in &start.evicted {
        unit_evicted[u] = true;
        for &p in &cycle.victims[u].pods {
            pod_evicted[p] = true;
        }
    }
    let mut run = Run {
        assignment: Assignment::empty(inst),
        notes: BTreeMap::new(),
        blocked: BTreeMap::new(),
        attempts: 0,
        evicted: 0,
        reprieved: 0,
    };
    // What evictions free is never given back to the ledger (see below), so the start's
    // groups are taken on a fresh one.
    // A run from a start keeps the start's groups (see [`avoid_inversions`]).
    let keeps_start = cycle.pending.iter().any(|&g| start.is_placed(g));
    let need = keeps_start.then(|| crate::engine::needed::NeedTest::new(cycle));
    let mut ledger = quota::Ledger::new(cycle).map(|mut l| {
        for &g in cycle.pending.iter().filter(|&&g| start.is_placed(g)) {
            l.take(g, &start.pods[g]);
        }
        l
    });
    for &g in order {
        let grp = &inst.groups[g];
        if let Some(&m) = grp.bound.iter().find(|&&m| pod_evicted[m]) {
            run.blocked.insert(g, m);
            run.notes.insert(
                g,
                format!(
                    "when its turn came, its bound member {} was evicted for a higher-priority group, so it could not be placed (rule 6)",
                    inst.pods[m].name
                ),
            );
            continue;
        }
        // Queue quotas (rule 7): the ledger never gives back what evictions free, so
        // whatever it admits stays valid when later groups reprieve victims.
        let before = ledger.as_ref().map(|_| (states.clone(), a.evicted.clone(), unit_evicted.clone(), pod_evicted.clone()));
        // 1. Plain first fit, no eviction.
        if let Some((pods, dom)) = greedy::place_group_with(cycle, &mut states, g, elastic) {
            if let Some(l) = ledger.as_mut() {
                if !l.fits(g, &pods) {
                    states = before.expect("saved with a ledger").0;
                    run.notes.insert(g, "first fit finds room, but not within its queue's quota".into());
                    continue;
                }
                l.take(g, &pods);
            }
            a.pods[g] = pods;
            a.domain[g] = dom;
            continue;
        }
        if grp.preempt_never {
            run.notes.insert(g, "first fit finds no room without evictions, and its preemptionPolicy is Never".into());
            continue;
        }
        // 2. Workload preemption: every lower-priority victim unit of the cluster.
        let cands: Vec<usize> = (0..cycle.victims.len())
            .filter(|&u| {
                let unit = &cycle.victims[u];
                !unit_evicted[u] && unit.priority < ceiling && cycle.may_preempt(g, u) && unit.pending_group.is_none_or(|h| !a.is_placed(h))
            })
            .collect();
        if cands.is_empty() {
            run.notes.insert(g, "first fit finds no room, and there is no lower-priority pod it may evict".into());
            continue;
        }
        run.attempts += 1;
        let pre = need.as_ref().map(|need| (need, Snapshot::of(&states, &a, &unit_evicted, &pod_evicted, run.reprieved)));
        let mut marks = Marks { unit: &mut unit_evicted, pod: &mut pod_evicted };
        if !evict_and_place(cycle, &mut states, &mut a, &mut marks, g, &cands, &BTreeSet::new(), elastic, &mut run) {
            run.notes.insert(
                g,
                format!("first fit finds no room even with all {} lower-priority victim unit(s) of the cluster removed", cands.len()),
            );
            continue;
        }
        if let Some((need, pre)) = pre {
            avoid_inversions(cycle, need, start, &pre, &mut states, &mut a, &mut marks, g, &cands, elastic, &mut run);
        }
        // Queues: the group's pods within quota, and (YuniKorn's model) no queue taken
        // below its guarantee; otherwise this group's attempt is undone whole.
        if let Some(l) = ledger.as_mut() {
            if !l.fits(g, &a.pods[g]) || !quota::guarantees_hold(cycle, &a) {
                (states, a.evicted, unit_evicted, pod_evicted) = before.expect("saved with a ledger");
                a.pods[g].clear();
                a.domain[g] = None;
                run.notes.insert(g, "with evictions it would fit, but not within its queue's quota or guarantees".into());
                continue;
            }
            l.take(g, &a.pods[g]);
        }
    }
    // Rule 6: a later group may have used room an earlier group's eviction freed without
    // being allowed to evict that victim itself (Kubernetes prevents this by nominating
    // the room for the preemptor); such inversions are undone here. The start's groups
    // stay placed where a group of `order` can go instead: a group of the start that may
    // not evict a victim can sit where a later preemptor's victims left room.
    let placed_before: Vec<GroupId> = order.iter().copied().filter(|&g| a.is_placed(g)).collect();
    let instead = crate::engine::needed::enforce(cycle, &mut a, &|g| start.is_placed(g));
    for g in placed_before.into_iter().filter(|&g| !a.is_placed(g)) {
        let note = if instead.contains(&g) {
            "its evictions left room that a group placed before it, not allowed to evict those pods, came to use (rule 6), so it was taken out"
        } else {
            "it fitted only in room freed by evicting pods it may not evict itself (rule 6), so it was taken out"
        };
        run.notes.insert(g, note.into());
    }
    a.evicted.sort_unstable();
    run.evicted = a.evicted.len() as u64;
    run.assignment = a;
    run
}

/// Per victim unit and per bound pod: evicted in this run.
struct Marks<'m> {
    unit: &'m mut Vec<bool>,
    pod: &'m mut Vec<bool>,
}

impl Marks<'_> {
    fn set(&mut self, cycle: &Cycle, u: usize, evicted: bool) {
        self.unit[u] = evicted;
        for &p in &cycle.victims[u].pods {
            self.pod[p] = evicted;
        }
    }
}

/// What a run holds before a group's attempt: node states, evicted units, the marks and
/// the count of reprieves.
struct Snapshot {
    states: Vec<NodeState>,
    evicted: Vec<usize>,
    unit: Vec<bool>,
    pod: Vec<bool>,
    reprieved: u64,
}

impl Snapshot {
    fn of(states: &[NodeState], a: &Assignment, unit: &[bool], pod: &[bool], reprieved: u64) -> Snapshot {
        Snapshot { states: states.to_vec(), evicted: a.evicted.clone(), unit: unit.to_vec(), pod: pod.to_vec(), reprieved }
    }

    /// Back to this snapshot, group `g` unplaced.
    fn restore(&self, states: &mut Vec<NodeState>, a: &mut Assignment, marks: &mut Marks, g: GroupId, run: &mut Run) {
        states.clone_from(&self.states);
        a.evicted.clone_from(&self.evicted);
        marks.unit.clone_from(&self.unit);
        marks.pod.clone_from(&self.pod);
        run.reprieved = self.reprieved;
        a.pods[g].clear();
        a.domain[g] = None;
    }
}

/// Steps 2 and 3 for group `g`: the victim units `cands` removed, first fit with the
/// nodes `banned` closed, then the reprieve. False, with nothing changed, if it does not
/// fit.
#[allow(clippy::too_many_arguments)]
fn evict_and_place(
    cycle: &Cycle,
    states: &mut Vec<NodeState>,
    a: &mut Assignment,
    marks: &mut Marks,
    g: GroupId,
    cands: &[usize],
    banned: &BTreeSet<NodeId>,
    elastic: bool,
    run: &mut Run,
) -> bool {
    let inst = cycle.inst;
    let saved = states.clone();
    for &u in cands {
        for &p in &cycle.victims[u].pods {
            release(cycle, &mut states[inst.pods[p].node], p);
        }
    }
    // A closed node takes no pod: every capacity below any request, no device free. It
    // opens again as it was, its victims removed.
    let open: Vec<(NodeId, NodeState)> = banned.iter().map(|&n| (n, states[n].clone())).collect();
    for &n in banned {
        states[n].free.iter_mut().for_each(|f| *f = -1);
        states[n].devices.iter_mut().flatten().for_each(|d| *d = 0);
    }
    let fit = greedy::place_group_with(cycle, states, g, elastic);
    for (n, st) in open {
        states[n] = st;
    }
    let Some((pods, dom)) = fit else {
        *states = saved;
        return false;
    };
    a.pods[g] = pods;
    a.domain[g] = dom;
    // 3. Reprieve: most important victims first, each back if it fits. Units evicted
    //    for earlier groups take part too: the capacity this group's victims free
    //    may be more than it uses, and an eviction must not outlive its need.
    let mut order = cands.to_vec();
    order.extend(std::mem::take(&mut a.evicted));
    order.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), u));
    for u in order {
        if restore_unit(cycle, states, &cycle.victims[u].pods) {
            marks.set(cycle, u, false);
            run.reprieved += 1;
        } else {
            marks.set(cycle, u, true);
            a.evicted.push(u);
        }
    }
    true
}

/// How many times a preemptor of a run from a start is placed again, away from the
/// nodes of the evictions it inverted.
const INVERSION_RETRIES: usize = 3;

/// In a run from a start: when group `g`, just placed, leaves an eviction that is needed
/// only because a start group that may not make it sits on the victim's node (it took the
/// room next to that group), `g` is placed again with those nodes closed, up to
/// [`INVERSION_RETRIES`] times; if it then fits nowhere, the last placement that fitted
/// stays. Rule 6 would otherwise take out `g` at the end of the run (the start's groups
/// are kept), and the room elsewhere would go unused. Not upstream behaviour: the
/// baseline from an empty start never comes here.
#[allow(clippy::too_many_arguments)]
fn avoid_inversions(
    cycle: &Cycle,
    need: &crate::engine::needed::NeedTest,
    start: &Assignment,
    pre: &Snapshot,
    states: &mut Vec<NodeState>,
    a: &mut Assignment,
    marks: &mut Marks,
    g: GroupId,
    cands: &[usize],
    elastic: bool,
    run: &mut Run,
) {
    let inst = cycle.inst;
    let kept = |h: GroupId| start.is_placed(h);
    let mut banned: BTreeSet<NodeId> = BTreeSet::new();
    for _ in 0..INVERSION_RETRIES {
        let mine: BTreeSet<NodeId> = a.pods[g].iter().map(|p| p.node).collect();
        let near = |u: &usize| cycle.victims[*u].pods.iter().any(|&p| mine.contains(&inst.pods[p].node));
        let inverted: Vec<usize> = a.evicted.iter().copied().filter(near).filter(|&u| need.inverted_with(a, u, &kept)).collect();
        if inverted.is_empty() {
            return;
        }
        let mut wider = banned.clone();
        wider.extend(inverted.iter().flat_map(|&u| cycle.victims[u].pods.iter().map(|&p| inst.pods[p].node)));
        let placed = (Snapshot::of(states, a, marks.unit, marks.pod, run.reprieved), a.pods[g].clone(), a.domain[g]);
        pre.restore(states, a, marks, g, run);
        if evict_and_place(cycle, states, a, marks, g, cands, &wider, elastic, run) {
            banned = wider;
            continue;
        }
        // It fits nowhere else: the placement before stays.
        placed.0.restore(states, a, marks, g, run);
        (a.pods[g], a.domain[g]) = (placed.1, placed.2);
        return;
    }
}
#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// `never` (priority 100, `preemptionPolicy: Never`, 1 cpu) and `late` (priority 10,
    /// 2 cpu) pending, `low` (priority 0, 2 cpu) bound on n1 (4 cpu); `more_nodes` and
    /// `more_pods` (YAML list items) follow n1 and `low`.
    pub(crate) fn never_beside_low(more_nodes: &str, more_pods: &str) -> Instance {
        let yaml = format!(
            "nodes:
  - {{name: n1, allocatable: {{cpu: \"4\"}}}}
{more_nodes}podGroups:
  - {{name: never, priority: 100, preemptionPolicy: Never, tasks: [{{name: w, count: 1, requests: {{cpu: \"1\"}}}}]}}
  - {{name: late, priority: 10, tasks: [{{name: w, count: 1, requests: {{cpu: \"2\"}}}}]}}
pods:
  - {{name: low, node: n1, priority: 0, requests: {{cpu: \"2\"}}, preemptible: true}}
{more_pods}"
        );
        Instance::from_text(&yaml).unwrap()
    }

    /// [`never_beside_low`] with a second node n2 (4 cpu) holding `low2` (priority 0, 3
    /// cpu).
    pub(crate) fn never_beside_low_and_low2() -> Instance {
        never_beside_low(
            "  - {name: n2, allocatable: {cpu: \"4\"}}\n",
            "  - {name: low2, node: n2, priority: 0, requests: {cpu: \"3\"}, preemptible: true}\n",
        )
    }

    /// A start that places group `g` (its first task's one pod) on node `n`.
    pub(crate) fn start_with(inst: &Instance, g: GroupId, n: NodeId) -> Assignment {
        let mut start = Assignment::empty(inst);
        start.pods[g] = vec![crate::engine::assignment::NewPod { task: inst.groups[g].tasks[0], node: n, devices: Default::default() }];
        start
    }

    /// `kept` holds node n2 in the start; `late` (priority 10) fits nowhere without an
    /// eviction, so it evicts `low` (priority 0) on n1. `kept` stays where it was, and
    /// the decision passes the validator.
    #[test]
    fn a_run_from_a_start_keeps_its_pods_and_evicts_for_the_groups_left_out() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"2\"}}
  - {name: n2, allocatable: {cpu: \"2\"}}
podGroups:
  - {name: kept, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
  - {name: late, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
pods:
  - {name: low, node: n1, priority: 0, requests: {cpu: \"2\"}, preemptible: true}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let a = preempt_from(&cycle, &start_with(&inst, 0, 1), &[1], true).assignment;
        let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
        assert_eq!((nodes(0), nodes(1), a.evicted.clone()), (vec![1], vec![0], vec![0]));
        assert!(crate::check::check(&inst, &assemble(&cycle, &a, Status::Feasible, f64::NAN)).is_valid());
        // From an empty start the same two groups need the one eviction too.
        let b = preempt_in_given_order(&cycle, &[0, 1], true).assignment;
        assert_eq!((b.pods.iter().filter(|p| !p.is_empty()).count(), b.evicted.clone()), (2, vec![0]));
    }

    /// `never` (priority 100, `preemptionPolicy: Never`) holds 1 of n1's 2 free cpus in the
    /// start. `late` (priority 10) needs 2: it evicts `low`, takes n1's room, and `low`
    /// does not fit back (1 + 2 + 2 > 4). That eviction is needed only with `never`'s pod
    /// there (`late` and `low` alone fit: 2 + 2 = 4), a priority inversion; the start's
    /// group stays and `late` goes, after which `low` fits back (1 + 2 = 3).
    #[test]
    fn a_run_from_a_start_takes_out_its_own_group_rather_than_the_start_s() {
        let inst = never_beside_low("", "");
        let cycle = Cycle::new(&inst);
        let start = start_with(&inst, 0, 0);
        let run = preempt_from(&cycle, &start, &[1], true);
        let a = &run.assignment;
        assert_eq!((a.is_placed(0), a.is_placed(1), a.evicted.clone()), (true, false, vec![]));
        assert!(run.notes[&1].contains("not allowed to evict"), "{:?}", run.notes);
        assert!(crate::check::check(&inst, &assemble(&cycle, a, Status::Feasible, f64::NAN)).is_valid());
        // With nothing to keep (the baseline from an empty start, `never` first), rule 6
        // takes out the group that may not evict `low`, as before.
        let b = preempt_in_given_order(&cycle, &[0, 1], true).assignment;
        assert_eq!((b.is_placed(0), b.is_placed(1), b.evicted.clone()), (false, true, vec![]));
    }

    /// As above, with a second node n2 (4 cpu) holding `low2` (priority 0, 3 cpu). First
    /// fit puts `late` on n1 after removing both victims; `low` then does not fit back and
    /// its eviction is an inversion with `never`, so `late` is placed again with n1 closed:
    /// on n2, where `low2` stays evicted (2 + 3 > 4, needed by `late`) and `low` goes back
    /// beside `never` (1 + 2 = 3).
    #[test]
    fn a_run_from_a_start_places_a_preemptor_away_from_an_inversion() {
        let inst = never_beside_low_and_low2();
        let cycle = Cycle::new(&inst);
        let start = start_with(&inst, 0, 0);
        let a = preempt_from(&cycle, &start, &[1], true).assignment;
        let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
        let evicted: Vec<&str> = a.evicted.iter().flat_map(|&u| &cycle.victims[u].pods).map(|&p| inst.pods[p].name.as_str()).collect();
        assert_eq!((nodes(0), nodes(1), evicted), (vec![0], vec![1], vec!["low2"]));
        assert!(crate::check::check(&inst, &assemble(&cycle, &a, Status::Feasible, f64::NAN)).is_valid());
    }
}
