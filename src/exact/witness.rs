//! Rule 6 as rows (`models/cycle.md` 4.6): an evicted unit must be needed by the groups
//! allowed to evict it. With the unit put back and only those groups' new pods counted,
//! some hard rule must break; each way it can break is a witness binary `ω` with a row
//! that holds only when that rule breaks, and `e_u ≤ Σ ω` ties the eviction to them.
//!
//! Every witness is also kept in integers ([`Witness`]), so that a solution is accepted
//! only when a witness of each evicted unit holds exactly, not just within HiGHS's
//! tolerance.

use super::highs::{ExactAny, Mip, INF};
use crate::engine::cycle::{Cycle, UNLIMITED};
use crate::model::*;
use std::collections::BTreeMap;

/// One way an evicted unit can be needed: `Σ coef · column ≥ need` in integers.
#[derive(Clone, Debug)]
pub struct Witness {
    /// The witness binary `ω`.
    pub col: usize,
    pub terms: Vec<(usize, i64)>,
    pub need: i64,
}

impl Witness {
    /// Whether the rule breaks in the (rounded) solution `v`, exactly.
    pub fn holds(&self, v: &[f64]) -> bool {
        self.terms.iter().map(|&(c, k)| k as i128 * v[c].round() as i128).sum::<i128>() >= self.need as i128
    }
}

/// The witnesses of each victim unit with an eviction column.
#[derive(Clone, Debug, Default)]
pub struct Witnesses {
    /// Per victim unit: its eviction column and its witnesses.
    pub units: Vec<Option<(usize, Vec<Witness>)>>,
    /// "Stopped running" columns of the `maxapplications` witnesses: 1 exactly when every
    /// listed eviction column is.
    gone: Vec<(usize, Vec<usize>)>,
}

impl Witnesses {
    /// Sets the witness binaries of `v` from the rest of the solution: for each evicted
    /// unit the first witness that holds, every other one 0.
    pub fn set(&self, v: &mut [f64]) {
        for (c, es) in &self.gone {
            v[*c] = es.iter().map(|&e| v[e].round()).fold(1.0, f64::min);
        }
        for (e, ws) in self.units.iter().flatten() {
            let mut chosen = v[*e].round() < 0.5;
            for w in ws {
                let on = !chosen && w.holds(v);
                v[w.col] = on as u8 as f64;
                chosen |= on;
            }
        }
    }
}

/// The columns the witness rows are written over.
pub struct Columns<'a> {
    pub x: &'a BTreeMap<(TaskId, NodeId), usize>,
    pub y: &'a [Option<usize>],
    pub e: &'a [Option<usize>],
    /// Per (node, shared resource) with a device block: (task, device, column) of
    /// fractional pods (`z`) and of devices taken whole (`w`).
    pub z: BTreeMap<(NodeId, ResourceId), Vec<(TaskId, usize, usize)>>,
    pub w: BTreeMap<(NodeId, ResourceId), Vec<(TaskId, usize, usize)>>,
}

/// Adds the witness rows of every unit with an eviction column, and its `Need` row; a
/// unit that no rule could ever need is fixed to stay (its column's upper bound is 0).
pub fn add_rows(cycle: &Cycle, mip: &mut Mip, cols: &Columns) -> Witnesses {
    let mut out = Witnesses { units: vec![None; cycle.victims.len()], gone: Vec::new() };
    let mut on_node: Vec<Vec<(TaskId, usize)>> = vec![Vec::new(); cycle.inst.nodes.len()];
    for (&(t, n), &c) in cols.x {
        on_node[n].push((t, c));
    }
    for u in 0..cycle.victims.len() {
        let Some(e) = cols.e[u] else { continue };
        let mut candidates = node_witnesses(cycle, cols, &on_node, u);
        candidates.extend(queue_witnesses(cycle, mip, cols, u, &mut out.gone));
        let mut ws = Vec::new();
        for (name, terms, need) in candidates {
            // The left side moves in steps of the terms' gcd: `need` rounded up to a step
            // is the same condition, and makes the row divisible by that gcd (byte counts
            // then shrink to small numbers, far from HiGHS's tolerance).
            let step = terms.iter().fold(0i64, |g, &(_, k)| gcd(g, k.abs())).max(1);
            let need = need.div_euclid(step) * step + if need.rem_euclid(step) != 0 { step } else { 0 };
            // Void when ω = 0: the smallest the left side can be, all terms at their worst.
            let least: i64 =
                terms.iter().map(|&(c, k)| if k < 0 { k * mip.col_upper[c] as i64 } else { k * mip.col_lower[c] as i64 }).sum();
            let most: i64 = terms.iter().map(|&(c, k)| if k > 0 { k * mip.col_upper[c] as i64 } else { k * mip.col_lower[c] as i64 }).sum();
            if most < need {
                continue; // can never break
            }
            let col = mip.add_col(0.0, 1.0, true, format!("ω[{}:{name}]", unit_name(cycle, u)));
            let big_m = need - least;
            let mut row = terms.clone();
            row.push((col, -big_m));
            add_scaled_row(mip, row, need - big_m);
            ws.push(Witness { col, terms, need });
        }
        if ws.is_empty() {
            mip.col_upper[e] = 0.0;
        } else {
            let mut need = vec![(e, 1.0)];
            need.extend(ws.iter().map(|w| (w.col, -1.0)));
            mip.add_row(-INF, 0.0, need);
            mip.exact_any.push(ExactAny { when: e, any: ws.iter().map(|w| (w.terms.clone(), w.need)).collect() });
        }
        out.units[u] = Some((e, ws));
    }
    out
}

fn unit_name(cycle: &Cycle, u: usize) -> String {
    cycle.victims[u].pods.iter().map(|&p| cycle.inst.pods[p].name.as_str()).collect::<Vec<_>>().join("+")
}

/// `Σ k c ≥ lower` with every coefficient divided by their gcd (the right side rounded
/// up): the same integer points, smaller numbers for HiGHS (byte counts share large
/// powers of two).
fn add_scaled_row(mip: &mut Mip, row: Vec<(usize, i64)>, lower: i64) {
    let g = row.iter().fold(0i64, |g, &(_, k)| gcd(g, k.abs())).max(1);
    let lower = lower.div_euclid(g) + (lower.rem_euclid(g) != 0) as i64;
    mip.add_row(lower as f64, INF, row.into_iter().map(|(c, k)| (c, (k / g) as f64)).collect());
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

type Candidate = (String, Vec<(usize, i64)>, i64);

/// Capacity and device witnesses on the unit's nodes.
fn node_witnesses(cycle: &Cycle, cols: &Columns, on_node: &[Vec<(TaskId, usize)>], u: usize) -> Vec<Candidate> {
    let inst = cycle.inst;
    let unit = &cycle.victims[u];
    let allowed: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| cycle.may_preempt(g, u)).collect();
    let allowed_task = |t: TaskId| allowed.contains(&inst.tasks[t].group);
    let mut nodes: Vec<NodeId> = unit.pods.iter().map(|&p| inst.pods[p].node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut out = Vec::new();
    for n in nodes {
        let mine: Vec<PodId> = unit.pods.iter().copied().filter(|&p| inst.pods[p].node == n).collect();
        // Other evictable units on n, with what they free.
        let others: Vec<(usize, usize)> =
            cycle.victims_on[n].iter().copied().filter(|&v| v != u).filter_map(|v| cols.e[v].map(|c| (v, c))).collect();
        let st = &cycle.nodes[n];
        for r in 0..inst.resources.len() {
            let back: i64 = mine.iter().map(|&p| inst.pods[p].requests[r]).sum();
            if inst.shared[r] || st.free[r] == UNLIMITED || back <= 0 {
                continue;
            }
            // Allocatable A, bound load B (u included): A + 1 - B more must land.
            let mut terms: Vec<(usize, i64)> = Vec::new();
            for &(t, c) in &on_node[n] {
                if allowed_task(t) && inst.tasks[t].requests[r] > 0 {
                    terms.push((c, inst.tasks[t].requests[r]));
                }
            }
            if terms.is_empty() {
                continue;
            }
            for &(v, c) in &others {
                let freed: i64 = cycle.victims[v].pods.iter().filter(|&&p| inst.pods[p].node == n).map(|&p| inst.pods[p].requests[r]).sum();
                if freed > 0 {
                    terms.push((c, -freed));
                }
            }
            out.push((format!("{}/{}", inst.nodes[n].name, inst.resources[r]), terms, st.free[r] + 1));
        }
        for (si, &r) in cycle.shared_ids.iter().enumerate() {
            let (Some(z), Some(w)) = (cols.z.get(&(n, r)), cols.w.get(&(n, r))) else { continue };
            let held: Vec<usize> = mine.iter().flat_map(|&p| inst.pods[p].devices.get(&r).cloned().unwrap_or_default()).collect();
            for d in held {
                let mut terms: Vec<(usize, i64)> = Vec::new();
                terms.extend(z.iter().filter(|&&(t, dd, _)| dd == d && allowed_task(t)).map(|&(t, _, c)| (c, inst.tasks[t].requests[r])));
                terms.extend(w.iter().filter(|&&(t, dd, _)| dd == d && allowed_task(t)).map(|&(_, _, c)| (c, 1000)));
                if terms.is_empty() {
                    continue;
                }
                for &(v, c) in &others {
                    let freed: i64 = cycle.victims[v]
                        .pods
                        .iter()
                        .filter(|&&p| inst.pods[p].node == n && inst.pods[p].devices.get(&r).is_some_and(|ids| ids.contains(&d)))
                        .map(|&p| inst.pods[p].requests[r].min(1000))
                        .sum();
                    if freed > 0 {
                        terms.push((c, -freed));
                    }
                }
                // Free share f of d with every bound pod (u included) on it: 1000 - f used.
                let free = st.devices[si][d];
                out.push((format!("{}/{}/{d}", inst.nodes[n].name, inst.resources[r]), terms, free + 1));
            }
        }
    }
    out
}

/// Queue witnesses on the path of the unit's group: a `max` in a resource the unit
/// requests, or a `maxapplications`.
fn queue_witnesses(cycle: &Cycle, mip: &mut Mip, cols: &Columns, u: usize, gone: &mut Vec<(usize, Vec<usize>)>) -> Vec<Candidate> {
    let inst = cycle.inst;
    let Some(queues) = &inst.queues else { return Vec::new() };
    let unit = &cycle.victims[u];
    let Some(own) = unit.pods.first().and_then(|&p| inst.pods[p].group) else { return Vec::new() };
    let Some(leaf) = inst.groups[own].queue_id else { return Vec::new() };
    let allowed = |g: GroupId| cycle.pending.contains(&g) && cycle.may_preempt(g, u);
    let mut out = Vec::new();
    for q in queues.tree.ancestors(leaf) {
        let under = &queues.groups_under[q];
        // Other evictable units of the subtree.
        let others: Vec<usize> = (0..cycle.victims.len())
            .filter(|&v| v != u && cols.e[v].is_some())
            .filter(|&v| cycle.victims[v].pods.iter().any(|&p| inst.pods[p].group.is_some_and(|h| under.contains(&h))))
            .collect();
        for &(r, max) in &queues.max[q] {
            let back: i64 = unit.pods.iter().map(|&p| inst.pods[p].requests[r]).sum();
            if back <= 0 {
                continue;
            }
            let mut terms: Vec<(usize, i64)> = Vec::new();
            for &g in under.iter().filter(|&&g| allowed(g)) {
                for &t in &inst.groups[g].tasks {
                    if inst.tasks[t].requests[r] > 0 {
                        terms.extend(cols.x.iter().filter(|(&(tt, _), _)| tt == t).map(|(_, &c)| (c, inst.tasks[t].requests[r])));
                    }
                }
            }
            if terms.is_empty() {
                continue;
            }
            for &v in &others {
                let freed: i64 = cycle.victims[v]
                    .pods
                    .iter()
                    .filter(|&&p| !inst.pods[p].releasing && inst.pods[p].group.is_some_and(|h| under.contains(&h)))
                    .map(|&p| inst.pods[p].requests[r])
                    .sum();
                if freed > 0 {
                    terms.push((cols.e[v].unwrap(), -freed));
                }
            }
            out.push((format!("{}/{}", queues.tree.queues[q].path, inst.resources[r]), terms, max - queues.bound_usage(q, r) + 1));
        }
        if let Some(m) = queues.tree.queues[q].max_applications {
            if let Some(c) = apps_witness(cycle, mip, cols, (u, q, m as i64), gone) {
                out.push(c);
            }
        }
    }
    out
}

/// With the unit back, its group runs; the other groups of the subtree run unless every
/// unit holding their bound pods is evicted, and a placed group without bound pods counts
/// only if it may evict the unit: more than `m` running breaks `maxapplications`.
fn apps_witness(
    cycle: &Cycle,
    mip: &mut Mip,
    cols: &Columns,
    (u, q, m): (usize, usize, i64),
    gones: &mut Vec<(usize, Vec<usize>)>,
) -> Option<Candidate> {
    let inst = cycle.inst;
    let queues = inst.queues.as_ref()?;
    let own = cycle.victims[u].pods.first().and_then(|&p| inst.pods[p].group)?;
    let mut unit_of: BTreeMap<PodId, usize> = BTreeMap::new();
    for (v, unit) in cycle.victims.iter().enumerate() {
        for &p in &unit.pods {
            unit_of.insert(p, v);
        }
    }
    let mut terms: Vec<(usize, i64)> = Vec::new();
    let mut running = 0i64;
    let mut placeable = 0;
    for &g in &queues.groups_under[q] {
        let grp = &inst.groups[g];
        let bound: Vec<PodId> = grp.bound.iter().copied().filter(|&p| !inst.pods[p].releasing).collect();
        if bound.is_empty() {
            if let Some(yc) = cols.y[g].filter(|_| cycle.may_preempt(g, u)) {
                terms.push((yc, 1));
                placeable += 1;
            }
            continue;
        }
        running += 1;
        if g == own {
            continue; // put back: it runs
        }
        // It stops running only when every unit holding a bound pod of it is evicted:
        // a "gone" column pinned to exactly that.
        let es: Option<Vec<usize>> = bound.iter().map(|p| unit_of.get(p).and_then(|&v| cols.e[v])).collect();
        let Some(mut es) = es else { continue };
        es.sort_unstable();
        es.dedup();
        let gone = mip.add_col(0.0, 1.0, false, format!("gone[{}:{}]", unit_name(cycle, u), grp.name));
        for &e in &es {
            mip.add_row(-INF, 0.0, vec![(gone, 1.0), (e, -1.0)]);
        }
        let mut all = vec![(gone, 1.0)];
        all.extend(es.iter().map(|&e| (e, -1.0)));
        mip.add_row(1.0 - es.len() as f64, INF, all);
        terms.push((gone, -1));
        gones.push((gone, es));
    }
    if placeable == 0 && running <= m {
        return None;
    }
    Some((format!("{}/maxapplications", queues.tree.queues[q].path), terms, m + 1 - running))
}
