//! The pattern master (`models/decomposition.md` §3): one column per node class and
//! pattern, group-class columns `Y`, required-domain columns `D`, slice columns `S`,
//! eviction columns `E` for units on several nodes; rows for the gang minimums and
//! maximums, required domains, slices, eviction consistency and witnesses, own-group
//! victims, and the objective components of the tiers already fixed.
//!
//! The LP lives in a [`LpSession`] (all HiGHS contact is in `highs.rs`); pricing runs per
//! node class in parallel; the bound is Lagrangian (§4) and valid at every round.

use super::budget::Budget;
use super::pricing::{self, NodeCtx, Pattern};
use super::problem::Problem;
use crate::exact::highs::{self, HighsSwitches, LpSession, LpStatus, Mip, MipParams, MipStatus, INF};
use std::collections::HashMap;
use std::time::Instant;

/// One objective row of terms 1-3 (a tier of the engine is one of these).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Component {
    /// Groups placed at a term-1 level.
    Placed(i64),
    /// Pods evicted at a victim priority (maximized as its negative).
    Evicted(i64),
    /// Pods beyond the minimums at a term-1 level.
    Extra(i64),
}

impl Component {
    pub fn name(self) -> String {
        match self {
            Component::Placed(l) => format!("placed@{l}"),
            Component::Evicted(p) => format!("evicted@{p}"),
            Component::Extra(l) => format!("extra@{l}"),
        }
    }
}

/// An objective: components with weights (one component with weight 1 for a tier; the
/// term-1 levels with lexicographic weights for the joint search).
pub type Objective = [(Component, f64)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColKind {
    /// Pattern `p` of node class `k`.
    Pattern(usize, usize),
    Y(usize),
    /// Class, domain.
    D(usize, usize),
    /// Task class, domain.
    S(usize, usize),
    /// Victim unit on several nodes.
    E(usize),
}

pub struct Col {
    pub kind: ColKind,
    pub lo: f64,
    pub up: f64,
    pub entries: Vec<(usize, f64)>,
}

pub struct Master<'p, 'c, 'a> {
    pub prob: &'p Problem<'c, 'a>,
    pub ctxs: Vec<NodeCtx>,
    lp: LpSession,
    pub rows: Vec<(f64, f64)>,
    pub cols: Vec<Col>,
    conv: Vec<usize>,
    is_conv: Vec<bool>,
    tmax: HashMap<(usize, Option<usize>), usize>,
    tmin: HashMap<(usize, Option<usize>), usize>,
    gmin: HashMap<(usize, Option<usize>), usize>,
    slice: HashMap<(usize, usize), usize>,
    own: HashMap<usize, usize>,
    ulink: HashMap<(usize, usize), usize>,
    wit: HashMap<usize, usize>,
    /// Fixed tiers: component and its row (`Σ coef·x >= value`, max form).
    pub fixed: Vec<(Component, usize)>,
    pub patterns: Vec<(usize, Pattern)>,
    index: HashMap<(usize, Pattern), usize>,
    pub y_col: Vec<usize>,
    /// Simplex iterations and pricing rounds so far.
    pub rounds: u64,
    pub priced_inexact: u64,
    pub switches: HighsSwitches,
    /// The objective the LP holds (new columns get their cost in it).
    current: Option<Vec<(Component, f64)>>,
    /// Per node class: pricing work per round (raised where the search was cut).
    node_work: Vec<u64>,
    /// Per node class: branching on its units (bit masks over its pricing units): every
    /// pattern evicts these, none evicts those.
    pub unit_rules: Vec<(u128, u128)>,
    /// Branching rows on the pods of a task class on a node class: `(k, tc)` -> row.
    pub count_rows: HashMap<(usize, usize), usize>,
    /// Inside a branch and price, at a node whose fixes are all column boxes: the boxes
    /// of those columns at the root. A node's duals then also give a Lagrangian value with
    /// the root's boxes, which bounds the whole tree (`models/decomposition.md` §6).
    pub root_boxes: Option<HashMap<usize, (f64, f64)>>,
}

/// What one column generation run ended with.
pub struct ColgenResult {
    /// A valid upper bound on the tier objective (max form) over every valid decision
    /// that keeps the fixed rows (`INF` if none).
    pub bound: f64,
    /// The restricted LP's optimum and its solution, if solved.
    pub lp: Option<(f64, Vec<f64>)>,
    /// Exact pricing found no improving column: the LP value is the bound.
    pub converged: bool,
    /// The least Lagrangian value with [`Master::root_boxes`] (`INF` without them): a
    /// bound over the whole branch-and-price tree, not only this node's subtree.
    pub root_bound: f64,
}

const TOL: f64 = 1e-6;
/// How far below 0 a Farkas Lagrangian (duals scaled to at most 1) must be to prove.
const FARKAS_TOL: f64 = 1e-6;

/// What [`Master::farkas`] made of an infeasible restricted master.
enum Farkas {
    /// No decision meets the fixes: the subtree is empty.
    Empty,
    /// New columns, or more pricing work: solve the LP again.
    Again,
    /// Neither proven nor repaired: the node stays open at its parent's bound.
    Open,
}

/// A column of profit `profit` in a Lagrangian, at the end of its box `[lo, up]` that pays
/// more (0 when it pays nothing, whatever its box).
fn best_end(profit: f64, lo: f64, up: f64) -> f64 {
    if profit == 0.0 {
        0.0
    } else {
        (profit * lo).max(profit * up)
    }
}

/// Search steps per node class and round: a cheap search first, raised eightfold where a
/// round found no column, up to the cap (§4: the bound stays valid either way).
const FIRST_NODE_WORK: u64 = 300;

/// Patterns the search keeps per node class and round.
const PER_NODE_COLUMNS: usize = 2;
/// Most columns added per round (at least a quarter of the node classes): the LP re-solve
/// grows with them (topo-4096: 7,500 new columns a round made each re-solve 0.5-1.4 s).
const MAX_NEW_COLUMNS: usize = 1_000;
/// Weight of the best-bound duals in the smoothed duals.
const SMOOTHING: f64 = 0.5;
const MAX_NODE_WORK: u64 = 2_000_000;

impl<'p, 'c, 'a> Master<'p, 'c, 'a> {
    pub fn new(prob: &'p Problem<'c, 'a>, switches: HighsSwitches) -> Master<'p, 'c, 'a> {
        use rayon::prelude::*;
        let ctxs: Vec<NodeCtx> = (0..prob.nodes.len()).into_par_iter().map(|k| NodeCtx::new(prob, k)).collect();
        let mut m = Master {
            prob,
            ctxs,
            lp: LpSession::new(&switches),
            rows: Vec::new(),
            cols: Vec::new(),
            conv: Vec::new(),
            is_conv: Vec::new(),
            tmax: HashMap::new(),
            tmin: HashMap::new(),
            gmin: HashMap::new(),
            slice: HashMap::new(),
            own: HashMap::new(),
            ulink: HashMap::new(),
            wit: HashMap::new(),
            fixed: Vec::new(),
            patterns: Vec::new(),
            index: HashMap::new(),
            y_col: Vec::new(),
            rounds: 0,
            priced_inexact: 0,
            switches,
            current: None,
            node_work: vec![FIRST_NODE_WORK; prob.nodes.len()],
            unit_rules: vec![(0, 0); prob.nodes.len()],
            count_rows: HashMap::new(),
            root_boxes: None,
        };
        m.build();
        m
    }

    fn row(&mut self, lo: f64, up: f64) -> usize {
        self.rows.push((lo, up));
        self.is_conv.push(false);
        self.rows.len() - 1
    }

    fn build(&mut self) {
        let p = self.prob;
        for nc in &p.nodes {
            let r = self.row(nc.nodes.len() as f64, nc.nodes.len() as f64);
            self.is_conv[r] = true;
            self.conv.push(r);
        }
        // Group rows: per class (and domain, for a required level).
        let mut ylink: HashMap<usize, usize> = HashMap::new();
        for (c, gc) in p.groups.iter().enumerate() {
            let doms: Vec<Option<usize>> = if gc.required.is_some() { gc.domains.iter().map(|&v| Some(v)).collect() } else { vec![None] };
            let sum_min: i64 = gc.tasks.iter().map(|&tc| p.tasks[tc].min).sum();
            for &v in &doms {
                for &tc in &gc.tasks {
                    let r = self.row(-INF, 0.0);
                    self.tmax.insert((tc, v), r);
                    if p.tasks[tc].min > 0 {
                        let r = self.row(0.0, INF);
                        self.tmin.insert((tc, v), r);
                    }
                }
                if !(gc.gang && sum_min >= gc.lo) {
                    let r = self.row(0.0, INF);
                    self.gmin.insert((c, v), r);
                }
            }
            if gc.required.is_some() {
                let r = self.row(0.0, 0.0);
                ylink.insert(c, r);
            }
        }
        // Slices at levels other than the hostname: per domain holding an eligible node.
        for (tc, t) in p.tasks.iter().enumerate() {
            if let Some((l, _)) = t.slice {
                let mut doms: Vec<usize> = t.eligible.iter().filter_map(|&n| p.cycle.domain_of[l][n]).collect();
                doms.sort_unstable();
                doms.dedup();
                for w in doms {
                    let r = self.row(0.0, 0.0);
                    self.slice.insert((tc, w), r);
                }
            }
        }
        // Victim units.
        for (u, ui) in p.units.iter().enumerate() {
            if ui.own_class.is_some() {
                let r = self.row(-INF, 1.0);
                self.own.insert(u, r);
            }
            if ui.multi {
                for (k, nc) in p.nodes.iter().enumerate() {
                    if nc.units.contains(&u) {
                        let r = self.row(0.0, 0.0);
                        self.ulink.insert((u, k), r);
                    }
                }
                let r = self.row(0.0, INF);
                self.wit.insert(u, r);
            }
        }
        let bounds = self.rows.clone();
        self.lp.add_rows(&bounds);

        // Columns: Y, D, S, E.
        let mut cols: Vec<Col> = Vec::new();
        for (c, gc) in p.groups.iter().enumerate() {
            let size = if gc.blocked { 0.0 } else { gc.members.len() as f64 };
            let mut e = Vec::new();
            if let Some(&r) = ylink.get(&c) {
                e.push((r, 1.0));
            } else {
                self.group_entries(c, None, &mut e);
            }
            for (u, ui) in p.units.iter().enumerate() {
                if ui.own_class == Some(c) {
                    e.push((self.own[&u], 1.0));
                }
            }
            self.y_col.push(cols.len() + self.cols.len());
            cols.push(Col { kind: ColKind::Y(c), lo: 0.0, up: size, entries: e });
            if gc.required.is_some() {
                for &v in &gc.domains {
                    let mut e = vec![(ylink[&c], -1.0)];
                    self.group_entries(c, Some(v), &mut e);
                    cols.push(Col { kind: ColKind::D(c, v), lo: 0.0, up: size, entries: e });
                }
            }
        }
        let mut slices: Vec<(&(usize, usize), &usize)> = self.slice.iter().collect();
        slices.sort();
        for (&(tc, w), &r) in slices {
            let t = &p.tasks[tc];
            let (_, size) = t.slice.expect("slice rows only for sliced tasks");
            let most = (t.count * p.groups[t.class].members.len() as i64 / size) as f64;
            cols.push(Col { kind: ColKind::S(tc, w), lo: 0.0, up: most, entries: vec![(r, -(size as f64))] });
        }
        for (u, ui) in p.units.iter().enumerate() {
            if !ui.multi {
                continue;
            }
            let mut e: Vec<(usize, f64)> = Vec::new();
            for (k, nc) in p.nodes.iter().enumerate() {
                if nc.units.contains(&u) {
                    e.push((self.ulink[&(u, k)], -1.0));
                }
            }
            e.push((self.wit[&u], -1.0));
            if let Some(&r) = self.own.get(&u) {
                e.push((r, 1.0));
            }
            cols.push(Col { kind: ColKind::E(u), lo: 0.0, up: 1.0, entries: e });
        }
        self.push_cols(cols);
        // The empty pattern of every node class: the master is feasible from the start.
        for k in 0..p.nodes.len() {
            self.add_pattern(k, Pattern { pods: Vec::new(), evict: Vec::new(), witness: Vec::new() });
        }
    }

    /// Entries of a class column (`Y`, or `D` for domain `v`) in its task and group rows.
    fn group_entries(&self, c: usize, v: Option<usize>, e: &mut Vec<(usize, f64)>) {
        let p = self.prob;
        let gc = &p.groups[c];
        for &tc in &gc.tasks {
            e.push((self.tmax[&(tc, v)], -(p.tasks[tc].count as f64)));
            if let Some(&r) = self.tmin.get(&(tc, v)) {
                e.push((r, -(p.tasks[tc].min as f64)));
            }
        }
        if let Some(&r) = self.gmin.get(&(c, v)) {
            e.push((r, -(gc.lo as f64)));
        }
    }

    fn push_cols(&mut self, mut cols: Vec<Col>) {
        // One entry per row (a pattern meets its group's row once per task).
        for c in &mut cols {
            c.entries.sort_by_key(|e| e.0);
            let mut merged: Vec<(usize, f64)> = Vec::with_capacity(c.entries.len());
            for &(r, v) in &c.entries {
                match merged.last_mut() {
                    Some(last) if last.0 == r => last.1 += v,
                    _ => merged.push((r, v)),
                }
            }
            merged.retain(|e| e.1 != 0.0);
            c.entries = merged;
        }
        let first = self.cols.len();
        self.cols.extend(cols);
        let lp_cols: Vec<(f64, f64, f64, Vec<(usize, f64)>)> = (first..self.cols.len())
            .map(|j| {
                let cost = self.current.as_ref().map_or(0.0, |obj| self.coef_obj(obj, j));
                let c = &self.cols[j];
                (cost, c.lo, c.up, c.entries.clone())
            })
            .collect();
        self.lp.add_cols(&lp_cols);
    }

    /// Rows a pod of task class `tc` on node class `k` enters (coefficient 1 each).
    fn task_rows(&self, tc: usize, k: usize) -> Vec<usize> {
        let p = self.prob;
        let t = &p.tasks[tc];
        let v = p.required_domain(tc, k);
        let mut out = Vec::with_capacity(4);
        if let Some(&r) = self.tmax.get(&(tc, v)) {
            out.push(r);
        }
        if let Some(&r) = self.tmin.get(&(tc, v)) {
            out.push(r);
        }
        if let Some(&r) = self.gmin.get(&(t.class, v)) {
            out.push(r);
        }
        if let Some((l, _)) = t.slice {
            if let Some(&r) = p.nodes[k].domain[l].and_then(|w| self.slice.get(&(tc, w))) {
                out.push(r);
            }
        }
        let rank = p.groups[t.class].rank;
        for &(comp, r) in &self.fixed {
            if comp == Component::Extra(rank) {
                out.push(r);
            }
        }
        out
    }

    /// Whether a task class's pods can go on node class `k` at all (its rows exist there).
    fn placeable(&self, tc: usize, k: usize) -> bool {
        let v = self.prob.required_domain(tc, k);
        self.tmax.contains_key(&(tc, v))
    }

    /// Pods of `u` (a single-node unit) at priority `prio`.
    fn unit_pods_at(&self, u: usize, prio: i64) -> f64 {
        self.prob.units[u].pods_by_priority.iter().filter(|&&(q, _)| q == prio).map(|&(_, n)| n as f64).sum()
    }

    /// Coefficient of column `col` in component `comp` (max form: evictions negative).
    pub fn coef(&self, comp: Component, col: usize) -> f64 {
        let p = self.prob;
        match (self.cols[col].kind, comp) {
            (ColKind::Y(c), Component::Placed(l)) if p.groups[c].rank == l => 1.0,
            (ColKind::Y(c), Component::Extra(l)) if p.groups[c].rank == l => -(p.groups[c].lo as f64),
            (ColKind::E(u), Component::Evicted(q)) => -self.unit_pods_at(u, q),
            (ColKind::Pattern(_, i), comp) => self.pattern_coef(&self.patterns[i].1, comp),
            _ => 0.0,
        }
    }

    fn pattern_coef(&self, pat: &Pattern, comp: Component) -> f64 {
        let p = self.prob;
        match comp {
            Component::Placed(_) => 0.0,
            Component::Extra(l) => pat.pods.iter().filter(|&&(tc, _)| p.groups[p.tasks[tc].class].rank == l).map(|&(_, c)| c as f64).sum(),
            Component::Evicted(q) => -pat.evict.iter().filter(|&&u| !p.units[u].multi).map(|&u| self.unit_pods_at(u, q)).sum::<f64>(),
        }
    }

    /// Adds pattern `pat` of node class `k` as a column (once); returns its column.
    pub fn add_pattern(&mut self, k: usize, pat: Pattern) -> usize {
        if let Some(&c) = self.index.get(&(k, pat.clone())) {
            return c;
        }
        let p = self.prob;
        let e = self.pattern_entries(k, &pat);
        let col = self.cols.len();
        let up = if self.obeys_rules(k, &pat) { p.nodes[k].nodes.len() as f64 } else { 0.0 };
        self.patterns.push((k, pat.clone()));
        self.index.insert((k, pat), col);
        self.push_cols(vec![Col { kind: ColKind::Pattern(k, self.patterns.len() - 1), lo: 0.0, up, entries: e }]);
        col
    }

    /// Whether pattern `pat` of node class `k` is a column already.
    pub fn has_pattern(&self, k: usize, pat: &Pattern) -> bool {
        self.index.contains_key(&(k, pat.clone()))
    }

    /// Entries of pattern `pat` of node class `k` in the rows (a row may repeat).
    fn pattern_entries(&self, k: usize, pat: &Pattern) -> Vec<(usize, f64)> {
        let p = self.prob;
        let mut e: Vec<(usize, f64)> = vec![(self.conv[k], 1.0)];
        for &(tc, c) in &pat.pods {
            for r in self.task_rows(tc, k) {
                e.push((r, c as f64));
            }
        }
        for &u in &pat.evict {
            if p.units[u].multi {
                e.push((self.ulink[&(u, k)], 1.0));
            } else if let Some(&r) = self.own.get(&u) {
                e.push((r, 1.0));
            }
        }
        for &u in &pat.witness {
            e.push((self.wit[&u], 1.0));
        }
        for &(comp, r) in &self.fixed {
            if let Component::Evicted(_) = comp {
                let v = self.pattern_coef(pat, comp);
                if v != 0.0 {
                    e.push((r, v));
                }
            }
        }
        for &(tc, c) in &pat.pods {
            if let Some(&r) = self.count_rows.get(&(k, tc)) {
                e.push((r, c as f64));
            }
        }
        e
    }

    /// Whether pattern `pat` of node class `k` keeps the unit branching rules there.
    fn obeys_rules(&self, k: usize, pat: &Pattern) -> bool {
        let (must, never) = self.unit_rules[k];
        if must == 0 && never == 0 {
            return true;
        }
        let ctx = &self.ctxs[k];
        ctx.units.iter().enumerate().all(|(j, un)| {
            let has = pat.evict.contains(&un.u);
            !(must >> j & 1 == 1 && !has || never >> j & 1 == 1 && has)
        })
    }

    /// Sets node class `k`'s unit rules and the patterns' upper bounds accordingly.
    pub fn set_unit_rules(&mut self, k: usize, rules: (u128, u128)) {
        if self.unit_rules[k] == rules {
            return;
        }
        self.unit_rules[k] = rules;
        let m = self.prob.nodes[k].nodes.len() as f64;
        for j in 0..self.cols.len() {
            if let ColKind::Pattern(kk, i) = self.cols[j].kind {
                if kk == k {
                    let up = if self.obeys_rules(k, &self.patterns[i].1) { m } else { 0.0 };
                    if self.cols[j].up != up {
                        self.cols[j].up = up;
                        self.lp.set_col_bounds(j, 0.0, up);
                    }
                }
            }
        }
    }

    /// The branching row on the pods of task class `tc` on node class `k` (made on first
    /// use, unbounded until a branch sets its bounds).
    pub fn count_row(&mut self, k: usize, tc: usize) -> usize {
        if let Some(&r) = self.count_rows.get(&(k, tc)) {
            return r;
        }
        let entries: Vec<(usize, f64)> = self
            .cols
            .iter()
            .enumerate()
            .filter_map(|(j, c)| match c.kind {
                ColKind::Pattern(kk, i) if kk == k => self.patterns[i].1.pods.iter().find(|e| e.0 == tc).map(|e| (j, e.1 as f64)),
                _ => None,
            })
            .collect();
        let r = self.row(-INF, INF);
        self.lp.add_row(-INF, INF, &entries);
        for &(j, v) in &entries {
            self.cols[j].entries.push((r, v));
        }
        self.count_rows.insert((k, tc), r);
        r
    }

    /// Sets the bounds of a branching row.
    pub fn set_row_bounds(&mut self, r: usize, lo: f64, up: f64) {
        if self.rows[r] != (lo, up) {
            self.rows[r] = (lo, up);
            self.lp.set_row_bounds(r, lo, up);
        }
    }

    /// Fixes component `comp` at `value` (max form): the row `Σ coef·x >= value`.
    pub fn fix(&mut self, comp: Component, value: f64) {
        let entries: Vec<(usize, f64)> = (0..self.cols.len()).map(|j| (j, self.coef(comp, j))).filter(|&(_, v)| v != 0.0).collect();
        let r = self.row(value - 0.5, INF);
        self.lp.add_row(value - 0.5, INF, &entries);
        for &(j, v) in &entries {
            self.cols[j].entries.push((r, v));
        }
        self.fixed.push((comp, r));
    }

    /// Drops the last fixing of component `comp` ([`Master::fix`]): its row no longer binds.
    pub fn unfix(&mut self, comp: Component) {
        if let Some(i) = self.fixed.iter().rposition(|&(c, _)| c == comp) {
            let (_, r) = self.fixed.remove(i);
            self.set_row_bounds(r, -INF, INF);
        }
    }

    /// The bounds of every column that is not a pattern (class, domain, slice and
    /// eviction columns: what branching fixes), by column.
    pub fn column_boxes(&self) -> HashMap<usize, (f64, f64)> {
        self.cols.iter().enumerate().filter(|(_, c)| !matches!(c.kind, ColKind::Pattern(..))).map(|(j, c)| (j, (c.lo, c.up))).collect()
    }

    /// Sets the bounds of column `col` (branching on class columns).
    pub fn set_bounds(&mut self, col: usize, lo: f64, up: f64) {
        self.cols[col].lo = lo;
        self.cols[col].up = up;
        self.lp.set_col_bounds(col, lo, up);
    }

    /// Coefficient of column `col` in objective `obj`.
    pub fn coef_obj(&self, obj: &Objective, col: usize) -> f64 {
        obj.iter().map(|&(c, w)| w * self.coef(c, col)).sum()
    }

    fn tier_costs(&self, obj: &Objective) -> Vec<f64> {
        (0..self.cols.len()).map(|j| self.coef_obj(obj, j)).collect()
    }

    /// Value of component `comp` at column values `x`.
    pub fn value(&self, comp: Component, x: &[f64]) -> f64 {
        x.iter().enumerate().filter(|(_, &v)| v != 0.0).map(|(j, &v)| v * self.coef(comp, j)).sum()
    }

    /// Column generation on tier `comp` until exact pricing finds nothing, the bound
    /// meets `target` (a known value: nothing to prove beyond it), or the budget ends
    /// (one work unit per pricing round).
    pub fn colgen(&mut self, obj: &Objective, target: f64, budget: &mut Budget) -> ColgenResult {
        let deadline = budget.until;
        let costs = self.tier_costs(obj);
        self.lp.set_costs(&costs);
        self.current = Some(obj.to_vec());
        self.node_work.iter_mut().for_each(|w| *w = FIRST_NODE_WORK);
        let name = obj.iter().map(|c| c.0.name()).collect::<Vec<_>>().join("+");
        let mut best_bound = INF;
        let mut root_bound = INF;
        let mut last_lp = None;
        // Dual smoothing (Wentges): price at a mix of the duals of the best bound so far
        // (the center) and the LP's; when that finds nothing that improves the LP, price
        // at the LP's duals alone (a mispricing round).
        let mut center: Option<Vec<f64>> = None;
        let mut mispriced = false;
        loop {
            if budget.exhausted() || self.prob.cycle.cancel.is_cancelled() {
                return ColgenResult { bound: best_bound, lp: last_lp, converged: false, root_bound };
            }
            let t_lp = Instant::now();
            let sol = self.lp.solve(deadline, None);
            let lp_ms = t_lp.elapsed().as_millis();
            if sol.status == LpStatus::Infeasible {
                // Only branching makes the restricted master infeasible; columns not
                // generated yet may still meet the node's fixes.
                budget.charge(1);
                match self.farkas(&name, deadline) {
                    Farkas::Empty => return ColgenResult { bound: -INF, lp: None, converged: true, root_bound },
                    Farkas::Again => continue,
                    Farkas::Open => return ColgenResult { bound: best_bound, lp: None, converged: false, root_bound },
                }
            }
            if sol.status != LpStatus::Optimal {
                if self.prob.cycle.diag.debug {
                    eprintln!("colgen {name}: LP {:?} (session ok {})", sol.status, self.lp.ok);
                }
                return ColgenResult { bound: best_bound, lp: last_lp, converged: false, root_bound };
            }
            budget.charge(1);
            self.rounds += 1;
            let y_lp = self.clamped(&sol.row_duals);
            let smoothed = center.is_some() && !mispriced;
            let y: Vec<f64> = match (&center, smoothed) {
                (Some(c), true) => c.iter().zip(&y_lp).map(|(a, b)| SMOOTHING * a + (1.0 - SMOOTHING) * b).collect(),
                _ => y_lp.clone(),
            };
            let p = self.prob;
            let t_price = Instant::now();
            let priced = self.price_classes(obj, &y, deadline);
            let work_sum: u64 = priced.iter().map(|p| p.work).sum();
            let (bound, at_root) = self.lagrangian(&name, &y, &costs, &priced);
            root_bound = root_bound.min(at_root);
            if bound < best_bound {
                best_bound = bound;
                center = Some(y.clone());
            }
            // Candidates that improve the LP (reduced cost at the LP's duals), best first.
            let mut cands: Vec<(f64, usize, Pattern)> = Vec::new();
            let mut exact = true;
            let mut device_choice = false;
            for (k, pr) in priced.iter().enumerate() {
                exact &= pr.exact;
                device_choice |= pr.device_choice;
                if !pr.exact {
                    self.priced_inexact += 1;
                }
                for (pat, _) in &pr.patterns {
                    if self.has_pattern(k, pat) || !self.obeys_rules(k, pat) {
                        continue;
                    }
                    let rc = self.pattern_coef_obj(obj, pat) + self.pattern_entries(k, pat).iter().map(|&(r, v)| y_lp[r] * v).sum::<f64>();
                    if rc > TOL {
                        cands.push((rc, k, pat.clone()));
                    }
                }
            }
            cands
                .sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal).then(a.1.cmp(&b.1)).then_with(|| a.2.cmp(&b.2)));
            cands.truncate(MAX_NEW_COLUMNS.max(p.nodes.len() / 4));
            let new = cands.len();
            for (_, k, pat) in cands {
                self.add_pattern(k, pat);
            }
            let lp_value = sol.objective;
            if self.prob.cycle.diag.debug {
                eprintln!(
                    "  lp {lp_ms} ms, pricing {} ms, work {}, lp iterations {}",
                    t_price.elapsed().as_millis(),
                    work_sum,
                    self.lp.iterations
                );
                eprintln!(
                    "colgen {name}: round {}, lp {lp_value:.4}, lagrangian {bound:.4} (best {best_bound:.4}), new columns {new}, exact {exact}, smoothed {smoothed}",
                    self.rounds
                );
            }
            last_lp = Some((lp_value, sol.col_values));
            if best_bound <= target + 0.5 {
                return ColgenResult { bound: best_bound, lp: last_lp, converged: false, root_bound };
            }
            if new > 0 {
                mispriced = false;
                continue;
            }
            if smoothed {
                // Nothing found at the smoothed duals: price at the LP's.
                mispriced = true;
                continue;
            }
            if exact {
                // Exact pricing at the LP's duals finds nothing: the LP is the bound, unless
                // decisions this master does not hold (device-choice witnesses) could beat
                // it; then the Lagrangian value, which covers them, stays the bound.
                if !device_choice {
                    best_bound = best_bound.min(lp_value);
                }
                return ColgenResult { bound: best_bound, lp: last_lp, converged: !device_choice, root_bound };
            }
            // Nothing found with the work given: more work where the search was cut, until
            // the cap (then the bound keeps what the cut searches left open).
            let mut raised = false;
            for (k, pr) in priced.iter().enumerate() {
                if !pr.exact && self.node_work[k] < MAX_NODE_WORK {
                    self.node_work[k] = (self.node_work[k] * 8).min(MAX_NODE_WORK);
                    raised = true;
                }
            }
            if !raised {
                return ColgenResult { bound: best_bound, lp: last_lp, converged: false, root_bound };
            }
        }
    }

    /// Prices every node class at duals `y` for objective `obj`, in parallel.
    fn price_classes(&self, obj: &Objective, y: &[f64], deadline: Instant) -> Vec<pricing::Priced> {
        use rayon::prelude::*;
        let inputs: Vec<(Vec<f64>, Vec<f64>, Vec<f64>, f64)> = (0..self.prob.nodes.len())
            .map(|k| {
                let (vals, uvals, bonus) = self.node_values(k, obj, y);
                // Nothing beats the empty pattern by less than the convexity dual.
                (vals, uvals, bonus, (-y[self.conv[k]]).max(0.0) + TOL)
            })
            .collect();
        self.ctxs
            .par_iter()
            .zip(inputs.par_iter())
            .zip(self.node_work.par_iter())
            .zip(self.unit_rules.par_iter())
            .map(|(((ctx, (vals, uvals, bonus, floor)), &w), &rules)| {
                pricing::price(ctx, vals, uvals, bonus, *floor, w, PER_NODE_COLUMNS, deadline, rules)
            })
            .collect()
    }

    /// Farkas pricing of an infeasible restricted master (§6). HiGHS's dual ray `y`
    /// proves it infeasible: with zero costs, the Lagrangian at `y` over the columns so far
    /// is negative, while every point that meets the rows makes it at least 0. Only a
    /// column with positive profit at `y` can break that proof. Pricing every node class
    /// at `y` with zero costs either finds such columns (added, then the LP is solved
    /// again) or bounds them all, and a Lagrangian still negative proves that no decision
    /// meets the node's fixes.
    fn farkas(&mut self, name: &str, deadline: Instant) -> Farkas {
        let Some(ray) = self.lp.dual_ray() else { return Farkas::Open };
        let scale = ray.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        if scale == 0.0 {
            return Farkas::Open;
        }
        // The ray's sign is HiGHS's convention: take the one that proves.
        let Some(y) = [1.0, -1.0]
            .into_iter()
            .map(|s| ray.iter().map(|v| s * v / scale).collect::<Vec<f64>>())
            .find(|y| self.restricted_farkas(y) < -FARKAS_TOL)
        else {
            return Farkas::Open;
        };
        let priced = self.price_classes(&[], &y, deadline);
        let zero = vec![0.0; self.cols.len()];
        let (l, _) = self.lagrangian(name, &y, &zero, &priced);
        let mut new = Vec::new();
        for (k, pr) in priced.iter().enumerate() {
            for (pat, _) in &pr.patterns {
                if !self.has_pattern(k, pat)
                    && self.obeys_rules(k, pat)
                    && self.pattern_entries(k, pat).iter().map(|&(r, v)| y[r] * v).sum::<f64>() > TOL
                {
                    new.push((k, pat.clone()));
                }
            }
        }
        if self.prob.cycle.diag.debug {
            eprintln!("farkas {name}: lagrangian {l:.4}, new columns {}", new.len());
        }
        if l < -FARKAS_TOL {
            return Farkas::Empty;
        }
        let added = !new.is_empty();
        for (k, pat) in new {
            self.add_pattern(k, pat);
        }
        if added {
            return Farkas::Again;
        }
        // Nothing found where the search was cut: more work there.
        let mut raised = false;
        for (k, pr) in priced.iter().enumerate() {
            if !pr.exact && self.node_work[k] < MAX_NODE_WORK {
                self.node_work[k] = (self.node_work[k] * 8).min(MAX_NODE_WORK);
                raised = true;
            }
        }
        if raised {
            Farkas::Again
        } else {
            Farkas::Open
        }
    }

    /// The Lagrangian at duals `y` with zero costs over the columns so far (every row,
    /// every column at the end of its box that pays more): negative exactly when `y`
    /// proves the restricted master infeasible.
    fn restricted_farkas(&self, y: &[f64]) -> f64 {
        let cols: f64 = self.cols.iter().map(|c| best_end(c.entries.iter().map(|&(r, v)| y[r] * v).sum(), c.lo, c.up)).sum();
        self.rows_priced_out(y, false) + cols
    }

    /// `Σ_i −y_i·(lo_i if y_i > 0 else up_i)` over the rows, the convexity rows left out
    /// with `skip_conv`: each row priced out at the side its dual's sign selects.
    fn rows_priced_out(&self, y: &[f64], skip_conv: bool) -> f64 {
        let mut b = 0.0;
        for (i, &(lo, up)) in self.rows.iter().enumerate() {
            if (skip_conv && self.is_conv[i]) || y[i] == 0.0 {
                continue;
            }
            b -= y[i] * if y[i] > 0.0 { lo } else { up };
        }
        b
    }

    /// Objective coefficient of pattern `pat` in objective `obj`.
    fn pattern_coef_obj(&self, obj: &Objective, pat: &Pattern) -> f64 {
        obj.iter().map(|&(c, w)| w * self.pattern_coef(pat, c)).sum()
    }

    /// Row duals with the sign each row's bounds allow (a dual that would need a missing
    /// bound is 0): any such vector gives a valid Lagrangian bound.
    fn clamped(&self, duals: &[f64]) -> Vec<f64> {
        duals
            .iter()
            .zip(&self.rows)
            .map(|(&y, &(lo, up))| if (y > 0.0 && lo == -INF) || (y < 0.0 && up == INF) { 0.0 } else { y })
            .collect()
    }

    /// Pricing inputs of node class `k`: per item its value, per unit its value and its
    /// witness bonus, under duals `y` and the tier objective `comp`.
    fn node_values(&self, k: usize, obj: &Objective, y: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let p = self.prob;
        let ctx = &self.ctxs[k];
        let vals: Vec<f64> = ctx
            .items
            .iter()
            .map(|it| {
                if !self.placeable(it.tc, k) {
                    return f64::NEG_INFINITY;
                }
                let rank = p.groups[p.tasks[it.tc].class].rank;
                let cost: f64 = obj.iter().filter(|&&(c, _)| c == Component::Extra(rank)).map(|&(_, w)| w).sum();
                cost + self.task_rows(it.tc, k).iter().map(|&r| y[r]).sum::<f64>() + self.count_rows.get(&(k, it.tc)).map_or(0.0, |&r| y[r])
            })
            .collect();
        let mut uvals = Vec::with_capacity(ctx.units.len());
        let mut bonus = Vec::with_capacity(ctx.units.len());
        for un in &ctx.units {
            let u = un.u;
            let mut v = 0.0;
            if p.units[u].multi {
                v += y[self.ulink[&(u, k)]];
                bonus.push(y[self.wit[&u]]);
            } else {
                for &(c, w) in obj {
                    if let Component::Evicted(q) = c {
                        v -= w * self.unit_pods_at(u, q);
                    }
                }
                if let Some(&r) = self.own.get(&u) {
                    v += y[r];
                }
                for &(c, r) in &self.fixed {
                    if let Component::Evicted(q) = c {
                        v -= self.unit_pods_at(u, q) * y[r];
                    }
                }
                bonus.push(0.0);
            }
            uvals.push(v);
        }
        (vals, uvals, bonus)
    }

    /// The Lagrangian bound of §4 at duals `y`: rows (other than the convexity rows)
    /// priced out at the bound their dual's sign selects, every non-pattern column at the
    /// end of its box that pays more, every node class at its count times its best
    /// pattern's profit (the pricing's upper bound, at least 0: the empty pattern). The
    /// second value is the same sum with [`Master::root_boxes`] (`INF` without them).
    fn lagrangian(&self, name: &str, y: &[f64], costs: &[f64], priced: &[pricing::Priced]) -> (f64, f64) {
        let mut b = self.rows_priced_out(y, true);
        let rows_part = b;
        // The same sum with the root's boxes on the columns branched on.
        let mut root_extra = 0.0;
        for (j, col) in self.cols.iter().enumerate() {
            if let ColKind::Pattern(..) = col.kind {
                continue;
            }
            let profit = costs[j] + col.entries.iter().map(|&(r, v)| y[r] * v).sum::<f64>();
            let here = best_end(profit, col.lo, col.up);
            b += here;
            if let Some(&(lo, up)) = self.root_boxes.as_ref().and_then(|r| r.get(&j)) {
                root_extra += best_end(profit, lo, up) - here;
            }
        }
        let cols_part = b - rows_part;
        for (k, pr) in priced.iter().enumerate() {
            b += self.prob.nodes[k].nodes.len() as f64 * pr.ub.max(0.0);
        }
        if self.prob.cycle.diag.debug {
            let (mut ni, mut si, mut se) = (0, 0.0, 0.0);
            for (k, pr) in priced.iter().enumerate() {
                let c = self.prob.nodes[k].nodes.len() as f64 * pr.ub.max(0.0);
                if pr.exact {
                    se += c
                } else {
                    ni += 1;
                    si += c
                }
            }
            eprintln!("lagrangian {name}: rows {rows_part:.4} columns {cols_part:.4} patterns {:.4} (inexact classes {ni}: {si:.4}, exact {se:.4})", b - rows_part - cols_part);
        }
        (b, if self.root_boxes.is_some() { b + root_extra } else { INF })
    }

    /// Largest change of component `comp` over valid decisions (its range).
    pub fn range(&self, comp: Component) -> f64 {
        let p = self.prob;
        match comp {
            Component::Placed(l) => p.groups.iter().filter(|c| c.rank == l).map(|c| c.members.len() as f64).sum(),
            Component::Evicted(q) => {
                p.units.iter().map(|u| u.pods_by_priority.iter().filter(|e| e.0 == q).map(|e| e.1 as f64).sum::<f64>()).sum()
            }
            Component::Extra(l) => {
                p.groups.iter().filter(|c| c.rank == l).map(|c| ((c.hi - c.lo).max(0) * c.members.len() as i64) as f64).sum()
            }
        }
    }

    /// The MIP over the columns generated so far for objective `obj` (integer weights),
    /// from the incumbent `x`: its objective is `obj` plus the `later` components with
    /// lexicographic weights scaled below one half (so `obj` comes first and a solution
    /// equal on it but better later is kept); only solutions above the incumbent are
    /// sought. A solution lexicographically better than `x` on (`obj`'s components, then
    /// `later`) if found. With `only`, the columns it does not mark are held at zero. The
    /// run charges `budget` its work ([`highs::MipResult::work`]).
    pub fn restricted_mip(
        &self,
        obj: &Objective,
        later: &[Component],
        x: &[f64],
        only: Option<&[bool]>,
        budget: &mut Budget,
    ) -> Option<Vec<f64>> {
        // Lexicographic weights of the later components, least important last.
        // As many later components as keep the scale at 1e-6 or more (HiGHS's tolerances
        // would not see smaller weights).
        let mut comps: Vec<(Component, f64)> = Vec::new();
        let mut w: Vec<f64> = Vec::new();
        let mut acc = 0.0;
        for &c in later {
            let mut trial = comps.clone();
            trial.push((c, self.range(c)));
            let mut tw = vec![0.0; trial.len()];
            let mut tacc = 0.0;
            for i in (0..trial.len()).rev() {
                tw[i] = 1.0 + tacc;
                tacc += tw[i] * trial[i].1;
            }
            if 0.5 / (tacc + 1.0) < 1e-6 {
                break;
            }
            comps = trial;
            w = tw;
            acc = tacc;
        }
        let scale = 0.5 / (acc + 1.0);
        let keep = comps.len();
        let mut cost: Vec<f64> = (0..self.cols.len()).map(|j| self.coef_obj(obj, j)).collect();
        for i in 0..keep {
            for (j, c) in cost.iter_mut().enumerate() {
                *c += scale * w[i] * self.coef(comps[i].0, j);
            }
        }
        let mut mip = Mip::default();
        for (j, col) in self.cols.iter().enumerate() {
            let (lo, up) = if only.is_some_and(|o| !o.get(j).copied().unwrap_or(false)) { (0.0, 0.0) } else { (col.lo, col.up) };
            let c = mip.add_col(lo, up, true, String::new());
            mip.col_cost[c] = cost[j];
        }
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); self.rows.len()];
        for (j, col) in self.cols.iter().enumerate() {
            for &(r, v) in &col.entries {
                rows[r].push((j, v));
            }
        }
        for (r, (lo, up)) in self.rows.iter().enumerate() {
            mip.add_row(*lo, *up, std::mem::take(&mut rows[r]));
        }
        let start_value: f64 = x.iter().zip(&cost).map(|(a, b)| a * b).sum();
        let mut params = MipParams::until(budget.until, 0.0, if keep > 0 { 1e-9 } else { 0.999 });
        params.switches = self.switches.clone();
        params.cutoff = Some(start_value + if keep > 0 { scale * 0.5 } else { 0.5 });
        params = params.with_work(budget.work_left());
        params.cancel = Some(self.prob.cycle.cancel.flag().clone());
        let res = highs::solve_detached(mip, params);
        budget.charge(res.work());
        if matches!(res.status, MipStatus::Optimal | MipStatus::Interrupted) && res.values.len() == self.cols.len() {
            let v: Vec<f64> = res.values.iter().map(|v| v.round()).collect();
            if self.feasible(&v) {
                let key =
                    |y: &[f64]| -> Vec<f64> { obj.iter().map(|c| c.0).chain(later.iter().copied()).map(|c| self.value(c, y)).collect() };
                let (a, b) = (key(&v), key(x));
                if a.iter().zip(&b).find(|(p, q)| (*p - *q).abs() > 0.5).is_some_and(|(p, q)| p > q) {
                    return Some(v);
                }
            }
        }
        None
    }

    /// Whether integer column values `x` satisfy every row and bound (exactly: the
    /// coefficients are small integers).
    pub fn feasible(&self, x: &[f64]) -> bool {
        if x.len() != self.cols.len() {
            return false;
        }
        let mut act = vec![0.0; self.rows.len()];
        for (j, col) in self.cols.iter().enumerate() {
            if x[j] < col.lo - TOL || x[j] > col.up + TOL || x[j].fract() != 0.0 {
                return false;
            }
            if x[j] != 0.0 {
                for &(r, v) in &col.entries {
                    act[r] += v * x[j];
                }
            }
        }
        act.iter().zip(&self.rows).all(|(&a, &(lo, up))| a >= lo - TOL && a <= up + TOL)
    }

    pub fn lp_iterations(&self) -> u64 {
        self.lp.iterations
    }
}
