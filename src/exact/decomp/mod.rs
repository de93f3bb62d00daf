//! The decomposition engine: column generation over node patterns, for cycles where the
//! compact MILP (`milp.rs`) is too large to solve or even to build (1,000+ nodes).
//!
//! `models/decomposition.md` is the reference: the aggregation of interchangeable groups
//! and nodes (§2), the pattern master (§3), the Lagrangian bound that is valid at every
//! round (§4), the tiers and the row bounds reported (§5), incumbents from the restricted
//! master (§6), and what the engine does not take (§7; the compact model does).
//!
//! Flow: the greedy start (no eviction; valid under every reading of rule 6) becomes the
//! first columns and the incumbent; then tier by tier (each term-1 level, each victim
//! priority, each term-3 level): column generation until exact pricing finds nothing or
//! the bound meets the incumbent; the MIP over the generated columns for a better
//! incumbent; proven tiers are fixed (a row) before the next; the first tier left open
//! ends the solve with its bound. The decision is decoded from the incumbent's columns,
//! checked with `tessera check` and this engine's own rule-6 check, and reported with
//! `bounds` for every proven row and the first open one. Under a work limit the phases
//! run in rounds of growing planned work that the limit only stops, so that a larger
//! limit never gives a worse decision; without one, a round that ends before the
//! deadline is followed by another on the time left.

mod budget;
mod devices;
mod master;
mod pricing;
mod problem;

use crate::engine::assemble::assemble_with;
use crate::engine::assignment::{beats, Assignment, NewPod};
use crate::engine::cycle::{Cycle, DeviceIds};
use crate::engine::explain::Proven;
use crate::engine::fragmentation::Fragmentation;
use crate::model::*;
use crate::options::{EngineChoice, Options};
use crate::wire::decision::{Bounds, Decision, EvictedBound, ExtraBound, PlacedBound, Status, StopReason};
use budget::Budget;
use devices::{pack, Packing};
use master::{ColKind, Component, Master, Objective};
use pricing::Pattern;
use problem::Problem;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Nodes from which the engine takes a cycle by itself (below, the compact model does;
/// `Diagnostics::engine` forces either).
pub const AUTO_NODES: usize = 1000;

/// Nodes from which a cycle with victims is handed off: this engine proves term 1 first,
/// the compact model continues ([`term1_handoff`]).
pub const HANDOFF_NODES: usize = 200;

/// The share of the budget (time, and work when a work limit is set) this engine gets in
/// a hand-off; it returns as soon as term 1 is proven.
pub const HANDOFF_SHARE: f64 = 0.5;

/// Under a work limit, the work the first round plans; each later round plans twice the
/// last (see the rounds in `solve`).
const FIRST_ROUND_WORK: u64 = 4;

/// Without a work limit, the share of the budget that must be left for another round
/// after one that ended early (see [`another_timed_round`]).
const EXTRA_ROUND_SHARE: f64 = 0.05;

/// The engine's decision for `inst`, or `None` when the compact model should decide the
/// cycle (not chosen by size or switch, or a rule the master does not express).
pub fn solve_if_chosen(inst: &Instance, cfg: &Options) -> Option<Decision> {
    let chosen = match cfg.diagnostics.engine {
        Some(EngineChoice::Compact | EngineChoice::Handoff) => false,
        Some(EngineChoice::Decomposition) => true,
        None => inst.nodes.len() >= AUTO_NODES,
    };
    if !chosen || !expressible(inst) {
        return None;
    }
    solve(inst, cfg, Scope::Full).map(|(d, _)| d)
}

/// What a hand-off passes to the compact model: this engine's best assignment (valid; its
/// term-1 rows are what it placed) and its row bounds (every proven row and the first open
/// one, of the tiers it ran).
pub struct Handoff {
    /// The decoded incumbent.
    pub assignment: Assignment,
    /// The decision's `bounds`: valid bounds on the lexicographic optimum's rows.
    pub bounds: Bounds,
    /// Time the engine took.
    pub millis: u64,
    /// Work units it took (0 without a work limit).
    pub work: u64,
}

/// Term 1 by this engine before the compact model takes the cycle: on cycles with victims
/// from [`HANDOFF_NODES`] nodes up to [`AUTO_NODES`], or when `Diagnostics::engine` asks
/// for it; once term 1 is proven, the eviction levels too, on the time it leaves. Why: at
/// a few hundred nodes with preemption the pattern master proves the term-1 levels that
/// the compact model's branch and bound leaves open, and its dives over which groups are
/// placed reach evictions the compact model's searches do not; the compact model goes on
/// from there (`models/decomposition.md` §1).
pub fn term1_handoff(inst: &Instance, cfg: &Options) -> Option<Handoff> {
    let forced = match cfg.diagnostics.engine {
        Some(EngineChoice::Handoff) => true,
        Some(_) => return None,
        None => false,
    };
    if !expressible(inst) || !(forced || (HANDOFF_NODES..AUTO_NODES).contains(&inst.nodes.len())) {
        return None;
    }
    let start = Instant::now();
    let (d, a) = solve(inst, cfg, Scope::Handoff { forced })?;
    let work = d.stats.work.unwrap_or(0);
    Some(Handoff { assignment: a, bounds: d.bounds.unwrap_or_default(), millis: start.elapsed().as_millis() as u64, work })
}

/// Rules the master expresses at the instance level (the rest: [`problem::unsupported`]).
fn expressible(inst: &Instance) -> bool {
    inst.queues.is_none() && !inst.options.yunikorn_preemption
}

/// What a solve covers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Every tier, with the whole budget.
    Full,
    /// The term-1 tiers, then the eviction tiers while every tier before is proven, with
    /// [`HANDOFF_SHARE`] of the budget; only cycles with victims unless `forced`.
    Handoff { forced: bool },
}

/// Per tier: what was reached.
#[derive(Clone, Debug)]
struct TierOutcome {
    comp: Component,
    value: f64,
    bound: f64,
    proven: bool,
    millis: u64,
    rounds: u64,
}

fn solve(inst: &Instance, cfg: &Options, scope: Scope) -> Option<(Decision, Assignment)> {
    let start = Instant::now();
    let share = if scope == Scope::Full { 1.0 } else { HANDOFF_SHARE };
    let budget = cfg.time_limit(inst).mul_f64(share);
    let hard = start + budget;
    let mut cycle = Cycle::new(inst);
    cycle.diag = Arc::new(cfg.diagnostics.clone());
    cycle.cancel = cfg.cancel.clone();
    cycle.work = cfg.work_limit(inst).map(|w| ((w as f64 * share) as u64).max(1));
    if problem::unsupported(&cycle).is_some() || (scope == (Scope::Handoff { forced: false }) && cycle.victims.is_empty()) {
        return None;
    }
    // Under a work limit the screening ends by its own work, the time only a safety net.
    let screen_until = if cycle.work.is_some() { hard } else { start + budget / 10 };
    let screening = super::prepare_topology(&mut cycle, screen_until);
    let prob = Problem::new(&cycle);
    if prob.nodes.iter().any(|k| k.units.len() > pricing::MAX_UNITS) {
        return None;
    }
    let say = |msg: std::fmt::Arguments| {
        if let Some(s) = &cfg.progress {
            s.say(&format!("[{} ms] {msg}", start.elapsed().as_millis()));
        }
    };
    say(format_args!(
        "decomposition: {} group classes for {} pending groups, {} node classes for {} nodes, {} victim units",
        prob.groups.len(),
        cycle.pending.len(),
        prob.nodes.len(),
        inst.nodes.len(),
        prob.units.len()
    ));
    // Warm start: the greedy variants (never evict).
    let warm = crate::engine::greedy::best_start(&cycle);
    // The decision's assembly after the deadline (explanations, check): rehearsed on the
    // warm start; the solve stops twice that much earlier.
    let rehearsal = Instant::now();
    let warm_decision = finish(&cycle, &warm, Status::Feasible, 1.0, Proven::Nothing);
    let _ = crate::check::check(inst, &warm_decision);
    let assembly = (rehearsal.elapsed() * 2 + Duration::from_millis(30)).min(budget / 4);
    let reserve = (budget / 40).clamp(Duration::from_millis(20), Duration::from_millis(250));
    let deadline = hard.checked_sub(assembly + reserve).unwrap_or(start).max(start);
    let mut b = Budget::new(deadline, cycle.work);

    let mut m = Master::new(&prob, super::highs::HighsSwitches::of(&cfg.diagnostics));
    let mut x = to_columns(&prob, &mut m, &warm).expect("the greedy start is valid in the master");
    let mut warm_from = "greedy";
    let mut k8s_raw = None;
    if !cycle.victims.is_empty() && (b.by_work() || deadline.saturating_duration_since(Instant::now()) > budget / 3) {
        let (raw, taken) = k8s_start(&prob, &mut m, &mut x, &say);
        k8s_raw = Some(raw);
        if taken {
            warm_from = "k8s-preempt";
        }
    }
    while x.len() < m.cols.len() {
        x.push(0.0);
    }
    say(format_args!("warm start ({warm_from}) places {}", warm_placed(&m, &x)));

    let comps = tiers_of(&prob);
    // Rounds. Without a work limit, a round on the whole budget (its phases take shares
    // of the time left), and more on the time left if it ends early. Under one, the
    // rounds plan FIRST_ROUND_WORK units, then twice as many, and so on, whatever the
    // limit; each continues from the columns, incumbent and proven tiers of the last, and
    // the limit only stops them. A larger limit thus replays a smaller one's path and goes
    // further: its decision is never worse.
    let mut search = Search {
        prob: &prob,
        m,
        x,
        comps,
        scope,
        outcomes: Vec::new(),
        all_proven: true,
        held: Vec::new(),
        earlier_bound: Vec::new(),
        domain_master: None,
        frag: Fragmentation::of(&cycle),
        outside: Outside::default(),
        rounds: 0,
        start,
    };
    // The best incumbent at the end of a round: a later round's never replaces it unless
    // lexicographically better (what makes the decision monotone in the limit).
    let mut best = search.x.clone();
    loop {
        let mut rb = b.planned(FIRST_ROUND_WORK << search.rounds.min(40));
        let round_start = Instant::now();
        search.rounds += 1;
        search.joint_term1(&mut rb, &say);
        search.tiers(&mut rb, screening.as_ref(), &say);
        b.charge(rb.used());
        search.keep_best(&mut best);
        let again = if b.by_work() { rb.used() > 0 } else { another_timed_round(scope, round_start, Instant::now(), deadline, budget) };
        if search.done() || !again || b.exhausted() || cycle.cancel.is_cancelled() {
            break;
        }
        search.reopen();
    }
    let (m, x, comps, outcomes, all_proven) = (&search.m, &search.x, &search.comps, &search.outcomes, search.all_proven);
    // Decode the incumbent.
    let t_finish = Instant::now();
    let hit = t_finish >= deadline;
    let a = decode(&prob, m, x);
    let placed_proven = prob.levels.iter().all(|&l| outcomes.iter().any(|o| o.comp == Component::Placed(l) && o.proven));
    let status = if all_proven && outcomes.len() == comps.len() && scope == Scope::Full { Status::Optimal } else { Status::Feasible };
    let gap = outcomes.iter().find(|o| !o.proven).map_or(0.0, |o| row_gap(o.bound, o.value));
    let proven = if status == Status::Optimal {
        Proven::All
    } else if placed_proven {
        Proven::Term1
    } else {
        Proven::Nothing
    };
    let decision = |a: &Assignment| {
        let mut d = finish(&cycle, a, status, gap, proven);
        d.bounds = Some(bounds_of(inst, outcomes));
        let report = crate::check::check(inst, &d);
        let own = rule6_violations(&cycle, a);
        (report.is_valid() && own.is_empty()).then_some(d).ok_or((report.violations.len(), own.len()))
    };
    // The groups the patterns left out that still fit, when the result stays valid.
    let mut filled = a.clone();
    let more = crate::engine::greedy::fill_unplaced(&cycle, &mut filled);
    let tried = (more > 0).then(|| decision(&filled).ok()).flatten().map(|mut d| {
        d.gap = open_row_gap(&d);
        d
    });
    say(format_args!("{more} more groups placed on the room left, {}", if tried.is_some() { "kept" } else { "not kept" }));
    // Safety: the decision must pass the validator and this engine's rule-6 check; else
    // the warm start (always valid) is returned, marked.
    let mut fallback = None;
    let (mut d, mut a) = match tried {
        Some(d) => (d, filled),
        None => match decision(&a) {
            Ok(d) => (d, a),
            Err((checked, own)) => {
                fallback = Some(format!("{checked} validator violations, {own} rule-6 violations"));
                (finish(&cycle, &warm, Status::Feasible, 1.0, Proven::Nothing), warm)
            }
        },
    };
    // The baseline as it came, when it is valid and better under terms 1-3: the repair
    // reads rule 6 node by node with a capped device packing (an unfinished packing counts
    // as no witness), and can unplace a group the baseline placed validly (preempt-1024
    // seed 1: 53 groups, 52 after the repair).
    // Likewise a refill kept outside the master ([`Outside`]).
    let others = [(k8s_raw, "baselineKept", "k8s-preempt"), (search.outside.0.take(), "refillKept", "outside the master")];
    for (other, key, what) in others {
        let Some(other) = other.filter(|o| beats(inst, &cycle.victims, o, &a)) else { continue };
        let mut cand = finish(&cycle, &other, Status::Feasible, 1.0, proven);
        if crate::check::check(inst, &cand).is_valid() && rule6_violations(&cycle, &other).is_empty() {
            cand.bounds = d.bounds.take();
            cand.gap = open_row_gap(&cand);
            d = cand;
            a = other;
            d.stats.other.insert(key.into(), what.into());
        }
    }
    d.stats.solver = Some("exact".into());
    d.stats.other.insert("engine".into(), "decomposition".into());
    d.stats.other.insert("finishMillis".into(), (t_finish.elapsed().as_millis() as u64).into());
    d.stats.other.insert("assemblyEstimateMillis".into(), (assembly.as_millis() as u64).into());
    d.stats.solve_millis = Some(start.elapsed().as_millis() as u64);
    search.record(&mut d);
    d.stats.warm_start = Some(format!("accepted ({warm_from})"));
    if screening.is_some() {
        d.stats.other.insert("topologyScreening".into(), true.into());
    }
    if let Some(why) = fallback {
        d.stats.other.insert("engineFallback".into(), why.into());
    }
    if hit {
        d.stats.deadline = Some("hit: returned the best verified incumbent".into());
    }
    if b.by_work() {
        d.stats.work = Some(b.used());
        d.stats.other.insert("workRounds".into(), search.rounds.into());
    } else if search.rounds > 1 {
        d.stats.other.insert("timedRounds".into(), search.rounds.into());
    }
    if status != Status::Optimal {
        d.stats.stopped_by = if cycle.cancel.is_cancelled() {
            Some(StopReason::Cancelled)
        } else if hit {
            Some(StopReason::Deadline)
        } else {
            b.work_spent().then_some(StopReason::WorkLimit)
        };
    }
    Some((d, a))
}

/// Without a work limit, whether a round that ended before the deadline (its phases' shares
/// ran out early: a MIP that stopped, column generation with nothing left to price within
/// its work) is followed by another on the time left: when at least
/// `EXTRA_ROUND_SHARE` of the budget is left and the round took some of it (a round
/// that ends at once would end at once again). The hand-off returns its time to the
/// compact model instead.
fn another_timed_round(scope: Scope, round_start: Instant, now: Instant, deadline: Instant, budget: Duration) -> bool {
    scope == Scope::Full
        && deadline.saturating_duration_since(now) >= budget.mul_f64(EXTRA_ROUND_SHARE)
        && now.duration_since(round_start) >= budget.mul_f64(EXTRA_ROUND_SHARE / 10.0)
}

/// The Kubernetes-style preemption baseline as it came, and whether, repaired for rule 6
/// node by node (its reprieve reads rule 6 per group, not per decision), it replaced the
/// incumbent `x` as a better start.
fn k8s_start(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, say: &Say) -> (Assignment, bool) {
    let t_k8s = Instant::now();
    let raw = crate::baselines::k8s_preempt::preempt_in_order(prob.cycle).assignment;
    let k8s_ms = t_k8s.elapsed().as_millis();
    let k8s = repair_rule6(prob, m, raw.clone(), &Assignment::empty(prob.cycle.inst));
    say(format_args!("k8s-preempt start {k8s_ms} ms, repaired for rule 6 in {} ms", t_k8s.elapsed().as_millis() - k8s_ms));
    let taken = match to_columns(prob, m, &k8s) {
        Some(kx) if better(m, prob, &kx, x) => {
            *x = kx;
            true
        }
        _ => false,
    };
    (raw, taken)
}

/// The tiers in lexicographic order: groups placed per level, pods evicted per victim
/// priority, then extra pods per level where some class can take more than its minimum.
fn tiers_of(prob: &Problem) -> Vec<Component> {
    let mut comps: Vec<Component> = prob.levels.iter().map(|&l| Component::Placed(l)).collect();
    comps.extend(prob.victim_levels.iter().map(|&p| Component::Evicted(p)));
    for &l in &prob.levels {
        if prob.groups.iter().any(|c| c.rank == l && !c.blocked && c.hi > c.lo) {
            comps.push(Component::Extra(l));
        }
    }
    comps
}

/// The search's state, carried from round to round: the master and its columns, the
/// incumbent, and the tiers proven so far.
struct Search<'p, 'c, 'a> {
    prob: &'p Problem<'c, 'a>,
    m: Master<'p, 'c, 'a>,
    x: Vec<f64>,
    /// The tiers in lexicographic order.
    comps: Vec<Component>,
    scope: Scope,
    /// The tiers proven, then the first one left open.
    outcomes: Vec<TierOutcome>,
    /// Whether every tier so far is proven (the next one is then proven or left open).
    all_proven: bool,
    /// The tiers after the first open one: improved only, held at their values.
    held: Vec<Component>,
    /// Bounds that earlier rounds proved for tiers they left open.
    earlier_bound: Vec<(Component, f64)>,
    /// The domain master of the compact engine's decomposition (decompose.rs): a second
    /// source of term-1 bounds where groups require domains and nothing can be evicted.
    domain_master: Option<super::decompose::Master>,
    /// Device fragmentation of the pending pods, for refilling a level (none without
    /// device requests).
    frag: Option<Fragmentation>,
    /// The best refill found that is valid under rule 6 as the validator reads it (devices
    /// as placed) but not as a master solution (see [`Outside`]).
    outside: Outside,
    /// Rounds begun.
    rounds: u64,
    /// When the solve began (the tiers' `millis`).
    start: Instant,
}

/// What topology screening found: the domain graph and the candidate domains.
type Screening = (super::topology::TopologyGraph, super::candidates::Screening);

/// Progress lines of the engine.
type Say<'s> = dyn Fn(std::fmt::Arguments) + 's;

impl Search<'_, '_, '_> {
    /// Phase 1: term 1 as one objective (levels with lexicographic weights), for an
    /// incumbent that is good at every level before the levels are proven one by one.
    fn joint_term1(&mut self, rb: &mut Budget, say: &Say) {
        let (prob, m, x) = (self.prob, &mut self.m, &mut self.x);
        let placed: Vec<Component> = prob.levels.iter().map(|&l| Component::Placed(l)).collect();
        let open_levels = placed.iter().filter(|&&c| m.value(c, x) < floor(trivial_bound(prob, c)) - 1e-9).count();
        if placed.len() <= 1 || open_levels == 0 || rb.exhausted() {
            return;
        }
        let merged = lex_weights(m, &placed);
        let r = rb.run(rb.part(0.25), |p| m.colgen(&merged, f64::INFINITY, p));
        x.resize(m.cols.len(), 0.0);
        let later: Vec<Component> = self.comps.iter().copied().filter(|c| !matches!(c, Component::Placed(_))).collect();
        rb.run(rb.part(0.2), |p| improve(m, &merged, &later, x, r.lp.as_ref().map(|l| &l.1[..]), p));
        fill_left_out(prob, m, x, None);
        say(format_args!("joint term 1: {}", placed.iter().map(|&c| format!("{}", m.value(c, x))).collect::<Vec<_>>().join(" / ")));
    }

    /// Phase 2: tier by tier. Until the first tier left open, each is proven (branch and
    /// price, most of the budget left) and fixed; after it, the later tiers are only
    /// improved, the earlier ones held at the incumbent's values (nothing claimed).
    fn tiers(&mut self, rb: &mut Budget, screening: Option<&Screening>, say: &Say) {
        for ci in 0..self.comps.len() {
            let comp = self.comps[ci];
            if self.outcomes.iter().any(|o| o.comp == comp) {
                continue; // proven in an earlier round, and fixed
            }
            // A hand-off ends after term 1 and the eviction levels it proves; the later
            // components still weigh in every restricted MIP (fewer evictions among
            // decisions equal on the tiers run).
            if !self.runs(comp) {
                break;
            }
            self.tier(ci, rb, screening, say);
        }
    }

    /// Tier `comps[ci]`: proven (or left open with its bound) while every earlier one is
    /// proven, else improved only; then fixed at the incumbent's value.
    fn tier(&mut self, ci: usize, rb: &mut Budget, screening: Option<&Screening>, say: &Say) {
        let (prob, comp) = (self.prob, self.comps[ci]);
        let rounds0 = self.m.rounds;
        let later: Vec<Component> = self.comps[ci + 1..].to_vec();
        let earlier = self.earlier_bound.iter().filter(|e| e.0 == comp).map(|e| e.1).fold(f64::INFINITY, f64::min);
        let mut bound = trivial_bound(prob, comp).min(earlier);
        // The incumbent meets the bound: the tier is proven.
        let meets = |m: &Master, x: &[f64], bound: f64| m.value(comp, x) >= floor(bound) - 1e-9;
        let mut proven = meets(&self.m, &self.x, bound);
        if let (Component::Placed(_), false, true, Some((topo, scr))) = (comp, proven, self.all_proven, screening) {
            if self.domain_master.is_none() && prob.cycle.victims.is_empty() && !rb.by_work() && !rb.exhausted() {
                let hint = decode(prob, &self.m, &self.x);
                self.domain_master = Some(super::decompose::solve_master(prob.cycle, topo, scr, &hint, rb.part(0.35).until));
            }
            if let Some(db) = self.domain_master.as_ref().and_then(|dm| master_bound(dm, &self.outcomes, comp)) {
                bound = bound.min(db);
                proven = meets(&self.m, &self.x, bound);
            }
        }
        // Shares are of the tiers that take one: a hand-off's last term-1 tier gets all
        // that is left, where the tiers after it would otherwise keep a share unused (its
        // eviction tiers run on what term 1 leaves).
        let to_run = later.iter().filter(|&&c| self.takes_share(c)).count();
        let (m, x) = (&mut self.m, &mut self.x);
        // An eviction tier to prove: first a greedy move, which the restricted MIPs then
        // start from (the branch and price may take the tier's whole share).
        if let (Component::Evicted(priority), false, true, true) = (comp, proven, self.all_proven, rb.allows_free_step()) {
            fewer_evictions(prob, m, x, priority, rb.until, &mut self.outside);
            proven = meets(m, x, bound);
        }
        // A term-1 level to prove in a full solve: first the refills (tens of
        // milliseconds), whose incumbent may meet the root's LP bound before the branch
        // and price dives. Not in a hand-off, whose short tiers it set back
        // (`models/decomposition.md` §6).
        let full = self.scope == Scope::Full;
        if let (Component::Placed(level), false, true, true, true) = (comp, proven, self.all_proven, full, rb.allows_free_step()) {
            let refill = Refill { level, frag: self.frag.as_ref(), until: rb.until, outside: &mut self.outside };
            refill_open_level(prob, m, x, refill);
            proven = meets(m, x, bound);
        }
        if !proven && !rb.exhausted() {
            if self.all_proven {
                // Term 1 outweighs every later tier: the last term-1 level, when it is
                // still open, keeps most of what is left (it returns early once proven).
                let last_term1 = matches!(comp, Component::Placed(_)) && !later.iter().any(|c| matches!(c, Component::Placed(_)));
                let frac = if to_run == 0 {
                    1.0
                } else if last_term1 {
                    LAST_TERM1_SHARE
                } else {
                    0.6
                };
                bound = rb.run(rb.part(frac), |p| branch_and_price(m, comp, &later, x, bound, p));
                proven = meets(m, x, bound);
            } else {
                let obj = [(comp, 1.0)];
                let frac = 1.0 / (to_run + 1) as f64;
                let r = rb.run(rb.part(frac * 0.6), |p| m.colgen(&obj, f64::INFINITY, p));
                x.resize(m.cols.len(), 0.0);
                let rest = rb.part(frac * 0.4 / (1.0 - frac * 0.6));
                rb.run(rest, |p| improve(m, &obj, &later, x, r.lp.as_ref().map(|l| &l.1[..]), p));
            }
        }
        if let Component::Placed(level) = comp {
            // The refill charges no work: it runs while the time lasts, and under a work
            // limit while the solve has work left, even when this round's share is spent.
            let refill = (!proven && rb.allows_free_step()).then_some(Refill {
                level,
                frag: self.frag.as_ref(),
                until: rb.until,
                outside: &mut self.outside,
            });
            fill_left_out(prob, m, x, refill);
            proven = proven || meets(m, x, bound);
        }
        let value = m.value(comp, x);
        let shown = if bound.is_finite() { format!("{bound:.3}") } else { "none".into() };
        let how = match (self.all_proven, proven) {
            (false, _) => "improved only",
            (true, true) => "proven",
            (true, false) => "open",
        };
        say(format_args!("tier {}: value {value}, bound {shown}, {how}", comp.name()));
        if self.all_proven {
            let millis = self.start.elapsed().as_millis() as u64;
            self.outcomes.push(TierOutcome { comp, value, bound, proven, millis, rounds: m.rounds - rounds0 });
            self.all_proven = proven;
        } else {
            self.held.push(comp);
        }
        m.fix(comp, value);
    }

    /// Whether this scope runs the tier of `comp`: a hand-off runs the term-1 tiers, then,
    /// while every tier before is proven, the eviction levels on the time term 1 leaves
    /// (`models/decomposition.md` §1).
    fn runs(&self, comp: Component) -> bool {
        self.takes_share(comp) || (self.all_proven && matches!(comp, Component::Evicted(_)))
    }

    /// Whether the tier of `comp` takes a share of this scope's budget: every tier in a full
    /// solve, the term-1 tiers in a hand-off.
    fn takes_share(&self, comp: Component) -> bool {
        self.scope == Scope::Full || matches!(comp, Component::Placed(_))
    }

    /// Whether every tier of the scope is proven.
    fn done(&self) -> bool {
        let tiers = self.comps.iter().filter(|&&c| self.runs(c)).count();
        self.all_proven && self.outcomes.len() == tiers
    }

    /// Keeps the lexicographically better of the incumbent and `best` in both.
    fn keep_best(&mut self, best: &mut Vec<f64>) {
        let (m, x) = (&self.m, &mut self.x);
        x.resize(m.cols.len(), 0.0);
        best.resize(m.cols.len(), 0.0);
        if better(m, self.prob, best, x) {
            x.clone_from(best);
            for o in self.outcomes.iter_mut() {
                o.value = m.value(o.comp, x);
            }
        } else {
            best.clone_from(x);
        }
    }

    /// Records in `d`'s stats what the search did: classes, columns, pricing, the tiers
    /// proven and held, and the terms proven.
    fn record(&self, d: &mut Decision) {
        d.stats.other.insert("groupClasses".into(), self.prob.groups.len().into());
        d.stats.other.insert("nodeClasses".into(), self.prob.nodes.len().into());
        d.stats.columns = Some(self.m.cols.len() as u64);
        d.stats.rows = Some(self.m.rows.len() as u64);
        d.stats.other.insert("pricingRounds".into(), self.m.rounds.into());
        d.stats.other.insert("pricingInexact".into(), self.m.priced_inexact.into());
        d.stats.other.insert("lpIterations".into(), self.m.lp_iterations().into());
        d.stats.tiers = Some(self.outcomes.iter().filter(|o| o.proven).map(|o| o.comp.name()).collect());
        if !self.held.is_empty() {
            d.stats.other.insert("improvedAfterOpenTier".into(), self.held.iter().map(|c| c.name()).collect::<Vec<_>>().into());
        }
        d.stats.other.insert(
            "tierDetail".into(),
            self.outcomes
                .iter()
                .map(|o| {
                    serde_json::json!({"tier": o.comp.name(), "value": o.value, "bound": if o.bound.is_finite() { serde_json::json!(o.bound) } else { serde_json::Value::Null }, "proven": o.proven, "millis": o.millis, "rounds": o.rounds})
                })
                .collect::<Vec<_>>()
                .into(),
        );
        let terms: Vec<u8> = {
            let done = |pred: &dyn Fn(&Component) -> bool| {
                self.comps.iter().filter(|c| pred(c)).all(|c| self.outcomes.iter().any(|o| o.comp == *c && o.proven))
            };
            let mut t = Vec::new();
            if done(&|c| matches!(c, Component::Placed(_))) {
                t.push(1);
                if done(&|c| matches!(c, Component::Evicted(_))) {
                    t.push(2);
                    if done(&|c| matches!(c, Component::Extra(_))) {
                        t.push(3);
                    }
                }
            }
            t
        };
        if terms.first() == Some(&1) {
            let ms = self.outcomes.iter().filter(|o| matches!(o.comp, Component::Placed(_))).map(|o| o.millis).max().unwrap_or(0);
            d.stats.term1_millis = Some(ms);
        }
        d.stats.terms_proven = Some(terms);
    }

    /// Prepares the next round: the tiers left open are taken up again, their fixing rows
    /// dropped, the open tier's bound kept.
    fn reopen(&mut self) {
        for o in self.outcomes.iter().filter(|o| !o.proven) {
            self.earlier_bound.push((o.comp, o.bound));
            self.m.unfix(o.comp);
        }
        self.outcomes.retain(|o| o.proven);
        for c in self.held.drain(..) {
            self.m.unfix(c);
        }
        self.all_proven = true;
    }
}

/// The incumbent `x` with the groups its patterns leave out placed greedily on the room
/// left ([`crate::engine::greedy::fill_unplaced`]), when that is a master solution better
/// under the tiers: the patterns priced so far may lack the ones that room calls for.
/// The fill is tried twice: on the room as it is, and with the placed groups' elastic
/// pods taken off first ([`crate::engine::greedy::strip_elastic`]; they go back after),
/// since a group placed weighs more than any number of extra pods.
/// With `refill` (a term-1 level left open), that level's groups are then placed again
/// ([`refill_open_level`]).
fn fill_left_out(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, refill: Option<Refill>) {
    let mut filled = decode(prob, m, x);
    let mut lean = filled.clone();
    let more = crate::engine::greedy::fill_unplaced(prob.cycle, &mut filled);
    if more > 0 {
        take_if_better(prob, m, x, &filled);
    }
    let stripped = crate::engine::greedy::strip_elastic(prob.cycle, &mut lean);
    let lean_more = if stripped > 0 { crate::engine::greedy::fill_unplaced(prob.cycle, &mut lean) } else { 0 };
    if lean_more > 0 {
        // No repair for rule 6: pods on nodes with an eviction stayed, and `to_columns`
        // checks it node by node (the repair's reading is stricter and unplaces groups).
        take_if_better(prob, m, x, &lean);
    }
    if prob.cycle.diag.debug {
        eprintln!("fill: {more} more groups on the room left, {lean_more} without {stripped} elastic pods");
    }
    if let Some(r) = refill {
        refill_open_level(prob, m, x, r);
    }
}

/// The incumbent `x` with the groups of term-1 level `level` placed again
/// ([`crate::engine::greedy::refill_level`]: least fragmenting where pods request devices,
/// and first fit) on the room every placed group's minimum leaves (elastic pods taken off
/// first, added back after), when that is a master solution better under the tiers once
/// repaired for rule 6 (a group that moved may leave an eviction unneeded); then the
/// groups still left out with evictions ([`refill_with_evictions`], in cycles with
/// victims), by ruin and recreate ([`ruin_and_recreate`]), by ruin and recreate with
/// evictions ([`ruin_with_evictions`], in cycles with victims) and on nodes cleared by
/// moving pods ([`super::ruin::by_relocation`]). A result with evictions that the master
/// cannot take goes to `r.outside` ([`Outside`]).
fn refill_open_level(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, r: Refill) {
    let Refill { level, frag, until, outside } = r;
    let lean = lean_incumbent(prob, m, x);
    let before = m.value(Component::Placed(level), x);
    let picks = frag.map_or(vec![None], |f| vec![Some(f), None]);
    for pick in picks {
        let mut again = lean.clone();
        crate::engine::greedy::refill_level(prob.cycle, &mut again, level, pick, Some(until));
        take_if_better(prob, m, x, &repair_rule6(prob, m, again, &lean));
    }
    if !prob.cycle.victims.is_empty() && Instant::now() < until {
        refill_with_evictions(prob, m, x, level, outside);
    }
    if Instant::now() < until {
        ruin_and_recreate(prob, m, x, level, until);
    }
    if !prob.cycle.victims.is_empty() && Instant::now() < until {
        ruin_with_evictions(prob, m, x, level, until, outside);
    }
    if Instant::now() < until {
        let mv = |run: &mut Assignment| super::ruin::by_relocation(prob.cycle, run, level, Some(until));
        evicting_move(prob, m, x, (Component::Placed(level), "relocation"), outside, mv);
    }
    if prob.cycle.diag.debug {
        eprintln!("refill placed@{level}: {before} -> {}", m.value(Component::Placed(level), x));
    }
}

/// The incumbent `x` with the groups of term-1 level `level` that it leaves out placed
/// with evictions, as the Kubernetes-style baseline makes them (lower-priority victims
/// removed, the group placed by first fit, the victims it does not need put back), from
/// the incumbent without its elastic pods; kept when that is a master solution better
/// under the tiers once repaired for rule 6. The refill evicts nothing, and in cycles with
/// victims the groups it leaves out are often those that need room only evictions make.
fn refill_with_evictions(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, level: i64, outside: &mut Outside) {
    let start = lean_incumbent(prob, m, x);
    let left: Vec<GroupId> = crate::engine::greedy::ffd_order(prob.cycle)
        .into_iter()
        .filter(|&g| prob.cycle.inst.groups[g].rank == level && !start.is_placed(g))
        .collect();
    let began = Instant::now();
    let run = crate::baselines::k8s_preempt::preempt_from(prob.cycle, &start, &left, false).assignment;
    let placed = left.iter().filter(|&&g| run.is_placed(g)).count();
    take_evicting_run(prob, m, x, run, &start, outside);
    if prob.cycle.diag.debug {
        eprintln!("refill placed@{level} with evictions: {placed} of {} left out placed in {} ms", left.len(), began.elapsed().as_millis());
    }
}

/// The incumbent `x` with the groups of term-1 level `level` that it leaves out placed
/// by ruin and recreate ([`crate::engine::greedy::ruin_and_recreate`]), from the
/// incumbent without its elastic pods (added back after); kept when that is a master
/// solution better under the tiers. No repair for rule 6 is needed: pods on nodes with
/// an eviction stay where they are, and `to_columns` checks every node's pattern.
fn ruin_and_recreate(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, level: i64, until: Instant) {
    let mut start = lean_incumbent(prob, m, x);
    let began = Instant::now();
    let placed = crate::engine::greedy::ruin_and_recreate(prob.cycle, &mut start, level, Some(until));
    let before = m.value(Component::Placed(level), x);
    if placed > 0 {
        crate::engine::greedy::fill_elastic(prob.cycle, &mut start);
        take_if_better(prob, m, x, &start);
    }
    if prob.cycle.diag.debug {
        eprintln!(
            "ruin and recreate placed@{level}: {placed} moves in {} ms, {before} -> {}",
            began.elapsed().as_millis(),
            m.value(Component::Placed(level), x)
        );
    }
}

/// The incumbent `x` with the groups of term-1 level `level` that it leaves out placed
/// by ruin and recreate with evictions ([`super::ruin::with_evictions`]).
fn ruin_with_evictions(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, level: i64, until: Instant, outside: &mut Outside) {
    let mv = |run: &mut Assignment| super::ruin::with_evictions(prob.cycle, run, level, Some(until));
    evicting_move(prob, m, x, (Component::Placed(level), "ruin with evictions"), outside, mv);
}

/// The incumbent `x` with fewer pods evicted at victim priority `priority`, the tiers
/// before held ([`super::ruin::fewer_evictions`]: the groups beside each such eviction
/// placed again with only lower victims evicted). Why: with term 1 fixed, the linear
/// relaxation often bounds the level's evictions at 0 (groups placed in fractions), so
/// only incumbents prove it, and the restricted MIPs combine only the patterns priced,
/// which rarely include a gang moved off its victims.
fn fewer_evictions(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, priority: i64, until: Instant, outside: &mut Outside) {
    let mv = |run: &mut Assignment| super::ruin::fewer_evictions(prob.cycle, run, priority, Some(until));
    evicting_move(prob, m, x, (Component::Evicted(priority), "fewer evictions"), outside, mv);
}

/// Move `mv` (it returns how many moves it kept) on the incumbent `x` without its elastic
/// pods (added back after), its result kept as [`take_evicting_run`] keeps a refill;
/// `comp` and the name are for the debug line.
fn evicting_move(
    prob: &Problem,
    m: &mut Master,
    x: &mut Vec<f64>,
    (comp, name): (Component, &str),
    outside: &mut Outside,
    mv: impl FnOnce(&mut Assignment) -> usize,
) {
    let start = lean_incumbent(prob, m, x);
    let mut run = start.clone();
    let began = Instant::now();
    let before = m.value(comp, x);
    let moves = mv(&mut run);
    if moves > 0 {
        take_evicting_run(prob, m, x, run, &start, outside);
    }
    if prob.cycle.diag.debug {
        eprintln!("{name} {}: {moves} moves in {} ms, {before} -> {}", comp.name(), began.elapsed().as_millis(), m.value(comp, x));
    }
}

/// A refill's `run` with evictions from the lean incumbent `start`: its elastic pods
/// given back, then taken when it is a master solution better under the tiers once
/// repaired for rule 6, and offered to `outside` as it is.
fn take_evicting_run(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, mut run: Assignment, start: &Assignment, outside: &mut Outside) {
    crate::engine::greedy::fill_elastic(prob.cycle, &mut run);
    take_if_better(prob, m, x, &repair_rule6(prob, m, run.clone(), start));
    outside.offer(prob, m, x, run);
}

/// The incumbent `x` decoded, without its elastic pods: what the refills start from, so
/// that every placed group holds only its minimum.
fn lean_incumbent(prob: &Problem, m: &Master, x: &[f64]) -> Assignment {
    let mut lean = decode(prob, m, x);
    crate::engine::greedy::strip_elastic(prob.cycle, &mut lean);
    lean
}

/// Replaces the incumbent `x` by assignment `a` when that is a master solution better
/// under the tiers.
fn take_if_better(prob: &Problem, m: &mut Master, x: &mut Vec<f64>, a: &Assignment) {
    if let Some(fx) = to_columns(prob, m, a) {
        x.resize(m.cols.len(), 0.0);
        if m.feasible(&fx) && better(m, prob, &fx, x) {
            *x = fx;
        }
    }
}

/// The refill of a term-1 level not proven (before its branch and price in a full solve,
/// and when it is left open): the level, the fragmentation scores, the time the pass
/// must stop by, and where a result the master cannot take is kept.
struct Refill<'r> {
    level: i64,
    frag: Option<&'r Fragmentation>,
    until: Instant,
    outside: &'r mut Outside,
}

/// A refill's result that beats the incumbent under terms 1-3 and whose evictions are each
/// needed as the validator reads rule 6 (with the devices the pods were given), but that
/// the master cannot take: its node-by-node reading packs the devices again and may find
/// an eviction unneeded (`models/decomposition.md` §3, device-choice witnesses), so
/// the repair takes out the group that needed it. Kept beside the master and returned
/// instead of the master's incumbent at the end when it is still better and passes the
/// validator.
#[derive(Default)]
struct Outside(Option<Assignment>);

impl Outside {
    /// Keeps `run` when it beats both the incumbent `x` and what is kept, and the engine's
    /// own rule-6 check finds nothing.
    fn offer(&mut self, prob: &Problem, m: &Master, x: &[f64], run: Assignment) {
        let victims = &prob.cycle.victims;
        let inst = prob.cycle.inst;
        if beats(inst, victims, &run, &decode(prob, m, x))
            && self.0.as_ref().is_none_or(|kept| beats(inst, victims, &run, kept))
            && rule6_violations(prob.cycle, &run).is_empty()
        {
            self.0 = Some(run);
        }
    }
}

/// A branching decision of [`branch_and_price`].
#[derive(Clone, Copy, Debug)]
enum Fix {
    /// Bounds of a class, domain, slice or eviction column.
    Col(usize, f64, f64),
    /// Node class, its pricing unit index, evicted there or not.
    Unit(usize, usize, bool),
    /// Node class, task class: pods there within these bounds.
    Count(usize, usize, f64, f64),
}

/// The share of a branch and price's budget that its root's column generation may use.
const ROOT_LP_SHARE: f64 = 0.6;

/// Share of what is left that the last term-1 tier takes in a full solve while later
/// tiers remain (they are only improved once term 1 is left open).
const LAST_TERM1_SHARE: f64 = 0.85;

/// The steps of the root's column generation (see [`root_colgen`]).
const ROOT_STEPS: usize = 3;

/// Depth-first branch and price for tier `comp` (models/decomposition.md §6): at each
/// node column generation gives a bound valid for the node's subtree; branching goes on
/// the class, domain, slice and eviction columns first, then on a node's eviction of a
/// unit, then on a node's pods of a task class; the MIP over each node's LP support, the
/// restricted MIP over every column (at the root, and once the class columns are
/// integral) and integral LP solutions give incumbents, each filled greedily
/// ([`fill_left_out`]) before the next node; a node whose bound does not beat the
/// incumbent is pruned. The duals of a node whose fixes are all column boxes also bound the whole
/// tree ([`Master::root_boxes`]). Returns a bound on the tier over every valid decision
/// (the incumbent's value when the tree is exhausted); `x` holds the best incumbent found
/// (never worse than the one given).
fn branch_and_price(m: &mut Master, comp: Component, later: &[Component], x: &mut Vec<f64>, root_bound: f64, b: &mut Budget) -> f64 {
    struct Node {
        fixes: Vec<Fix>,
        bound: f64,
    }
    let base = m.column_boxes();
    let mut stack = vec![Node { fixes: Vec::new(), bound: root_bound }];
    let mut open = f64::NEG_INFINITY;
    // The least bound on the whole tree from any node's duals (see `Master::root_boxes`).
    let mut tree = f64::INFINITY;
    let mut root = true;
    let mut applied: Vec<Fix> = Vec::new();
    let undo = |m: &mut Master, applied: &mut Vec<Fix>| {
        for f in applied.drain(..) {
            match f {
                Fix::Col(j, ..) => {
                    let (lo, up) = base[&j];
                    m.set_bounds(j, lo, up);
                }
                Fix::Unit(k, ..) => m.set_unit_rules(k, (0, 0)),
                Fix::Count(k, tc, ..) => {
                    let r = m.count_row(k, tc);
                    m.set_row_bounds(r, f64::NEG_INFINITY, f64::INFINITY);
                }
            }
        }
    };
    // A node's new incumbent is filled greedily ([`fill_left_out`]) once the master is
    // back at the root's boxes and rows: under the node's fixes the fill would be held to
    // them.
    let mut unfilled = false;
    while let Some(node) = stack.pop() {
        let inc = m.value(comp, x);
        if floor(node.bound) <= inc + 1e-9 {
            continue;
        }
        if b.exhausted() || m.prob.cycle.cancel.is_cancelled() {
            open = open.max(node.bound);
            continue;
        }
        undo(m, &mut applied);
        if std::mem::take(&mut unfilled) {
            fill_left_out(m.prob, m, x, None);
            x.resize(m.cols.len(), 0.0);
            if floor(node.bound) <= m.value(comp, x) + 1e-9 {
                continue;
            }
        }
        let mut rules: BTreeMap<usize, (u128, u128)> = BTreeMap::new();
        for &f in &node.fixes {
            match f {
                Fix::Col(j, lo, up) => m.set_bounds(j, lo, up),
                Fix::Unit(k, j, on) => {
                    let e = rules.entry(k).or_insert((0, 0));
                    if on {
                        e.0 |= 1 << j;
                    } else {
                        e.1 |= 1 << j;
                    }
                }
                Fix::Count(k, tc, lo, up) => {
                    let r = m.count_row(k, tc);
                    m.set_row_bounds(r, lo, up);
                }
            }
            applied.push(f);
        }
        for (&k, &r) in &rules {
            m.set_unit_rules(k, r);
        }
        // Pricing sees no column box: under box fixes alone, the node's duals bound the
        // whole tree too.
        let only_boxes = node.fixes.iter().all(|f| matches!(f, Fix::Col(..)));
        m.root_boxes = only_boxes.then(|| base.clone());
        let r = if root { root_colgen(m, comp, later, x, inc, b) } else { m.colgen(&[(comp, 1.0)], inc, b) };
        while x.len() < m.cols.len() {
            x.push(0.0);
        }
        tree = tree.min(r.root_bound);
        if floor(tree) <= m.value(comp, x) + 1e-9 {
            // The incumbent meets a bound on the whole tree: nothing left to prove.
            break;
        }
        let nb = node.bound.min(r.bound);
        if floor(nb) <= inc + 1e-9 {
            root = false;
            continue;
        }
        let Some((_, lpx)) = r.lp.clone() else {
            if m.prob.cycle.diag.debug {
                eprintln!("b&p {}: node without an LP solution (bound {nb:.3})", comp.name());
            }
            open = open.max(nb);
            root = false;
            continue;
        };
        let choice = branching(m, &lpx);
        if m.prob.cycle.diag.debug {
            eprintln!(
                "b&p {}: depth {}, node bound {nb:.3}, incumbent {inc}, lp {:.3}, converged {}, branch {choice:?}, stack {}",
                comp.name(),
                node.fixes.len(),
                r.lp.as_ref().map_or(f64::NAN, |l| l.0),
                r.converged,
                stack.len()
            );
        }
        let whole = root || !matches!(choice, Some(Fix::Col(..)));
        let before = x.clone();
        node_incumbents(m, comp, later, x, &lpx, nb, root, whole, b);
        root = false;
        if choice.is_none() {
            // Every branching quantity integral: the LP solution with each node's patterns
            // merged is an integral decision if the merged patterns are valid.
            if let Some(ix) = integral_solution(m, &lpx) {
                if m.value(comp, &ix) > m.value(comp, x) + 0.5 && m.feasible(&ix) {
                    *x = ix;
                }
            }
        }
        // A new incumbent leaves different room.
        unfilled |= *x != before;
        let inc = m.value(comp, x);
        if floor(nb) <= inc + 1e-9 {
            continue;
        }
        match choice {
            // Nothing left to branch on, and no better integral decision: left open.
            None => open = open.max(nb),
            Some(f) => {
                let (down, upf) = match f {
                    Fix::Col(j, v, _) => {
                        let (lo, up) = (m.cols[j].lo, m.cols[j].up);
                        (Fix::Col(j, lo, v.floor()), Fix::Col(j, v.ceil(), up))
                    }
                    Fix::Unit(k, j, _) => (Fix::Unit(k, j, false), Fix::Unit(k, j, true)),
                    Fix::Count(k, tc, v, _) => {
                        (Fix::Count(k, tc, f64::NEG_INFINITY, v.floor()), Fix::Count(k, tc, v.ceil(), f64::INFINITY))
                    }
                };
                let mut d = node.fixes.clone();
                d.push(down);
                let mut u = node.fixes;
                u.push(upf);
                stack.push(Node { fixes: d, bound: nb });
                stack.push(Node { fixes: u, bound: nb });
            }
        }
    }
    undo(m, &mut applied);
    m.root_boxes = None;
    while x.len() < m.cols.len() {
        x.push(0.0);
    }
    let value = m.value(comp, x);
    if m.prob.cycle.diag.debug {
        eprintln!("b&p {}: value {value}, open nodes' bound {open:.3}, tree bound {tree:.3}", comp.name());
    }
    open.max(value).min(tree.max(value))
}

/// Column generation at the root of a branch and price, stopped at [`ROOT_LP_SHARE`] of
/// its budget if pricing has not converged by then, so that the root's restricted MIPs get
/// time. It goes in [`ROOT_STEPS`] steps, with the MIP over the LP's support after each
/// step but the last: each LP's support gives another chance at an incumbent, and the
/// support MIP takes a few percent of the time.
fn root_colgen(m: &mut Master, comp: Component, later: &[Component], x: &mut Vec<f64>, inc: f64, b: &mut Budget) -> master::ColgenResult {
    let began = Instant::now();
    let span = b.until.saturating_duration_since(began).mul_f64(ROOT_LP_SHARE);
    let mut root = b.part(ROOT_LP_SHARE);
    let mut step = 1;
    loop {
        // Step `step` may take the root's budget up to `step / ROOT_STEPS` of it.
        let frac = 1.0 / (ROOT_STEPS + 1 - step) as f64;
        let r = root.run(root.slice(began + span.mul_f64(step as f64 / ROOT_STEPS as f64), frac), |p| m.colgen(&[(comp, 1.0)], inc, p));
        while x.len() < m.cols.len() {
            x.push(0.0);
        }
        if r.converged || step == ROOT_STEPS || root.work_spent() {
            b.charge(root.used());
            return r;
        }
        if let Some((_, lpx)) = &r.lp {
            let part = b.slice(Instant::now() + span.mul_f64(0.1), 0.1 * ROOT_LP_SHARE);
            b.run(part, |p| support_mip(m, comp, later, x, lpx, p));
        }
        step += 1;
    }
}

/// Incumbent searches at a branch-and-price node with LP solution `lpx` and bound `nb`:
/// the MIP over the LP's support always (each node's LP brings new columns), then, where
/// `whole` (the root, and nodes whose class columns are integral), the restricted MIP over
/// every column unless the incumbent already reaches the node's bound (at 1,000 nodes
/// that MIP's presolve alone takes seconds).
#[allow(clippy::too_many_arguments)]
fn node_incumbents(
    m: &Master,
    comp: Component,
    later: &[Component],
    x: &mut Vec<f64>,
    lpx: &[f64],
    nb: f64,
    root: bool,
    whole: bool,
    b: &mut Budget,
) {
    let began = Instant::now();
    let left = b.until.saturating_duration_since(began);
    let (small, frac) = if root { (left.mul_f64(0.4), 0.4) } else { (left.mul_f64(0.1).min(Duration::from_secs(1)), 0.1) };
    b.run(b.slice(began + small, frac), |p| support_mip(m, comp, later, x, lpx, p));
    if whole && floor(nb) > m.value(comp, x) + 1e-9 {
        let (slice, frac) = if root { (left.mul_f64(0.5), 0.5) } else { (left.mul_f64(0.25).min(Duration::from_secs(2)), 0.25) };
        let found = b.run(b.slice(began + slice, frac), |p| m.restricted_mip(&[(comp, 1.0)], later, x, None, p));
        debug_mip(m, comp, "restricted", began, slice, found.as_ref());
        if let Some(bx) = found {
            *x = bx;
        }
    }
}

/// The MIP over the support of LP solution `lpx` (see [`support`]) for tier `comp` on
/// budget `b`, replacing `x` with what it finds.
fn support_mip(m: &Master, comp: Component, later: &[Component], x: &mut Vec<f64>, lpx: &[f64], b: &mut Budget) {
    let began = Instant::now();
    let until = b.until;
    let found = m.restricted_mip(&[(comp, 1.0)], later, x, Some(&support(m, lpx, x)), b);
    debug_mip(m, comp, "support", began, until.saturating_duration_since(began), found.as_ref());
    if let Some(bx) = found {
        *x = bx;
    }
}

/// With `TESSERA_DEBUG`: what an incumbent search of the branch and price found.
fn debug_mip(m: &Master, comp: Component, what: &str, began: Instant, slice: Duration, found: Option<&Vec<f64>>) {
    if m.prob.cycle.diag.debug {
        let value = found.map(|bx| m.value(comp, bx));
        eprintln!("b&p {}: {what} MIP in {} ms of {} ms: {value:?}", comp.name(), began.elapsed().as_millis(), slice.as_millis());
    }
}

/// The columns of LP solution `lpx` and of incumbent `x`, and every column that is not a
/// pattern: the restricted MIP over them has the LP's value and is a far smaller search
/// than over every column (whose presolve alone can take seconds at 1,000 nodes).
fn support(m: &Master, lpx: &[f64], x: &[f64]) -> Vec<bool> {
    (0..m.cols.len())
        .map(|j| {
            let pattern = matches!(m.cols[j].kind, ColKind::Pattern(..));
            !pattern || m.cols[j].lo > 0.0 || lpx.get(j).is_some_and(|&v| v > 1e-6) || x.get(j).is_some_and(|&v| v > 0.5)
        })
        .collect()
}

/// Incumbent search after column generation for objective `obj` on budget `b`: the MIP
/// over the LP solution's support `lpx` first (half the budget), then over every column.
fn improve(m: &Master, obj: &Objective, later: &[Component], x: &mut Vec<f64>, lpx: Option<&[f64]>, b: &mut Budget) {
    if let Some(lpx) = lpx {
        if let Some(bx) = b.run(b.part(0.5), |p| m.restricted_mip(obj, later, x, Some(&support(m, lpx, x)), p)) {
            *x = bx;
        }
    }
    if let Some(bx) = m.restricted_mip(obj, later, x, None, b) {
        *x = bx;
    }
}

/// What to branch on in LP solution `lpx`: a fractional class, domain, slice or eviction
/// column (the one closest to rounding up); else a node class's fractional eviction of a
/// unit; else a node class's fractional pods of a task class. `None`: all integral.
fn branching(m: &Master, lpx: &[f64]) -> Option<Fix> {
    let frac = |v: f64| (v - v.round()).abs() > 1e-6;
    // Class columns first (the groups placed), then domains, slices, evictions.
    let rank = |k: &ColKind| match k {
        ColKind::Y(_) => 0,
        ColKind::D(..) => 1,
        ColKind::S(..) => 2,
        _ => 3,
    };
    let col = m
        .cols
        .iter()
        .enumerate()
        .filter(|(_, c)| !matches!(c.kind, ColKind::Pattern(..)))
        .map(|(j, c)| (j, rank(&c.kind), lpx.get(j).copied().unwrap_or(0.0)))
        .filter(|&(_, _, v)| frac(v))
        .min_by(|a, b| {
            a.1.cmp(&b.1)
                .then((b.2 - b.2.floor()).partial_cmp(&(a.2 - a.2.floor())).unwrap_or(std::cmp::Ordering::Equal))
                .then(a.0.cmp(&b.0))
        });
    if let Some((j, _, v)) = col {
        return Some(Fix::Col(j, v, 0.0));
    }
    // Per node class: how much of each unit is evicted, and the pods per task class.
    let mut units: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    let mut counts: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for (j, c) in m.cols.iter().enumerate() {
        let v = lpx.get(j).copied().unwrap_or(0.0);
        if v <= 1e-9 {
            continue;
        }
        if let ColKind::Pattern(k, i) = c.kind {
            let pat = &m.patterns[i].1;
            for (uj, un) in m.ctxs[k].units.iter().enumerate() {
                if pat.evict.contains(&un.u) {
                    *units.entry((k, uj)).or_default() += v;
                }
            }
            for &(tc, n) in &pat.pods {
                *counts.entry((k, tc)).or_default() += v * n as f64;
            }
        }
    }
    if let Some((&(k, uj), _)) = units.iter().find(|(_, &v)| frac(v)) {
        return Some(Fix::Unit(k, uj, true));
    }
    counts.iter().find(|(_, &v)| frac(v)).map(|(&(k, tc), &v)| Fix::Count(k, tc, v, 0.0))
}

/// The LP solution `lpx` with every node class's patterns merged into one per node, when
/// all branching quantities are integral and each merged pattern is valid (capacity is
/// linear, devices and rule 6 are checked again); `None` otherwise.
fn integral_solution(m: &mut Master, lpx: &[f64]) -> Option<Vec<f64>> {
    let p = m.prob;
    let mut merged: BTreeMap<usize, (BTreeMap<usize, f64>, BTreeMap<usize, f64>)> = BTreeMap::new();
    let mut x: Vec<f64> = Vec::with_capacity(m.cols.len());
    for (j, c) in m.cols.iter().enumerate() {
        let v = lpx.get(j).copied().unwrap_or(0.0);
        match c.kind {
            ColKind::Pattern(k, i) => {
                x.push(0.0);
                if v <= 1e-9 {
                    continue;
                }
                if p.nodes[k].nodes.len() > 1 {
                    // Identical nodes: only an integral use of each pattern is a decision.
                    if (v - v.round()).abs() > 1e-6 {
                        return None;
                    }
                    *x.last_mut().expect("pushed") = v.round();
                    continue;
                }
                let pat = &m.patterns[i].1;
                let e = merged.entry(k).or_default();
                for &(tc, n) in &pat.pods {
                    *e.0.entry(tc).or_default() += v * n as f64;
                }
                for &u in &pat.evict {
                    *e.1.entry(u).or_default() += v;
                }
            }
            _ => {
                if (v - v.round()).abs() > 1e-6 {
                    return None;
                }
                x.push(v.round());
            }
        }
    }
    let mut singles: Vec<usize> = (0..p.nodes.len()).filter(|&k| p.nodes[k].nodes.len() == 1).collect();
    singles.retain(|k| !merged.contains_key(k));
    for (k, (pods, evict)) in merged {
        let pods: Vec<(usize, i64)> = pods.into_iter().map(|(tc, v)| (tc, v.round() as i64)).filter(|e| e.1 > 0).collect();
        let evict: Vec<usize> = evict.into_iter().filter(|e| e.1 > 0.5).map(|e| e.0).collect();
        let pat = Pattern { pods, evict, witness: Vec::new() };
        let wit = pricing::check(&m.ctxs[k], &pat)?;
        let col = m.add_pattern(k, Pattern { witness: wit, ..pat });
        while x.len() < m.cols.len() {
            x.push(0.0);
        }
        x[col] = 1.0;
    }
    // Node classes of one node with nothing in the LP: their empty pattern.
    for k in singles {
        let col = m.add_pattern(k, Pattern { pods: Vec::new(), evict: Vec::new(), witness: Vec::new() });
        while x.len() < m.cols.len() {
            x.push(0.0);
        }
        x[col] = 1.0;
    }
    Some(x)
}

fn floor(b: f64) -> f64 {
    if b.is_finite() {
        (b + 1e-6 * b.abs().max(1.0)).floor()
    } else {
        b
    }
}

/// |bound - value| / max(1, |bound|) of a row (in its own units: evictions as pods).
fn row_gap(bound: f64, value: f64) -> f64 {
    if !bound.is_finite() {
        return 1.0;
    }
    let b = floor(bound);
    ((b - value).abs() / b.abs().max(1.0)).min(1.0)
}

/// The most a component can be without any search: all groups of the level, no
/// eviction, every elastic pod.
fn trivial_bound(p: &Problem, comp: Component) -> f64 {
    match comp {
        Component::Placed(l) => p.groups.iter().filter(|c| c.rank == l && !c.blocked).map(|c| c.members.len() as f64).sum(),
        Component::Evicted(_) => 0.0,
        Component::Extra(l) => {
            p.groups.iter().filter(|c| c.rank == l && !c.blocked).map(|c| ((c.hi - c.lo) * c.members.len() as i64) as f64).sum()
        }
    }
}

fn warm_placed(m: &Master, x: &[f64]) -> i64 {
    m.y_col.iter().map(|&c| x[c] as i64).sum()
}

/// The relative gap of a decision's first row whose value is not its bound (0 if none).
fn open_row_gap(d: &Decision) -> f64 {
    let Some(b) = &d.bounds else { return 1.0 };
    let o = &d.objective;
    let placed = b
        .placed_by_priority
        .iter()
        .map(|r| (r.at_most, o.placed_by_priority.iter().find(|x| x.priority == r.priority).map_or(0, |x| x.placed)));
    let evicted = b
        .evicted_by_priority
        .iter()
        .map(|r| (r.at_least, o.evicted_by_priority.iter().find(|x| x.priority == r.priority).map_or(0, |x| x.pods)));
    let extra = b
        .extra_by_priority
        .iter()
        .map(|r| (r.at_most, o.extra_by_priority.iter().find(|x| x.priority == r.priority).map_or(0, |x| x.pods)));
    placed.chain(evicted).chain(extra).find(|(b, v)| b != v).map_or(0.0, |(b, v)| row_gap(b as f64, v as f64))
}

/// Lexicographically better on terms 1-3 (the master's components).
fn better(m: &Master, p: &Problem, a: &[f64], b: &[f64]) -> bool {
    let mut comps: Vec<Component> = p.levels.iter().map(|&l| Component::Placed(l)).collect();
    comps.extend(p.victim_levels.iter().map(|&v| Component::Evicted(v)));
    comps.extend(p.levels.iter().map(|&l| Component::Extra(l)));
    for c in comps {
        let (va, vb) = (m.value(c, a), m.value(c, b));
        if (va - vb).abs() > 0.5 {
            return va > vb;
        }
    }
    false
}

/// The domain master's bound on term-1 level `comp`, valid for this decision: only when
/// every earlier level's master row holds exactly the value this decision proved there
/// (the master bounds a level over master solutions that keep its earlier rows).
fn master_bound(dm: &super::decompose::Master, outcomes: &[TierOutcome], comp: Component) -> Option<f64> {
    let Component::Placed(l) = comp else { return None };
    for &(rank, b) in &dm.bounds {
        if rank == l {
            return Some(b as f64);
        }
        let earlier = outcomes.iter().find(|o| o.comp == Component::Placed(rank))?;
        if !earlier.proven || earlier.value != b as f64 {
            return None;
        }
    }
    None
}

/// Integer weights that make `comps` lexicographic in one objective (first most
/// important): `w_last = 1`, `w_i = 1 + Σ_{j>i} w_j Δ_j` with `Δ` the ranges.
fn lex_weights(m: &Master, comps: &[Component]) -> Vec<(Component, f64)> {
    let mut w = vec![0.0; comps.len()];
    let mut acc = 0.0;
    for i in (0..comps.len()).rev() {
        w[i] = 1.0 + acc;
        acc += w[i] * m.range(comps[i]);
    }
    comps.iter().copied().zip(w).collect()
}

fn finish(cycle: &Cycle, a: &Assignment, status: Status, gap: f64, proven: Proven) -> Decision {
    assemble_with(cycle, a, status, gap, proven)
}

/// The row bounds of the spec's "Bounds": every proven row at its value, the first open
/// one at its bound, none after.
fn bounds_of(inst: &Instance, outcomes: &[TierOutcome]) -> Bounds {
    let mut b = Bounds::default();
    for o in outcomes {
        let v = if o.proven { o.value } else { floor(o.bound) };
        match o.comp {
            Component::Placed(l) => b.placed_by_priority.push(PlacedBound { priority: inst.level_key(l), at_most: v as i64 }),
            Component::Evicted(p) => {
                // Rows of levels with no eviction are not in the decision, and 0 is their
                // bound by definition: only levels with evictions, or the open one.
                if o.value != 0.0 || !o.proven {
                    b.evicted_by_priority.push(EvictedBound { priority: p, at_least: (-v) as i64 });
                }
            }
            Component::Extra(l) => {
                if o.value != 0.0 || !o.proven {
                    b.extra_by_priority.push(ExtraBound { priority: inst.level_key(l), at_most: v as i64 })
                }
            }
        }
    }
    b
}

/// Makes an assignment valid under rule 6 as the engine reads it (node patterns, devices
/// packed exactly): an evicted unit that the pods allowed to evict it do not need goes
/// back if everything still fits, else the lowest placed group that may not evict it and
/// has pods on its nodes is unplaced; until every eviction is needed. For warm starts
/// built under a weaker reading (the Kubernetes-style baseline reprieves per group).
/// Groups placed in `kept` (what a refill started from) go last: before one of them, a
/// group it does not hold with pods on those nodes is unplaced.
fn repair_rule6(p: &Problem, m: &Master, mut a: Assignment, kept: &Assignment) -> Assignment {
    let cycle = p.cycle;
    let inst = cycle.inst;
    let mut tc_of: BTreeMap<TaskId, usize> = BTreeMap::new();
    for (tc, t) in p.tasks.iter().enumerate() {
        for &task in &t.tasks {
            tc_of.insert(task, tc);
        }
    }
    let mut node_class = vec![usize::MAX; inst.nodes.len()];
    for (k, nc) in p.nodes.iter().enumerate() {
        for &n in &nc.nodes {
            node_class[n] = k;
        }
    }
    // Pods per node and task class, and the groups with pods per node.
    let mut pods_on: BTreeMap<NodeId, BTreeMap<usize, i64>> = BTreeMap::new();
    let mut groups_on: BTreeMap<NodeId, std::collections::BTreeSet<GroupId>> = BTreeMap::new();
    for &g in &cycle.pending {
        for q in &a.pods[g] {
            if let Some(&tc) = tc_of.get(&q.task) {
                *pods_on.entry(q.node).or_default().entry(tc).or_default() += 1;
            }
            groups_on.entry(q.node).or_default().insert(g);
        }
    }
    a.evicted.sort_unstable();
    a.evicted.dedup();
    let pattern = |pods_on: &BTreeMap<NodeId, BTreeMap<usize, i64>>, evicted: &[usize], n: NodeId| -> Pattern {
        let pods = pods_on.get(&n).map(|m| m.iter().filter(|e| *e.1 > 0).map(|(&tc, &c)| (tc, c)).collect()).unwrap_or_default();
        let evict: Vec<usize> = evicted.iter().copied().filter(|&u| p.units[u].nodes.contains(&n)).collect();
        Pattern { pods, evict, witness: Vec::new() }
    };
    let inspect = |pods_on: &BTreeMap<NodeId, BTreeMap<usize, i64>>, evicted: &[usize], n: NodeId| {
        let k = node_class[n];
        if k == usize::MAX {
            return Some((Vec::new(), Vec::new()));
        }
        pricing::inspect(&m.ctxs[k], &pattern(pods_on, evicted, n))
    };
    let lowest = |gs: &mut dyn Iterator<Item = GroupId>| -> Option<GroupId> {
        gs.min_by_key(|&g| (inst.groups[g].rank, std::cmp::Reverse(inst.groups[g].created_at), std::cmp::Reverse(g)))
    };
    // Per node with an eviction: its inspection (recomputed where something changed).
    let mut seen: BTreeMap<NodeId, Option<(Vec<usize>, Vec<usize>)>> = BTreeMap::new();
    let mut dirty: std::collections::BTreeSet<NodeId> = a.evicted.iter().flat_map(|&u| p.units[u].nodes.iter().copied()).collect();
    for _ in 0..(cycle.pending.len() + p.units.len() + 1) {
        for n in std::mem::take(&mut dirty) {
            if a.evicted.iter().any(|&u| p.units[u].nodes.contains(&n)) {
                seen.insert(n, inspect(&pods_on, &a.evicted, n));
            } else {
                seen.remove(&n);
            }
        }
        let mut failing: Vec<usize> = Vec::new();
        let mut witnessed: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
        let mut broken_node = None;
        for (&n, r) in &seen {
            match r {
                None => broken_node = broken_node.or(Some(n)),
                Some((unw, multi)) => {
                    failing.extend(unw.iter().copied());
                    witnessed.extend(multi.iter().copied());
                }
            }
        }
        for &u in &a.evicted {
            let own_placed = cycle.victims[u].pending_group.is_some_and(|g| a.is_placed(g));
            if (p.units[u].multi && !witnessed.contains(&u)) || own_placed {
                failing.push(u);
            }
        }
        let unplace = |g: GroupId,
                       a: &mut Assignment,
                       pods_on: &mut BTreeMap<NodeId, BTreeMap<usize, i64>>,
                       dirty: &mut std::collections::BTreeSet<NodeId>| {
            for q in std::mem::take(&mut a.pods[g]) {
                if let Some(&tc) = tc_of.get(&q.task) {
                    *pods_on.entry(q.node).or_default().entry(tc).or_default() -= 1;
                }
                dirty.insert(q.node);
            }
            a.domain[g] = None;
        };
        if let Some(n) = broken_node {
            // Pods over capacity (not expected from a baseline): the lowest group there goes.
            let g = lowest(&mut groups_on.get(&n).into_iter().flatten().copied().filter(|&g| a.is_placed(g)));
            match g {
                Some(g) => {
                    unplace(g, &mut a, &mut pods_on, &mut dirty);
                    continue;
                }
                None => break,
            }
        }
        failing.sort_unstable();
        failing.dedup();
        let Some(&u) = failing.first() else { break };
        let unit_nodes = p.units[u].nodes.clone();
        a.evicted.retain(|&x| x != u);
        let fits = unit_nodes.iter().all(|&n| inspect(&pods_on, &a.evicted, n).is_some());
        dirty.extend(unit_nodes.iter().copied());
        if fits {
            continue;
        }
        a.evicted.push(u);
        a.evicted.sort_unstable();
        let on: Vec<GroupId> =
            unit_nodes.iter().flat_map(|n| groups_on.get(n).into_iter().flatten().copied()).filter(|&g| a.is_placed(g)).collect();
        let fresh = |g: &GroupId| !kept.is_placed(*g);
        let victim = lowest(&mut on.iter().copied().filter(|&g| !cycle.may_preempt(g, u) && fresh(&g)))
            .or_else(|| lowest(&mut on.iter().copied().filter(fresh)))
            .or_else(|| lowest(&mut on.iter().copied().filter(|&g| !cycle.may_preempt(g, u))))
            .or_else(|| lowest(&mut on.iter().copied()));
        match victim {
            Some(g) => unplace(g, &mut a, &mut pods_on, &mut dirty),
            None => break,
        }
    }
    a
}

/// The column values of an assignment (its node patterns added as columns), or `None`
/// if some node's pattern is not valid in the master (rule 6 read per node) or a group's
/// pods do not match its class rows.
fn to_columns(p: &Problem, m: &mut Master, a: &Assignment) -> Option<Vec<f64>> {
    let cycle = p.cycle;
    let inst = cycle.inst;
    // Per node: pods per task class, evicted units.
    let mut per_node: BTreeMap<NodeId, BTreeMap<usize, i64>> = BTreeMap::new();
    let mut tc_of: BTreeMap<TaskId, usize> = BTreeMap::new();
    for (tc, t) in p.tasks.iter().enumerate() {
        for &task in &t.tasks {
            tc_of.insert(task, tc);
        }
    }
    for &g in &cycle.pending {
        for pod in &a.pods[g] {
            let tc = *tc_of.get(&pod.task)?;
            *per_node.entry(pod.node).or_default().entry(tc).or_default() += 1;
        }
    }
    let mut evict_on: BTreeMap<NodeId, Vec<usize>> = BTreeMap::new();
    for &u in &a.evicted {
        for &n in &p.units[u].nodes {
            evict_on.entry(n).or_default().push(u);
        }
    }
    let mut node_class = vec![usize::MAX; inst.nodes.len()];
    for (k, nc) in p.nodes.iter().enumerate() {
        for &n in &nc.nodes {
            node_class[n] = k;
        }
    }
    let mut counts: BTreeMap<usize, f64> = BTreeMap::new();
    let mut used_nodes: BTreeMap<usize, usize> = BTreeMap::new();
    let mut nodes: Vec<NodeId> = per_node.keys().chain(evict_on.keys()).copied().collect();
    nodes.sort_unstable();
    nodes.dedup();
    for n in nodes {
        let k = node_class[n];
        if k == usize::MAX {
            return None;
        }
        let mut evict = evict_on.get(&n).cloned().unwrap_or_default();
        evict.sort_unstable();
        let pat = Pattern {
            pods: per_node.get(&n).map(|m| m.iter().map(|(&tc, &c)| (tc, c)).collect()).unwrap_or_default(),
            evict,
            witness: Vec::new(),
        };
        let wit = pricing::check(&m.ctxs[k], &pat)?;
        let pat = Pattern { witness: wit, ..pat };
        let col = m.add_pattern(k, pat);
        *counts.entry(col).or_default() += 1.0;
        *used_nodes.entry(k).or_default() += 1;
    }
    let mut x = vec![0.0; m.cols.len()];
    for (col, c) in counts {
        x[col] = c;
    }
    // Empty patterns fill each class's count.
    for (j, col) in m.cols.iter().enumerate() {
        if let ColKind::Pattern(k, i) = col.kind {
            if m.patterns[i].1.pods.is_empty() && m.patterns[i].1.evict.is_empty() {
                x[j] = (p.nodes[k].nodes.len() - used_nodes.get(&k).copied().unwrap_or(0)) as f64;
            }
        }
    }
    for (j, col) in m.cols.iter().enumerate() {
        match col.kind {
            ColKind::Y(c) => x[j] = p.groups[c].members.iter().filter(|&&g| a.is_placed(g)).count() as f64,
            ColKind::D(c, v) => x[j] = p.groups[c].members.iter().filter(|&&g| a.is_placed(g) && a.domain[g] == Some(v)).count() as f64,
            ColKind::S(tc, w) => {
                let (l, size) = p.tasks[tc].slice.expect("slice column of a sliced task");
                let pods = p.tasks[tc]
                    .tasks
                    .iter()
                    .flat_map(|&t| a.pods[inst.tasks[t].group].iter().filter(move |q| q.task == t))
                    .filter(|q| cycle.domain_of[l][q.node] == Some(w))
                    .count() as i64;
                x[j] = (pods / size) as f64;
            }
            ColKind::E(u) => x[j] = if a.evicted.contains(&u) { 1.0 } else { 0.0 },
            ColKind::Pattern(..) => {}
        }
    }
    m.feasible(&x).then_some(x)
}

/// The assignment of integer column values `x`: patterns onto the nodes of their class,
/// devices packed per node, pods of a class's task shared out among the placed members
/// (round robin, continuing across tasks: models/decomposition.md §2.1).
fn decode(p: &Problem, m: &Master, x: &[f64]) -> Assignment {
    let cycle = p.cycle;
    let inst = cycle.inst;
    let mut a = Assignment::empty(inst);
    // Pods per task class: (node, devices).
    let mut pods_of: Vec<Vec<(NodeId, DeviceIds)>> = vec![Vec::new(); p.tasks.len()];
    let mut next_node: Vec<usize> = vec![0; p.nodes.len()];
    let mut evicted: Vec<usize> = Vec::new();
    for (j, col) in m.cols.iter().enumerate() {
        let count = x.get(j).copied().unwrap_or(0.0).round() as usize;
        if count == 0 {
            continue;
        }
        match col.kind {
            ColKind::Pattern(k, i) => {
                let pat = &m.patterns[i].1;
                for _ in 0..count {
                    let n = p.nodes[k].nodes[next_node[k]];
                    next_node[k] += 1;
                    evicted.extend(pat.evict.iter().copied());
                    place_on_node(p, n, pat, &mut pods_of);
                }
            }
            ColKind::E(u) => evicted.push(u),
            _ => {}
        }
    }
    evicted.sort_unstable();
    evicted.dedup();
    a.evicted = evicted;
    for (c, gc) in p.groups.iter().enumerate() {
        let y = x[m.y_col[c]].round() as usize;
        if y == 0 {
            continue;
        }
        // (domain, members) blocks: one block without a required level.
        let mut blocks: Vec<(Option<usize>, Vec<usize>)> = Vec::new();
        if gc.required.is_some() {
            let mut member = 0;
            for (j, col) in m.cols.iter().enumerate() {
                if let ColKind::D(cc, v) = col.kind {
                    let d = x[j].round() as usize;
                    if cc == c && d > 0 {
                        blocks.push((Some(v), (member..member + d).collect()));
                        member += d;
                    }
                }
            }
        } else {
            blocks.push((None, (0..y).collect()));
        }
        for (dom, members) in blocks {
            let nm = members.len();
            let mut next = 0usize;
            for &tc in &gc.tasks {
                let l = gc.required;
                let pods: Vec<&(NodeId, DeviceIds)> =
                    pods_of[tc].iter().filter(|(n, _)| dom.is_none() || l.and_then(|l| cycle.domain_of[l][*n]) == dom).collect();
                let total = pods.len();
                let base = total / nm;
                let rem = total % nm;
                let mut share = vec![base; nm];
                for i in 0..rem {
                    share[(next + i) % nm] += 1;
                }
                next = (next + rem) % nm;
                let mut it = pods.into_iter();
                for (i, &mi) in members.iter().enumerate() {
                    let g = gc.members[mi];
                    let task = p.tasks[tc].tasks[mi];
                    for _ in 0..share[i] {
                        let (n, dev) = it.next().expect("shares add up to the pods");
                        a.pods[g].push(NewPod { task, node: *n, devices: dev.clone() });
                    }
                    if dom.is_some() {
                        a.domain[g] = dom;
                    }
                }
            }
        }
    }
    a
}

/// Pods of pattern `pat` on node `n`, with devices packed after its evictions.
fn place_on_node(p: &Problem, n: NodeId, pat: &Pattern, pods_of: &mut [Vec<(NodeId, DeviceIds)>]) {
    let cycle = p.cycle;
    let inst = cycle.inst;
    let mut per_pod: Vec<(usize, DeviceIds)> = Vec::new();
    for &(tc, c) in &pat.pods {
        for _ in 0..c {
            per_pod.push((tc, DeviceIds::new()));
        }
    }
    for (si, &r) in cycle.shared_ids.iter().enumerate() {
        let mut free = cycle.nodes[n].devices[si].clone();
        for &u in &pat.evict {
            for &q in &cycle.victims[u].pods {
                let pod = &inst.pods[q];
                if pod.node == n {
                    if let Some(ids) = pod.devices.get(&r) {
                        for &d in ids {
                            free[d] += if pod.requests[r] >= 1000 { 1000 } else { pod.requests[r] };
                        }
                    }
                }
            }
        }
        let mut fracs = Vec::new();
        let mut frac_of = Vec::new();
        let mut whole = 0usize;
        for (i, (tc, _)) in per_pod.iter().enumerate() {
            let q = p.tasks[*tc].req[r];
            if q >= 1000 {
                whole += (q / 1000) as usize;
            } else if q > 0 {
                fracs.push(q);
                frac_of.push(i);
            }
        }
        if fracs.is_empty() && whole == 0 {
            continue;
        }
        let mut b = 1_000_000u64;
        let Packing::Fits(choice, taken) = pack(&free, &fracs, whole, &mut b) else {
            // The pattern was checked with the same packing: cannot happen; leave the pod
            // without devices so that the validator, not a panic, reports it.
            continue;
        };
        for (k, &i) in frac_of.iter().enumerate() {
            per_pod[i].1.insert(r, vec![choice[k]]);
        }
        let mut taken = taken.into_iter();
        for (tc, ids) in per_pod.iter_mut() {
            let q = p.tasks[*tc].req[r];
            if q >= 1000 {
                let list: Vec<usize> = (&mut taken).take((q / 1000) as usize).collect();
                ids.insert(r, list);
            }
        }
    }
    for (tc, ids) in per_pod {
        pods_of[tc].push((n, ids));
    }
}

/// Rule 6 as `shared/spec/semantics.md` states it, checked on an assignment: every
/// evicted unit is needed by the groups allowed to evict it (with the unit restored and
/// the new pods of the other groups set aside, some node of the unit breaks capacity or
/// a device, read with the assignment's device ids). One message per violation.
fn rule6_violations(cycle: &Cycle, a: &Assignment) -> Vec<String> {
    let inst = cycle.inst;
    let nres = inst.resources.len();
    let pods_r = inst.resource_id(PODS);
    let mut out = Vec::new();
    let evicted_pods: std::collections::BTreeSet<PodId> = a.evicted.iter().flat_map(|&u| cycle.victims[u].pods.iter().copied()).collect();
    for &u in &a.evicted {
        let unit = &cycle.victims[u];
        if let Some(g) = unit.pending_group {
            if a.is_placed(g) {
                out.push(format!("unit of {} evicted while its group is placed", inst.pods[unit.pods[0]].name));
                continue;
            }
        }
        let nodes: std::collections::BTreeSet<NodeId> = unit.pods.iter().map(|&q| inst.pods[q].node).collect();
        let mut needed = false;
        for &n in &nodes {
            let node = &inst.nodes[n];
            let mut used = vec![0i128; nres];
            let mut dev: BTreeMap<(ResourceId, usize), (i128, usize, bool)> = BTreeMap::new();
            let mut add_dev = |r: ResourceId, d: usize, req: i64| {
                let e = dev.entry((r, d)).or_insert((0, 0, false));
                e.0 += req.min(1000) as i128;
                e.1 += 1;
                e.2 |= req >= 1000;
            };
            for (q, pod) in inst.pods.iter().enumerate() {
                if pod.node != n || (evicted_pods.contains(&q) && !unit.pods.contains(&q)) {
                    continue;
                }
                for r in 0..nres {
                    used[r] += pod.requests[r] as i128;
                }
                for (&r, ids) in &pod.devices {
                    for &d in ids {
                        add_dev(r, d, pod.requests[r]);
                    }
                }
            }
            for &g in &cycle.pending {
                if !a.is_placed(g) || !cycle.may_preempt(g, u) {
                    continue;
                }
                for np in a.pods[g].iter().filter(|np| np.node == n) {
                    let req = &inst.tasks[np.task].requests;
                    for r in 0..nres {
                        used[r] += req[r] as i128;
                    }
                    for (&r, ids) in &np.devices {
                        for &d in ids {
                            add_dev(r, d, req[r]);
                        }
                    }
                }
            }
            let cap =
                (0..nres).any(|r| !inst.shared[r] && (Some(r) != pods_r || node.limits_pods) && used[r] > node.allocatable[r] as i128);
            let devb = dev.values().any(|&(m, k, whole)| m > 1000 || (whole && k > 1));
            if cap || devb {
                needed = true;
                break;
            }
        }
        if !needed {
            out.push(format!("eviction of {} is not needed by the groups allowed to evict it", inst.pods[unit.pods[0]].name));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! The MIP over the LP's support: what it finds from the empty start is a valid master
    //! solution above it, with every pattern outside the support at zero, and no better than the
    //! MIP over every column.

    use super::*;
    use crate::exact::highs::HighsSwitches;

    /// Runs `f` on every term-1 level of every generated instance of `cases` (class, seed)
    /// that the engine takes, with preemption on: its name, cycle, problem and level.
    fn for_each_level(cases: impl IntoIterator<Item = (&'static str, u64)>, mut f: impl FnMut(&str, &Cycle, &Problem, i64)) {
        for (class, seed) in cases {
            let mut doc = crate::tooling::generate::generate(class, seed).expect("a class");
            doc.options.get_or_insert_with(Default::default).preemption = Some(true);
            let inst = Instance::from_doc(&doc).expect("generated instances are valid");
            let cycle = Cycle::new(&inst);
            if problem::unsupported(&cycle).is_some() {
                continue;
            }
            let prob = Problem::new(&cycle);
            for &level in &prob.levels {
                f(&format!("{class} s{seed}"), &cycle, &prob, level);
            }
        }
    }

    /// Under a fix of one column's box, a node's duals with the Lagrangian's column sum
    /// taken over the root's boxes (`Master::root_boxes`) still bound the root: never
    /// below the root LP's optimum (exact pricing, no fix), though the node's own bound
    /// may be.
    #[test]
    fn a_node_with_box_fixes_alone_bounds_the_whole_tree() {
        let (mut checked, mut below) = (0, 0);
        for_each_level((1..=5).map(|s| ("flat-64", s)), |case, cycle, prob, level| {
            let far = Instant::now() + Duration::from_secs(60);
            let mut m = Master::new(prob, HighsSwitches::default());
            to_columns(prob, &mut m, &crate::engine::greedy::best_start(cycle)).expect("the greedy start is valid in the master");
            let comp = Component::Placed(level);
            let root = m.colgen(&[(comp, 1.0)], f64::NEG_INFINITY, &mut Budget::new(far, None));
            let (true, Some((lp, lpx))) = (root.converged, root.lp) else { return };
            let boxes = m.column_boxes();
            let fractional = |j: &usize| boxes.contains_key(j) && (lpx[*j] - lpx[*j].round()).abs() > 1e-6;
            let Some(j) = (0..lpx.len()).find(fractional) else { return };
            let (lo, up) = boxes[&j];
            for (l, u) in [(lo, lpx[j].floor()), (lpx[j].ceil(), up)] {
                m.set_bounds(j, l, u);
                m.root_boxes = Some(boxes.clone());
                let r = m.colgen(&[(comp, 1.0)], f64::NEG_INFINITY, &mut Budget::new(far, None));
                m.root_boxes = None;
                m.set_bounds(j, lo, up);
                let name = format!("{case} {} with column {j} in [{l}, {u}]", comp.name());
                assert!(r.root_bound >= lp - 1e-6, "{name}: {} below the root LP's {lp}", r.root_bound);
                checked += 1;
                below += usize::from(r.bound < lp - 1e-6);
            }
        });
        assert!(checked > 0 && below > 0, "{checked} fixed nodes, {below} with their own bound below the root's LP");
        eprintln!("{checked} fixed nodes, {below} with their own bound below the root's LP");
    }

    #[test]
    fn the_support_mip_stays_on_the_support() {
        let (mut searched, mut improved) = (0, 0);
        let cases = (1..=8).flat_map(|s| [("flat-64", s), ("openb-64", s)]).chain((1..=3).map(|s| ("preempt-256", s)));
        for_each_level(cases, |case, cycle, prob, level| {
            let mut m = Master::new(prob, HighsSwitches::default());
            // The greedy start's columns seed the LP; the search starts from the empty
            // decision, so that there is something to find.
            let warm = crate::engine::greedy::best_start(cycle);
            to_columns(prob, &mut m, &warm).expect("the greedy start is valid in the master");
            let comp = Component::Placed(level);
            let far = Instant::now() + Duration::from_secs(60);
            let r = m.colgen(&[(comp, 1.0)], f64::INFINITY, &mut Budget::new(far, None));
            let mut x = to_columns(prob, &mut m, &Assignment::empty(cycle.inst)).expect("the empty start is valid in the master");
            x.resize(m.cols.len(), 0.0);
            let Some((lp, lpx)) = r.lp else { return };
            let only = support(&m, &lpx, &x);
            searched += 1;
            let Some(bx) = m.restricted_mip(&[(comp, 1.0)], &[], &x, Some(&only), &mut Budget::new(far, None)) else { return };
            improved += 1;
            let name = format!("{case} {}", comp.name());
            assert!(m.feasible(&bx), "{name}: infeasible");
            assert!(bx.iter().zip(&only).all(|(&v, &on)| on || v == 0.0), "{name}: a pattern outside the support is used");
            let value = m.value(comp, &bx);
            assert!(value > m.value(comp, &x) && value <= lp + 1e-6, "{name}: {value} not above the start or above the LP's {lp}");
            let all = m
                .restricted_mip(&[(comp, 1.0)], &[], &x, None, &mut Budget::new(far, None))
                .map_or(m.value(comp, &x), |ax| m.value(comp, &ax));
            assert!(value <= all + 1e-9, "{name}: {value} above the MIP over every column, {all}");
        });
        assert!(improved * 2 >= searched, "the support MIP improved {improved} of {searched} starts");
        eprintln!("the support MIP improved {improved} of {searched} starts");
    }

    /// The instance of `never_beside_low`: `never` (priority 100, `preemptionPolicy:
    /// Never`, 1 cpu) and `late` (priority 10, 2 cpu) on n1 (4 cpu) with `low` (priority 0,
    /// 2 cpu) evicted. `late` and `low` fit together (2 + 2 = 4), so the eviction is needed
    /// only with `never` there. Kept from a start that holds `never`, the repair takes
    /// `late` out (`low` then fits back beside `never`: 1 + 2 = 3); from nothing, it takes
    /// out `never`, which may not evict `low`.
    #[test]
    fn the_rule6_repair_keeps_the_groups_it_started_from() {
        use crate::baselines::k8s_preempt::tests::{never_beside_low, start_with};
        let inst = never_beside_low("", "");
        let cycle = Cycle::new(&inst);
        let prob = Problem::new(&cycle);
        let m = Master::new(&prob, HighsSwitches::default());
        let start = start_with(&inst, 0, 0);
        let mut both = start.clone();
        both.pods[1] = start_with(&inst, 1, 0).pods[1].clone();
        both.evicted = vec![0];
        let placed = |a: &Assignment| (a.is_placed(0), a.is_placed(1), a.evicted.clone());
        assert_eq!(placed(&repair_rule6(&prob, &m, both.clone(), &start)), (true, false, vec![]));
        assert_eq!(placed(&repair_rule6(&prob, &m, both, &Assignment::empty(&inst))), (false, true, vec![]));
    }

    /// `never_beside_low_and_low2`: n2 (4 cpu) holds `low2` (priority 0, 3 cpu); the
    /// incumbent places `never` on n1. `late` on n2 with `low2` evicted (2 + 3 > 4: needed)
    /// is better (one more group) and valid, so it is kept; `late` on n1 with `low`
    /// evicted is better too, but that eviction is needed only with `never` there (2 + 2
    /// = 4), an inversion, so it is not; nor is the incumbent itself, which is not better.
    #[test]
    fn a_refill_outside_the_master_is_kept_when_better_and_valid() {
        use crate::baselines::k8s_preempt::tests::{never_beside_low_and_low2, start_with};
        let inst = never_beside_low_and_low2();
        let cycle = Cycle::new(&inst);
        let prob = Problem::new(&cycle);
        let mut m = Master::new(&prob, HighsSwitches::default());
        let start = start_with(&inst, 0, 0);
        let x = to_columns(&prob, &mut m, &start).expect("the start is valid in the master");
        let unit = |pod: &str| (0..cycle.victims.len()).find(|&u| inst.pods[cycle.victims[u].pods[0]].name == pod).unwrap();
        let with_late = |n: NodeId, victim: &str| {
            let mut a = start.clone();
            a.pods[1] = start_with(&inst, 1, n).pods[1].clone();
            a.evicted = vec![unit(victim)];
            a
        };
        let mut outside = Outside::default();
        outside.offer(&prob, &m, &x, start.clone());
        assert!(outside.0.is_none(), "the incumbent itself was kept");
        outside.offer(&prob, &m, &x, with_late(0, "low"));
        assert!(outside.0.is_none(), "an inversion was kept");
        outside.offer(&prob, &m, &x, with_late(1, "low2"));
        let kept = outside.0.as_ref().map(|a| (a.is_placed(0), a.is_placed(1), a.evicted.clone()));
        assert_eq!(kept, Some((true, true, vec![unit("low2")])));
    }

    /// `late` (priority 10, 2 cpu) fits on neither 4-cpu node beside its 3-cpu victim
    /// (priority 0), so placing it evicts one of them: term 1 is 1 group, and the level's
    /// evictions are at least 1 (the LP with `late` whole still evicts a pod, in halves).
    /// A hand-off proves both and reports both rows.
    #[test]
    fn a_hand_off_proves_the_highest_eviction_level_once_term_1_is_proven() {
        let inst = Instance::from_text(
            "nodes:
  - {name: n1, allocatable: {cpu: \"4\"}}
  - {name: n2, allocatable: {cpu: \"4\"}}
podGroups:
  - {name: late, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}
pods:
  - {name: a, node: n1, priority: 0, requests: {cpu: \"3\"}, preemptible: true}
  - {name: b, node: n2, priority: 0, requests: {cpu: \"3\"}, preemptible: true}
",
        )
        .unwrap();
        let opts = Options {
            work_limit: Some(20),
            diagnostics: crate::options::Diagnostics { engine: Some(EngineChoice::Handoff), ..Default::default() },
            ..Options::default()
        };
        let h = term1_handoff(&inst, &opts).expect("a forced hand-off takes the cycle");
        assert!(h.assignment.is_placed(0));
        assert_eq!(h.assignment.evicted.len(), 1);
        assert_eq!(h.bounds.placed_by_priority.iter().map(|b| b.at_most).collect::<Vec<_>>(), [1]);
        assert_eq!(h.bounds.evicted_by_priority, [EvictedBound { priority: 0, at_least: 1 }]);
    }

    /// One 4-cpu node and a group fixed to be placed, before any column places a pod:
    /// the restricted LP is infeasible. With `g` (1 pod of 2 cpu) a column not generated
    /// yet places it, so the node's bound is 1 (the group placed), not an empty subtree;
    /// with `pair` (2 pods of 3 cpu, one gang) no column can, and the subtree is empty.
    #[test]
    fn farkas_pricing_repairs_a_node_a_new_column_meets_and_drops_one_none_meets() {
        for (group, placeable) in [
            ("{name: g, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: \"2\"}}]}", true),
            ("{name: pair, priority: 10, tasks: [{name: w, count: 2, requests: {cpu: \"3\"}}]}", false),
        ] {
            let text = format!("nodes:\n  - {{name: n1, allocatable: {{cpu: \"4\"}}}}\npodGroups:\n  - {group}\n");
            let inst = Instance::from_text(&text).unwrap();
            let cycle = Cycle::new(&inst);
            let prob = Problem::new(&cycle);
            let mut m = Master::new(&prob, HighsSwitches::default());
            let placed = (0..m.cols.len()).find(|&j| matches!(m.cols[j].kind, ColKind::Y(_))).expect("a class column");
            assert!(
                m.cols.iter().all(|c| !matches!(c.kind, ColKind::Pattern(..)) || c.entries.len() == 1),
                "a column places a pod already"
            );
            m.set_bounds(placed, 1.0, 1.0);
            let far = Instant::now() + Duration::from_secs(60);
            let r = m.colgen(&[(Component::Placed(prob.levels[0]), 1.0)], f64::NEG_INFINITY, &mut Budget::new(far, None));
            if placeable {
                assert_eq!((r.converged, r.bound.round(), r.lp.map(|l| l.0.round())), (true, 1.0, Some(1.0)), "{group}");
            } else {
                assert_eq!((r.converged, r.bound), (true, f64::NEG_INFINITY), "{group}");
            }
        }
    }

    #[test]
    fn a_round_that_ends_early_is_followed_by_another_on_the_time_left() {
        let budget = Duration::from_secs(10);
        let t0 = Instant::now();
        let deadline = t0 + budget;
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        // 3 s into a 10-s budget, after a 3-s round: another round.
        assert!(another_timed_round(Scope::Full, t0, at(3.0), deadline, budget));
        // The hand-off gives its time back to the compact model instead.
        assert!(!another_timed_round(Scope::Handoff { forced: false }, t0, at(3.0), deadline, budget));
        // Less than the share of the budget left: no round.
        assert!(!another_timed_round(Scope::Full, t0, at(9.6), deadline, budget));
        // A round that took next to nothing would end at once again.
        assert!(!another_timed_round(Scope::Full, at(3.0), at(3.01), deadline, budget));
    }
}
