//! Greedy gang placement: first-fit decreasing and its variants, the building blocks of
//! the `ffd` baseline, of the exact solver's warm start and of the explanations.
//!
//! Groups go by priority (highest first), then by decreasing size, then FIFO; each group
//! is placed all-or-nothing: its minimum pods first (largest task first, pod by pod,
//! first fit over the nodes in input order), then its elastic pods. This is the
//! "first-fit decreasing" vector bin-packing rule applied per gang. A refill of one level
//! can instead put each pod where device fragmentation grows least
//! ([`super::fragmentation`]).

use super::assignment::{Assignment, NewPod};
use super::cycle::{Cycle, NodeState};
use super::fragmentation::Fragmentation;
use super::ledger;
use crate::model::*;
use std::time::Instant;

/// A pod's size: the sum over resources of its share of the largest node.
pub fn task_size(cycle: &Cycle, t: TaskId) -> f64 {
    let inst = cycle.inst;
    let mut s = 0.0;
    for r in 0..inst.resources.len() {
        let max = cycle.max_allocatable[r];
        if max > 0 && Some(r) != inst.resource_id(PODS) {
            s += inst.tasks[t].requests[r] as f64 / max as f64;
        }
    }
    s
}

/// Priority first, then decreasing minimum size, then FIFO.
pub fn ffd_order(cycle: &Cycle) -> Vec<GroupId> {
    let inst = cycle.inst;
    let size =
        |g: GroupId| -> f64 { inst.groups[g].tasks.iter().map(|&t| task_size(cycle, t) * inst.tasks[t].min_count.max(1) as f64).sum() };
    let mut order = cycle.pending.clone();
    order.sort_by(|&a, &b| {
        let (ga, gb) = (&inst.groups[a], &inst.groups[b]);
        gb.rank
            .cmp(&ga.rank)
            .then(size(b).partial_cmp(&size(a)).unwrap_or(std::cmp::Ordering::Equal))
            .then(ga.created_at.cmp(&gb.created_at))
            .then(ga.order.cmp(&gb.order))
    });
    order
}

/// Places groups one by one in `order`; each is placed whole or not at all. Nodes are
/// tried in input order, or by `node_rank` (lowest first) when given.
pub fn place_in_order(cycle: &Cycle, order: &[GroupId], node_rank: Option<&[usize]>) -> Assignment {
    place_in_order_with(cycle, order, node_rank, true)
}

/// As [`place_in_order`]; with `elastic` false each group gets only the pods its
/// minimums need (elastic pods can be added afterwards by [`fill_elastic`]).
pub fn place_in_order_with(cycle: &Cycle, order: &[GroupId], node_rank: Option<&[usize]>, elastic: bool) -> Assignment {
    let pick = Pick::FirstFit(node_rank);
    let inst = cycle.inst;
    let mut states = cycle.nodes.clone();
    let mut a = Assignment::empty(inst);
    let mut ledger = ledger::Ledger::new(cycle);
    for &g in order {
        let saved = ledger.as_ref().map(|_| states.clone());
        if let Some((mut pods, dom)) = place_group_ranked(cycle, &mut states, g, pick, elastic) {
            if let Some(l) = ledger.as_mut() {
                // Over its queue's quota: keep what fits (elastic pods go first) and
                // give the rest of the capacity back to the groups that follow.
                if !l.fits(g, &pods) {
                    states = saved.expect("saved with a ledger");
                    l.trim(g, &mut pods);
                    for p in &pods {
                        states[p.node].apply(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
                    }
                    if pods.is_empty() {
                        continue;
                    }
                }
                l.take(g, &pods);
            }
            a.pods[g] = pods;
            a.domain[g] = dom;
        }
    }
    a
}

/// Undo log so a failed group attempt costs only what it touched: the pods placed so
/// far, each released again on rollback (no copies of node states, which at thousands
/// of nodes made allocation the bottleneck of the parallel candidate screening).
struct Trial<'s> {
    states: &'s mut Vec<NodeState>,
    pods: Vec<NewPod>,
    inst: &'s Instance,
    shared_ids: &'s [ResourceId],
}

impl<'s> Trial<'s> {
    fn take(&mut self, cycle: &Cycle, t: TaskId, n: NodeId) -> bool {
        match self.states[n].take(cycle.inst, &cycle.shared_ids, &cycle.inst.tasks[t].requests) {
            Some(devices) => {
                self.pods.push(NewPod { task: t, node: n, devices });
                true
            }
            None => false,
        }
    }
    fn mark(&self) -> usize {
        self.pods.len()
    }
    fn rollback(&mut self, mark: usize) {
        while self.pods.len() > mark {
            let p = self.pods.pop().unwrap();
            self.states[p.node].release(self.inst, self.shared_ids, &self.inst.tasks[p.task].requests, &p.devices);
        }
    }
}

/// How a greedy pass chooses the node of each pod.
#[derive(Clone, Copy)]
enum Pick<'p> {
    /// First fit over the nodes in input order, or by the rank given (lowest first).
    FirstFit(Option<&'p [usize]>),
    /// The node whose device fragmentation grows least, the first such on a tie.
    LeastFragmentation(&'p Fragmentation),
}

/// Adds up to `want` pods of task `t` on `nodes` (slices: whole slices only, by first
/// fit). Returns the number added.
fn add_pods(cycle: &Cycle, trial: &mut Trial, t: TaskId, nodes: &[NodeId], want: i64, pick: Pick) -> i64 {
    let task = &cycle.inst.tasks[t];
    match (task.slice, pick) {
        (None, Pick::LeastFragmentation(frag)) => {
            let mut added = 0;
            while added < want {
                match least_fragmenting(cycle, trial, t, nodes, frag) {
                    Some(n) if trial.take(cycle, t, n) => added += 1,
                    _ => break,
                }
            }
            added
        }
        (None, Pick::FirstFit(_)) => {
            let mut added = 0;
            let mut i = 0;
            while added < want && i < nodes.len() {
                if trial.take(cycle, t, nodes[i]) {
                    added += 1;
                } else {
                    i += 1;
                }
            }
            added
        }
        (Some((level, size)), _) => {
            let mut added = 0;
            // Slice domains in order of first appearance among the allowed nodes.
            let mut doms: Vec<usize> = Vec::new();
            for &n in nodes {
                if let Some(d) = cycle.domain_of[level][n] {
                    if !doms.contains(&d) {
                        doms.push(d);
                    }
                }
            }
            for d in doms {
                let in_dom: Vec<NodeId> = nodes.iter().copied().filter(|&n| cycle.domain_of[level][n] == Some(d)).collect();
                loop {
                    if added + size > want {
                        return added;
                    }
                    let mark = trial.mark();
                    let mut got = 0;
                    let mut i = 0;
                    while got < size && i < in_dom.len() {
                        if trial.take(cycle, t, in_dom[i]) {
                            got += 1;
                        } else {
                            i += 1;
                        }
                    }
                    if got < size {
                        trial.rollback(mark);
                        break;
                    }
                    added += size;
                }
            }
            added
        }
    }
}

/// The node of `nodes` where a pod of task `t` fits and the fragmentation grows least.
fn least_fragmenting(cycle: &Cycle, trial: &mut Trial, t: TaskId, nodes: &[NodeId], frag: &Fragmentation) -> Option<NodeId> {
    let (inst, ids) = (cycle.inst, &cycle.shared_ids);
    let requests = &inst.tasks[t].requests;
    let mut best: Option<(f64, NodeId)> = None;
    for &n in nodes {
        let state = &mut trial.states[n];
        let before = frag.of_node(inst, ids, state);
        let Some(devices) = state.take(inst, ids, requests) else { continue };
        let growth = frag.of_node(inst, ids, state) - before;
        state.release(inst, ids, requests, &devices);
        if best.is_none_or(|(g, _)| growth < g) {
            best = Some((growth, n));
        }
    }
    best.map(|(_, n)| n)
}

/// Rounds `n` up to a whole number of slices of task `t`.
fn round_to_slices(cycle: &Cycle, t: TaskId, n: i64) -> i64 {
    match cycle.inst.tasks[t].slice {
        Some((_, k)) => (n + k - 1) / k * k,
        None => n,
    }
}

/// Tries to place group `g` whole; on success the node states keep its pods.
pub fn place_group(cycle: &Cycle, states: &mut Vec<NodeState>, g: GroupId) -> Option<(Vec<NewPod>, Option<usize>)> {
    place_group_ranked(cycle, states, g, Pick::FirstFit(None), true)
}

/// As [`place_group`]; with `elastic` false only the pods the group's minimums need.
pub fn place_group_with(cycle: &Cycle, states: &mut Vec<NodeState>, g: GroupId, elastic: bool) -> Option<(Vec<NewPod>, Option<usize>)> {
    place_group_ranked(cycle, states, g, Pick::FirstFit(None), elastic)
}

/// Whether group `g` fits alone in domain `dom` of its required level by this greedy
/// rule (a proof of feasibility when it does; nothing when it does not). `states` is
/// left as it was.
pub fn fits_alone_in(cycle: &Cycle, states: &mut Vec<NodeState>, g: GroupId, dom: usize) -> bool {
    let l = match cycle.inst.groups[g].required {
        Some(l) => l,
        None => return false,
    };
    let saved: Vec<(NodeId, NodeState)> = cycle.domain_nodes[l][dom].iter().map(|&n| (n, states[n].clone())).collect();
    let ok = place_group_in(cycle, states, g, Pick::FirstFit(None), Some(dom), false).is_some();
    for (n, st) in saved {
        states[n] = st;
    }
    ok
}

fn place_group_ranked(
    cycle: &Cycle,
    states: &mut Vec<NodeState>,
    g: GroupId,
    pick: Pick,
    elastic: bool,
) -> Option<(Vec<NewPod>, Option<usize>)> {
    place_group_in(cycle, states, g, pick, None, elastic)
}

/// Group `g`'s tasks with pods pending, largest first ([`task_size`]), ties by task id.
pub(crate) fn tasks_largest_first(cycle: &Cycle, g: GroupId) -> Vec<TaskId> {
    let inst = cycle.inst;
    let mut tasks: Vec<TaskId> = inst.groups[g].tasks.iter().copied().filter(|&t| inst.tasks[t].count > 0).collect();
    tasks.sort_by(|&a, &b| task_size(cycle, b).partial_cmp(&task_size(cycle, a)).unwrap_or(std::cmp::Ordering::Equal).then(a.cmp(&b)));
    tasks
}

/// [`place_group_ranked`] trying only domain `only` of the required level when given.
fn place_group_in(
    cycle: &Cycle,
    states: &mut Vec<NodeState>,
    g: GroupId,
    pick: Pick,
    only: Option<usize>,
    elastic: bool,
) -> Option<(Vec<NewPod>, Option<usize>)> {
    let inst = cycle.inst;
    let grp = &inst.groups[g];
    let tasks = tasks_largest_first(cycle, g);
    let candidates: Vec<Option<usize>> = match (grp.required, only) {
        // One given domain (a bound member elsewhere makes its nodes ineligible anyway).
        (Some(_), Some(d)) => vec![Some(d)],
        (None, _) => vec![None],
        (Some(l), None) => match &cycle.pinned[g] {
            Some(Err(_)) => vec![],
            Some(Ok(d)) => vec![Some(*d)],
            None => {
                let mut seen = vec![false; cycle.domain_names[l].len()];
                for &t in &tasks {
                    for &n in &cycle.eligible[t] {
                        if let Some(d) = cycle.domain_of[l][n] {
                            seen[d] = true;
                        }
                    }
                }
                (0..seen.len()).filter(|&d| seen[d]).map(Some).collect()
            }
        },
    };
    for dom in candidates {
        let allowed = |t: TaskId| -> Vec<NodeId> {
            // Eligible nodes are sorted by id; a domain's nodes too. Walking the smaller
            // side keeps this cheap on clusters of thousands of nodes.
            let mut v: Vec<NodeId> = match dom {
                None => cycle.eligible[t].clone(),
                Some(d) => {
                    let members = &cycle.domain_nodes[grp.required.unwrap()][d];
                    members.iter().copied().filter(|n| cycle.eligible[t].binary_search(n).is_ok()).collect()
                }
            };
            if let Pick::FirstFit(Some(rank)) = pick {
                v.sort_by_key(|&n| (rank[n], n));
            }
            v
        };
        let mut trial = Trial { states: &mut *states, pods: Vec::new(), inst: cycle.inst, shared_ids: &cycle.shared_ids };
        let mut placed = vec![0i64; inst.tasks.len()];
        let mut ok = true;
        if grp.policy == Policy::Gang {
            for &t in &tasks {
                let need = round_to_slices(cycle, t, inst.tasks[t].min_count);
                if need > inst.tasks[t].count {
                    ok = false;
                    break;
                }
                let got = add_pods(cycle, &mut trial, t, &allowed(t), need, pick);
                placed[t] += got;
                if got < need {
                    ok = false;
                    break;
                }
            }
            // The group minimum beyond the task minimums.
            let mut missing = inst.min_new_pods(g) - placed.iter().sum::<i64>();
            if ok {
                for &t in &tasks {
                    if missing <= 0 {
                        break;
                    }
                    let room = inst.tasks[t].count - placed[t];
                    let want = round_to_slices(cycle, t, missing).min(room);
                    let got = add_pods(cycle, &mut trial, t, &allowed(t), want, pick);
                    placed[t] += got;
                    missing -= got;
                }
                ok = missing <= 0;
            }
        }
        if ok && (elastic || grp.policy != Policy::Gang) {
            // Elastic pods up to each task's count (a basic group: its pods, one at least).
            let want_total = if elastic { i64::MAX } else { 1 };
            for &t in &tasks {
                if placed.iter().sum::<i64>() >= want_total {
                    break;
                }
                let mut room = inst.tasks[t].count - placed[t];
                if !elastic {
                    room = round_to_slices(cycle, t, want_total - placed.iter().sum::<i64>()).min(room);
                }
                placed[t] += add_pods(cycle, &mut trial, t, &allowed(t), room, pick);
            }
            ok = placed.iter().sum::<i64>() >= inst.min_new_pods(g);
        }
        if ok {
            return Some((trial.pods, dom));
        }
        trial.rollback(0);
    }
    None
}

/// Smallest groups first within each priority level: more groups per level.
pub fn small_first_order(cycle: &Cycle) -> Vec<GroupId> {
    let inst = cycle.inst;
    let mut by_size: Vec<(i64, f64, GroupId)> = ffd_order(cycle)
        .into_iter()
        .map(|g| {
            let size: f64 = inst.groups[g].tasks.iter().map(|&t| task_size(cycle, t) * inst.tasks[t].min_count.max(1) as f64).sum();
            (-inst.groups[g].rank, size, g)
        })
        .collect();
    by_size.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal)).then(a.2.cmp(&b.2)));
    by_size.into_iter().map(|x| x.2).collect()
}

/// Rank of every node when the tightest (least free fraction before the cycle) go first.
pub fn tight_rank(cycle: &Cycle) -> Vec<usize> {
    let inst = cycle.inst;
    let mut tight: Vec<(f64, NodeId)> = (0..inst.nodes.len())
        .map(|n| {
            let mut free = 0.0;
            for r in 0..inst.resources.len() {
                let alloc = inst.nodes[n].allocatable[r];
                if alloc > 0 && Some(r) != inst.resource_id(PODS) {
                    free += cycle.nodes[n].free[r].max(0) as f64 / alloc as f64;
                }
            }
            (free, n)
        })
        .collect();
    tight.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)));
    let mut rank = vec![0; inst.nodes.len()];
    for (i, &(_, n)) in tight.iter().enumerate() {
        rank[n] = i;
    }
    rank
}

/// The best of a few greedy variants (group order x node order), by objective terms 1-3:
/// the exact solver's warm start. Cheap next to the MILP, and a better incumbent is often
/// all HiGHS needs to close the gap at the root.
pub fn best_start(cycle: &Cycle) -> Assignment {
    use super::assignment::objective;
    let inst = cycle.inst;
    let ffd = ffd_order(cycle);
    let small_first = small_first_order(cycle);
    let rank = tight_rank(cycle);
    let mut best: Option<(Assignment, crate::wire::decision::Objective)> = None;
    for order in [&ffd, &small_first] {
        for node_rank in [None, Some(rank.as_slice())] {
            let a = place_in_order(cycle, order, node_rank);
            let o = objective(inst, &cycle.victims, &a);
            if best.as_ref().is_none_or(|(_, bo)| o.compare(bo) == std::cmp::Ordering::Greater) {
                best = Some((a, o));
            }
        }
    }
    best.map(|b| b.0).unwrap_or_else(|| Assignment::empty(inst))
}

/// The node states after assignment `a`: its evicted victims gone, its pods applied.
pub fn states_after(cycle: &Cycle, a: &Assignment) -> Vec<NodeState> {
    let inst = cycle.inst;
    let mut states = cycle.nodes.clone();
    for &u in &a.evicted {
        for &p in &cycle.victims[u].pods {
            let pod = &inst.pods[p];
            states[pod.node].release(inst, &cycle.shared_ids, &pod.requests, &pod.devices);
        }
    }
    for p in a.pods.iter().flatten() {
        states[p.node].apply(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
    }
    states
}

/// Places the pending groups an assignment leaves out on the capacity it leaves free
/// (its evicted victims' included), in [`ffd_order`], each whole or not at all and within
/// its queue's quota, then their elastic pods; nothing placed moves and nothing more is
/// evicted, so every eviction stays as needed as it was. Returns how many groups it
/// placed. An incumbent built from a limited set of node patterns can leave room that a
/// pattern it lacks would use.
pub fn fill_unplaced(cycle: &Cycle, a: &mut Assignment) -> usize {
    let left_out: Vec<GroupId> = ffd_order(cycle).into_iter().filter(|&g| !a.is_placed(g)).collect();
    let placed = place_on_room_left(cycle, a, left_out, Pick::FirstFit(None), None);
    if placed > 0 {
        fill_elastic(cycle, a);
    }
    placed
}

/// Places `groups` in this order on the room assignment `a` leaves (its evictions
/// included), each with its minimum pods, whole or not at all and within its queue's
/// quota. A group with a running member that `a` evicts stays out (an evicted pod
/// belongs to no placed group). Returns how many it placed.
fn place_on_room_left(cycle: &Cycle, a: &mut Assignment, groups: Vec<GroupId>, pick: Pick, until: Option<Instant>) -> usize {
    let inst = cycle.inst;
    let mut states = states_after(cycle, a);
    let mut ledger = ledger::Ledger::after(cycle, a);
    let evicted_own: Vec<GroupId> = a.evicted.iter().filter_map(|&u| cycle.victims[u].pending_group).collect();
    let mut placed = 0;
    for g in groups {
        if until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        if evicted_own.contains(&g) {
            continue;
        }
        let Some((pods, dom)) = place_group_in(cycle, &mut states, g, pick, None, false) else { continue };
        if let Some(l) = ledger.as_mut() {
            if !l.fits(g, &pods) {
                for p in &pods {
                    states[p.node].release(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
                }
                continue;
            }
            l.take(g, &pods);
        }
        a.pods[g] = pods;
        a.domain[g] = dom;
        placed += 1;
    }
    placed
}

/// Places again the pending groups of priority level `rank`: their pods taken off, then
/// all of them in [`small_first_order`] on the room the rest of `a` leaves (its evictions
/// included), each pod on the least fragmenting node with `frag`, else by first fit;
/// whole or not at all and within queue quotas, then elastic pods. Nothing else moves
/// and nothing more is evicted. Returns how many groups of the level it places. Patterns
/// chosen level by level can scatter the device shares a level's smaller groups need.
/// Groups not reached by `until` stay unplaced (a pass over 3,000 pods takes 0.3 s).
pub fn refill_level(cycle: &Cycle, a: &mut Assignment, rank: i64, frag: Option<&Fragmentation>, until: Option<Instant>) -> usize {
    let pick = frag.map_or(Pick::FirstFit(None), Pick::LeastFragmentation);
    let level: Vec<GroupId> = small_first_order(cycle).into_iter().filter(|&g| cycle.inst.groups[g].rank == rank).collect();
    for &g in &level {
        a.pods[g].clear();
        a.domain[g] = None;
    }
    let placed = place_on_room_left(cycle, a, level, pick, until);
    fill_elastic(cycle, a);
    placed
}

/// Most node sets tried per left-out group by [`ruin_and_recreate`].
const RUIN_TRIES: usize = 4;

/// Most left-out groups one pass of [`ruin_and_recreate`] tries (a try on 1,024 nodes
/// takes a few milliseconds).
const RUIN_GROUPS: usize = 48;

/// Places left-out groups of priority level `rank` by ruin and recreate: for each, in
/// [`small_first_order`], the pending groups with pods on a few nodes are taken off
/// wholly, the group is placed on the room left, and the groups taken off are placed
/// again, largest first, then any other left-out group of the level or above; the move
/// is kept only when the result beats `a` under terms 1-3.
/// The nodes are those where pods of the group's largest task fit once the pending pods
/// there are off, fewest pending pods first, as many as its minimum pods need; each try
/// starts one node further down that list. Nodes where `a` evicts, and groups with a
/// pod on one, are left alone, so every eviction keeps the pods that need it; nothing
/// more is evicted. Placement is by first fit, each group whole with its minimum pods
/// and within queue quotas. Returns how many groups of the level it placed. A greedy
/// fill only uses the room placed groups leave; a left-out gang often needs nodes that
/// smaller groups share.
pub fn ruin_and_recreate(cycle: &Cycle, a: &mut Assignment, rank: i64, until: Option<Instant>) -> usize {
    let inst = cycle.inst;
    let evicting = evicting_nodes(cycle, a);
    let left: Vec<GroupId> = small_first_order(cycle).into_iter().filter(|&g| inst.groups[g].rank == rank && !a.is_placed(g)).collect();
    let largest_first = ffd_order(cycle);
    let mut placed = 0;
    // Groups no try placed: one alike to them would fail the same tries.
    let mut failed: Vec<GroupId> = Vec::new();
    for g in left.into_iter().take(RUIN_GROUPS) {
        if until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        if a.is_placed(g) || failed.iter().any(|&h| alike(cycle, g, h)) {
            continue;
        }
        let Some(&big) = tasks_largest_first(cycle, g).first() else { continue };
        let cands = ruin_candidates(cycle, a, &evicting, big);
        let need = inst.min_new_pods(g).max(1);
        for first in 0..RUIN_TRIES.min(cands.len()) {
            let Some(nodes) = node_set(&cands, first, need) else { break };
            let ruined: Vec<GroupId> =
                largest_first.iter().copied().filter(|&h| a.pods[h].iter().any(|p| nodes.contains(&p.node))).collect();
            let mut trial = a.clone();
            for &h in &ruined {
                trial.pods[h].clear();
                trial.domain[h] = None;
            }
            if place_on_room_left(cycle, &mut trial, vec![g], Pick::FirstFit(None), None) == 0 {
                continue;
            }
            place_on_room_left(cycle, &mut trial, ruined, Pick::FirstFit(None), None);
            let others: Vec<GroupId> =
                largest_first.iter().copied().filter(|&h| inst.groups[h].rank >= rank && !trial.is_placed(h)).collect();
            place_on_room_left(cycle, &mut trial, others, Pick::FirstFit(None), None);
            if super::assignment::beats(inst, &cycle.victims, &trial, a) {
                *a = trial;
                placed += 1;
                break;
            }
        }
        if !a.is_placed(g) {
            failed.push(g);
        }
    }
    placed
}

/// Whether pending groups `g` and `h` ask for the same thing in the same place: level,
/// queue, policy, minimum, topology, and per task its pods, minimum, requests and
/// eligible nodes; neither has bound pods or sliced tasks.
pub(crate) fn alike(cycle: &Cycle, g: GroupId, h: GroupId) -> bool {
    let inst = cycle.inst;
    let (x, y) = (&inst.groups[g], &inst.groups[h]);
    let plain = |grp: &crate::model::Group| grp.bound.is_empty() && grp.tasks.iter().all(|&t| inst.tasks[t].slice.is_none());
    plain(x)
        && plain(y)
        && (x.rank, x.queue_id, x.policy, x.min_count, x.required, x.preferred)
            == (y.rank, y.queue_id, y.policy, y.min_count, y.required, y.preferred)
        && x.tasks.len() == y.tasks.len()
        && x.tasks.iter().zip(&y.tasks).all(|(&s, &t)| {
            let (a, b) = (&inst.tasks[s], &inst.tasks[t]);
            (a.count, a.min_count) == (b.count, b.min_count) && a.requests == b.requests && cycle.eligible[s] == cycle.eligible[t]
        })
}

/// The nodes of `cands[first..]` (each with how many pods it can hold), in order, until
/// they hold `need`; `None` when they all hold less. The node set of one ruin try.
pub(crate) fn node_set(cands: &[(NodeId, i64)], first: usize, need: i64) -> Option<Vec<NodeId>> {
    let mut nodes = Vec::new();
    let mut room = 0;
    for &(n, holds) in &cands[first..] {
        if room >= need {
            break;
        }
        nodes.push(n);
        room += holds;
    }
    (room >= need).then_some(nodes)
}

/// The nodes [`ruin_and_recreate`] may clear for a group whose largest task is `big`,
/// each with how many pods of `big` it holds once cleared: eligible for it, no eviction
/// there, some pending pod there and none of a group with a pod on a node with an
/// eviction, room for a pod of `big` once the pending pods there are off; fewest pending
/// pods first.
fn ruin_candidates(cycle: &Cycle, a: &Assignment, evicting: &[bool], big: TaskId) -> Vec<(NodeId, i64)> {
    let inst = cycle.inst;
    let mut on_node: Vec<Vec<&NewPod>> = vec![Vec::new(); inst.nodes.len()];
    let mut pinned = vec![false; inst.nodes.len()];
    // Pods of the groups a node's clearing takes off (each group counted once a node).
    let mut cost = vec![0usize; inst.nodes.len()];
    for pods in &a.pods {
        let stays = pods.iter().any(|p| evicting[p.node]);
        let mut seen: Vec<NodeId> = Vec::new();
        for p in pods {
            on_node[p.node].push(p);
            pinned[p.node] |= stays;
            if !seen.contains(&p.node) {
                seen.push(p.node);
                cost[p.node] += pods.len();
            }
        }
    }
    let states = states_after(cycle, a);
    let mut cands: Vec<(usize, NodeId, i64)> = cycle.eligible[big]
        .iter()
        .copied()
        .filter(|&n| !evicting[n] && !pinned[n] && !on_node[n].is_empty())
        .filter_map(|n| {
            let mut s = states[n].clone();
            for p in &on_node[n] {
                s.release(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
            }
            let holds = pods_fitting(cycle, &mut s, big);
            (holds > 0).then_some((cost[n], n, holds))
        })
        .collect();
    cands.sort_unstable();
    cands.into_iter().map(|(_, n, holds)| (n, holds)).collect()
}

/// How many pods of task `t` node state `s` takes one after another, at most the task's
/// count (one for a task of none); `s` is left holding them.
pub(crate) fn pods_fitting(cycle: &Cycle, s: &mut NodeState, t: TaskId) -> i64 {
    let inst = cycle.inst;
    let most = inst.tasks[t].count.max(1);
    let mut holds = 0;
    while holds < most && s.take(inst, &cycle.shared_ids, &inst.tasks[t].requests).is_some() {
        holds += 1;
    }
    holds
}

/// Splits group `g`'s `pods`, in order of preference, into the pods that make its
/// minimum and its elastic pods: every pod `always` marks, and each task's minimum (a
/// gang's), in the order given; then, from the rest in order, up to the group's minimum.
pub fn split_minimum(inst: &Instance, g: GroupId, pods: Vec<NewPod>, always: impl Fn(&NewPod) -> bool) -> (Vec<NewPod>, Vec<NewPod>) {
    let grp = &inst.groups[g];
    let (mut kept, mut rest) = (Vec::new(), Vec::new());
    let mut per_task: std::collections::BTreeMap<TaskId, i64> = Default::default();
    for p in pods {
        let keep_min = if grp.policy == Policy::Gang { inst.tasks[p.task].min_count } else { 0 };
        let have = per_task.entry(p.task).or_default();
        if always(&p) || *have < keep_min {
            *have += 1;
            kept.push(p);
        } else {
            rest.push(p);
        }
    }
    let extra = (inst.min_new_pods(g) - kept.len() as i64).max(0) as usize;
    let elastic = rest.split_off(extra.min(rest.len()));
    kept.extend(rest);
    (kept, elastic)
}

/// Takes off the elastic pods of every placed group ([`split_minimum`]), except on nodes
/// where `a` evicts a victim, so that a fill sees the room they hold: an extra pod weighs
/// less than a group placed. Groups with slice tasks keep their pods. Returns how many
/// pods it took off.
pub fn strip_elastic(cycle: &Cycle, a: &mut Assignment) -> usize {
    let inst = cycle.inst;
    let evicting = evicting_nodes(cycle, a);
    let mut taken = 0;
    for g in 0..a.pods.len() {
        let grp = &inst.groups[g];
        if a.pods[g].is_empty() || grp.tasks.iter().any(|&t| inst.tasks[t].slice.is_some()) {
            continue;
        }
        let mut pods = std::mem::take(&mut a.pods[g]);
        // Pods on evicting nodes first: they all stay and count toward the minimums.
        pods.sort_by_key(|p| !evicting[p.node]);
        let (kept, elastic) = split_minimum(inst, g, pods, |p| evicting[p.node]);
        a.pods[g] = kept;
        taken += elastic.len();
    }
    taken
}

/// Per node: whether assignment `a` evicts a victim there.
pub fn evicting_nodes(cycle: &Cycle, a: &Assignment) -> Vec<bool> {
    let inst = cycle.inst;
    let mut evicting = vec![false; inst.nodes.len()];
    for &u in &a.evicted {
        for &p in &cycle.victims[u].pods {
            evicting[inst.pods[p].node] = true;
        }
    }
    evicting
}

/// Adds elastic pods (up to each task's count) to the groups an assignment already
/// places, highest priority first, on the capacity left. Used between the exact tiers:
/// the groups-placed tier does not care about elastic pods, and this hands the next
/// tier a start that does.
pub fn fill_elastic(cycle: &Cycle, a: &mut Assignment) {
    let inst = cycle.inst;
    let mut states = cycle.nodes.clone();
    for pods in &a.pods {
        for p in pods {
            states[p.node].apply(inst, &cycle.shared_ids, &inst.tasks[p.task].requests, &p.devices);
        }
    }
    let mut ledger = ledger::Ledger::after(cycle, a);
    let mut order: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| a.is_placed(g)).collect();
    order.sort_by_key(|&g| (std::cmp::Reverse(inst.groups[g].rank), inst.groups[g].created_at, g));
    for g in order {
        let grp = &inst.groups[g];
        for &t in &grp.tasks {
            let have = a.pods[g].iter().filter(|p| p.task == t).count() as i64;
            let quota_room = ledger.as_ref().map_or(i64::MAX, |l| l.room_for(g, t));
            let room = (inst.tasks[t].count - have).min(quota_room);
            if room <= 0 {
                continue;
            }
            let nodes: Vec<NodeId> = cycle.eligible[t]
                .iter()
                .copied()
                .filter(|&n| match (grp.required, a.domain[g]) {
                    (Some(l), Some(d)) => cycle.domain_of[l][n] == Some(d),
                    _ => true,
                })
                .collect();
            let mut trial = Trial { states: &mut states, pods: Vec::new(), inst: cycle.inst, shared_ids: &cycle.shared_ids };
            add_pods(cycle, &mut trial, t, &nodes, room, Pick::FirstFit(None));
            let new = std::mem::take(&mut trial.pods);
            if let Some(l) = ledger.as_mut() {
                l.take(g, &new);
            }
            a.pods[g].extend(new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::decision::Status;

    /// `kept` (2 cpu) holds half of the 4-cpu node; of the groups left out, `big` (3 cpu)
    /// fits nowhere, `small` (2 cpu) takes the rest of that node and `gang` (two 1-cpu
    /// pods) the 2-cpu node.
    #[test]
    fn the_fill_places_what_fits_in_the_room_left() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"4\"}}
  - {name: n2, allocatable: {cpu: \"2\"}}
podGroups:
  - {name: kept, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
  - {name: big, priority: 5, tasks: [{name: w, count: 1, requests: {cpu: \"3\"}}]}
  - {name: small, priority: 5, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
  - {name: gang, priority: 0, tasks: [{name: w, count: 2, requests: {cpu: \"1\"}}]}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let mut a = Assignment::empty(&inst);
        a.pods[0].push(NewPod { task: inst.groups[0].tasks[0], node: 0, devices: Default::default() });
        assert_eq!(fill_unplaced(&cycle, &mut a), 2);
        let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
        assert_eq!((nodes(0), nodes(1), nodes(2), nodes(3)), (vec![0], vec![], vec![0], vec![1, 1]));
    }

    /// `wide` (basic: one of three 1-cpu pods) fills the 4-cpu node but for 1 cpu and `gang`
    /// (minimum 2 of three 1-cpu pods) the 3-cpu node: `left` (2 cpu) fits nowhere.
    /// Without their elastic pods (2 of `wide`, 1 of `gang`) it fits on the first node,
    /// and `wide` gets its pods back on the 1 cpu left on each node.
    #[test]
    fn taking_off_elastic_pods_makes_room_for_a_left_out_group() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"4\"}}
  - {name: n2, allocatable: {cpu: \"3\"}}
podGroups:
  - {name: wide, priority: 10, policy: basic, tasks: [{name: w, count: 3, requests: {cpu: \"1\"}}]}
  - {name: gang, priority: 10, policy: gang, tasks: [{name: w, count: 3, minCount: 2, requests: {cpu: \"1\"}}]}
  - {name: left, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let mut a = Assignment::empty(&inst);
        for (g, node) in [(0, 0), (1, 1)] {
            a.pods[g] = vec![NewPod { task: inst.groups[g].tasks[0], node, devices: Default::default() }; 3];
        }
        assert_eq!(fill_unplaced(&cycle, &mut a.clone()), 0, "no room for `left` before");
        assert_eq!(strip_elastic(&cycle, &mut a), 3);
        assert_eq!((a.pods[0].len(), a.pods[1].len()), (1, 2), "each group keeps its minimum");
        assert_eq!(fill_unplaced(&cycle, &mut a), 1);
        let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
        assert_eq!((nodes(0), nodes(1), nodes(2)), (vec![0, 0, 1], vec![1, 1], vec![0]));
        let d = super::super::assemble::assemble(&cycle, &a, Status::Feasible, 1.0);
        assert!(crate::check::check(&inst, &d).is_valid());
    }

    /// On generated instances, from the greedy start (elastic pods included): taking the
    /// elastic pods off keeps every placed group placed with at least its minimum pods,
    /// where they were, takes off what it reports, and the result passes the validator;
    /// a second pass takes nothing.
    #[test]
    fn taking_off_elastic_pods_keeps_every_group_and_stays_valid() {
        let classes = ["flat-64", "openb-64", "rack-256", "tiny-queues"];
        let mut taken_in_all = 0;
        for (class, seed) in (1..=3).flat_map(|s| classes.map(|c| (c, s))) {
            let doc = crate::tooling::generate::generate(class, seed).expect("a class");
            let inst = Instance::from_doc(&doc).expect("generated instances are valid");
            let cycle = Cycle::new(&inst);
            let start = best_start(&cycle);
            let mut a = start.clone();
            let taken = strip_elastic(&cycle, &mut a);
            let name = format!("{class} s{seed}");
            let pods = |x: &Assignment| x.pods.iter().map(Vec::len).sum::<usize>();
            assert_eq!(pods(&start) - pods(&a), taken, "{name}: the count returned");
            taken_in_all += taken;
            for &g in &cycle.pending {
                assert_eq!(a.is_placed(g), start.is_placed(g), "{name}: {} placed or not", inst.groups[g].name);
                let at = |p: &NewPod| (p.task, p.node, p.devices.clone());
                assert!(a.pods[g].iter().all(|p| start.pods[g].iter().any(|q| at(q) == at(p))), "{name}: a pod moved");
                let grp = &inst.groups[g];
                if a.is_placed(g) {
                    assert!(a.pods[g].len() as i64 >= inst.min_new_pods(g), "{name}: {} below its minimum", grp.name);
                    for &t in grp.tasks.iter().filter(|_| grp.policy == Policy::Gang) {
                        let kept = a.pods[g].iter().filter(|p| p.task == t).count() as i64;
                        assert!(kept >= inst.tasks[t].min_count, "{name}: {} below a task's minimum", grp.name);
                    }
                }
            }
            let d = super::super::assemble::assemble(&cycle, &a, Status::Feasible, 1.0);
            let report = crate::check::check(&inst, &d);
            assert!(report.is_valid(), "{name}: {:?}", report.violations);
            assert_eq!(strip_elastic(&cycle, &mut a), 0, "{name}: a second pass");
        }
        assert!(taken_in_all > 0, "no elastic pod taken off: the test proves nothing");
    }

    /// Two 4-cpu nodes, groups `a` and `b` of `cpu` cpu each and `whole` of 4 cpu, all
    /// at one level.
    fn two_nodes_for_whole(cpu: &str) -> Instance {
        let yaml = format!(
            "nodes:
  - {{name: n1, allocatable: {{cpu: \"4\"}}}}
  - {{name: n2, allocatable: {{cpu: \"4\"}}}}
podGroups:
  - {{name: a, priority: 5, tasks: [{{name: w, count: 1, requests: {{cpu: \"{cpu}\"}}}}]}}
  - {{name: b, priority: 5, tasks: [{{name: w, count: 1, requests: {{cpu: \"{cpu}\"}}}}]}}
  - {{name: whole, priority: 5, tasks: [{{name: w, count: 1, requests: {{cpu: \"4\"}}}}]}}
"
        );
        Instance::from_text(&yaml).unwrap()
    }

    /// `a` on n1, `b` on n2, `whole` left out.
    fn a_on_n1_b_on_n2(inst: &Instance) -> Assignment {
        let mut a = Assignment::empty(inst);
        for (g, node) in [(0, 0), (1, 1)] {
            a.pods[g].push(NewPod { task: inst.groups[g].tasks[0], node, devices: Default::default() });
        }
        a
    }

    /// `a` (1 cpu) sits on n1 and `b` (1 cpu) on n2, two 4-cpu nodes: `whole` (4 cpu)
    /// fits nowhere. Clearing n1 (one pod, the cheapest; n2 costs as much and comes later)
    /// places `whole` there, and `a` goes back on n2 beside `b`.
    #[test]
    fn ruin_and_recreate_clears_a_node_for_a_left_out_group() {
        let inst = two_nodes_for_whole("1");
        let cycle = Cycle::new(&inst);
        let mut a = a_on_n1_b_on_n2(&inst);
        assert_eq!(fill_unplaced(&cycle, &mut a.clone()), 0, "no room for `whole` as it is");
        assert_eq!(ruin_and_recreate(&cycle, &mut a, inst.groups[2].rank, None), 1);
        let nodes = |g: usize| a.pods[g].iter().map(|p| p.node).collect::<Vec<_>>();
        assert_eq!((nodes(0), nodes(1), nodes(2)), (vec![1], vec![1], vec![0]));
        let d = super::super::assemble::assemble(&cycle, &a, Status::Feasible, 1.0);
        assert!(crate::check::check(&inst, &d).is_valid());
    }

    /// As above, but `a` (3 cpu) and `b` (3 cpu) each hold most of a node: clearing
    /// either places `whole`, and the group taken off fits nowhere again. One group of
    /// the level for another is no gain, so nothing changes.
    #[test]
    fn ruin_and_recreate_keeps_no_move_that_loses_a_group() {
        let inst = two_nodes_for_whole("3");
        let cycle = Cycle::new(&inst);
        let mut a = a_on_n1_b_on_n2(&inst);
        let before = a.clone();
        assert_eq!(ruin_and_recreate(&cycle, &mut a, inst.groups[2].rank, None), 0);
        let at = |x: &Assignment| x.pods.iter().map(|ps| ps.iter().map(|p| (p.task, p.node)).collect::<Vec<_>>()).collect::<Vec<_>>();
        assert_eq!(at(&a), at(&before));
    }

    /// `grow` has a running member on n1 and one pod pending; `high` holds 1 of n1's 3
    /// cpu. With its member running, `grow`'s pending pod fits in the cpu left; with that
    /// member evicted it may not be placed at all (an evicted pod belongs to no placed
    /// group), though the eviction leaves more room.
    #[test]
    fn a_group_whose_member_is_evicted_stays_out() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"3\"}}
podGroups:
  - {name: high, priority: 10, policy: basic, tasks: [{name: w, count: 1, requests: {cpu: \"1\"}}]}
  - {name: grow, priority: 0, policy: basic, tasks: [{name: w, count: 1, requests: {cpu: \"1\"}}]}
pods:
  - {name: grow-0, node: n1, podGroup: grow, task: w, requests: {cpu: \"1\"}}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        assert_eq!(cycle.victims.len(), 1);
        assert_eq!(cycle.victims[0].pending_group, Some(1));
        let mut a = Assignment::empty(&inst);
        a.pods[0] = vec![NewPod { task: inst.groups[0].tasks[0], node: 0, devices: Default::default() }];
        assert_eq!(fill_unplaced(&cycle, &mut a.clone()), 1, "with its member running, `grow` fits");
        a.evicted = vec![0];
        assert_eq!(fill_unplaced(&cycle, &mut a), 0);
        assert!(!a.is_placed(1));
    }

    /// Pods on a node where the assignment evicts a victim stay, elastic or not: taking
    /// them off could leave the eviction unneeded.
    #[test]
    fn elastic_pods_stay_where_a_victim_is_evicted() {
        let yaml = "nodes:
  - {name: n1, allocatable: {cpu: \"2\"}}
  - {name: n2, allocatable: {cpu: \"2\"}}
podGroups:
  - {name: high, priority: 10, policy: basic, tasks: [{name: w, count: 4, requests: {cpu: \"1\"}}]}
pods:
  - {name: low, node: n1, priority: 0, requests: {cpu: \"2\"}, preemptible: true}
";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        assert_eq!(cycle.victims.len(), 1);
        let mut a = Assignment::empty(&inst);
        let t = inst.groups[0].tasks[0];
        a.pods[0] = [1, 0, 0, 1].map(|node| NewPod { task: t, node, devices: Default::default() }).to_vec();
        a.evicted = vec![0];
        // The two pods on n1 stay and hold the group's minimum: both on n2 go.
        assert_eq!(strip_elastic(&cycle, &mut a), 2);
        assert_eq!(a.pods[0].iter().map(|p| p.node).collect::<Vec<_>>(), vec![0, 0]);
    }

    /// On generated instances, from the greedy start with every other placed group taken
    /// off: the fill keeps what was placed, places groups only whole, leaves no left-out
    /// group that the room left would take, and the result passes the validator.
    #[test]
    fn the_fill_keeps_what_was_placed_and_stays_valid() {
        let classes = ["flat-64", "openb-64", "rack-256", "tiny-queues", "tas-queues"];
        let (mut refilled, mut with_quotas) = (0, 0);
        for (class, seed) in (1..=4).flat_map(|s| classes.map(|c| (c, s))) {
            let doc = crate::tooling::generate::generate(class, seed).expect("a class");
            let inst = Instance::from_doc(&doc).expect("generated instances are valid");
            let cycle = Cycle::new(&inst);
            let mut a = best_start(&cycle);
            let placed: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| a.is_placed(g)).collect();
            for &g in placed.iter().step_by(2) {
                a.pods[g].clear();
                a.domain[g] = None;
            }
            let before = a.clone();
            let more = fill_unplaced(&cycle, &mut a);
            let name = format!("{class} s{seed}");
            let new: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| a.is_placed(g) && !before.is_placed(g)).collect();
            assert_eq!(more, new.len(), "{name}: the count returned");
            refilled += more;
            for &g in &cycle.pending {
                if before.is_placed(g) {
                    let at = |p: &NewPod| (p.task, p.node, p.devices.clone());
                    let now: Vec<_> = a.pods[g].iter().map(at).collect();
                    assert!(before.pods[g].iter().all(|p| now.contains(&at(p))), "{name}: a placed pod moved");
                }
            }
            assert_eq!(a.evicted, before.evicted, "{name}: evictions changed");
            let d = super::super::assemble::assemble(&cycle, &a, Status::Feasible, 1.0);
            let report = crate::check::check(&inst, &d);
            assert!(report.is_valid(), "{name}: {:?}", report.violations);
            with_quotas += usize::from(ledger::Ledger::new(&cycle).is_some());
            if ledger::Ledger::new(&cycle).is_none() {
                let mut states = states_after(&cycle, &a);
                for g in cycle.pending.iter().copied().filter(|&g| !a.is_placed(g)) {
                    assert!(place_group_with(&cycle, &mut states, g, false).is_none(), "{name}: {} still fits", inst.groups[g].name);
                }
            }
        }
        assert!(refilled > 0 && with_quotas > 0, "{refilled} groups placed again, {with_quotas} instances with quotas");
    }

    /// On generated instances, from the greedy start: refilling the lowest level (least
    /// fragmenting where pods request devices, and first fit) moves no pod of another
    /// level, evicts nothing, places groups whole, returns the count of the level's
    /// groups placed, and passes the validator; given a time already past, it places none
    /// of the level's groups.
    #[test]
    fn the_refill_moves_only_its_level_and_stays_valid() {
        let classes = ["flat-64", "openb-64", "rack-256", "tiny-queues"];
        let (mut with_devices, mut placed_in_all) = (0, 0);
        for (class, seed) in (1..=3).flat_map(|s| classes.map(|c| (c, s))) {
            let doc = crate::tooling::generate::generate(class, seed).expect("a class");
            let inst = Instance::from_doc(&doc).expect("generated instances are valid");
            let cycle = Cycle::new(&inst);
            let start = best_start(&cycle);
            let Some(lowest) = cycle.pending.iter().map(|&g| inst.groups[g].rank).min() else { continue };
            let frag = Fragmentation::of(&cycle);
            with_devices += usize::from(frag.is_some());
            for pick in [frag.as_ref(), None] {
                let name = format!("{class} s{seed} (least fragmenting: {})", pick.is_some());
                let mut a = start.clone();
                let placed = refill_level(&cycle, &mut a, lowest, pick, None);
                let at_level = cycle.pending.iter().filter(|&&g| inst.groups[g].rank == lowest && a.is_placed(g)).count();
                assert_eq!(placed, at_level, "{name}: the count returned");
                placed_in_all += placed;
                for &g in cycle.pending.iter().filter(|&&g| inst.groups[g].rank != lowest) {
                    let at = |p: &NewPod| (p.task, p.node, p.devices.clone());
                    let (now, before): (Vec<_>, Vec<_>) = (a.pods[g].iter().map(at).collect(), start.pods[g].iter().map(at).collect());
                    assert!(before.iter().all(|p| now.contains(p)), "{name}: a pod of another level moved");
                }
                assert_eq!(a.evicted, start.evicted, "{name}: evictions changed");
                let d = super::super::assemble::assemble(&cycle, &a, Status::Feasible, 1.0);
                let report = crate::check::check(&inst, &d);
                assert!(report.is_valid(), "{name}: {:?}", report.violations);
                let mut late = start.clone();
                assert_eq!(refill_level(&cycle, &mut late, lowest, pick, Some(Instant::now())), 0, "{name}: placed after its time");
                assert!(cycle.pending.iter().all(|&g| inst.groups[g].rank != lowest || !late.is_placed(g)), "{name}: a group placed late");
            }
        }
        assert!(with_devices > 0, "no instance with device requests");
        assert!(placed_in_all > 0, "no refill placed a group: the late refills prove nothing");
    }
}
