//! The tiers of the cycle MILP, solved one after another on the worker thread: each exact
//! tier with HiGHS and, on large models, a neighbourhood search beside it (after it, in
//! deterministic mode), proven or stopped, then fixed at its value before the next;
//! best-effort tiers in a short slice. The best verified solution is published as it
//! goes ([`Progress`]), so the caller can return it at the deadline.

use super::highs::{self, LiveRun, Mip, MipParams, MipResult, MipStatus};
use super::milp::{self, tier_value, CycleModel, Term, Tier};
use super::{bound, lns, relative_gap, Say};
use crate::baselines::k8s_preempt;
use crate::engine::assignment::Assignment;
use crate::engine::cycle::Cycle;
use crate::engine::greedy;
use crate::model::GroupId;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How an exact tier ended: the bound proven on it (maximized, weighted as the tier's
/// objective); `proven` when the bound meets its value.
#[derive(Clone, Debug)]
pub(super) struct TierOutcome {
    /// Index into `CycleModel::tiers()`.
    pub tier: usize,
    /// `INF` when nothing bounds the tier.
    pub bound: f64,
    pub proven: bool,
}

/// Progress shared with the caller: the best verified solution so far, and what is proven.
#[derive(Clone, Default)]
pub(super) struct Progress {
    pub values: Option<Vec<f64>>,
    /// The relative gap of the tier left open, weighted as that tier (1 while nothing
    /// bounds it).
    pub gap: f64,
    pub tiers_done: Vec<String>,
    /// Per entry of `tiers_done`: milliseconds from the start of the solve.
    pub tier_millis: Vec<u64>,
    /// Per entry of `tiers_done`: the tier's value, as fixed before the next tier (what
    /// `export-lp --tier K --fix` takes to replay tier K).
    pub tier_values: Vec<f64>,
    /// The exact tiers that ended (fixed or stopped), in order.
    pub outcomes: Vec<TierOutcome>,
    pub nodes: i64,
    /// The work limit ran out before the last tier ended.
    pub work_spent: bool,
    /// Work units the tiers' HiGHS runs took (deterministic mode).
    pub work_used: u64,
    /// The deadline or a cancel came before a tier started.
    pub cut_short: bool,
    pub term1_bound: Option<f64>,
    /// The tier the look-ahead worked on, and the term-1 value it held.
    pub look_ahead: Option<(String, f64)>,
    /// The running exact tier: its index, HiGHS's live state (dual bound, latest
    /// improving solution) and the ceiling known before it started.
    pub live: Option<(usize, Arc<LiveRun>)>,
    /// Per model component: a bound known before the tiers (a hand-off's proof), in row
    /// form (an eviction row: minus the pods). Empty or `None`: nothing known.
    pub known: Vec<Option<i64>>,
}

impl Progress {
    /// Records a finished tier: its name, when it ended, the value it was fixed at.
    pub(super) fn tier_done(&mut self, name: String, start: Instant, value: f64) {
        self.tiers_done.push(name);
        self.tier_millis.push(start.elapsed().as_millis() as u64);
        self.tier_values.push(value);
    }
}

/// The least patience of the term-1 search before the look-ahead. Measured at 2 s budgets
/// (18 instances, interleaved): with a quarter of the time left alone, about 0.4 s, the
/// look-ahead placed fewer groups than without it on 6 (the search's term-1 gains came
/// further apart than that) and more on none; at 10 s, with about 2.1 s, on none of 36 runs.
const LOOK_AHEAD_MIN_PATIENCE: Duration = Duration::from_secs(2);

/// The longest head start of the search on a tier with a known ceiling (see
/// `solve_beside_search`); at most a quarter of the time left.
const HEAD_START: Duration = Duration::from_secs(2);

/// The same objective terms: `a` and `b` name the same columns with the same weights.
fn same_terms(a: &[(usize, f64)], b: &[(usize, f64)]) -> bool {
    let sorted = |v: &[(usize, f64)]| {
        let mut v = v.to_vec();
        v.sort_by_key(|e| e.0);
        v
    };
    let (a, b) = (sorted(a), sorted(b));
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.0 == y.0 && x.1 == y.1)
}

/// Term 1 alone with the relaxation's weights, and its aggregated relaxation bound: the
/// gap that can be reported even if the full model never gets through its first LP.
struct Term1 {
    coefs: Vec<(usize, f64)>,
    magnitude: f64,
    bound: Option<f64>,
}

impl Term1 {
    fn value(&self, v: &Option<Vec<f64>>) -> f64 {
        v.as_ref().map(|v| tier_value(&self.coefs, v)).unwrap_or(0.0)
    }
    /// The relaxation bound, if it is exact enough to prove with (weights in range).
    fn usable_bound(&self) -> Option<f64> {
        self.bound.filter(|_| self.magnitude <= milp::EXACT_MAGNITUDE)
    }
}

/// What a tier's solve produced: HiGHS's result, the search's best, the look-ahead's
/// best, and the live state that bounds the tier.
struct Solved<'t> {
    res: MipResult,
    lns_best: Option<Vec<f64>>,
    ahead: Option<(&'t Tier, Vec<f64>)>,
    live: Arc<LiveRun>,
    /// The bound known before the tier started (term 1's relaxation), if it applies.
    ceiling: Option<f64>,
    deadline: Instant,
}

/// The state of the tier loop.
struct Run<'a> {
    cycle: &'a Cycle<'a>,
    model: &'a CycleModel,
    progress: &'a Mutex<Progress>,
    say: &'a Say,
    /// The start of the solve (for the times reported) and of the tiers.
    start: Instant,
    started: Instant,
    deadline: Instant,
    rel_gap: f64,
    tiers: &'a [Tier],
    /// The model with every finished tier fixed (floor rows).
    mip: Mip,
    incumbent: Option<Vec<f64>>,
    term1: Term1,
    exact_done: usize,
    proven: bool,
    /// Work units left of `options.workLimit` (deterministic mode): each HiGHS run costs
    /// its work (`MipResult::work`: nodes and simplex iterations); the tiers stop when
    /// none is left.
    work_left: Option<u64>,
    /// Per component: its optimal value is known and the incumbent has it (a prefix of
    /// the components, in objective order, from [`Progress::known`]); held by a floor row.
    settled: Vec<bool>,
    /// See [`Progress::known`].
    known: Vec<Option<i64>>,
    /// See [`Progress::gap`].
    gap: f64,
}

/// Solves the tiers of `model` in order until the last or the deadline; the results are
/// in `progress`.
pub(super) fn run_tiers(
    cycle: &Cycle,
    model: &CycleModel,
    progress: &Mutex<Progress>,
    (start, deadline): (Instant, Instant),
    rel_gap: f64,
    say: &Say,
) {
    let tiers = model.tiers();
    let mut run = Run::new(cycle, model, &tiers, progress, (start, deadline), rel_gap, say);
    for ti in 0..run.tiers.len() {
        if Instant::now() >= deadline || cycle.cancel.is_cancelled() || run.work_left == Some(0) {
            let mut p = progress.lock().unwrap();
            if run.work_left == Some(0) {
                p.work_spent = true;
            } else {
                p.cut_short = true;
            }
            drop(p);
            run.stopped_before(ti);
            break;
        }
        if run.tiers[ti].exact && run.exact_done > 0 {
            run.repack_before(ti);
        }
        if run.proven_without_solver(ti) {
            continue;
        }
        let solved = run.solve(ti);
        if !run.conclude(ti, solved) {
            break;
        }
    }
    progress.lock().unwrap().gap = run.gap;
}

impl<'a> Run<'a> {
    fn new(
        cycle: &'a Cycle<'a>,
        model: &'a CycleModel,
        tiers: &'a [Tier],
        progress: &'a Mutex<Progress>,
        (start, deadline): (Instant, Instant),
        rel_gap: f64,
        say: &'a Say,
    ) -> Run<'a> {
        let started = Instant::now();
        let mut mip = model.mip.clone();
        let (incumbent, known) = {
            let p = progress.lock().unwrap();
            (p.values.clone(), p.known.clone())
        };
        let settled = settle_known(model, &mut mip, &known, incumbent.as_deref());
        let term1_settled = model.components.iter().zip(&settled).all(|(c, &s)| s || c.term != Term::Placed);
        // As a cut in the full model (`Diagnostics::cut`) the relaxation bound is valid
        // but left out by default: over flat-256 seeds 1-25, without it term 1 was proven
        // within 10 s on 21 of 25 against 16 (models/cycle.md 9).
        let (by_group, coefs, magnitude) = model.term1_weights(cycle);
        let bound_deadline = if cycle.work.is_some() {
            deadline
        } else {
            Instant::now() + (deadline.saturating_duration_since(Instant::now()) / 5).min(Duration::from_secs(2))
        };
        let (bound, work) = if term1_settled { (None, 0) } else { bound::term1_bound(cycle, &by_group, bound_deadline) };
        let term1 = Term1 { bound, coefs, magnitude };
        if let Some(ub) = term1.bound {
            let inc = term1.value(&incumbent);
            say.line(format_args!("term-1 relaxation bound {ub} (warm start {inc})"));
            let mut p = progress.lock().unwrap();
            p.gap = relative_gap(ub, inc);
            p.term1_bound = Some(ub);
            drop(p);
            if term1.magnitude <= milp::EXACT_MAGNITUDE && cycle.diag.cut {
                mip.add_row(-highs::INF, ub + 0.5, term1.coefs.clone());
            }
        }
        Run {
            cycle,
            model,
            progress,
            say,
            start,
            started,
            deadline,
            rel_gap,
            tiers,
            mip,
            incumbent,
            term1,
            exact_done: 0,
            proven: true,
            work_left: cycle.work.map(|w| w.saturating_sub(work)),
            settled,
            known,
            gap: 0.0,
        }
    }

    /// The deadline came before tier `ti` started: if it is exact, it is recorded as
    /// stopped with the best bound known for it (the relaxation's, for term 1 alone).
    fn stopped_before(&mut self, ti: usize) {
        let tier = &self.tiers[ti];
        if !tier.exact {
            return;
        }
        self.proven = false;
        if self.exact_done == 0 {
            // Nothing of the full model settled yet: the relaxation's gap.
            self.gap = self.relaxation_gap().unwrap_or(1.0);
        }
        if self.incumbent.is_none() {
            return;
        }
        let bound = self.ceiling_of(ti).unwrap_or(highs::INF);
        self.progress.lock().unwrap().outcomes.push(TierOutcome { tier: ti, bound, proven: false });
    }

    /// The incumbent's gap to the term-1 relaxation bound, if there is one.
    fn relaxation_gap(&self) -> Option<f64> {
        self.term1.bound.map(|ub| relative_gap(ub, self.term1.value(&self.incumbent)))
    }

    /// The bound known on tier `ti` before solving it: term 1's relaxation bound, when the
    /// tier is term 1 alone with the same weights, and the weighted sum of its components'
    /// known bounds, when each has one (lexicographic weights: a decision that reaches the
    /// sum has every component at its bound, each valid once the ones before it are).
    fn ceiling_of(&self, ti: usize) -> Option<f64> {
        let tier = &self.tiers[ti];
        let relaxation = self.term1.usable_bound().filter(|_| same_terms(&tier.coefs, &self.term1.coefs));
        match (relaxation, self.known_ceiling(ti)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The weighted sum of tier `ti`'s known bounds, when each component has one.
    fn known_ceiling(&self, ti: usize) -> Option<f64> {
        let tier = &self.tiers[ti];
        let sum: Option<f64> =
            tier.components.iter().zip(&tier.weights).map(|(&c, w)| self.known.get(c).copied().flatten().map(|b| w * b as f64)).sum();
        sum.filter(|_| tier.exact)
    }

    /// Before a later proven tier: re-place the groups the incumbent places with the
    /// greedy heuristics (fewer evictions, more elastic pods); kept only if every row so
    /// far holds (so the earlier tiers keep their optimum) and this tier or a later one
    /// gets better.
    fn repack_before(&mut self, ti: usize) {
        let Some(inc) = self.incumbent.as_ref() else { return };
        let later: Vec<&Tier> = self.tiers[ti..].iter().filter(|t| t.exact).collect();
        // At most a quarter of the time left: at 1,024 nodes one candidate can take most
        // of a second (models/cycle.md 9).
        let until = self.cycle.work.is_none().then(|| Instant::now() + self.deadline.saturating_duration_since(Instant::now()) / 4);
        if let Some(better) = repack(self.cycle, self.model, &self.mip, inc, &later, until) {
            self.incumbent = Some(better);
            self.progress.lock().unwrap().values = self.incumbent.clone();
        }
    }

    /// Proven without a solver: the incumbent reaches the largest value the column bounds
    /// allow (an `evicted@` tier with no eviction), or the tier is term 1 alone and the
    /// incumbent meets the relaxation bound. Then the tier is fixed and true returned.
    fn proven_without_solver(&mut self, ti: usize) -> bool {
        let tier = &self.tiers[ti];
        let Some(inc) = self.incumbent.as_ref() else { return false };
        let val = tier_value(&tier.coefs, inc);
        let top = || tier.coefs.iter().map(|&(c, a)| (a * self.mip.col_lower[c]).max(a * self.mip.col_upper[c])).sum::<f64>();
        let how = if tier.exact && self.rel_gap == 0.0 && val >= top() - 0.5 {
            "column bounds"
        } else if tier.is(Term::Placed) && self.term1.usable_bound().is_some_and(|ub| self.term1.value(&self.incumbent) >= ub - 0.5) {
            "relaxation bound"
        } else if tier.exact && tier.components.iter().all(|&c| self.settled[c]) {
            "decomposition engine's bound"
        } else {
            return false;
        };
        self.mip.add_row(val.round() - 0.5, highs::INF, tier.coefs.clone());
        fix_components(self.model, &mut self.mip, tier, inc);
        let mut p = self.progress.lock().unwrap();
        p.tier_done(format!("{} (proven by the {how})", tier.names.join("+")), self.start, val);
        // `+ 0.0`: an `evicted@` tier's maximum is -0.0, printed as 0.
        self.say.line(format_args!("tier {}: proven by the {how}, value {}", tier.names.join("+"), val + 0.0));
        if tier.exact {
            p.outcomes.push(TierOutcome { tier: ti, bound: val, proven: true });
            self.exact_done += 1;
            p.gap = self.gap;
        }
        true
    }

    /// Tier `ti` with HiGHS, and on large models the neighbourhood search (beside HiGHS,
    /// or after it in deterministic mode) and the look-ahead to the next eviction tier.
    fn solve(&mut self, ti: usize) -> Solved<'a> {
        let cycle = self.cycle;
        let tier: &'a Tier = &self.tiers[ti];
        self.mip.col_cost.iter_mut().for_each(|c| *c = 0.0);
        for &(c, v) in &tier.coefs {
            self.mip.col_cost[c] = v;
        }
        // While this tier runs, what is proven is what HiGHS's bound says: published, so a
        // caller that stops waiting at the deadline reports an honest bound. Term 1 alone,
        // with the relaxation's weights: its bound is known before HiGHS starts, and a
        // solution that meets it (from HiGHS or the search) ends the tier.
        let ceiling = self.ceiling_of(ti);
        let live = Arc::new(ceiling.map_or_else(LiveRun::default, LiveRun::with_ceiling));
        if tier.exact {
            let mut p = self.progress.lock().unwrap();
            p.live = Some((ti, Arc::clone(&live)));
            // Before any bound of the full model: the relaxation's, if any.
            p.gap = if self.exact_done == 0 { self.relaxation_gap().unwrap_or(1.0) } else { 1.0 };
        }
        // Term 4 is a tie-break: it may not hold the answer back for long once terms 1-3
        // are settled (a quarter of the time spent so far, between 200 ms and 1 s).
        let tier_deadline = if tier.exact || cycle.work.is_some() {
            self.deadline
        } else {
            let spent = Instant::now().saturating_duration_since(self.started);
            self.deadline.min(Instant::now() + (spent / 4).clamp(Duration::from_millis(200), Duration::from_secs(1)))
        };
        let stop = Arc::new(AtomicBool::new(false));
        let params = MipParams {
            rel_gap: if tier.exact { self.rel_gap } else { 1e-3 },
            // Objectives are integer-valued: a bound within 1 of the incumbent proves it.
            abs_gap: if tier.exact { 0.999 } else { 1e-6 },
            live: Some(Arc::clone(&live)),
            stop: Some(Arc::clone(&stop)),
            cancel: Some(Arc::clone(cycle.cancel.flag())),
            // Only what beats the incumbent: HiGHS prunes and fixes columns by reduced cost
            // against it from the start instead of after its own first good solution
            // (flat-256 seed 4, term-3 bound after 10 s: 26 287 -> 23 947).
            beat_start: tier.exact && self.rel_gap == 0.0 && !cycle.diag.no_cutoff,
            ..MipParams::of_cycle(tier_deadline, 0.0, 0.0, cycle).with_work(self.work_left)
        };
        // The incumbent is not handed to HiGHS (see highs.rs); its value goes in as a row
        // instead, so HiGHS prunes what cannot beat it. Exact: the incumbent itself
        // satisfies the row, and the row never cuts a better solution.
        let floor_here = match cycle.diag.floor {
            crate::options::FloorRows::None => false,
            crate::options::FloorRows::All => tier.exact,
            crate::options::FloorRows::Term1 => tier.exact && tier.is(Term::Placed),
        };
        let floor_row = self.incumbent.as_ref().filter(|_| floor_here).map(|v| {
            let val = tier_value(&tier.coefs, v);
            self.mip.add_row(val.round() - 0.5, highs::INF, tier.coefs.clone());
            self.mip.rows.len() - 1
        });
        // Large models: a neighbourhood search looks for a better incumbent meanwhile
        // (lns.rs), and stops HiGHS once it meets HiGHS's bound. Measured with the first
        // exact tier included: flat-256 (25 seeds) 720 -> 741 groups placed at 2 s and
        // 781 -> 787 at 10 s, flat-1024 (5 seeds, 10 s) 340 -> 348 (models/cycle.md 9).
        let lns_start = self.incumbent.clone().filter(|_| tier.exact && self.mip.num_cols() >= lns::MIN_COLUMNS && !cycle.diag.no_lns);
        // Terms 1-2 only, with `Diagnostics::min_pods`: minimum pods per placed group
        // (exact, see the method). Off by default: it made HiGHS faster on four flat-256
        // seeds, and slower at the tail of 25 seeds (models/cycle.md 9).
        let minimum_only =
            cycle.diag.min_pods && matches!(tier.term, Term::Placed | Term::Evicted) && self.model.minimum_pods_only(&mut self.mip, true);
        let ahead = lns_start.as_deref().and_then(|start| self.look_ahead_tier(ti, start));
        let patience = ahead.map(|_| {
            cycle
                .diag
                .look_ahead_patience
                .unwrap_or((self.deadline.saturating_duration_since(Instant::now()) / 4).max(LOOK_AHEAD_MIN_PATIENCE))
        });
        let (res, lns_best, ahead) = loop {
            let (res, lns_best, ahead_best) = if cycle.work.is_some() {
                self.solve_then_search(ti, &params, lns_start.as_deref(), ahead)
            } else {
                self.solve_beside_search(ti, &params, lns_start.as_deref(), ahead.zip(patience))
            };
            // HiGHS's answer overflows a capacity row it sees only scaled (4.7): the same
            // tier again, with those rows sharpened so that HiGHS sees the overflow too.
            // Without this the tier can never be proven (models/cycle.md 10, item 4).
            if milp::verify_rows(&self.mip, &res.values).is_none()
                && Instant::now() < tier_deadline
                && milp::sharpen_broken_rows(&mut self.mip, &res.values) > 0
            {
                self.say.line(format_args!(
                    "tier {}: a solution overflowed a capacity row by less than HiGHS's tolerance; rows sharpened, solving again",
                    tier.names.join("+")
                ));
                stop.store(false, Ordering::Relaxed);
                continue;
            }
            break (res, lns_best, ahead.zip(ahead_best));
        };
        if minimum_only {
            self.model.minimum_pods_only(&mut self.mip, false);
        }
        if let Some(i) = floor_row {
            self.mip.rows.remove(i);
        }
        Solved { res, lns_best, ahead, live, ceiling, deadline: tier_deadline }
    }

    /// Look-ahead: in the term-1 tier, once the search has stalled, the next exact tier if
    /// it is an eviction tier the incumbent pays in. The search then moves on to it with
    /// term 1 held at the best value found (a floor row) while HiGHS goes on with term 1:
    /// if HiGHS proves term 1 at that value, the eviction tier starts from the
    /// look-ahead's placement; if it finds a better term 1, that wins; at the deadline the
    /// decision has term 1's best value and fewer evictions. Nothing is claimed proven that
    /// was not. Why: at 1,024 nodes term 1 takes the whole budget, so the eviction tier
    /// never ran and the decision kept every eviction of the term-1 incumbent
    /// (models/cycle.md 6.7).
    fn look_ahead_tier(&self, ti: usize, start: &[f64]) -> Option<&'a Tier> {
        let tier = &self.tiers[ti];
        if !tier.is(Term::Placed) || self.rel_gap > 0.0 || self.cycle.diag.no_look_ahead {
            return None;
        }
        let next = self.tiers[ti + 1..].iter().find(|t| t.exact)?;
        (next.is(Term::Evicted) && tier_value(&next.coefs, start) < -0.5).then_some(next)
    }
}

impl<'a> Run<'a> {
    /// HiGHS and the search at once (the search on the second core): the search stops
    /// HiGHS when it meets HiGHS's bound, and moves on to the look-ahead when it stalls.
    fn solve_beside_search(
        &self,
        ti: usize,
        params: &MipParams,
        lns_start: Option<&[f64]>,
        ahead: Option<(&'a Tier, Duration)>,
    ) -> (MipResult, Option<Vec<f64>>, Option<Vec<f64>>) {
        let (cycle, model, tier) = (self.cycle, self.model, &self.tiers[ti]);
        let (stop, live) = (params.stop.as_ref().expect("a tier run has a stop flag"), params.live.as_ref().expect("and a live state"));
        let (ahead, patience) = (ahead.map(|a| a.0), ahead.map(|a| a.1));
        let mip = &self.mip;
        // A ceiling known before the tier (a hand-off's bounds): the search gets a head
        // start, and HiGHS is not started if it meets the ceiling meanwhile. Why: HiGHS
        // does not poll its interrupt in presolve, which took 5+ s on openb-256, so a
        // search that proves the tier early could not end it.
        let head_start = self.known_ceiling(ti).map(|_| (self.deadline.saturating_duration_since(Instant::now()) / 4).min(HEAD_START));
        std::thread::scope(|s| {
            let search = lns_start.map(|start| {
                s.spawn(move || {
                    let mut publish = |v: &[f64]| self.progress.lock().unwrap().values = Some(v.to_vec());
                    let until = lns::Until {
                        deadline: self.deadline,
                        stop,
                        live,
                        fixed_groups_first: !cycle.diag.no_fixed_groups,
                        patience,
                        work: None,
                    };
                    let found = lns::search(model, mip, tier, start, until, &mut publish);
                    let next = ahead.filter(|_| !stop.load(Ordering::Relaxed) && Instant::now() < self.deadline);
                    let ahead_best = next.and_then(|next| {
                        let from = found.as_deref().unwrap_or(start);
                        self.announce_look_ahead(tier, next, from, patience);
                        lns::look_ahead(model, mip, (tier, next), from, (self.deadline, stop, None), &mut publish)
                    });
                    (found, ahead_best)
                })
            });
            if let (Some(wait), Some(h)) = (head_start, search.as_ref()) {
                let until = Instant::now() + wait;
                while Instant::now() < until && !stop.load(Ordering::Relaxed) && !h.is_finished() {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            let res = if stop.load(Ordering::Relaxed) {
                // Met the ceiling: proven without HiGHS (the conclusion reads the ceiling).
                highs::MipResult {
                    status: MipStatus::Interrupted,
                    values: Vec::new(),
                    objective: f64::NAN,
                    dual_bound: highs::INF,
                    nodes: 0,
                    lp_iterations: 0,
                }
            } else {
                highs::solve(mip, self.incumbent.as_deref(), params)
            };
            stop.store(true, Ordering::Relaxed);
            let (found, ahead_best) = search.and_then(|h| h.join().ok()).unwrap_or_default();
            (res, found, ahead_best)
        })
    }

    /// Deterministic mode: HiGHS to its node limit, then the search from the better of its
    /// answer and the incumbent, then (term 1 still open) the look-ahead, each within the
    /// work limit; nothing depends on which thread is faster.
    fn solve_then_search(
        &self,
        ti: usize,
        params: &MipParams,
        lns_start: Option<&[f64]>,
        ahead: Option<&'a Tier>,
    ) -> (MipResult, Option<Vec<f64>>, Option<Vec<f64>>) {
        let (cycle, model, tier) = (self.cycle, self.model, &self.tiers[ti]);
        let res = highs::solve(&self.mip, self.incumbent.as_deref(), params);
        let Some(start) = lns_start else { return (res, None, None) };
        let live = params.live.as_ref().expect("a tier run has a live state");
        if res.status == MipStatus::Optimal || live.bound() < tier_value(&tier.coefs, start) + 0.999 {
            return (res, None, None);
        }
        let start = match milp::verify_rows(&self.mip, &res.values) {
            Some(v) if tier_value(&tier.coefs, &v) > tier_value(&tier.coefs, start) + 0.5 => v,
            _ => start.to_vec(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let mut publish = |v: &[f64]| self.progress.lock().unwrap().values = Some(v.to_vec());
        let until = lns::Until {
            deadline: self.deadline,
            stop: &stop,
            live,
            fixed_groups_first: !cycle.diag.no_fixed_groups,
            patience: None,
            work: cycle.work,
        };
        let found = lns::search(model, &self.mip, tier, &start, until, &mut publish);
        let ahead_best =
            ahead.filter(|_| live.bound() >= tier_value(&tier.coefs, found.as_deref().unwrap_or(&start)) + 0.999).and_then(|next| {
                let from = found.as_deref().unwrap_or(&start);
                self.announce_look_ahead(tier, next, from, None);
                lns::look_ahead(model, &self.mip, (tier, next), from, (self.deadline, &stop, cycle.work), &mut publish)
            });
        (res, found, ahead_best)
    }

    fn announce_look_ahead(&self, tier: &Tier, next: &Tier, from: &[f64], patience: Option<Duration>) {
        let held_at = tier_value(&tier.coefs, from);
        self.progress.lock().unwrap().look_ahead = Some((next.names.join("+"), held_at));
        let why = match patience {
            Some(p) => format!("the search stalled (patience {} ms)", p.as_millis()),
            None => "term 1 is still open".to_string(),
        };
        self.say.line(format_args!(
            "tier {}: {why}; the search works on {} with this tier held at {held_at}, while HiGHS goes on",
            tier.names.join("+"),
            next.names.join("+")
        ));
    }

    /// Takes the best verified solution of tier `ti`, decides whether the tier is proven,
    /// and fixes it before the next; false when the tier loop must end (an exact tier
    /// left open, or nothing to fix it at).
    fn conclude(&mut self, ti: usize, solved: Solved<'a>) -> bool {
        let tier = &self.tiers[ti];
        let Solved { res, lns_best, ahead, live, ceiling, deadline } = solved;
        let improved = self.adopt(ti, &res, lns_best, ahead);
        if let Some(w) = self.work_left.as_mut() {
            *w = w.saturating_sub(res.work());
            let mut p = self.progress.lock().unwrap();
            p.work_spent |= *w == 0 && ti + 1 < self.tiers.len();
            p.work_used += res.work();
        }
        let value = self.incumbent.as_ref().map(|v| tier_value(&tier.coefs, v));
        {
            let mut p = self.progress.lock().unwrap();
            p.values = self.incumbent.clone();
            p.nodes += res.nodes;
        }
        // Proven when HiGHS says so with a solution we verified, or when a bound alone is
        // within 1 of our incumbent (integer objective): HiGHS's, or the ceiling known
        // before the tier; e.g. interrupted with nothing better found while the bound
        // already meets the incumbent.
        let bound = live.cap(res.dual_bound);
        let bound_meets = tier.exact && self.rel_gap == 0.0 && bound.is_finite() && value.is_some_and(|v| bound < v + 0.999);
        let done = (res.status == MipStatus::Optimal && improved) || bound_meets;
        if self.cycle.diag.debug {
            eprintln!(
                "[{} ms] tier {}: status {:?}, improved {improved}, value {value:?}, bound {}",
                self.started.elapsed().as_millis(),
                tier.names.join("+"),
                res.status,
                res.dual_bound
            );
        }
        self.say_outcome(tier, &res, (value, bound, done), ceiling, deadline);
        if tier.exact {
            let Some(val) = value else {
                self.proven = false;
                return false;
            };
            // Within a relative gap (`options.relativeGap`), a tier is fixed at its value
            // but bounded by HiGHS's bound: proven only when the two meet.
            let gap_here = if res.dual_bound.is_finite() { Some(relative_gap(res.dual_bound, val)) } else { None };
            let proven = done && (self.rel_gap == 0.0 || gap_here == Some(0.0));
            let tier_bound = if proven {
                val
            } else if bound.is_finite() {
                bound.max(val)
            } else {
                highs::INF
            };
            let mut p = self.progress.lock().unwrap();
            p.outcomes.push(TierOutcome { tier: ti, bound: tier_bound, proven });
            drop(p);
            if !done {
                self.proven = false;
                // No bound from HiGHS (stopped before its first LP): nothing proven but
                // the relaxation's gap, for term 1 alone.
                self.gap = match gap_here {
                    Some(g) => g,
                    None if tier.is(Term::Placed) => self.relaxation_gap().unwrap_or(1.0),
                    None => 1.0,
                };
                return false;
            }
            if self.rel_gap > 0.0 {
                self.gap = self.gap.max(gap_here.unwrap_or(0.0));
            }
        }
        let Some(val) = value else { return false };
        // Fix the tier at its value before the next one.
        let exact = tier.exact && self.rel_gap == 0.0;
        let floor = if exact { val.round() - 0.5 } else { val - 1e-6 * val.abs().max(1.0) };
        self.mip.add_row(floor, highs::INF, tier.coefs.clone());
        if exact {
            fix_components(self.model, &mut self.mip, tier, self.incumbent.as_ref().unwrap());
        }
        let mut p = self.progress.lock().unwrap();
        p.live = None;
        p.tier_done(tier.names.join("+"), self.start, val);
        if tier.exact {
            self.exact_done += 1;
            // Terms 1-3 are settled once the last exact tier is: term 4 may still run
            // into the deadline without changing the status.
            p.gap = self.gap;
        }
        true
    }

    /// The incumbent after tier `ti`: HiGHS's answer if verified and not worse, the
    /// search's if strictly better (HiGHS's own answer wins ties, so a tier HiGHS proves
    /// ends with the same solution with or without the search), the look-ahead's if it
    /// keeps this tier's value with fewer evictions; then without unneeded evictions and
    /// topped up with elastic pods. Returns whether HiGHS's answer was taken.
    fn adopt(&mut self, ti: usize, res: &MipResult, lns_best: Option<Vec<f64>>, ahead: Option<(&Tier, Vec<f64>)>) -> bool {
        let tier = &self.tiers[ti];
        let t = |v: &[f64]| tier_value(&tier.coefs, v);
        // Checked against the rows that hold earlier tiers too.
        let verified = milp::verify_rows(&self.mip, &res.values);
        let improved = match (&verified, &self.incumbent) {
            (Some(v), Some(old)) => t(v) >= t(old) - 1e-6,
            (Some(_), None) => true,
            _ => false,
        };
        if improved {
            self.incumbent = verified;
        }
        if let Some(l) = lns_best {
            if self.incumbent.as_ref().is_none_or(|inc| t(&l) > t(inc) + 0.5) {
                self.incumbent = Some(l);
            }
        }
        if let Some((next, la)) = ahead {
            let n = |v: &[f64]| tier_value(&next.coefs, v);
            if self.incumbent.as_deref().is_none_or(|inc| t(&la) >= t(inc) - 0.5 && n(&la) > n(inc) + 0.5) {
                self.incumbent = Some(la);
            }
        }
        // Published at once: the caller may stop waiting at the deadline while the steps
        // below still run, and must not fall back to an older incumbent (measured: a
        // flat-1024 cycle returned its warm start, 13 groups fewer, when the assignment
        // read-back was slow).
        self.progress.lock().unwrap().values = self.incumbent.clone();
        // No incumbent keeps evictions it does not need (term 2 would only get better).
        if let Some(v) = self.incumbent.as_mut() {
            self.model.drop_unneeded_evictions_in(self.cycle, &self.mip, v);
        }
        // Before a tier that counts elastic pods, top the incumbent up with them.
        if tier.exact {
            if let Some(better) = self.incumbent.as_ref().and_then(|v| fill_elastic_values(self.cycle, self.model, &self.mip, v)) {
                self.incumbent = Some(better);
            }
        }
        improved
    }

    fn say_outcome(
        &self,
        tier: &Tier,
        res: &MipResult,
        (value, bound, done): (Option<f64>, f64, bool),
        ceiling: Option<f64>,
        deadline: Instant,
    ) {
        if self.say.sink.is_none() {
            return;
        }
        let how = match res.status {
            MipStatus::Optimal if tier.exact => "proven",
            _ if done && ceiling.is_some_and(|c| value.is_some_and(|v| c < v + 0.999)) => {
                "proven (the incumbent meets the relaxation bound)"
            }
            _ if done => "proven (the incumbent meets HiGHS's bound)",
            MipStatus::Optimal => "best effort, done",
            _ if !tier.exact => "best effort, its time slice ended",
            _ if Instant::now() >= deadline => "stopped by the deadline",
            _ => "stopped",
        };
        let value = value.map_or("none".to_string(), |v| v.to_string());
        let bound = if bound.is_finite() { bound.to_string() } else { "none".to_string() };
        self.say.line(format_args!("tier {}: {how}, value {value}, bound {bound}", tier.names.join("+")));
    }
}

/// The components whose optimal value `known` gives and `inc` reaches, in objective order
/// until the first that is not; each gets a floor row in `mip` (any lexicographic optimum
/// has it). Known bounds are valid only once the rows before them are at their optimum,
/// hence the prefix.
fn settle_known(model: &CycleModel, mip: &mut highs::Mip, known: &[Option<i64>], inc: Option<&[f64]>) -> Vec<bool> {
    let mut settled = vec![false; model.components.len()];
    let Some(inc) = inc else { return settled };
    for (i, c) in model.components.iter().enumerate().filter(|(_, c)| c.exact) {
        let Some(b) = known.get(i).copied().flatten() else { break };
        let v = tier_value(&c.coefs, inc).round() as i64;
        if v < b {
            break;
        }
        mip.add_row(v as f64 - 0.5, highs::INF, c.coefs.clone());
        settled[i] = true;
    }
    settled
}

/// After a proven tier (zero gap) made of several components: each component fixed at
/// the incumbent's value, `c_i = c_i(inc)`. Exact: the incumbent is a lexicographic
/// maximizer of the tier's components, so a solution with `W >= W(inc)` (the fixing row)
/// has the same value in every component (at the first component where it differed it
/// would be lower, and by the safe weights `W` would drop by at least 1). The rows cut
/// nothing the fixing row keeps, and give the LP the per-level counts (e.g. groups placed
/// per priority) instead of one weighted sum it can trade fractionally between levels.
fn fix_components(model: &CycleModel, mip: &mut highs::Mip, tier: &Tier, inc: &[f64]) {
    if tier.components.len() < 2 {
        return;
    }
    for &i in &tier.components {
        let c = &model.components[i];
        let v = tier_value(&c.coefs, inc).round();
        mip.add_row(v - 0.5, v + 0.5, c.coefs.clone());
    }
}

/// The incumbent's placed groups placed again by the greedy variants (no evictions) and
/// by the k8s-preempt order restricted to them, each topped up with elastic pods; the best
/// by the `later` tiers (lexicographically) if it satisfies every row of `mip` (so every
/// tier fixed so far) and beats the incumbent there. A heuristic: it only supplies
/// incumbents, never a proof. No candidate is started after `until` (`None`: every
/// candidate, in deterministic mode).
fn repack(cycle: &Cycle, model: &CycleModel, mip: &highs::Mip, inc: &[f64], later: &[&Tier], until: Option<Instant>) -> Option<Vec<f64>> {
    let a = model.assignment(cycle, inc);
    let placed: Vec<GroupId> = cycle.pending.iter().copied().filter(|&g| a.is_placed(g)).collect();
    let keep = |order: Vec<GroupId>| -> Vec<GroupId> { order.into_iter().filter(|g| placed.contains(g)).collect() };
    let orders = [keep(greedy::ffd_order(cycle)), keep(greedy::small_first_order(cycle))];
    let rank = greedy::tight_rank(cycle);
    // Candidates are built one at a time, in this order, until `until`: the incumbent
    // itself with fewer evictions; per group order, the greedy variants and the
    // k8s-preempt order with minimum pods only (elastic pods come from the fill below:
    // room the elastic pods would take can spare an eviction), then with elastic pods;
    // last the per-node preemption placements, the slowest.
    let mut cands: Vec<Box<dyn Fn() -> Assignment + '_>> = Vec::new();
    if !a.evicted.is_empty() {
        cands.push(Box::new(|| super::repair::reduce_evictions(cycle, &a)));
    }
    for order in &orders {
        for elastic in [false, true] {
            for node_rank in [None, Some(rank.as_slice())] {
                cands.push(Box::new(move || greedy::place_in_order_with(cycle, order, node_rank, elastic)));
            }
            if !cycle.victims.is_empty() {
                cands.push(Box::new(move || k8s_preempt::preempt_in_given_order(cycle, order, elastic).assignment));
            }
        }
    }
    if !cycle.victims.is_empty() {
        // Lowest priority first: groups that may evict little or nothing take the free
        // room, the ones above them make room by evicting.
        for order in &orders {
            let mut up = order.clone();
            up.sort_by_key(|&g| cycle.inst.groups[g].priority);
            cands.push(Box::new(move || super::repair::place_with_node_preemption(cycle, &up)));
            cands.push(Box::new(move || super::repair::place_with_node_preemption(cycle, order)));
        }
    }
    let key = |v: &[f64]| -> Vec<f64> { later.iter().map(|t| tier_value(&t.coefs, v)).collect() };
    let mut best_key = key(inc);
    let mut best = None;
    for make in cands {
        if until.is_some_and(|u| Instant::now() >= u) || cycle.cancel.is_cancelled() {
            break;
        }
        let mut c = make();
        if !c.evicted.is_empty() && placed.iter().all(|&g| c.is_placed(g)) {
            c = super::repair::reduce_evictions(cycle, &c);
        }
        if placed.iter().any(|&g| !c.is_placed(g)) {
            if cycle.diag.debug {
                eprintln!(
                    "repack candidate: places {} of {}, evicts {}",
                    placed.iter().filter(|&&g| c.is_placed(g)).count(),
                    placed.len(),
                    c.evicted.len()
                );
            }
            continue;
        }
        greedy::fill_elastic(cycle, &mut c);
        let Some(mut w) = super::milp::verify_rows(mip, &model.values_of(cycle, &c)) else {
            if cycle.diag.debug {
                eprintln!("repack candidate breaks a row of the model");
            }
            continue;
        };
        model.drop_unneeded_evictions_in(cycle, mip, &mut w);
        let k = key(&w);
        if cycle.diag.debug {
            eprintln!("repack candidate: {k:?} vs {best_key:?}");
        }
        // Integer-valued tiers: better means by at least one unit at the first difference.
        let better = k.iter().zip(&best_key).find(|(a, b)| (*a - *b).abs() > 0.5).is_some_and(|(a, b)| a > b);
        if better {
            best_key = k;
            best = Some(w);
        }
    }
    best
}

/// The incumbent with elastic pods added greedily, if that keeps every row of the model
/// (including the tiers already fixed) satisfied.
fn fill_elastic_values(cycle: &Cycle, model: &CycleModel, mip: &highs::Mip, v: &[f64]) -> Option<Vec<f64>> {
    let mut a = model.assignment(cycle, v);
    greedy::fill_elastic(cycle, &mut a);
    let w = model.values_of(cycle, &a);
    super::milp::verify_rows(mip, &w)
}
