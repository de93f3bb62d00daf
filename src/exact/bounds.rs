//! What the exact engine proved, row by row (instance-format.md, "Bounds"): a bound on
//! every row of terms 1-3 up to and including the first one not proven, none after it.
//!
//! Rows are the model's exact components in objective order: groups placed per level,
//! pods evicted per victim level, extra pods per level. A tier that merged several rows
//! with weights `w` and ended with bound `B` on its weighted objective bounds row `k` given
//! the rows before it at their values `v`: `c_k ≤ (B − Σ_{j<k} w_j v_j − Σ_{j>k} w_j lo_j) /
//! w_k`, rounded down (`lo_j` the least row `j` can be: 0, or minus its range for an
//! eviction row), exactly what the weighted bound implies and nothing looser. A row no
//! solver reached is bounded by its range (all groups of the level placed, no eviction,
//! every elastic pod). A bound known before the tiers (the decomposition engine's, in a
//! hand-off) is valid on the same terms, and the tighter of the two is kept. A row is
//! proven when its bound equals its value.

use super::decompose::Master;
use super::milp::{tier_value, CycleModel, Term};
use super::tiers::Progress;
use crate::engine::cycle::Cycle;
use crate::wire::decision::{Bounds, EvictedBound, ExtraBound, PlacedBound};

/// Row bounds of a decision, and what they prove.
pub(super) struct RowBounds {
    pub bounds: Bounds,
    /// `|bound − value| / max(1, |bound|)` of the first row not proven; 0 if none.
    pub gap: f64,
    /// Every row of terms 1-3 proven: the decision is optimal.
    pub all_proven: bool,
    /// The objective terms (1-3) whose rows are all proven, as are the terms before them.
    pub terms_proven: Vec<u8>,
}

/// One row: the component it is, the decision's value (maximized: an eviction row holds
/// minus the evicted pods) and the bound on it.
struct Row {
    component: usize,
    value: i64,
    bound: i64,
}

/// Rows walked in objective order until the first open one.
struct Walk<'m> {
    model: &'m CycleModel,
    rows: Vec<Row>,
    open: bool,
    /// Bounds known before the tiers (a hand-off's), per component.
    known: &'m [Option<i64>],
}

impl<'m> Walk<'m> {
    fn new(model: &'m CycleModel, known: &'m [Option<i64>]) -> Walk<'m> {
        Walk { model, rows: Vec::new(), open: false, known }
    }

    /// Records component `c` with its value and bound (clamped to its range); false once
    /// a row is open (no further row gets a bound).
    fn push(&mut self, c: usize, value: i64, bound: i64) -> bool {
        if self.open {
            return false;
        }
        let known = self.known.get(c).copied().flatten().unwrap_or(i64::MAX);
        let bound = bound.min(self.top(c)).min(known).max(value);
        self.open = bound != value;
        self.rows.push(Row { component: c, value, bound });
        !self.open
    }

    /// The largest value component `c` can take: its range for placed and extra rows, 0
    /// (no eviction) for eviction rows.
    fn top(&self, c: usize) -> i64 {
        let comp = &self.model.components[c];
        match comp.term {
            Term::Evicted => 0,
            _ => comp.range.round() as i64,
        }
    }

    /// The least value component `c` can take.
    fn least(&self, c: usize) -> f64 {
        let comp = &self.model.components[c];
        match comp.term {
            Term::Evicted => -comp.range,
            _ => 0.0,
        }
    }

    /// The exact components not walked yet, each bounded by its range, while they prove.
    fn rest_by_range(&mut self, v: &[f64]) {
        let left: Vec<usize> = (0..self.model.components.len())
            .filter(|&c| self.model.components[c].exact && !self.rows.iter().any(|r| r.component == c))
            .collect();
        for c in left {
            let value = value_of(self.model, c, v);
            if !self.push(c, value, self.top(c)) {
                return;
            }
        }
    }

    fn finish(self, cycle: &Cycle) -> RowBounds {
        let inst = cycle.inst;
        let mut bounds = Bounds::default();
        for r in &self.rows {
            let comp = &self.model.components[r.component];
            match comp.term {
                Term::Placed => bounds.placed_by_priority.push(PlacedBound { priority: inst.level_key(comp.level), at_most: r.bound }),
                Term::Evicted => bounds.evicted_by_priority.push(EvictedBound { priority: comp.level, at_least: -r.bound }),
                Term::Extra => bounds.extra_by_priority.push(ExtraBound { priority: inst.level_key(comp.level), at_most: r.bound }),
                Term::Preferred | Term::Packing => {}
            }
        }
        let gap = self.rows.last().filter(|_| self.open).map_or(0.0, |r| (r.bound - r.value).abs() as f64 / (r.bound.abs().max(1) as f64));
        let proven_comp = |c: usize| self.rows.iter().any(|r| r.component == c && r.bound == r.value);
        let mut terms_proven = Vec::new();
        for term in [Term::Placed, Term::Evicted, Term::Extra] {
            let all = (0..self.model.components.len()).filter(|&c| self.model.components[c].term == term).all(proven_comp);
            if !all || terms_proven.len() + 1 != term.number() as usize {
                break;
            }
            terms_proven.push(term.number());
        }
        RowBounds { all_proven: !self.open && terms_proven.len() == 3, bounds, gap, terms_proven }
    }
}

/// The value of component `c` in `v`, as an integer.
fn value_of(model: &CycleModel, c: usize, v: &[f64]) -> i64 {
    tier_value(&model.components[c].coefs, v).round() as i64
}

/// Row bounds from the tiers' outcomes (the compact model).
pub(super) fn from_tiers(cycle: &Cycle, model: &CycleModel, p: &Progress, v: &[f64]) -> RowBounds {
    let mut walk = Walk::new(model, &p.known);
    for (ti, tier) in model.tiers().iter().enumerate().filter(|(_, t)| t.exact) {
        let Some(outcome) = p.outcomes.iter().find(|o| o.tier == ti) else { break };
        let values: Vec<i64> = tier.components.iter().map(|&c| value_of(model, c, v)).collect();
        if outcome.proven {
            for (&c, &value) in tier.components.iter().zip(&values) {
                walk.push(c, value, value);
            }
            continue;
        }
        // Stopped: each row from the tier's bound and the rows before it.
        let mut before = 0.0;
        for (k, (&c, &value)) in tier.components.iter().zip(&values).enumerate() {
            let later: f64 = tier.components[k + 1..].iter().zip(&tier.weights[k + 1..]).map(|(&j, w)| w * walk.least(j)).sum();
            let bound = if outcome.bound.is_finite() {
                ((outcome.bound - before - later) / tier.weights[k] + 1e-9).floor() as i64
            } else {
                walk.top(c)
            };
            if !walk.push(c, value, bound) {
                break;
            }
            before += tier.weights[k] * value as f64;
        }
        if walk.open {
            break;
        }
    }
    walk.rest_by_range(v);
    walk.finish(cycle)
}

/// Row bounds of a decomposed cycle: term 1 from the master's lexicographic bound per
/// level (valid for a level once the levels above it meet theirs), the rest by range (the
/// restricted model's proofs hold only within the domains the master chose).
pub(super) fn from_master(cycle: &Cycle, model: &CycleModel, master: &Master, v: &[f64]) -> RowBounds {
    let mut walk = Walk::new(model, &[]);
    for c in (0..model.components.len()).filter(|&c| model.components[c].term == Term::Placed) {
        let comp = &model.components[c];
        let value = value_of(model, c, v);
        let bound = master.bounds.iter().find(|b| b.0 == comp.level).map_or(walk.top(c), |b| b.1);
        if !walk.push(c, value, bound) {
            break;
        }
    }
    walk.rest_by_range(v);
    walk.finish(cycle)
}
