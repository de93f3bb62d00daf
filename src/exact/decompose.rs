//! Domain decomposition for large topology cycles (`models/topology.md`).
//!
//! At thousands of nodes the joint cycle MILP has a column per (task, node) and does not
//! fit the budget. Instead:
//!
//! 1. **Master** over domain choices: one binary per (group, candidate domain) of its
//!    required level that survived screening, one per group placed; per domain of every
//!    level, the minimum demand of the groups assigned inside it may not exceed its
//!    rolled-up free capacity (and a root row for all groups). Every real placement
//!    satisfies these rows, so the master's optimum bounds term 1 from above. Solved
//!    level by level (highest priority first, each level fixed before the next), then a
//!    tie-break that keeps the greedy incumbent's domains where it can.
//! 2. **Restricted joint model**: the exact cycle MILP where each group may use only the
//!    nodes of its master domain and of the greedy incumbent's domain (so the greedy
//!    placement stays feasible and the result is never worse than it). It decides the
//!    pods, devices and slices.
//!
//! If the restricted model places what the master bound says, term 1 is proven; otherwise
//! the reported gap is the distance to the master bound (an honest upper bound).
//!
//! Used only by a clear rule ([`applies`]): no evictable pods (victims couple domains in
//! ways the aggregated rows do not capture) and a joint model over `COLUMN_LIMIT` x columns.

use super::candidates::{Screening, Verdict};
use super::highs::{self, Mip, MipParams, MipStatus, INF};
use super::topology::{TopologyGraph, Vertex};
use crate::engine::assignment::Assignment;
use crate::engine::cycle::{Cycle, UNLIMITED};
use crate::model::*;
use petgraph::Direction;
use std::collections::BTreeMap;
use std::time::Instant;

/// Above this many (task, node) columns the joint model is decomposed.
pub const COLUMN_LIMIT: usize = 100_000;

/// Domains per left-out group taken from the master's LP solution (see `Master`).
pub const LP_DOMAINS: usize = 3;

pub fn applies(cycle: &Cycle) -> bool {
    let cols: usize = cycle.pending.iter().flat_map(|&g| cycle.inst.groups[g].tasks.iter()).map(|&t| cycle.eligible[t].len()).sum();
    cycle.victims.is_empty() && cols > COLUMN_LIMIT
}

/// The master's answer.
#[derive(Clone, Debug, Default)]
pub struct Master {
    /// Per group: placed by the master, and in which domain of its required level.
    pub placed: Vec<bool>,
    pub domain: Vec<Option<usize>>,
    /// Per term-1 level (highest first): (rank, i.e. the priority without queues; upper
    /// bound on groups placed).
    pub bounds: Vec<(i64, i64)>,
    /// Per level, how its bound was obtained (reported in the decision's stats).
    pub settled: Vec<&'static str>,
    /// All levels proven (bounds are the master optimum, not just a dual bound).
    pub proven: bool,
    /// Per group the hint leaves out at a level the master could not settle: the domains
    /// its LP relaxation uses most (at most [`LP_DOMAINS`]), for the restricted model.
    pub lp_domains: Vec<Vec<usize>>,
    pub columns: usize,
    pub rows: usize,
    pub millis: u64,
}

/// Minimum demand of group `g` per resource (milli for shared resources), and per shared
/// resource the whole devices its integral requests need: a lower bound on what any
/// placement of the group uses.
pub fn min_demand(inst: &Instance, g: GroupId) -> (Vec<i64>, Vec<i64>) {
    let grp = &inst.groups[g];
    let mut need = vec![0i64; inst.resources.len()];
    let mut whole = vec![0i64; inst.resources.len()];
    if grp.policy == Policy::Basic {
        // One pod of the smallest task.
        for r in 0..inst.resources.len() {
            need[r] = grp.tasks.iter().filter(|&&t| inst.tasks[t].count > 0).map(|&t| inst.tasks[t].requests[r]).min().unwrap_or(0);
        }
        return (need, whole);
    }
    let mut pods = 0;
    for &t in &grp.tasks {
        let task = &inst.tasks[t];
        if task.count == 0 {
            continue;
        }
        let k = match task.slice {
            Some((_, s)) => (task.min_count + s - 1) / s * s,
            None => task.min_count,
        };
        pods += k;
        for r in 0..inst.resources.len() {
            need[r] += k * task.requests[r];
            if inst.shared[r] && task.requests[r] >= 1000 {
                whole[r] += k * (task.requests[r] / 1000);
            }
        }
    }
    let beyond = (inst.min_new_pods(g) - pods).max(0);
    for r in 0..inst.resources.len() {
        let smallest = grp.tasks.iter().filter(|&&t| inst.tasks[t].count > 0).map(|&t| inst.tasks[t].requests[r]).min().unwrap_or(0);
        need[r] += beyond * smallest;
    }
    (need, whole)
}

/// Per shared resource `r` and granule size `q` (whole devices that must sit on one node:
/// a pod's integral request, or a host slice's), the number of granules of size >= q in
/// the group's minimum. A node with `w` free devices holds at most `w / q` of them: the
/// rows built from this keep fragmented free devices from counting as room.
pub fn granules(cycle: &Cycle, g: GroupId) -> BTreeMap<(ResourceId, i64), i64> {
    let inst = cycle.inst;
    let host = inst.levels.len() - 1;
    let mut sizes: Vec<(ResourceId, i64, i64)> = Vec::new(); // (r, size, count)
    if inst.groups[g].policy == Policy::Basic {
        return BTreeMap::new();
    }
    for &t in &inst.groups[g].tasks {
        let task = &inst.tasks[t];
        for &r in &cycle.shared_ids {
            let k = task.requests[r] / 1000;
            if task.count == 0 || task.requests[r] < 1000 || task.requests[r] % 1000 != 0 {
                continue;
            }
            match task.slice {
                Some((l, sz)) if l == host => sizes.push((r, k * sz, (task.min_count + sz - 1) / sz)),
                Some((_, sz)) => sizes.push((r, k, (task.min_count + sz - 1) / sz * sz)),
                None => sizes.push((r, k, task.min_count)),
            }
        }
    }
    let mut out = BTreeMap::new();
    for &(r, size, count) in &sizes {
        for q in 2..=size.min(64) {
            *out.entry((r, q)).or_insert(0) += count;
        }
    }
    out
}

/// Solves the master; `hint` (the greedy incumbent) breaks ties among optimal choices.
pub fn solve_master(cycle: &Cycle, topo: &TopologyGraph, s: &Screening, hint: &Assignment, deadline: Instant) -> Master {
    let started = Instant::now();
    let inst = cycle.inst;
    let mut mip = Mip::default();
    let mut y = vec![usize::MAX; inst.groups.len()];
    // (group, level, domain, column)
    let mut a: Vec<(GroupId, usize, usize, usize)> = Vec::new();
    let mut demand: Vec<(Vec<i64>, Vec<i64>)> = vec![Default::default(); inst.groups.len()];
    let mut gran: Vec<BTreeMap<(ResourceId, i64), i64>> = vec![BTreeMap::new(); inst.groups.len()];
    for &g in &cycle.pending {
        y[g] = mip.add_col(0.0, 1.0, true, format!("y{g}"));
        demand[g] = min_demand(inst, g);
        gran[g] = granules(cycle, g);
        if let Some(l) = inst.groups[g].required {
            let mut pick = vec![(y[g], -1.0)];
            for c in s.candidates[g].iter().filter(|c| c.verdict != Verdict::Infeasible) {
                let col = mip.add_col(0.0, 1.0, true, format!("a{g}_{}", c.domain));
                a.push((g, l, c.domain, col));
                pick.push((col, 1.0));
            }
            // Exactly one domain when placed (none left: never placed).
            mip.add_row(0.0, 0.0, pick);
        }
    }
    // Capacity rows: each assignment counts in its domain and every ancestor (the graph's
    // parent chain), and every placed group at the root.
    let mut per_domain: BTreeMap<(usize, usize), Vec<(GroupId, usize)>> = BTreeMap::new();
    for &(g, l, d, col) in &a {
        let mut v = topo.domain_vertex[l][d];
        per_domain.entry((l, d)).or_default().push((g, col));
        while let Some(p) = topo.graph.neighbors_directed(v, Direction::Incoming).next() {
            match topo.graph[p] {
                Vertex::Domain { level, domain } => {
                    per_domain.entry((level, domain)).or_default().push((g, col));
                    v = p;
                }
                _ => break,
            }
        }
    }
    let root: Vec<(GroupId, usize)> = cycle.pending.iter().map(|&g| (g, y[g])).collect();
    let all_free = super::topology::sum_rollups(inst, topo.node_free.iter());
    let add_rows = |mip: &mut Mip, members: &[(GroupId, usize)], cap: &super::topology::Rollup, nodes: &[NodeId]| {
        if members.len() < 2 {
            return; // one group alone was screened already
        }
        // Granule rows (see `granules`).
        let mut keys: Vec<(ResourceId, i64)> = members.iter().flat_map(|&(g, _)| gran[g].keys().copied()).collect();
        keys.sort_unstable();
        keys.dedup();
        for (r, q) in keys {
            let e: Vec<(usize, f64)> = members.iter().filter_map(|&(g, c)| gran[g].get(&(r, q)).map(|&k| (c, k as f64))).collect();
            let have: i64 = nodes.iter().map(|&n| topo.node_free[n].whole_devices[r] / q).sum();
            if e.len() >= 2 && e.iter().map(|x| x.1).sum::<f64>() > have as f64 {
                mip.add_row(-INF, have as f64, e);
            }
        }
        for r in 0..inst.resources.len() {
            let mut checks = vec![(cap.free[r], false)];
            if inst.shared[r] {
                checks.push((cap.whole_devices[r], true));
            }
            for (have, whole) in checks {
                if have >= UNLIMITED / 2 {
                    continue;
                }
                let e: Vec<(usize, f64)> = members
                    .iter()
                    .map(|&(g, c)| (c, if whole { demand[g].1[r] } else { demand[g].0[r] } as f64))
                    .filter(|&(_, q)| q > 0.0)
                    .collect();
                let total: f64 = e.iter().map(|x| x.1).sum();
                if e.len() < 2 || total <= have as f64 {
                    continue;
                }
                // Scaled to keep coefficients near 1000; a little slack so rounding
                // never cuts a real placement (this is a relaxation).
                let scale = (e.iter().map(|x| x.1).fold(1.0, f64::max) / 1000.0).max(1.0);
                mip.add_row(-INF, have as f64 / scale * (1.0 + 1e-9) + 1e-6, e.into_iter().map(|(c, q)| (c, q / scale)).collect());
            }
        }
    };
    for (&(l, d), members) in &per_domain {
        add_rows(&mut mip, members, &topo.rollup[l][d], &cycle.domain_nodes[l][d]);
    }
    let all_nodes: Vec<NodeId> = (0..inst.nodes.len()).collect();
    add_rows(&mut mip, &root, &all_free, &all_nodes);

    // Level by level.
    let mut levels: Vec<i64> = cycle.pending.iter().map(|&g| inst.groups[g].rank).collect();
    levels.sort_unstable_by(|x, y| y.cmp(x));
    levels.dedup();
    let mut best: Option<Vec<f64>> = None;
    let mut bounds = Vec::new();
    let mut settled = Vec::new();
    let mut proven = true;
    // Every level so far settled without a branch-and-bound (whole, or the LP bound down
    // to the hint's count): then the hint itself is an optimal master solution.
    let mut by_hint = true;
    let mut lp_domains: Vec<Vec<(f64, usize)>> = vec![Vec::new(); inst.groups.len()];
    for &p in &levels {
        let coefs: Vec<(usize, f64)> = cycle.pending.iter().filter(|&&g| inst.groups[g].rank == p).map(|&g| (y[g], 1.0)).collect();
        let pending = coefs.len() as i64;
        if !proven {
            bounds.push((p, pending));
            settled.push("below an open level");
            continue;
        }
        for c in mip.col_cost.iter_mut() {
            *c = 0.0;
        }
        for &(c, v) in &coefs {
            mip.col_cost[c] = v;
        }
        // The hint is a real placement, so it satisfies every master row: its count at
        // this level is a valid floor (HiGHS gets no MIP start, see highs.rs).
        let floor = cycle.pending.iter().filter(|&&g| inst.groups[g].rank == p && hint.is_placed(g)).count();
        if floor as i64 == pending {
            // The hint places the whole level: that is its optimum, no solve needed, and
            // the levels below are bounded under "all of this level placed" (fixed).
            for &(c, _) in &coefs {
                mip.col_lower[c] = 1.0;
            }
            bounds.push((p, pending));
            settled.push("hint places all");
            continue;
        }
        mip.add_row(floor as f64 - 0.5, INF, coefs.clone());
        let level_start = Instant::now();
        // The LP relaxation first: on these models it is often already down to the hint's
        // count, and then the hint is optimal for this level without a branch-and-bound
        // (whose presolve alone took seconds at 4,096 nodes).
        let relaxed = highs::relaxation(&mip, deadline);
        let lp = relaxed.as_ref().map(|r| r.0);
        if let Some((_, v)) = relaxed.as_ref().filter(|r| r.0 >= floor as f64 + 1.0) {
            // The level is open: the domains the LP leans on for the groups the hint
            // leaves out are where the restricted model should look for more.
            for &(g, _, d, col) in &a {
                if inst.groups[g].rank == p && !hint.is_placed(g) && v[col] > 1e-6 {
                    lp_domains[g].push((v[col], d));
                }
            }
        }
        if cycle.diag.debug {
            eprintln!("master level {p}: floor {floor}/{pending}, LP bound {lp:?} in {} ms", level_start.elapsed().as_millis());
        }
        if lp.is_some_and(|b| b + 1e-6 < floor as f64 + 1.0) {
            // Kept as the level's row (count >= floor): the levels below are bounded over
            // every master solution that reaches it, not just the hint's set of groups.
            bounds.push((p, floor as i64));
            settled.push("LP relaxation");
            continue;
        }
        by_hint = false;
        let res = highs::solve_detached(mip.clone(), MipParams::of_cycle(deadline, 0.0, 0.5, cycle));
        mip.rows.pop();
        if cycle.diag.debug {
            eprintln!(
                "master level {p}: floor {floor}/{pending}, {:?} in {} ms, objective {}, dual bound {}, nodes {}",
                res.status,
                level_start.elapsed().as_millis(),
                res.objective,
                res.dual_bound,
                res.nodes
            );
        }
        let found = (res.status == MipStatus::Optimal || res.status == MipStatus::Interrupted) && res.values.len() == mip.num_cols();
        if res.status == MipStatus::Optimal && found {
            let k = res.objective.round() as i64;
            bounds.push((p, k));
            settled.push("branch-and-bound");
            best = Some(res.values.clone());
            mip.add_row(k as f64 - 0.5, INF, coefs);
        } else {
            proven = false;
            let mut ub = if res.dual_bound.is_finite() { ((res.dual_bound + 1e-6).floor() as i64).min(pending) } else { pending };
            if let Some(b) = lp {
                ub = ub.min((b + 1e-6).floor() as i64);
            }
            bounds.push((p, ub));
            settled.push("open (dual bound)");
            if found {
                best = Some(res.values.clone());
            }
        }
    }
    // Tie-break: keep the hint's domains (and groups) where the levels allow it. Not
    // needed when the hint itself is optimal (the restricted model keeps its domains).
    if proven && !by_hint {
        for c in mip.col_cost.iter_mut() {
            *c = 0.0;
        }
        for &(g, _, d, col) in &a {
            if hint.is_placed(g) && hint.domain[g] == Some(d) {
                mip.col_cost[col] = 1.0;
            }
        }
        for &g in &cycle.pending {
            if hint.is_placed(g) && inst.groups[g].required.is_none() {
                mip.col_cost[y[g]] = 1.0;
            }
        }
        // A tie-break: half a second at most, unless the work limit bounds it instead.
        let tie_deadline =
            if cycle.work.is_some() { deadline } else { deadline.min(Instant::now() + std::time::Duration::from_millis(500)) };
        let res = highs::solve_detached(mip.clone(), MipParams::of_cycle(tie_deadline, 0.0, 0.5, cycle));
        if matches!(res.status, MipStatus::Optimal | MipStatus::Interrupted) && res.values.len() == mip.num_cols() {
            best = Some(res.values);
        }
    }
    let mut m = Master {
        placed: vec![false; inst.groups.len()],
        domain: vec![None; inst.groups.len()],
        bounds,
        settled,
        proven,
        lp_domains: lp_domains
            .into_iter()
            .map(|mut v| {
                v.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
                v.into_iter().take(LP_DOMAINS).map(|x| x.1).collect()
            })
            .collect(),
        columns: mip.num_cols(),
        rows: mip.rows.len(),
        millis: 0,
    };
    if let Some(v) = best {
        for &g in &cycle.pending {
            m.placed[g] = v[y[g]] > 0.5;
        }
        for &(g, _, d, col) in &a {
            if v[col] > 0.5 {
                m.domain[g] = Some(d);
            }
        }
    }
    m.millis = started.elapsed().as_millis() as u64;
    m
}

/// Eligible nodes of the restricted joint model: per group, the nodes of its master
/// domain and of the hint's domain (groups without a required level keep all theirs;
/// groups neither places get none).
pub fn restrict(cycle: &Cycle, m: &Master, hint: &Assignment) -> Vec<Vec<NodeId>> {
    let inst = cycle.inst;
    let mut eligible = cycle.eligible.clone();
    for &g in &cycle.pending {
        let grp = &inst.groups[g];
        if grp.required.is_none() && (m.placed[g] || hint.is_placed(g)) {
            // No domain to choose: the coarsest-level domains the hint used (all nodes if
            // the hint did not place it), and the hint's own nodes.
            if hint.is_placed(g) && !inst.levels.is_empty() {
                let used: Vec<NodeId> = hint.pods[g].iter().map(|p| p.node).collect();
                let zones: Vec<Option<usize>> = used.iter().map(|&n| cycle.domain_of[0][n]).collect();
                for &t in &grp.tasks {
                    eligible[t].retain(|&n| used.contains(&n) || cycle.domain_of[0][n].is_some_and(|z| zones.contains(&Some(z))));
                }
            }
            continue;
        }
        let mut doms: Vec<usize> = [m.placed[g].then_some(m.domain[g]).flatten(), hint.is_placed(g).then_some(hint.domain[g]).flatten()]
            .into_iter()
            .flatten()
            .collect();
        doms.extend(m.lp_domains.get(g).into_iter().flatten().copied());
        for &t in &grp.tasks {
            eligible[t].retain(|&n| grp.required.is_some_and(|l| cycle.domain_of[l][n].is_some_and(|d| doms.contains(&d))));
        }
    }
    eligible
}
