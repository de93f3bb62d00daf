//! The cycle MILP (written down in `models/cycle.md`).
//!
//! Variables are integer counts of identical pending pods per (task, node) — not one
//! binary per pod — plus one binary per pending group, one per (group, candidate domain)
//! of a required level, slice counts, per-device counts for fractional shared devices,
//! and per-domain "used" binaries for preferred topology.
//!
//! The objective is a list of lexicographic components; [`CycleModel::tiers`] merges
//! consecutive components into one weighted objective only where integer weights make
//! the merge provably exact (every unit of an earlier component outweighs the whole
//! range of the later ones) and the weights stay small enough for double precision.

use super::highs::{ExactRow, Mip, INF};
use crate::engine::assignment::{Assignment, NewPod};
use crate::engine::cycle::{Cycle, DeviceIds, UNLIMITED};
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Largest objective magnitude of one exactly-solved tier. With integer objectives and
/// `mip_abs_gap < 1`, values below 1e6 keep HiGHS's double-precision bound well inside
/// the 0.5 that separates integers.
pub const EXACT_MAGNITUDE: f64 = 1.0e6;

/// Which objective term a component belongs to (semantics.md, "The default objective").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Term {
    /// Term 1: groups placed at one level (a rank).
    Placed,
    /// Term 2: pods evicted at one victim priority (as a negative count: maximized).
    Evicted,
    /// Term 3: pods beyond the minimums at one level (a rank).
    Extra,
    /// Term 4: `preferred` topology domains used (negative).
    Preferred,
    /// Term 4: MostAllocated packing score.
    Packing,
}

impl Term {
    /// The objective term number of semantics.md (1-4).
    pub fn number(self) -> u8 {
        match self {
            Term::Placed => 1,
            Term::Evicted => 2,
            Term::Extra => 3,
            Term::Preferred | Term::Packing => 4,
        }
    }
}

/// One lexicographic objective component (maximized, integer-valued).
#[derive(Clone, Debug)]
pub struct Component {
    pub name: String,
    pub term: Term,
    /// The level: a rank of term 1 (placed, extra) or a victim priority (evicted); 0 for term 4.
    pub level: i64,
    pub coefs: Vec<(usize, f64)>,
    /// max - min over feasible solutions (an upper bound).
    pub range: f64,
    /// Part of terms 1-3 (proven), or a best-effort term-4 preference.
    pub exact: bool,
}

/// Consecutive components of one term solved together as one weighted objective.
#[derive(Clone, Debug)]
pub struct Tier {
    pub names: Vec<String>,
    pub term: Term,
    /// Indices into [`CycleModel::components`], in lexicographic order.
    pub components: Vec<usize>,
    /// Per component: its weight in `coefs` (each unit outweighs all later components).
    pub weights: Vec<f64>,
    pub coefs: Vec<(usize, f64)>,
    pub exact: bool,
}

impl Tier {
    /// Every component of the tier is of term `t`.
    pub fn is(&self, t: Term) -> bool {
        self.term == t
    }
}

/// Per (node, shared resource): the device-level columns.
#[derive(Clone, Debug, Default)]
struct DeviceBlock {
    node: NodeId,
    resource: ResourceId,
    /// (task, device, col): fractional pods of a task on one device.
    z: Vec<(TaskId, usize, usize)>,
    /// (task, device, col): a device taken whole by a pod of an integral-request task
    /// (per task, so that rule 6 can tell which group holds it).
    w: Vec<(TaskId, usize, usize)>,
}

/// What the `preferred` term counts as one domain used: a domain of the level, or a node
/// without the level's label (a domain of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Domain(usize),
    Node(NodeId),
}

impl Place {
    fn of(cycle: &Cycle, level: usize, n: NodeId) -> Place {
        cycle.domain_of[level][n].map_or(Place::Node(n), Place::Domain)
    }
}

pub struct CycleModel {
    pub mip: Mip,
    pub components: Vec<Component>,
    y: Vec<Option<usize>>,
    x: BTreeMap<(TaskId, NodeId), usize>,
    /// Per group: (domain, col) at its required level.
    dsel: Vec<Vec<(usize, usize)>>,
    /// (task, domain, col): number of slices of the task in a domain of its slice level.
    slices: Vec<(TaskId, usize, usize)>,
    /// Per group: (place, col) used at its preferred level (a domain, or an unlabelled node).
    used: Vec<Vec<(Place, usize)>>,
    blocks: Vec<DeviceBlock>,
    /// (node, shared resource, its index in `Cycle::shared_ids`) written as pooled rows:
    /// devices are handed out when the decision is read back.
    pooled: Vec<(NodeId, ResourceId, usize)>,
    /// Per victim unit: its eviction column.
    e_col: Vec<Option<usize>>,
    /// Per eviction column, in column order: the nodes its unit's pods are on.
    e_nodes: Vec<(usize, Vec<NodeId>)>,
    /// Per task: its group (to tell which pod columns belong to which group).
    task_group: Vec<GroupId>,
    /// maxapplications: (column "group stopped running", eviction columns it needs).
    gone: Vec<(usize, Vec<usize>)>,
    /// `G-min` rows of groups without slices: see [`CycleModel::minimum_pods_only`].
    gmin_rows: Vec<usize>,
    /// (node, row): the rows that bound what fits on a node (plain resources, pooled and
    /// per-device rows), for the search's measure of room (lns.rs `costly_blocks`).
    capacity_rows: Vec<(NodeId, usize)>,
    /// Diagnostic switches of the solve the model was built for.
    pub diag: std::sync::Arc<crate::options::Diagnostics>,
    /// Rule 6: the witnesses of each victim unit (why its eviction is needed).
    witnesses: super::witness::Witnesses,
    /// Largest magnitude of a merged tier ([`EXACT_MAGNITUDE`] unless a diagnostic says otherwise).
    merge_limit: f64,
}

fn node_score(cycle: &Cycle, n: NodeId) -> f64 {
    // MostAllocated: the fuller a node already is, the better a place for new pods.
    let inst = cycle.inst;
    let (mut sum, mut k) = (0.0, 0.0);
    for r in 0..inst.resources.len() {
        let alloc = inst.nodes[n].allocatable[r];
        if alloc > 0 && cycle.nodes[n].free[r] != UNLIMITED && inst.resources[r] != PODS {
            sum += (alloc - cycle.nodes[n].free[r]) as f64 / alloc as f64;
            k += 1.0;
        }
    }
    1.0 + (9.0 * if k > 0.0 { sum / k } else { 0.0 }).round()
}

impl CycleModel {
    pub fn build(cycle: &Cycle) -> CycleModel {
        let inst = cycle.inst;
        let mut mip = Mip::default();
        let mut y = vec![None; inst.groups.len()];
        let mut x = BTreeMap::new();
        let mut dsel = vec![Vec::new(); inst.groups.len()];
        let mut used = vec![Vec::new(); inst.groups.len()];
        let mut slices = Vec::new();
        let mut blocks = Vec::new();
        let mut pooled = Vec::new();
        let mut gmin_rows = Vec::new();
        let mut capacity_rows = Vec::new();

        for &g in &cycle.pending {
            let grp = &inst.groups[g];
            let yc = mip.add_col(0.0, 1.0, true, format!("y[{}]", grp.name));
            y[g] = Some(yc);
            let mut all_x: Vec<usize> = Vec::new();
            for &t in &grp.tasks {
                let task = &inst.tasks[t];
                if task.count == 0 {
                    continue;
                }
                let mut tx = Vec::new();
                for &n in &cycle.eligible[t] {
                    let ub = cycle.max_pods(t, n);
                    let c = mip.add_col(0.0, ub as f64, true, format!("x[{}/{},{}]", grp.name, task.name, inst.nodes[n].name));
                    x.insert((t, n), c);
                    tx.push(c);
                }
                all_x.extend(&tx);
                let sum: Vec<(usize, f64)> = tx.iter().map(|&c| (c, 1.0)).collect();
                // Per task: at most count, and (gang) at least minCount when placed.
                let mut up = sum.clone();
                up.push((yc, -(task.count as f64)));
                mip.add_row(-INF, 0.0, up);
                if grp.policy == Policy::Gang && task.min_count > 0 {
                    let mut lo = sum.clone();
                    lo.push((yc, -(task.min_count as f64)));
                    mip.add_row(0.0, INF, lo);
                }
                // Slices: pods of the task in each domain of the slice level come in
                // multiples of size.
                if let Some((l, k)) = task.slice {
                    let mut per_dom: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
                    for &n in &cycle.eligible[t] {
                        per_dom.entry(cycle.domain_of[l][n].expect("eligible nodes have the slice label")).or_default().push(x[&(t, n)]);
                    }
                    for (d, cols) in per_dom {
                        let s = mip.add_col(
                            0.0,
                            (task.count / k) as f64,
                            true,
                            format!("s[{}/{},{}]", grp.name, task.name, cycle.domain_names[l][d]),
                        );
                        slices.push((t, d, s));
                        let mut e: Vec<(usize, f64)> = cols.iter().map(|&c| (c, 1.0)).collect();
                        e.push((s, -(k as f64)));
                        mip.add_row(0.0, 0.0, e);
                    }
                }
            }
            // Group minimum (gang: new + bound >= minCount and the task minimums;
            // basic: at least one pod).
            let mut e: Vec<(usize, f64)> = all_x.iter().map(|&c| (c, 1.0)).collect();
            e.push((yc, -(inst.min_new_pods(g) as f64)));
            mip.add_row(0.0, INF, e);
            if grp.tasks.iter().all(|&t| inst.tasks[t].slice.is_none()) {
                gmin_rows.push(mip.rows.len() - 1);
            }
            let max_new = inst.max_new_pods(g) as f64;
            // Required topology: exactly one domain when placed, pods only there.
            if let Some(l) = grp.required {
                let mut per_dom: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
                for &t in &grp.tasks {
                    for &n in &cycle.eligible[t] {
                        per_dom.entry(cycle.domain_of[l][n].unwrap()).or_default().push(x[&(t, n)]);
                    }
                }
                let mut pick = vec![(yc, -1.0)];
                for (d, cols) in per_dom {
                    let dc = mip.add_col(0.0, 1.0, true, format!("d[{},{}]", grp.name, cycle.domain_names[l][d]));
                    dsel[g].push((d, dc));
                    pick.push((dc, 1.0));
                    let cap: f64 = cols.iter().map(|&c| mip.col_upper[c]).sum::<f64>().min(max_new);
                    let mut e: Vec<(usize, f64)> = cols.iter().map(|&c| (c, 1.0)).collect();
                    e.push((dc, -cap));
                    mip.add_row(-INF, 0.0, e);
                }
                mip.add_row(0.0, 0.0, pick);
            }
            // Preferred topology: count the domains used. A node without the level's
            // label counts as a domain of its own: otherwise spreading a group over
            // unlabelled nodes would look free. A domain that already holds one of the
            // group's bound members is used whatever the new pods do, so it gets no
            // column: new pods there cost nothing.
            if let Some(l) = grp.preferred {
                let held: BTreeSet<Place> = grp.bound.iter().map(|&p| Place::of(cycle, l, inst.pods[p].node)).collect();
                let mut per_dom: BTreeMap<Place, Vec<usize>> = BTreeMap::new();
                for &t in &grp.tasks {
                    for &n in &cycle.eligible[t] {
                        let place = Place::of(cycle, l, n);
                        if !held.contains(&place) {
                            per_dom.entry(place).or_default().push(x[&(t, n)]);
                        }
                    }
                }
                for (d, cols) in per_dom {
                    let name = match d {
                        Place::Domain(d) => &cycle.domain_names[l][d],
                        Place::Node(n) => &inst.nodes[n].name,
                    };
                    let uc = mip.add_col(0.0, 1.0, true, format!("u[{},{}]", grp.name, name));
                    used[g].push((d, uc));
                    let cap: f64 = cols.iter().map(|&c| mip.col_upper[c]).sum::<f64>().min(max_new);
                    let mut e: Vec<(usize, f64)> = cols.iter().map(|&c| (c, 1.0)).collect();
                    e.push((uc, -cap));
                    mip.add_row(-INF, 0.0, e);
                }
            }
        }

        // Victims (rule 6): one binary per unit of pods evicted together, for a unit that
        // an allowed group could need (a pod of it on one of the unit's nodes, or a queue
        // limit above the unit); never if the unit belongs to a group placed now. That the
        // eviction is needed is the witness rows' business (witness.rs, written below once
        // every column exists).
        let mut e_col: Vec<Option<usize>> = vec![None; cycle.victims.len()];
        let mut e_nodes: Vec<(usize, Vec<NodeId>)> = Vec::new();
        for (u, unit) in cycle.victims.iter().enumerate() {
            let mut nodes: Vec<NodeId> = unit.pods.iter().map(|&p| inst.pods[p].node).collect();
            nodes.sort_unstable();
            nodes.dedup();
            let allowed: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| cycle.may_preempt(g, u)).collect();
            let near = allowed.iter().any(|&g| inst.groups[g].tasks.iter().any(|&t| nodes.iter().any(|&n| x.contains_key(&(t, n)))));
            let in_queue = inst.queues.is_some()
                && !allowed.is_empty()
                && unit.pods.iter().any(|&p| inst.pods[p].group.is_some_and(|g| inst.groups[g].queue_id.is_some()));
            if !near && !in_queue {
                continue;
            }
            let names: Vec<&str> = unit.pods.iter().map(|&p| inst.pods[p].name.as_str()).collect();
            let ec = mip.add_col(0.0, 1.0, true, format!("e[{}]", names.join("+")));
            e_col[u] = Some(ec);
            e_nodes.push((ec, nodes));
            if let Some(g) = unit.pending_group {
                if let Some(yc) = y[g] {
                    mip.add_row(-INF, 1.0, vec![(ec, 1.0), (yc, 1.0)]);
                }
            }
        }

        // Capacity, per node: plain resources as sums, shared devices per device; what
        // evicted pods free comes back as negative terms.
        let mut on_node: Vec<Vec<(TaskId, usize)>> = vec![Vec::new(); inst.nodes.len()];
        for (&(t, n), &c) in &x {
            on_node[n].push((t, c));
        }
        for n in 0..inst.nodes.len() {
            let vars = &on_node[n];
            if vars.is_empty() {
                continue;
            }
            let st = &cycle.nodes[n];
            // (unit column, pod) for every evictable pod on this node.
            let freed: Vec<(usize, PodId)> = cycle.victims_on[n]
                .iter()
                .filter_map(|&u| e_col[u].map(|c| (u, c)))
                .flat_map(|(u, c)| cycle.victims[u].pods.iter().copied().filter(move |&p| inst.pods[p].node == n).map(move |p| (c, p)))
                .collect();
            for r in 0..inst.resources.len() {
                if inst.shared[r] || st.free[r] == UNLIMITED {
                    continue;
                }
                let mut e: Vec<(usize, i64)> =
                    vars.iter().filter(|(t, _)| inst.tasks[*t].requests[r] > 0).map(|&(t, c)| (c, inst.tasks[t].requests[r])).collect();
                let worst: f64 = e.iter().map(|&(c, q)| q as f64 * mip.col_upper[c]).sum();
                if worst > st.free[r] as f64 {
                    let mut per_col: BTreeMap<usize, i64> = BTreeMap::new();
                    for &(c, p) in &freed {
                        *per_col.entry(c).or_default() += inst.pods[p].requests[r];
                    }
                    e.extend(per_col.into_iter().filter(|&(_, q)| q > 0).map(|(c, q)| (c, -q)));
                    add_knapsack_row(&mut mip, e, st.free[r]);
                    capacity_rows.push((n, mip.rows.len() - 1));
                }
            }
            for (si, &r) in cycle.shared_ids.iter().enumerate() {
                let frac: Vec<(TaskId, usize)> =
                    vars.iter().copied().filter(|(t, _)| (1..1000).contains(&inst.tasks[*t].requests[r])).collect();
                let whole: Vec<(TaskId, usize)> = vars.iter().copied().filter(|(t, _)| inst.tasks[*t].requests[r] >= 1000).collect();
                if frac.is_empty() && whole.is_empty() {
                    continue;
                }
                let devs = &st.devices[si];
                // Per device: (unit column, milli freed) of evictable users.
                let mut dev_freed: Vec<Vec<(usize, i64)>> = vec![Vec::new(); devs.len()];
                for &(c, p) in &freed {
                    let pod = &inst.pods[p];
                    if let Some(ids) = pod.devices.get(&r) {
                        for &d in ids {
                            dev_freed[d].push((c, if pod.requests[r] >= 1000 { 1000 } else { pod.requests[r] }));
                        }
                    }
                }
                // Request sizes that divide one another (250m | 500m | one device): the
                // device packing is decided by per-size totals alone (models/cycle.md 4.8,
                // "Pooled rows"), so no per-device column is needed. Whole requests alone
                // are the case S = {1000}: one row counting completely free devices.
                let sizes = frac.iter().map(|&(t, _)| inst.tasks[t].requests[r]).chain((!whole.is_empty()).then_some(1000));
                let poolable = dev_freed.iter().all(|v| v.is_empty()) && (frac.is_empty() || !cycle.diag.no_pool);
                if let Some(chain) = poolable.then(|| divisible_chain(sizes)).flatten() {
                    for s in chain {
                        let e: Vec<(usize, f64)> = frac
                            .iter()
                            .chain(&whole)
                            .filter(|&&(t, _)| inst.tasks[t].requests[r] >= s)
                            .map(|&(t, c)| (c, (inst.tasks[t].requests[r] / s) as f64))
                            .collect();
                        let rhs: i64 = devs.iter().map(|&f| f / s).sum();
                        if e.iter().map(|&(c, k)| k * mip.col_upper[c]).sum::<f64>() > rhs as f64 {
                            mip.add_row(-INF, rhs as f64, e);
                            capacity_rows.push((n, mip.rows.len() - 1));
                        }
                    }
                    pooled.push((n, r, si));
                    continue;
                }
                let mut block = DeviceBlock { node: n, resource: r, ..Default::default() };
                let mut per_task: HashMap<TaskId, Vec<(usize, f64)>> = HashMap::new();
                let mut prev_w: Option<Vec<usize>> = None;
                let mut prev_load: Option<Vec<(usize, f64)>> = None;
                for (d, &f) in devs.iter().enumerate() {
                    let reach = f + dev_freed[d].iter().map(|&(_, m)| m).sum::<i64>();
                    if reach <= 0 {
                        continue;
                    }
                    let mut row = Vec::new();
                    for &(t, _) in &frac {
                        let q = inst.tasks[t].requests[r];
                        if q <= reach {
                            let zc = mip.add_col(
                                0.0,
                                (reach / q).min(inst.tasks[t].count) as f64,
                                true,
                                format!("z[{}/{},{},{}]", inst.groups[inst.tasks[t].group].name, inst.tasks[t].name, inst.nodes[n].name, d),
                            );
                            block.z.push((t, d, zc));
                            per_task.entry(t).or_default().push((zc, -1.0));
                            row.push((zc, q as f64));
                        }
                    }
                    if reach == 1000 && !whole.is_empty() {
                        let mut taken = Vec::new();
                        for &(t, _) in &whole {
                            let grp = &inst.groups[inst.tasks[t].group];
                            let wc =
                                mip.add_col(0.0, 1.0, true, format!("w[{}/{},{},{}]", grp.name, inst.tasks[t].name, inst.nodes[n].name, d));
                            block.w.push((t, d, wc));
                            row.push((wc, 1000.0));
                            taken.push(wc);
                        }
                        // Completely free devices are interchangeable: take them in
                        // index order.
                        if f == 1000 {
                            if let Some(prev) = &prev_w {
                                let mut e: Vec<(usize, f64)> = prev.iter().map(|&c| (c, 1.0)).collect();
                                e.extend(taken.iter().map(|&c| (c, -1.0)));
                                mip.add_row(0.0, INF, e);
                            }
                            prev_w = Some(taken);
                        }
                    }
                    if f == 1000 {
                        // ... and load them in decreasing order, so the solver does not
                        // explore the same packing once per permutation of the devices.
                        if let Some(prev) = &prev_load {
                            let mut e: Vec<(usize, f64)> = prev.clone();
                            e.extend(row.iter().map(|&(c, v)| (c, -v)));
                            mip.add_row(0.0, INF, e);
                        }
                        prev_load = Some(row.clone());
                    }
                    if !row.is_empty() {
                        let mut per_col: BTreeMap<usize, f64> = BTreeMap::new();
                        for &(c, m) in &dev_freed[d] {
                            *per_col.entry(c).or_default() += m as f64;
                        }
                        row.extend(per_col.into_iter().map(|(c, m)| (c, -m)));
                        mip.add_row(-INF, f as f64, row);
                        capacity_rows.push((n, mip.rows.len() - 1));
                    }
                }
                for &(t, c) in &frac {
                    let mut e = per_task.remove(&t).unwrap_or_default();
                    e.push((c, 1.0));
                    mip.add_row(0.0, 0.0, e);
                }
                // Each whole task's pods get exactly the devices taken for it.
                for &(t, c) in &whole {
                    let mut e = vec![(c, (inst.tasks[t].requests[r] / 1000) as f64)];
                    e.extend(block.w.iter().filter(|&&(tt, _, _)| tt == t).map(|&(_, _, wc)| (wc, -1.0)));
                    mip.add_row(0.0, 0.0, e);
                }
                blocks.push(block);
            }
        }

        // Queue quotas and maxapplications (rule 7), YuniKorn guarantees.
        let gone = super::quota_rows::add_rows(cycle, &mut mip, &x, &y, &e_col, add_knapsack_row);
        // Rule 6: every eviction needed by the groups allowed to make it.
        let mut z_cols = BTreeMap::new();
        let mut w_cols = BTreeMap::new();
        for b in &blocks {
            z_cols.insert((b.node, b.resource), b.z.clone());
            w_cols.insert((b.node, b.resource), b.w.clone());
        }
        let witnesses =
            super::witness::add_rows(cycle, &mut mip, &super::witness::Columns { x: &x, y: &y, e: &e_col, z: z_cols, w: w_cols });

        // Objective components, in lexicographic order.
        let mut components = Vec::new();
        // Term 1 levels are ranks: raw priorities, or effective queue keys (model.rs).
        let levels = inst.rank_levels();
        for &p in &levels {
            let gs: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| inst.groups[g].rank == p).collect();
            components.push(Component {
                name: format!("placed@{}", inst.level_key(p)),
                term: Term::Placed,
                level: p,
                coefs: gs.iter().map(|&g| (y[g].unwrap(), 1.0)).collect(),
                range: gs.len() as f64,
                exact: true,
            });
        }
        // Term 2: fewest victims per victim priority level, highest level first.
        let mut victim_levels: BTreeMap<i64, Vec<(usize, f64)>> = BTreeMap::new();
        for (u, unit) in cycle.victims.iter().enumerate() {
            if let Some(c) = e_col[u] {
                let mut per_level: BTreeMap<i64, f64> = BTreeMap::new();
                for &p in &unit.pods {
                    *per_level.entry(inst.pods[p].priority).or_default() += 1.0;
                }
                for (lvl, k) in per_level {
                    victim_levels.entry(lvl).or_default().push((c, -k));
                }
            }
        }
        for (lvl, coefs) in victim_levels.into_iter().rev() {
            let range = coefs.iter().map(|&(_, k)| -k).sum();
            components.push(Component { name: format!("evicted@{lvl}"), term: Term::Evicted, level: lvl, coefs, range, exact: true });
        }
        for &p in &levels {
            let gs: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| inst.groups[g].rank == p).collect();
            let mut coefs = Vec::new();
            let mut range = 0.0;
            for &g in &gs {
                coefs.push((y[g].unwrap(), -(inst.min_new_pods(g) as f64)));
                for &t in &inst.groups[g].tasks {
                    for &n in &cycle.eligible[t] {
                        coefs.push((x[&(t, n)], 1.0));
                    }
                }
                range += (inst.max_new_pods(g) - inst.min_new_pods(g)).max(0) as f64;
            }
            if range > 0.0 {
                components.push(Component {
                    name: format!("extra@{}", inst.level_key(p)),
                    term: Term::Extra,
                    level: p,
                    coefs,
                    range,
                    exact: true,
                });
            }
        }
        let pref: Vec<(usize, f64)> = used.iter().flatten().map(|&(_, c)| (c, -1.0)).collect();
        if !pref.is_empty() {
            let range = pref.len() as f64;
            components.push(Component { name: "preferred".into(), term: Term::Preferred, level: 0, range, coefs: pref, exact: false });
        }
        let mut pack = Vec::new();
        let mut pack_range = 0.0;
        for (&(_, n), &c) in &x {
            let s = node_score(cycle, n);
            pack.push((c, s));
            pack_range += s * mip.col_upper[c];
        }
        if !pack.is_empty() {
            components.push(Component {
                name: "packing".into(),
                term: Term::Packing,
                level: 0,
                coefs: pack,
                range: pack_range,
                exact: false,
            });
        }
        let task_group = inst.tasks.iter().map(|t| t.group).collect();
        let merge_limit = cycle.diag.magnitude.unwrap_or(EXACT_MAGNITUDE);
        CycleModel {
            mip,
            components,
            y,
            x,
            dsel,
            slices,
            used,
            blocks,
            pooled,
            e_col,
            e_nodes,
            task_group,
            gone,
            gmin_rows,
            capacity_rows,
            merge_limit,
            witnesses,
            diag: cycle.diag.clone(),
        }
    }

    /// Term 1 alone as (group, weight) with its y column: weights that order the
    /// groups-placed counts lexicographically by priority level.
    pub fn term1_weights(&self, cycle: &Cycle) -> (Vec<(GroupId, f64)>, Vec<(usize, f64)>, f64) {
        let placed: Vec<&Component> = self.components.iter().filter(|c| c.term == Term::Placed).collect();
        let w = weights(&placed);
        let mut by_group = Vec::new();
        let mut coefs = Vec::new();
        for &g in &cycle.pending {
            let yc = self.y[g].unwrap();
            if let Some(i) = placed.iter().position(|c| c.level == cycle.inst.groups[g].rank) {
                by_group.push((g, w[i]));
                coefs.push((yc, w[i]));
            }
        }
        (by_group, coefs, magnitude(&placed))
    }

    /// For a tier of terms 1-2 only: every placed group gets exactly its minimum of new
    /// pods (`G-min` as an equality), or `mip` unchanged (returns false) when that would
    /// not be exact. Exact without victims: pods beyond the minimum count only in term 3,
    /// and any solution keeps its value on terms 1-2 after dropping them (task minimums
    /// sum to at most the group's, so the surplus can go task by task; fewer pods never
    /// break a capacity, topology or quota row). Not with slices (a task may need a
    /// whole slice above its minimum) nor with victims (an eviction is attributed to the
    /// pods of its preemptor on that node). The search space shrinks: extra pods of
    /// basic and elastic groups no longer multiply the equivalent solutions.
    pub fn minimum_pods_only(&self, mip: &mut Mip, on: bool) -> bool {
        if self.e_col.iter().any(|c| c.is_some()) || !self.gone.is_empty() {
            return false;
        }
        for &r in &self.gmin_rows {
            mip.rows[r].upper = if on { 0.0 } else { INF };
        }
        true
    }

    /// Groups components into tiers solved one after another.
    pub fn tiers(&self) -> Vec<Tier> {
        let mut tiers: Vec<Vec<usize>> = Vec::new();
        for (i, c) in self.components.iter().enumerate() {
            let fits = tiers.last().is_some_and(|t: &Vec<usize>| {
                // Only components of the same term share a tier: proving term 1 alone is
                // quick, and mixing in term 3 made it hard (flat-256 measurements).
                let first = &self.components[t[0]];
                first.exact == c.exact && first.term == c.term && {
                    let trial: Vec<&Component> = t.iter().chain([&i]).map(|&j| &self.components[j]).collect();
                    magnitude(&trial) <= self.merge_limit
                }
            });
            if fits {
                tiers.last_mut().unwrap().push(i);
            } else {
                tiers.push(vec![i]);
            }
        }
        tiers
            .into_iter()
            .map(|t| {
                let cs: Vec<&Component> = t.iter().map(|&j| &self.components[j]).collect();
                let w = weights(&cs);
                let mut coefs: BTreeMap<usize, f64> = BTreeMap::new();
                for (c, wi) in cs.iter().zip(&w) {
                    for &(col, v) in &c.coefs {
                        *coefs.entry(col).or_default() += v * wi;
                    }
                }
                Tier {
                    names: cs.iter().map(|c| c.name.clone()).collect(),
                    term: cs[0].term,
                    components: t,
                    weights: w,
                    coefs: coefs.into_iter().filter(|&(_, v)| v != 0.0).collect(),
                    exact: cs[0].exact,
                }
            })
            .collect()
    }

    /// The node each column is about: `x` and the device columns of a node; `None` for
    /// group, domain and victim columns.
    pub fn column_nodes(&self) -> Vec<Option<NodeId>> {
        let mut out = vec![None; self.mip.num_cols()];
        for (&(_, n), &c) in &self.x {
            out[c] = Some(n);
        }
        for b in &self.blocks {
            for &(_, _, c) in &b.z {
                out[c] = Some(b.node);
            }
            for &(_, _, c) in &b.w {
                out[c] = Some(b.node);
            }
        }
        out
    }

    /// Per column: the group whose pods it counts (pod columns `x` and per-device
    /// columns `z`), else `None`.
    pub fn column_groups(&self) -> Vec<Option<GroupId>> {
        let mut out = vec![None; self.mip.num_cols()];
        for (&(t, _), &c) in &self.x {
            out[c] = Some(self.task_group[t]);
        }
        for b in &self.blocks {
            for &(t, _, c) in &b.z {
                out[c] = Some(self.task_group[t]);
            }
        }
        out
    }

    /// Per pending group with a decision column: (group, its column `y`).
    pub fn group_columns(&self) -> Vec<(GroupId, usize)> {
        self.y.iter().enumerate().filter_map(|(g, c)| c.map(|c| (g, c))).collect()
    }

    /// (node, row index in `mip`): the rows that bound what fits on each node.
    pub fn capacity_rows(&self) -> &[(NodeId, usize)] {
        &self.capacity_rows
    }

    /// Per eviction column, in column order: the nodes of the pods it evicts.
    pub fn eviction_nodes(&self) -> &[(usize, Vec<NodeId>)] {
        &self.e_nodes
    }

    /// Column values of an assignment (the warm start).
    pub fn values_of(&self, cycle: &Cycle, a: &Assignment) -> Vec<f64> {
        let inst = cycle.inst;
        let mut v = vec![0.0; self.mip.num_cols()];
        for &g in &cycle.pending {
            if a.is_placed(g) {
                v[self.y[g].unwrap()] = 1.0;
            }
            for p in &a.pods[g] {
                v[self.x[&(p.task, p.node)]] += 1.0;
            }
            if let Some(d) = a.domain[g] {
                if let Some(&(_, c)) = self.dsel[g].iter().find(|(dd, _)| *dd == d) {
                    v[c] = 1.0;
                }
            }
            if let Some(l) = inst.groups[g].preferred {
                for p in &a.pods[g] {
                    let d = Place::of(cycle, l, p.node);
                    if let Some(&(_, c)) = self.used[g].iter().find(|(dd, _)| *dd == d) {
                        v[c] = 1.0;
                    }
                }
            }
        }
        for &u in &a.evicted {
            if let Some(c) = self.e_col.get(u).copied().flatten() {
                v[c] = 1.0;
            }
        }
        for &(t, d, c) in &self.slices {
            let (l, k) = inst.tasks[t].slice.unwrap();
            let in_dom = a.pods[inst.tasks[t].group].iter().filter(|p| p.task == t && cycle.domain_of[l][p.node] == Some(d)).count() as i64;
            v[c] = (in_dom / k) as f64;
        }
        for b in &self.blocks {
            let si = cycle.shared_ids.iter().position(|&x| x == b.resource).unwrap();
            let devs = &cycle.nodes[b.node].devices[si];
            // What each device holds: taken whole (by which task), and fractional pods per task.
            let mut whole: Vec<Option<TaskId>> = vec![None; devs.len()];
            let mut counts: Vec<BTreeMap<TaskId, i64>> = vec![BTreeMap::new(); devs.len()];
            for p in a.pods.iter().flatten().filter(|p| p.node == b.node) {
                let q = inst.tasks[p.task].requests[b.resource];
                if let Some(ids) = p.devices.get(&b.resource) {
                    for &d in ids {
                        if q >= 1000 {
                            whole[d] = Some(p.task);
                        } else {
                            *counts[d].entry(p.task).or_default() += 1;
                        }
                    }
                }
            }
            // Completely free devices are interchangeable: renumber their contents into
            // the order the model's symmetry rows ask for (whole first, then by load).
            let free: Vec<usize> = (0..devs.len()).filter(|&d| devs[d] == 1000).collect();
            let load = |d: usize| -> i64 {
                if whole[d].is_some() {
                    1000
                } else {
                    counts[d].iter().map(|(&t, &k)| k * inst.tasks[t].requests[b.resource]).sum()
                }
            };
            let mut sorted = free.clone();
            sorted.sort_by_key(|&d| (std::cmp::Reverse(whole[d].is_some()), std::cmp::Reverse(load(d)), d));
            let mut slot: Vec<usize> = (0..devs.len()).collect();
            for (i, &d) in sorted.iter().enumerate() {
                slot[d] = free[i];
            }
            for d in 0..devs.len() {
                let nd = slot[d];
                for (&t, &k) in &counts[d] {
                    if let Some(&(_, _, c)) = b.z.iter().find(|&&(tt, dd, _)| tt == t && dd == nd) {
                        v[c] = k as f64;
                    }
                }
                if let Some(t) = whole[d] {
                    if let Some(&(_, _, c)) = b.w.iter().find(|&&(tt, dd, _)| tt == t && dd == nd) {
                        v[c] = 1.0;
                    }
                }
            }
        }
        // A group stopped running when every unit holding its bound pods is evicted.
        for (c, es) in &self.gone {
            v[*c] = es.iter().map(|&e| v[e]).fold(1.0, f64::min);
        }
        self.witnesses.set(&mut v);
        v
    }

    /// The assignment of a (rounded, checked) solution.
    pub fn assignment(&self, cycle: &Cycle, v: &[f64]) -> Assignment {
        let inst = cycle.inst;
        let mut a = Assignment::empty(inst);
        let val = |c: usize| v[c].round() as i64;
        // Devices per node and resource: fractional pods from z, whole devices from w
        // (or, without a block, the node's completely free devices in order).
        let mut frac_slots: HashMap<(TaskId, NodeId, ResourceId), Vec<usize>> = HashMap::new();
        let mut whole_pool: HashMap<(TaskId, NodeId, ResourceId), Vec<usize>> = HashMap::new();
        for b in &self.blocks {
            for &(t, d, c) in &b.z {
                for _ in 0..val(c) {
                    frac_slots.entry((t, b.node, b.resource)).or_default().push(d);
                }
            }
            for &(t, d, c) in &b.w {
                if val(c) == 1 {
                    whole_pool.entry((t, b.node, b.resource)).or_default().push(d);
                }
            }
        }
        // Pooled nodes: largest requests first, whole devices from the completely free
        // ones, each fractional pod on the fullest device it fits (any fitting device
        // works, by the argument in models/cycle.md 4.8; fullest keeps devices whole).
        let mut pooled_slots: HashMap<(TaskId, NodeId, ResourceId), Vec<Vec<usize>>> = HashMap::new();
        let mut placed_on: HashMap<NodeId, Vec<(TaskId, i64)>> = self.pooled.iter().map(|&(n, _, _)| (n, Vec::new())).collect();
        for (&(t, n), &c) in &self.x {
            if let Some(list) = placed_on.get_mut(&n).filter(|_| val(c) > 0) {
                list.push((t, val(c)));
            }
        }
        for &(n, r, si) in &self.pooled {
            let mut pods: Vec<(i64, TaskId, i64)> = placed_on[&n]
                .iter()
                .filter(|&&(t, _)| inst.tasks[t].requests[r] > 0)
                .map(|&(t, k)| (inst.tasks[t].requests[r], t, k))
                .collect();
            // Whole pods are items of 1000 per device: all of one size, in task order.
            pods.sort_by_key(|&(q, t, _)| (std::cmp::Reverse(q.min(1000)), t));
            let mut left = cycle.nodes[n].devices[si].clone();
            for (q, t, k) in pods {
                for _ in 0..k {
                    let ids: Vec<usize> = if q >= 1000 {
                        (0..left.len()).filter(|&d| left[d] == 1000).take((q / 1000) as usize).collect()
                    } else {
                        (0..left.len()).filter(|&d| left[d] >= q).min_by_key(|&d| (left[d], d)).into_iter().collect()
                    };
                    for &d in &ids {
                        left[d] -= q.min(1000);
                    }
                    pooled_slots.entry((t, n, r)).or_default().push(ids);
                }
            }
        }
        for (&(t, n), &c) in &self.x {
            let g = inst.tasks[t].group;
            for _ in 0..val(c) {
                let mut devices = DeviceIds::new();
                for &r in &cycle.shared_ids {
                    let q = inst.tasks[t].requests[r];
                    if q == 0 {
                        continue;
                    }
                    if let Some(slots) = pooled_slots.get_mut(&(t, n, r)) {
                        devices.insert(r, slots.pop().expect("one device list per pooled pod"));
                    } else if q < 1000 {
                        let slot = frac_slots.get_mut(&(t, n, r)).and_then(|s| s.pop());
                        devices.insert(r, vec![slot.expect("z columns cover fractional pods")]);
                    } else {
                        // Not pooled: the node's device block says which devices go whole.
                        let pool = whole_pool.get_mut(&(t, n, r)).expect("a device block covers whole pods");
                        let k = (q / 1000) as usize;
                        let ids: Vec<usize> = pool.drain(..k.min(pool.len())).collect();
                        devices.insert(r, ids);
                    }
                }
                a.pods[g].push(NewPod { task: t, node: n, devices });
            }
        }
        for (u, c) in self.e_col.iter().enumerate() {
            if let Some(c) = *c {
                if val(c) == 1 {
                    a.evicted.push(u);
                }
            }
        }
        for &g in &cycle.pending {
            if val(self.y[g].unwrap()) == 0 {
                a.pods[g].clear();
            }
            for &(d, c) in &self.dsel[g] {
                if val(c) == 1 {
                    a.domain[g] = Some(d);
                }
            }
        }
        a
    }

    /// Rounds a solver solution and checks it against every row; `None` if it does
    /// not hold (we never pass on a solution we have not verified ourselves).
    pub fn verified(&self, v: &[f64]) -> Option<Vec<f64>> {
        verify_rows(&self.mip, v)
    }

    /// Undoes every eviction the solution does not need (one unit at a time, most
    /// valuable victims first). An optimal solution has none — term 2 forbids them — but
    /// an incumbent returned at the deadline may.
    pub fn drop_unneeded_evictions(&self, cycle: &Cycle, v: &mut Vec<f64>) -> usize {
        self.drop_unneeded_evictions_in(cycle, &self.mip, v)
    }

    /// The same against `mip` (the model with tier-fixing rows added).
    ///
    /// The columns are first rebuilt once from the assignment, so device columns hold
    /// exactly what the new pods use (a solver may leave a freed device marked "taken
    /// whole" with nothing on it, which would pin its eviction). Then each eviction is
    /// undone in turn and only the rows containing its column are re-checked: linear in
    /// the model size, not in evictions x model size (thousands of victims at 1,024 nodes).
    pub fn drop_unneeded_evictions_in(&self, cycle: &Cycle, mip: &Mip, v: &mut Vec<f64>) -> usize {
        let a = self.assignment(cycle, v);
        if a.evicted.is_empty() {
            return 0;
        }
        let mut w = match verify_rows(mip, &self.values_of(cycle, &a)) {
            Some(w) => w,
            None => return 0,
        };
        // Rows per eviction column.
        let mut rows_of: HashMap<usize, Vec<usize>> = a.evicted.iter().filter_map(|&u| self.e_col[u]).map(|c| (c, Vec::new())).collect();
        for (i, row) in mip.rows.iter().enumerate() {
            for &(c, _) in &row.entries {
                if let Some(list) = rows_of.get_mut(&c) {
                    list.push(i);
                }
            }
        }
        // Undoing an eviction also undoes "stopped running" for the groups that needed it.
        let mut deps: HashMap<usize, Vec<usize>> = HashMap::new();
        for (g, es) in &self.gone {
            for e in es {
                deps.entry(*e).or_default().push(*g);
            }
        }
        for (i, row) in mip.rows.iter().enumerate() {
            for &(c, _) in &row.entries {
                for (e, gs) in &deps {
                    if gs.contains(&c) {
                        if let Some(list) = rows_of.get_mut(e) {
                            list.push(i);
                        }
                    }
                }
            }
        }
        let mut order = a.evicted.clone();
        order.sort_by_key(|&u| (std::cmp::Reverse(cycle.victims[u].priority), u));
        let mut undone = 0;
        for u in order {
            let c = match self.e_col[u] {
                Some(c) => c,
                None => continue,
            };
            w[c] = 0.0;
            let saved: Vec<(usize, f64)> = deps.get(&c).into_iter().flatten().map(|&g| (g, w[g])).collect();
            for &(g, _) in &saved {
                w[g] = 0.0;
            }
            let ok = rows_of[&c].iter().all(|&i| {
                let row = &mip.rows[i];
                let s: f64 = row.entries.iter().map(|&(cc, k)| k * w[cc]).sum();
                s >= row.lower - 1e-6 && s <= row.upper + 1e-6
            }) && mip
                .exact_rows
                .iter()
                .filter(|x| x.entries.iter().any(|&(cc, _)| cc == c))
                .all(|x| x.entries.iter().map(|&(cc, q)| q as i128 * w[cc] as i128).sum::<i128>() <= x.cap as i128);
            if ok {
                undone += 1;
            } else {
                w[c] = 1.0;
                for (g, val) in saved {
                    w[g] = val;
                }
            }
        }
        *v = w;
        undone
    }
}

/// `v` with its integer columns rounded, as the rows are checked.
fn rounded(mip: &Mip, v: &[f64]) -> Vec<f64> {
    v.iter().zip(&mip.col_integer).map(|(&x, &i)| if i { x.round() } else { x }).collect()
}

/// Rounds a solution's integer columns and checks bounds and every row of `mip`.
pub fn verify_rows(mip: &Mip, v: &[f64]) -> Option<Vec<f64>> {
    if v.len() != mip.num_cols() {
        return None;
    }
    let r = rounded(mip, v);
    for c in 0..r.len() {
        if r[c] < mip.col_lower[c] - 1e-9 || r[c] > mip.col_upper[c] + 1e-9 {
            return None;
        }
    }
    for row in &mip.rows {
        let s: f64 = row.entries.iter().map(|&(c, a)| a * r[c]).sum();
        if s < row.lower - 1e-6 || s > row.upper + 1e-6 {
            return None;
        }
    }
    if mip.exact_rows.iter().any(|x| x.broken_by(&r)) || !mip.exact_any.iter().all(|x| x.holds(&r)) {
        return None;
    }
    Some(r)
}

/// Weights that make a weighted sum of the components equal to their lexicographic
/// order: each unit of a component outweighs the full range of all later ones.
pub fn weights(cs: &[&Component]) -> Vec<f64> {
    let mut w = vec![1.0; cs.len()];
    let mut tail = 0.0;
    for i in (0..cs.len()).rev() {
        w[i] = 1.0 + tail;
        tail += w[i] * cs[i].range;
    }
    w
}

pub fn magnitude(cs: &[&Component]) -> f64 {
    weights(cs).iter().zip(cs).map(|(w, c)| w * c.range).sum()
}

pub fn tier_value(coefs: &[(usize, f64)], v: &[f64]) -> f64 {
    coefs.iter().map(|&(c, a)| a * v[c]).sum()
}

/// The distinct sizes in ascending order if each divides the next, else `None`.
fn divisible_chain(sizes: impl Iterator<Item = i64>) -> Option<Vec<i64>> {
    let mut s: Vec<i64> = sizes.collect();
    s.sort_unstable();
    s.dedup();
    s.windows(2).all(|w| w[1] % w[0] == 0).then_some(s)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// `sum q_i x_i <= cap` over integer columns, divided by the gcd of the q_i with the
/// right-hand side rounded down: the same integer points, a tighter LP, and no 1e11
/// byte counts in the matrix (HiGHS warns about those and loses precision).
pub(super) fn add_knapsack_row(mip: &mut Mip, e: Vec<(usize, i64)>, cap: i64) {
    // Evicted pods enter with negative coefficients: still integer multiples of g.
    let g = e.iter().fold(0, |g, &(_, q)| gcd(g, q.abs())).max(1);
    let rhs = cap.div_euclid(g);
    let mut entries: Vec<(usize, f64)> = e.iter().map(|&(c, q)| (c, (q / g) as f64)).collect();
    let mut rhs = rhs as f64;
    // Still large after the gcd (odd byte counts): scale to keep coefficients near 1.
    let max = entries.iter().map(|&(_, v)| v.abs()).fold(0.0, f64::max);
    if max > 1.0e4 {
        let f = max / 1.0e3;
        for en in entries.iter_mut() {
            en.1 /= f;
        }
        rhs /= f;
        // Scaled, a one-byte overflow hides inside the solver's tolerance: keep the
        // integer row too, and check every solution against it exactly.
        mip.exact_rows.push(ExactRow {
            row: mip.rows.len(),
            scale: f,
            entries: e.iter().map(|&(c, q)| (c, q / g)).collect(),
            cap: cap.div_euclid(g),
        });
    }
    mip.add_row(-INF, rhs, entries);
}

/// The most a row rewritten by [`sharpen_broken_rows`] is divided by: one unit of its
/// integer row stays 1e-4 in the row HiGHS sees, a hundred times HiGHS's feasibility
/// tolerance (1e-6), at the price of coefficients up to `max / 1e4`.
const SHARP_SCALE: f64 = 1.0e4;

impl ExactRow {
    /// Whether the integer values `r` overflow the row, in exact arithmetic.
    fn broken_by(&self, r: &[f64]) -> bool {
        self.entries.iter().map(|&(c, q)| q as i128 * r[c] as i128).sum::<i128>() > self.cap as i128
    }
}

/// Rewrites each scaled capacity row that the solution `v` overflows, in exact
/// arithmetic, with a scale at most [`SHARP_SCALE`], so that HiGHS itself rejects such an
/// overflow when the tier is solved again (models/cycle.md 4.7). Rows scaled to
/// coefficients near 1e3 keep the matrix well conditioned, and nearly always the
/// integer check never fires; when it does, no solution HiGHS returns can be accepted
/// and nothing can be proven until HiGHS sees the overflow too. Returns how many rows
/// changed: 0 means nothing is left to sharpen.
pub(super) fn sharpen_broken_rows(mip: &mut Mip, v: &[f64]) -> usize {
    if v.len() != mip.num_cols() {
        return 0;
    }
    let r = rounded(mip, v);
    let mut changed = 0;
    for k in 0..mip.exact_rows.len() {
        let x = &mip.exact_rows[k];
        if x.scale <= SHARP_SCALE || !x.broken_by(&r) {
            continue;
        }
        let max = x.entries.iter().map(|&(_, q)| q.unsigned_abs()).max().unwrap_or(1) as f64;
        let f = (max / 1.0e3).min(SHARP_SCALE);
        let (row, cap) = (x.row, x.cap);
        let entries = x.entries.iter().map(|&(c, q)| (c, q as f64 / f)).collect();
        mip.rows[row] = super::highs::Row { lower: -INF, upper: cap as f64 / f, entries };
        mip.exact_rows[k].scale = f;
        changed += 1;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::super::highs;
    use super::*;

    fn model(sizes: &[&str]) -> (usize, usize) {
        let mut yaml = String::from(
            "sharedDevices: [nvidia.com/gpu]\nnodes:\n  - {name: n1, allocatable: {cpu: \"64\", nvidia.com/gpu: 4}}\npodGroups:\n",
        );
        for (i, s) in sizes.iter().enumerate() {
            yaml.push_str(&format!(
                "  - {{name: g{i}, policy: basic, tasks: [{{name: t, count: 8, requests: {{nvidia.com/gpu: {s}}}}}]}}\n"
            ));
        }
        yaml.push_str("pods:\n  - {name: old, node: n1, requests: {nvidia.com/gpu: 250m}, deviceIds: {nvidia.com/gpu: [2]}}\n");
        let inst = Instance::from_text(&yaml).unwrap();
        let m = CycleModel::build(&Cycle::new(&inst));
        (m.pooled.len(), m.blocks.len())
    }

    /// Sizes that divide one another (with a whole device) are pooled; 300m beside 500m
    /// is not, and keeps the per-device block.
    #[test]
    fn divisible_sizes_are_pooled_and_others_get_device_columns() {
        assert_eq!(model(&["250m", "500m", "1"]), (1, 0));
        assert_eq!(model(&["250m", "2"]), (1, 0));
        assert_eq!(model(&["300m", "500m"]), (0, 1));
        assert_eq!(model(&["300m", "1"]), (0, 1));
        assert_eq!(divisible_chain([500, 250, 1000, 250].into_iter()), Some(vec![250, 500, 1000]));
        assert_eq!(divisible_chain([200, 500].into_iter()), None);
    }

    /// Terms 1-2 tiers place exactly the minimum of each placed group: the gang its
    /// group minCount (5, above its task minimums 2 + 1), the basic group one pod, and
    /// the group with a slice keeps its inequality. The term-1 optimum is unchanged (all
    /// three fit: 5 + 1 + 4 = 10 of 12 cpu), and a cycle with victims is left alone.
    #[test]
    fn terms_one_and_two_place_only_the_minimum_pods() {
        let yaml = "nodes:\n  - {name: n1, allocatable: {cpu: \"12\"}}\npodGroups:
  - {name: gang, minCount: 5, tasks: [{name: a, count: 6, minCount: 2, requests: {cpu: \"1\"}}, {name: b, count: 3, minCount: 1, requests: {cpu: \"1\"}}]}
  - {name: web, policy: basic, tasks: [{name: r, count: 4, requests: {cpu: \"1\"}}]}
  - {name: sliced, tasks: [{name: w, count: 8, minCount: 2, requests: {cpu: \"1\"}, slice: {topology: kubernetes.io/hostname, size: 4}}]}\n";
        let inst = Instance::from_text(yaml).unwrap();
        let cycle = Cycle::new(&inst);
        let m = CycleModel::build(&cycle);
        assert_eq!(m.gmin_rows.len(), 2, "the sliced group keeps its G-min inequality");
        let mut mip = m.mip.clone();
        assert!(m.minimum_pods_only(&mut mip, true));
        // Term 1 first, and every pod worth a little: only the rows hold the pods back.
        let (_, coefs, _) = m.term1_weights(&cycle);
        for &c in m.x.values() {
            mip.col_cost[c] = 1.0;
        }
        for (c, v) in &coefs {
            mip.col_cost[*c] = 100.0 * v;
        }
        let far = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let res = highs::solve(&mip, None, &highs::MipParams::until(far, 0.0, 0.0));
        assert_eq!(res.status, highs::MipStatus::Optimal);
        let a = m.assignment(&cycle, &res.values);
        let new_pods = |name: &str| a.pods[inst.groups.iter().position(|g| g.name == name).unwrap()].len();
        assert_eq!((new_pods("gang"), new_pods("web"), new_pods("sliced")), (5, 1, 4));
        // Switched off again: the rows are as built.
        let bounds = |mip: &Mip| mip.rows.iter().map(|r| (r.lower, r.upper)).collect::<Vec<_>>();
        m.minimum_pods_only(&mut mip, false);
        assert_eq!(bounds(&mip), bounds(&m.mip));

        let with_victim = yaml
            .replace("podGroups:", "pods:\n  - {name: old, node: n1, priority: 0, requests: {cpu: \"4\"}}\npodGroups:")
            .replace("{name: web,", "{name: web, priority: 10,");
        let inst = Instance::from_text(&with_victim).unwrap();
        let cycle = Cycle::new(&inst);
        let m = CycleModel::build(&cycle);
        assert!(m.e_col.iter().any(|c| c.is_some()), "the bound pod is a victim");
        let mut mip = m.mip.clone();
        assert!(!m.minimum_pods_only(&mut mip, true));
        assert_eq!(bounds(&mip), bounds(&m.mip));
    }

    /// A row of odd byte counts is scaled to coefficients near 1e3 (one byte: 1e-7, inside
    /// HiGHS's tolerance) and kept in integers; a solution one byte over passes the scaled
    /// row within tolerance, fails the integer check, and after sharpening overflows the
    /// row HiGHS sees by 1e-4. Sharpening again changes nothing.
    #[test]
    fn a_row_broken_by_one_unit_is_sharpened_once() {
        let mut mip = Mip::default();
        let a = mip.add_col(0.0, 1.0, true, "a");
        let b = mip.add_col(0.0, 1.0, true, "b");
        add_knapsack_row(&mut mip, vec![(a, 10_000_000_001), (b, 10_000_000_003)], 20_000_000_003);
        let over = [1.0, 1.0];
        let scaled = |mip: &Mip| mip.rows[0].entries.iter().map(|&(c, k)| k * over[c]).sum::<f64>() - mip.rows[0].upper;
        assert!(scaled(&mip) > 0.0 && scaled(&mip) < 1e-6, "{}", scaled(&mip));
        assert!(verify_rows(&mip, &over).is_none());
        assert!(verify_rows(&mip, &[1.0, 0.0]).is_some() && verify_rows(&mip, &[0.0, 1.0]).is_some());
        assert_eq!(sharpen_broken_rows(&mut mip, &[1.0, 0.0]), 0, "nothing broken, nothing sharpened");
        assert_eq!(sharpen_broken_rows(&mut mip, &over), 1);
        assert!(scaled(&mip) >= 0.99e-4, "{}", scaled(&mip));
        assert!(verify_rows(&mip, &[1.0, 0.0]).is_some() && verify_rows(&mip, &[0.0, 1.0]).is_some());
        assert_eq!(sharpen_broken_rows(&mut mip, &over), 0, "already sharp");
    }
}
