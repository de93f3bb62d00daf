//! Queue quotas as MILP rows (rule 7 and YuniKorn's guarantee rule, `models/queues.md`).

use super::highs::{Mip, INF};
use crate::engine::cycle::Cycle;
use crate::model::*;
use std::collections::BTreeMap;

/// Rule 7 and the YuniKorn guarantee rule as MILP rows over the placement counts `x`,
/// group binaries `y` and eviction binaries `e` (see `models/queues.md`).
pub fn add_rows(
    cycle: &Cycle,
    mip: &mut Mip,
    x: &BTreeMap<(TaskId, NodeId), usize>,
    y: &[Option<usize>],
    e_col: &[Option<usize>],
    knapsack: fn(&mut Mip, Vec<(usize, i64)>, i64),
) -> Vec<(usize, Vec<usize>)> {
    let inst = cycle.inst;
    let mut gone = Vec::new();
    let Some(queues) = &inst.queues else { return gone };
    let mut x_of_task: BTreeMap<TaskId, Vec<usize>> = BTreeMap::new();
    for (&(t, _), &c) in x {
        x_of_task.entry(t).or_default().push(c);
    }
    // Which victim unit holds each bound pod.
    let mut unit_of: Vec<Option<usize>> = vec![None; inst.pods.len()];
    for (u, unit) in cycle.victims.iter().enumerate() {
        for &p in &unit.pods {
            unit_of[p] = Some(u);
        }
    }
    for (q, under) in queues.groups_under.iter().enumerate() {
        let bound = |r: ResourceId| queues.bound_usage(q, r);
        // Evictable requests of the subtree per unit column.
        let freed = |r: ResourceId| -> BTreeMap<usize, i64> {
            let mut m = BTreeMap::new();
            for &g in under {
                for &p in &inst.groups[g].bound {
                    if let Some(c) = unit_of[p].and_then(|u| e_col[u]) {
                        *m.entry(c).or_default() += inst.pods[p].requests[r];
                    }
                }
            }
            m
        };
        for &(r, max) in &queues.max[q] {
            let mut row: Vec<(usize, i64)> = Vec::new();
            let mut worst = 0i64;
            for &g in under {
                for &t in &inst.groups[g].tasks {
                    let req = inst.tasks[t].requests[r];
                    if req > 0 {
                        for &c in x_of_task.get(&t).map(|v| v.as_slice()).unwrap_or(&[]) {
                            row.push((c, req));
                            worst = worst.saturating_add(req.saturating_mul(mip.col_upper[c] as i64));
                        }
                    }
                }
            }
            let room = max - bound(r);
            if worst <= room {
                continue; // cannot bind
            }
            row.extend(freed(r).into_iter().filter(|&(_, v)| v > 0).map(|(c, v)| (c, -v)));
            knapsack(mip, row, room);
        }
        if let Some(m) = queues.tree.queues[q].max_applications {
            let mut row: Vec<(usize, f64)> = Vec::new();
            let mut running = 0i64;
            for &g in under {
                let grp = &inst.groups[g];
                // Pods being released count in no queue: a group of only those is not running.
                if grp.bound.iter().all(|&p| inst.pods[p].releasing) {
                    if let Some(yc) = y[g] {
                        row.push((yc, 1.0));
                    }
                    continue;
                }
                running += 1;
                // a_g <= e_u for every unit holding a member: 1 only when all went.
                let units: Option<Vec<usize>> =
                    grp.bound.iter().filter(|&&p| !inst.pods[p].releasing).map(|&p| unit_of[p].and_then(|u| e_col[u])).collect();
                if let Some(mut cols) = units {
                    cols.sort_unstable();
                    cols.dedup();
                    let ac = mip.add_col(0.0, 1.0, false, format!("gone[{}]", grp.name));
                    for &c in &cols {
                        mip.add_row(-INF, 0.0, vec![(ac, 1.0), (c, -1.0)]);
                    }
                    row.push((ac, -1.0));
                    gone.push((ac, cols));
                }
            }
            let room = m as f64 - running as f64;
            if row.iter().filter(|e| e.1 > 0.0).count() as f64 > room {
                mip.add_row(-INF, room, row);
            }
        }
        if inst.options.yunikorn_preemption {
            for &(r, g) in &queues.guaranteed[q] {
                // usage after >= min(g, before), that is:
                // freed - new <= before - min(g, before) = max(0, before - g).
                let mut row: Vec<(usize, i64)> = freed(r).into_iter().filter(|&(_, v)| v > 0).collect();
                if row.is_empty() {
                    continue;
                }
                for &h in under {
                    for &t in &inst.groups[h].tasks {
                        let req = inst.tasks[t].requests[r];
                        if req > 0 {
                            row.extend(x_of_task.get(&t).into_iter().flatten().map(|&c| (c, -req)));
                        }
                    }
                }
                knapsack(mip, row, (bound(r) - g).max(0));
            }
        }
    }
    gone
}
