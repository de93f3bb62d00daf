//! A fast upper bound on objective term 1 from an aggregated relaxation.
//!
//! Nodes with the same filter signature (which tasks may run there at all) form one
//! class whose capacity is the sum of its nodes' capacity, evictable pods included.
//! Every real placement maps onto the classes without breaking a row, so the best
//! weighted count of placed groups of this small model bounds the real one from above.
//! It is tiny (tasks x classes columns), so it is solved to optimality in milliseconds
//! even at 1,000+ nodes, where the full model's root LP alone can exceed the budget: the
//! exact solver uses it for the gap it reports and as a valid cut on term 1.

use super::highs::{self, Mip, MipParams, MipStatus, INF};
use crate::engine::cycle::{passes_filters, Cycle, UNLIMITED};
use crate::model::*;
use std::collections::BTreeMap;
use std::time::Instant;

/// At most this many node classes: with hundreds of pending tasks of many sizes, which
/// tasks fit differs from node to node, and the classes by eligibility multiply (openb-1024
/// seed 3: 117 classes for 662 groups, a model that did not solve within its 2 s, so the
/// cycle reported no bound at all; with the coarse classes: gap 10.5 %). The flat classes
/// have 6-31. Past it, nodes are classed more coarsely (below).
const MAX_CLASSES: usize = 64;

/// Weighted groups-placed objective (`weights[g]`) bounded from above, if proven, and
/// the work its HiGHS run cost (`MipResult::work`; 0 when HiGHS did not run).
pub fn term1_bound(cycle: &Cycle, weights: &[(GroupId, f64)], deadline: Instant) -> (Option<f64>, u64) {
    let work = std::cell::Cell::new(None);
    let bound = term1_bound_within(cycle, weights, deadline, MAX_CLASSES, &work);
    (bound, work.get().unwrap_or(0))
}

/// [`term1_bound`] with at most `max_classes` classes by eligibility. Past that, a class
/// is the set of tasks whose filters the node passes together with the resources it has
/// at all (so GPU and cpu-only nodes stay apart). Either way the relaxation is valid:
/// every node with an eligible task is in one class, a column's bound sums what each of
/// the class's nodes where the task is eligible can hold, and the class's rows sum their
/// capacity, so every real placement, summed per class, satisfies them.
fn term1_bound_within(
    cycle: &Cycle,
    weights: &[(GroupId, f64)],
    deadline: Instant,
    max_classes: usize,
    work: &std::cell::Cell<Option<u64>>,
) -> Option<f64> {
    let inst = cycle.inst;
    let n_nodes = inst.nodes.len();
    let tasks: Vec<TaskId> =
        cycle.pending.iter().flat_map(|&g| inst.groups[g].tasks.iter().copied()).filter(|&t| inst.tasks[t].count > 0).collect();
    let eligible = |t: TaskId, n: NodeId| cycle.eligible[t].binary_search(&n).is_ok();
    // Class of each node: the set of tasks eligible there.
    let mut classes: BTreeMap<Vec<bool>, Vec<NodeId>> = BTreeMap::new();
    for n in 0..n_nodes {
        let sig: Vec<bool> = tasks.iter().map(|&t| eligible(t, n) && passes_filters(inst, t, n)).collect();
        if sig.iter().any(|&b| b) {
            classes.entry(sig).or_default().push(n);
        }
    }
    if cycle.diag.debug {
        eprintln!("term-1 bound: {} node classes by eligibility (coarser past {max_classes})", classes.len());
    }
    if classes.len() > max_classes {
        classes.clear();
        for n in 0..n_nodes {
            if !tasks.iter().any(|&t| eligible(t, n)) {
                continue;
            }
            let has = inst.nodes[n].allocatable.iter().map(|&a| a > 0);
            let sig: Vec<bool> = tasks.iter().map(|&t| passes_filters(inst, t, n)).chain(has).collect();
            classes.entry(sig).or_default().push(n);
        }
    }
    let mut mip = Mip::default();
    let mut y: BTreeMap<GroupId, usize> = BTreeMap::new();
    for &(g, w) in weights {
        let c = mip.add_col(0.0, 1.0, true, format!("y{g}"));
        mip.col_cost[c] = w;
        y.insert(g, c);
    }
    // Columns per (task, class).
    let mut cols: BTreeMap<TaskId, Vec<usize>> = BTreeMap::new();
    for (k, (sig, nodes)) in classes.iter().enumerate() {
        let mut here: Vec<(TaskId, usize)> = Vec::new();
        for (i, &t) in tasks.iter().enumerate() {
            if !sig[i] {
                continue;
            }
            let ub: i64 = nodes.iter().filter(|&&n| eligible(t, n)).map(|&n| cycle.max_pods(t, n)).sum::<i64>().min(inst.tasks[t].count);
            if ub == 0 {
                continue;
            }
            let c = mip.add_col(0.0, ub as f64, true, format!("X{t}_{k}"));
            cols.entry(t).or_default().push(c);
            here.push((t, c));
        }
        if here.is_empty() {
            continue;
        }
        // Capacity of the class with every evictable pod gone.
        let mut free = vec![0i64; inst.resources.len()];
        let mut limited = vec![true; inst.resources.len()];
        let mut shares = vec![0i64; inst.resources.len()];
        let mut whole = vec![0i64; inst.resources.len()];
        for &n in nodes {
            // Every victim on the node evicted (what any preemptor could free).
            let (f, devs) = cycle.reachable(n);
            for r in 0..inst.resources.len() {
                if f[r] == UNLIMITED {
                    limited[r] = false;
                } else {
                    free[r] += f[r];
                }
            }
            for (si, &r) in cycle.shared_ids.iter().enumerate() {
                shares[r] += devs[si].iter().map(|&x| x.max(0)).sum::<i64>();
                whole[r] += devs[si].iter().filter(|&&x| x >= 1000).count() as i64;
            }
        }
        for r in 0..inst.resources.len() {
            let e: Vec<(usize, f64)> =
                here.iter().filter(|(t, _)| inst.tasks[*t].requests[r] > 0).map(|&(t, c)| (c, inst.tasks[t].requests[r] as f64)).collect();
            if e.is_empty() {
                continue;
            }
            if inst.shared[r] {
                mip.add_row(-INF, shares[r] as f64, e.clone());
                let w: Vec<(usize, f64)> = here
                    .iter()
                    .filter(|(t, _)| inst.tasks[*t].requests[r] >= 1000)
                    .map(|&(t, c)| (c, (inst.tasks[t].requests[r] / 1000) as f64))
                    .collect();
                if !w.is_empty() {
                    mip.add_row(-INF, whole[r] as f64, w);
                }
            } else if limited[r] {
                // Scale to thousands of the largest request: exact enough for a bound
                // that is rounded down at the end, and no 1e11 byte counts.
                let scale = e.iter().map(|&(_, q)| q).fold(1.0, f64::max) / 1000.0;
                let scale = scale.max(1.0);
                mip.add_row(-INF, free[r] as f64 / scale, e.into_iter().map(|(c, q)| (c, q / scale)).collect());
            }
        }
    }
    // Group rows, as in the full model.
    for (&g, &yc) in &y {
        let grp = &inst.groups[g];
        let mut all = Vec::new();
        for &t in &grp.tasks {
            let task = &inst.tasks[t];
            if task.count == 0 {
                continue;
            }
            let xs: Vec<(usize, f64)> = cols.get(&t).map(|v| v.iter().map(|&c| (c, 1.0)).collect()).unwrap_or_default();
            let mut up = xs.clone();
            up.push((yc, -(task.count as f64)));
            mip.add_row(-INF, 0.0, up);
            if grp.policy == Policy::Gang && task.min_count > 0 {
                let mut lo = xs.clone();
                lo.push((yc, -(task.min_count as f64)));
                mip.add_row(0.0, INF, lo);
            }
            all.extend(xs);
        }
        all.push((yc, -(inst.min_new_pods(g) as f64)));
        mip.add_row(0.0, INF, all);
    }
    let res = highs::solve(&mip, None, &MipParams::of_cycle(deadline, 0.0, 0.5, cycle));
    work.set(Some(res.work()));
    // Integer weights: the bound rounds down to an integer (with a little slack for
    // floating point, never below a true optimum).
    match res.status {
        MipStatus::Optimal | MipStatus::Interrupted if res.dual_bound.is_finite() => {
            Some((res.dual_bound.max(res.objective) + 1e-6).floor())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::milp::CycleModel;

    /// Neither the classes by eligibility nor the coarse ones (used past `MAX_CLASSES`)
    /// ever bound term 1 below the proven optimum: on tiny instances (every rule) and
    /// flat-64 cycles (seeds 1-2: seed 3 is not proven within minutes), both bounds against the exact solver's term-1 value with the same
    /// safe weights. (The coarse classes are not always weaker: they also split nodes by
    /// the resources they have, which eligibility alone may not.)
    #[test]
    fn neither_class_scheme_bounds_term_1_below_the_optimum() {
        let cases = (0..80).map(|s| ("tiny", s)).chain((1..=2).map(|s| ("flat-64", s)));
        let mut differ = 0;
        for (class, seed) in cases {
            let inst = Instance::from_doc(&crate::tooling::generate::generate(class, seed).unwrap()).unwrap();
            let cycle = Cycle::new(&inst);
            let model = CycleModel::build(&cycle);
            let (by_group, _, _) = model.term1_weights(&cycle);
            let far = Instant::now() + std::time::Duration::from_secs(30);
            let fine = term1_bound_within(&cycle, &by_group, far, usize::MAX, &Default::default()).expect("a bound");
            let coarse = term1_bound_within(&cycle, &by_group, far, 0, &Default::default()).expect("a bound");
            let opts = crate::Options { time_limit: Some(std::time::Duration::from_secs(120)), ..Default::default() };
            let d = crate::solve(&inst, &opts);
            assert_eq!(d.status, crate::wire::decision::Status::Optimal, "{class} seed {seed}");
            let placed: Vec<&str> = d.placements.iter().map(|p| p.pod_group.as_str()).collect();
            let value: f64 = by_group.iter().filter(|(g, _)| placed.contains(&inst.groups[*g].name.as_str())).map(|(_, w)| w).sum();
            assert!(fine >= value, "{class} seed {seed}: bound {fine} below the optimum {value}");
            assert!(coarse >= value, "{class} seed {seed}: coarse bound {coarse} below the optimum {value}");
            differ += (coarse != fine) as usize;
        }
        assert!(differ > 0, "the coarse classes never gave another bound: the test does not reach them");
    }
}
