//! The exact solver: greedy incumbent, then the cycle MILP tier by tier with HiGHS.
//!
//! Deadline: HiGHS is told the remaining time and interrupted from its callback when the
//! deadline passes, and the whole MILP phase runs on a worker thread that we stop
//! waiting for at the deadline (plus a small grace): whatever happens inside HiGHS, the
//! caller gets the best verified incumbent on time.

use super::assemble::{assemble_with, Assignment};
use super::cycle::Cycle;
use super::greedy;
use super::highs::{self, MipParams, MipStatus};
use super::milp::{tier_value, CycleModel, Tier};
use super::*;
use crate::decision::Status;
use crate::model::GroupId;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

pub struct Exact;

impl Solver for Exact {
    fn name(&self) -> &'static str {
        "exact"
    }
    fn describe(&self) -> &'static str {
        "exact cycle MILP (HiGHS), lexicographic terms 1-3 proven tier by tier; incumbent from greedy variants and the k8s-preempt baseline, hard deadline"
    }
    fn solve(&self, inst: &Instance, cfg: &Options) -> Decision {
        match cfg.threads {
            Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
                Ok(pool) => pool.install(|| solve_exact(inst, cfg)),
                Err(_) => solve_exact(inst, cfg),
            },
            None => solve_exact(inst, cfg),
        }
    }
}

/// Progress shared with the worker: the best verified solution so far.
#[derive(Clone, Default)]
struct Progress {
    values: Option<Vec<f64>>,
    /// Exact tiers proven so far, and whether all of them were.
    proven_exact: bool,
    gap: f64,
    tiers_done: Vec<String>,
    /// Per entry of `tiers_done`: milliseconds from the start of the solve.
    tier_millis: Vec<u64>,
    /// Per entry of `tiers_done`: the tier's value, as fixed before the next tier (what
    /// `export-lp --tier K --fix` takes to replay tier K).
    tier_values: Vec<f64>,
    nodes: i64,
    term1_bound: Option<f64>,
    /// The tier the look-ahead worked on, and the term-1 value it held (`run_tiers`).
    look_ahead: Option<(String, f64)>,
    /// The running tier's live state (HiGHS's dual bound and latest improving solution)
    /// and its objective, while HiGHS works on it.
    live: Option<(Arc<highs::LiveRun>, Vec<(usize, f64)>)>,
}

impl Progress {
    /// Records a finished tier: its name, when it ended, the value it was fixed at.
    fn tier_done(&mut self, name: String, start: Instant, value: f64) {
        self.tiers_done.push(name);
        self.tier_millis.push(start.elapsed().as_millis() as u64);
        self.tier_values.push(value);
    }
}

pub fn solve_exact(inst: &Instance, cfg: &Options) -> Decision {
    // Large cycles (or when forced): the decomposition engine, where it is exact.
    if let Some(d) = super::colgen::solve_if_chosen(inst, cfg) {
        return d;
    }
    let start = Instant::now();
    let budget = cfg.time_limit(inst);
    // The caller's budget is a hard limit on the whole call: HiGHS works to an earlier
    // deadline, leaving a reserve for it to notice the interrupt and for us to turn the
    // incumbent into a decision (explanations included).
    let reserve = (budget / 20).clamp(Duration::from_millis(50), Duration::from_millis(500));
    let hard_deadline = start + budget;
    let deadline = hard_deadline.checked_sub(reserve).unwrap_or(hard_deadline).max(start);
    let rel_gap = cfg.relative_gap(inst);
    let say = Say { sink: cfg.progress.clone(), start };
    let mut cycle = Cycle::new(inst);
    cycle.diag = Arc::new(cfg.diagnostics.clone());
    cycle.cancel = cfg.cancel.clone();
    // Topology: screen every (group, domain) pair of a required level and drop the
    // domains a group cannot use even alone (exact; see candidates.rs).
    let screen_start = Instant::now();
    let topology = prepare_topology(&mut cycle, start + budget / 10);
    let screen_millis = screen_start.elapsed().as_millis() as u64;
    // Large cycles without victims: master over domain choices, then the joint model
    // restricted to the chosen domains (decompose.rs). `unrestricted` is kept for the
    // explanations of the final decision.
    let unrestricted = cycle.eligible.clone();
    let mut master: Option<super::decompose::Master> = None;
    let mut full_greedy: Option<Assignment> = None;
    let decompose = cfg.diagnostics.decompose.unwrap_or_else(|| super::decompose::applies(&cycle)) && cycle.victims.is_empty();
    if let Some((topo, s)) = topology.as_ref().filter(|_| decompose) {
        let hint = greedy::best_start(&cycle);
        let remaining = hard_deadline.saturating_duration_since(Instant::now());
        let m = super::decompose::solve_master(&cycle, topo, s, &hint, Instant::now() + remaining * 2 / 5);
        say.line(format_args!(
            "master over topology domains: {}, bounds per level {:?} (priority, groups)",
            if m.proven { "proven" } else { "not proven" },
            m.bounds
        ));
        cycle.eligible = super::decompose::restrict(&cycle, &m, &hint);
        master = Some(m);
        full_greedy = Some(hint);
    }
    let (topo_graph, screening) = match topology {
        Some((t, s)) => (Some(t), Some(s)),
        None => (None, None),
    };
    let eligible = Arc::new((cycle.eligible.clone(), cycle.notes.clone()));
    let model = Arc::new(CycleModel::build(&cycle));
    // Warm start: the best verified of the greedy variants (no evictions) and the
    // Kubernetes-style preemption baseline (evictions, reprieved).
    let mut greedy_a = greedy::best_start(&cycle);
    let mut warm = model.values_of(&cycle, &greedy_a);
    let mut warm_ok = model.verified(&warm).is_some();
    let mut warm_from = "greedy";
    // The greedy of the whole cycle stays feasible in the restricted model (its domains
    // are kept): a floor under the decomposed result.
    if let Some(fg) = full_greedy.take() {
        let fv = model.values_of(&cycle, &fg);
        if let Some(fv) = model.verified(&fv) {
            let better =
                super::assemble::objective(inst, &cycle.victims, &fg).compare(&super::assemble::objective(inst, &cycle.victims, &greedy_a))
                    == std::cmp::Ordering::Greater;
            if !warm_ok || better {
                greedy_a = fg;
                warm = fv;
                warm_ok = true;
            }
        }
    }
    if !cycle.victims.is_empty() {
        let k8s = super::k8s_preempt::preempt_in_order(&cycle).assignment;
        let kv = model.values_of(&cycle, &k8s);
        if let Some(kv) = model.verified(&kv) {
            let better = super::assemble::objective(inst, &cycle.victims, &k8s).compare(&super::assemble::objective(
                inst,
                &cycle.victims,
                &greedy_a,
            )) == std::cmp::Ordering::Greater;
            if !warm_ok || better {
                greedy_a = k8s;
                warm = kv;
                warm_ok = true;
                warm_from = "k8s-preempt";
            }
        }
    }
    let warm_placed = greedy_a.pods.iter().filter(|p| !p.is_empty()).count();
    say.line(format_args!(
        "{} pending groups; warm start ({}) places {warm_placed}",
        cycle.pending.len(),
        if warm_ok { warm_from } else { "rejected" }
    ));
    // After the deadline the decision is built from the final values: unneeded evictions
    // dropped, the assignment decoded, unplaced groups explained. Rehearsed once here on
    // the warm start (the result is thrown away), and the caller stops waiting twice that
    // much earlier: the final incumbent may place and evict more, and the worker's threads
    // still run beside it (measured: 1.45-1.7 times the rehearsal). Why: on openb-1024 seed
    // 4 (1 399 groups) that work took 250 ms without victims and 0.7-1.0 s with them, more
    // than the reserve, and the cycle ended at 10.1-10.3 s of a 10 s budget. On the flat
    // classes it takes milliseconds.
    let rehearsal = Instant::now();
    if warm_ok {
        let mut v = warm.clone();
        model.drop_unneeded_evictions(&cycle, &mut v);
        let a = model.assignment(&cycle, &v);
        let _ = assemble_with(&cycle, &a, Status::Feasible, 1.0, super::explain::Proven::Nothing);
    }
    let assembly = (rehearsal.elapsed() * 2).min(budget / 4);
    // Until HiGHS reports a bound, nothing is proven: the gap is 100 %.
    let progress =
        Arc::new(Mutex::new(Progress { values: if warm_ok { Some(warm.clone()) } else { None }, gap: 1.0, ..Default::default() }));

    // The MILP phase on a worker thread (HiGHS objects live and die there).
    let (tx, rx) = mpsc::channel();
    {
        let model = Arc::clone(&model);
        let progress = Arc::clone(&progress);
        // The worker may outlive this call (we stop waiting at the deadline), so it owns
        // its own copy of the instance.
        let inst = Arc::new(inst.clone());
        let eligible = Arc::clone(&eligible);
        let diag = Arc::clone(&cycle.diag);
        let cancel = cycle.cancel.clone();
        let say = say.clone();
        std::thread::Builder::new()
            .name("tessera-milp".into())
            .spawn(move || {
                let mut cycle = Cycle::new(&inst);
                cycle.diag = diag;
                cycle.cancel = cancel;
                cycle.eligible = eligible.0.clone();
                cycle.notes = eligible.1.clone();
                run_tiers(&cycle, &model, &progress, (start, deadline), rel_gap, &say);
                let _ = tx.send(());
            })
            .expect("spawn MILP worker");
    }
    // Grace: HiGHS polls its interrupt between nodes/iterations.
    let stop_waiting = hard_deadline.checked_sub(reserve / 2 + assembly).unwrap_or(start).max(start);
    let finished = wait_for_worker(&rx, stop_waiting, &cycle.cancel);
    let mut p = progress.lock().map(|p| p.clone()).unwrap_or_default();
    if !finished {
        // The worker is still inside a tier. HiGHS's latest improving solution may not
        // have reached `values` yet (HiGHS returns some time after the interrupt, then
        // the worker checks and tops it up): take it here if it passes our own row check
        // and beats what was published on this tier's objective. Its earlier tiers hold:
        // HiGHS's model has their floor rows.
        if let Some((live, coefs)) = &p.live {
            if let Some(v) = live.incumbent().and_then(|v| model.verified(&v)) {
                let val = tier_value(coefs, &v);
                if p.values.as_ref().is_none_or(|cur| val > tier_value(coefs, cur) + 1e-6 * val.abs().max(1.0)) {
                    p.values = Some(v);
                }
            }
        }
        // Its gap is what the live bound proves.
        if let (Some((live, coefs)), Some(v)) = (&p.live, &p.values) {
            let b = live.bound();
            if b.is_finite() {
                let val = tier_value(coefs, v);
                p.gap = relative_gap(b, val);
            }
        }
        say.line(format_args!("deadline: the best verified incumbent is returned, gap {:.4} %", 100.0 * p.gap));
    }

    let mut undone = 0;
    let (assignment, status, gap) = match &p.values {
        Some(v) => {
            let mut v = v.clone();
            undone = model.drop_unneeded_evictions(&cycle, &mut v);
            let a = model.assignment(&cycle, &v);
            let status = if p.proven_exact { Status::Optimal } else { Status::Feasible };
            (a, status, if status == Status::Optimal { 0.0f64.max(p.gap) } else { p.gap })
        }
        // The greedy start failed our own row check (a modelling bug): refuse to guess.
        None => (Assignment::empty(inst), Status::Feasible, 1.0),
    };
    // Decomposed, master unproven, time left after the restricted model: the master's
    // bound decides the proof, so it gets the rest of the time, with the decision found as
    // its hint (a real placement: a higher floor than the greedy's). Both masters' bounds
    // are valid lexicographic upper bounds; the tighter one is kept.
    if let (Some(m), Some(topo), Some(s)) = (&master, &topo_graph, &screening) {
        if !m.proven && deadline.saturating_duration_since(Instant::now()) > Duration::from_millis(500) {
            let restricted = std::mem::replace(&mut cycle.eligible, unrestricted.clone());
            let again = super::decompose::solve_master(&cycle, topo, s, &assignment, deadline);
            cycle.eligible = restricted;
            if again.proven || again.bounds < m.bounds {
                master = Some(again);
            }
        }
    }
    // Decomposed: terms are proven against the master bound, not the restricted model.
    let (status, gap, decomposed_terms) = match &master {
        Some(m) if p.values.is_some() => {
            let got = super::decompose::placed_by_level(&cycle, &assignment, &m.bounds);
            let w = super::decompose::level_weights(&cycle, &m.bounds);
            let bound: f64 = m.bounds.iter().zip(&w).map(|(b, w)| b.1 as f64 * w).sum();
            let value: f64 = got.iter().zip(&w).map(|(&k, w)| k as f64 * w).sum();
            let term1 = m.proven && got.iter().zip(&m.bounds).all(|(&k, b)| k >= b.1);
            // Term 2 is 0 (no victims); term 3 is settled only when no group is elastic.
            let rigid = cycle.pending.iter().all(|&g| inst.max_new_pods(g) == inst.min_new_pods(g));
            let terms: Vec<i64> = if term1 && rigid {
                vec![1, 2, 3]
            } else if term1 {
                vec![1, 2]
            } else {
                vec![]
            };
            let st = if terms.len() == 3 { Status::Optimal } else { Status::Feasible };
            (st, if term1 { 0.0 } else { relative_gap(bound, value) }, Some(terms))
        }
        _ => (status, gap, None),
    };
    cycle.eligible = unrestricted;
    // Which objective terms are settled: all their components in finished tiers.
    let done: Vec<&str> = p.tiers_done.iter().flat_map(|t| t.split(" (").next().unwrap_or("").split('+')).collect();
    let mut proven_terms = Vec::new();
    for (term, prefix) in [(1, "placed@"), (2, "evicted@"), (3, "extra@")] {
        let all: Vec<&str> = model.components.iter().filter(|c| c.exact && c.name.starts_with(prefix)).map(|c| c.name.as_str()).collect();
        if all.iter().all(|c| done.contains(c)) && (term == 1 || proven_terms.len() == term - 1) {
            proven_terms.push(term);
        }
    }
    let term1 = match &decomposed_terms {
        Some(t) => t.first() == Some(&1),
        None => proven_terms.first() == Some(&1),
    };
    let proven = match status {
        Status::Optimal => super::explain::Proven::All,
        _ if term1 && p.values.is_some() => super::explain::Proven::Term1,
        _ => super::explain::Proven::Nothing,
    };
    let mut d = assemble_with(&cycle, &assignment, status, gap, proven);
    d.stats.insert("solver".into(), "exact".into());
    d.stats.insert("solveMillis".into(), (start.elapsed().as_millis() as u64).into());
    d.stats.insert("columns".into(), model.mip.num_cols().into());
    d.stats.insert("rows".into(), model.mip.rows.len().into());
    d.stats.insert("tiers".into(), p.tiers_done.clone().into());
    d.stats.insert("tierMillis".into(), p.tier_millis.clone().into());
    d.stats.insert("tierValues".into(), p.tier_values.clone().into());
    // When term 1 was settled: the last tier holding a placed@ component.
    if decomposed_terms.is_none() && term1 {
        let t1 = p.tiers_done.iter().zip(&p.tier_millis).filter(|(t, _)| t.contains("placed@")).map(|(_, &ms)| ms).max();
        if let Some(ms) = t1 {
            d.stats.insert("term1Millis".into(), ms.into());
        }
    }
    d.stats.insert("termsProven".into(), decomposed_terms.clone().unwrap_or(proven_terms.into_iter().map(|t| t as i64).collect()).into());
    if let Some(m) = &master {
        d.stats.insert("decomposition".into(), "master over domains + restricted joint model".into());
        d.stats.insert("masterMillis".into(), m.millis.into());
        d.stats.insert("masterColumns".into(), m.columns.into());
        d.stats.insert("masterRows".into(), m.rows.into());
        d.stats.insert("masterProven".into(), m.proven.into());
        d.stats.insert(
            "masterBound".into(),
            m.bounds
                .iter()
                .zip(&m.settled)
                .map(|(b, how)| serde_json::json!({"priority": b.0, "placed": b.1, "settledBy": how}))
                .collect::<Vec<_>>()
                .into(),
        );
    }
    d.stats.insert("mipNodes".into(), p.nodes.into());
    if let Some(s) = &screening {
        screening_stats(&mut d, s, screen_millis);
    }
    if let Some(b) = p.term1_bound {
        d.stats.insert("term1Bound".into(), b.into());
    }
    if let Some((tier, held_at)) = &p.look_ahead {
        d.stats.insert("lookAhead".into(), serde_json::json!({"tier": tier, "term1HeldAt": held_at}));
    }
    d.stats.insert("warmStartPlacedGroups".into(), warm_placed.into());
    // A rejected warm start is a modelling bug (the greedy and the MILP disagree on a
    // rule): make it visible rather than silently solving cold.
    d.stats.insert("warmStart".into(), if warm_ok { format!("accepted ({warm_from})") } else { "rejected".to_string() }.into());
    if undone > 0 {
        d.stats.insert("unneededEvictionsUndone".into(), undone.into());
    }
    if !finished {
        d.stats.insert("deadline".into(), "hit: returned the best verified incumbent".into());
    }
    d
}

/// The least patience of the term-1 search before the look-ahead (`run_tiers`). Measured
/// at 2 s budgets (18 instances, interleaved): with a quarter of the time left alone,
/// about 0.4 s, the look-ahead placed fewer groups than without it on 6 (the search's
/// term-1 gains came further apart than that) and more on none; at 10 s, with about
/// 2.1 s, on none of 36 runs.
const LOOK_AHEAD_MIN_PATIENCE: Duration = Duration::from_secs(2);

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

fn run_tiers(cycle: &Cycle, model: &CycleModel, progress: &Mutex<Progress>, (start, deadline): (Instant, Instant), rel_gap: f64, say: &Say) {
    let started = Instant::now();
    let mut mip = model.mip.clone();
    let mut incumbent = progress.lock().unwrap().values.clone();
    let tiers = model.tiers();
    // A quick bound on term 1 from the aggregated relaxation: the gap we can report even
    // if the full model never gets through its first LP. As a cut in the full model
    // (`TESSERA_CUT=1`) it is valid but left out by default: over flat-256 seeds 1-25,
    // without it and without minimum pods (below) term 1 was proven within 10 s on 21 of
    // 25 against 16 (models/cycle.md 9, eighth session).
    let (by_group, t1_coefs, t1_magnitude) = model.term1_weights(cycle);
    let remaining = deadline.saturating_duration_since(Instant::now());
    let bound_deadline = Instant::now() + (remaining / 5).min(std::time::Duration::from_secs(2));
    let t1_bound = super::bound::term1_bound(cycle, &by_group, bound_deadline);
    let t1_value = |v: &Option<Vec<f64>>| v.as_ref().map(|v| tier_value(&t1_coefs, v)).unwrap_or(0.0);
    let relax_gap = |v: &Option<Vec<f64>>| t1_bound.map(|ub| relative_gap(ub, t1_value(v)));
    if let Some(ub) = t1_bound {
        let inc = t1_value(&incumbent);
        say.line(format_args!("term-1 relaxation bound {ub} (warm start {inc})"));
        let mut p = progress.lock().unwrap();
        p.gap = relative_gap(ub, inc);
        p.term1_bound = Some(ub);
        drop(p);
        if t1_magnitude <= super::milp::EXACT_MAGNITUDE && cycle.diag.cut {
            mip.add_row(-highs::INF, ub + 0.5, t1_coefs.clone());
        }
    }
    let exact_total = tiers.iter().filter(|t| t.exact).count();
    let mut exact_done = 0;
    let mut proven = true;
    let mut gap = 0.0;
    for (ti, tier) in tiers.iter().enumerate() {
        if Instant::now() >= deadline || cycle.cancel.is_cancelled() {
            if tier.exact {
                proven = false;
                if exact_done == 0 {
                    // Nothing of the full model settled yet: the relaxation's gap.
                    gap = relax_gap(&incumbent).unwrap_or(1.0);
                }
            }
            break;
        }
        // Before a later proven tier: re-place the groups the incumbent places with the
        // greedy heuristics (fewer evictions, more elastic pods); kept only if every row so
        // far holds (so the earlier tiers keep their optimum) and this tier or a later one
        // gets better.
        if tier.exact && exact_done > 0 {
            if let Some(inc) = incumbent.as_ref() {
                let later: Vec<&Tier> = tiers[ti..].iter().filter(|t| t.exact).collect();
                // At most a quarter of the time left: at 1,024 nodes one candidate can take
                // most of a second (models/cycle.md 9, eleventh session).
                let until = Instant::now() + deadline.saturating_duration_since(Instant::now()) / 4;
                if let Some(better) = repack(cycle, model, &mip, inc, &later, until) {
                    incumbent = Some(better);
                    progress.lock().unwrap().values = incumbent.clone();
                }
            }
        }
        // Proven without a solver: the incumbent reaches the largest value the column
        // bounds allow (an `evicted@` tier with no eviction), or the tier is term 1 alone
        // and the incumbent meets the relaxation bound.
        let only_term1 = tier.names.iter().all(|n| n.starts_with("placed@"));
        let shortcut = incumbent.as_ref().and_then(|inc| {
            let top = || tier.coefs.iter().map(|&(c, a)| (a * mip.col_lower[c]).max(a * mip.col_upper[c])).sum::<f64>();
            if tier.exact && rel_gap == 0.0 && tier_value(&tier.coefs, inc) >= top() - 0.5 {
                Some("column bounds")
            } else if only_term1
                && t1_bound.is_some_and(|ub| t1_value(&incumbent) >= ub - 0.5)
                && t1_magnitude <= super::milp::EXACT_MAGNITUDE
            {
                Some("relaxation bound")
            } else {
                None
            }
        });
        if let (Some(how), Some(inc)) = (shortcut, incumbent.as_ref()) {
            let val = tier_value(&tier.coefs, inc);
            mip.add_row(val.round() - 0.5, highs::INF, tier.coefs.clone());
            fix_components(model, &mut mip, tier, inc);
            let mut p = progress.lock().unwrap();
            p.tier_done(format!("{} (proven by the {how})", tier.names.join("+")), start, val);
            // `+ 0.0`: an `evicted@` tier's maximum is -0.0, printed as 0.
            say.line(format_args!("tier {}: proven by the {how}, value {}", tier.names.join("+"), val + 0.0));
            exact_done += 1;
            p.proven_exact = proven && exact_done == exact_total && gap == 0.0;
            p.gap = gap;
            continue;
        }
        for c in mip.col_cost.iter_mut() {
            *c = 0.0;
        }
        for &(c, v) in &tier.coefs {
            mip.col_cost[c] = v;
        }
        // While this tier runs, what is proven is what HiGHS's bound says: publish it,
        // so a caller that stops waiting at the deadline reports an honest gap.
        // Term 1 alone, with the relaxation's weights: its bound is known before HiGHS
        // starts, and a solution that meets it (from HiGHS or the search) ends the tier.
        let ceiling = t1_bound.filter(|_| t1_magnitude <= super::milp::EXACT_MAGNITUDE && same_terms(&tier.coefs, &t1_coefs));
        let live = Arc::new(ceiling.map_or_else(highs::LiveRun::default, highs::LiveRun::with_ceiling));
        if tier.exact {
            let mut p = progress.lock().unwrap();
            p.live = Some((Arc::clone(&live), tier.coefs.clone()));
            if exact_done == 0 {
                // Before any bound of the full model: the relaxation's, if any.
                p.gap = relax_gap(&incumbent).unwrap_or(1.0);
            } else {
                p.gap = 1.0;
            }
        }
        // Term 4 is a tie-break: it may not hold the answer back for long once terms
        // 1-3 are settled (a quarter of the time spent so far, between 200 ms and 1 s).
        let tier_deadline = if tier.exact {
            deadline
        } else {
            let spent = Instant::now().saturating_duration_since(started);
            deadline.min(Instant::now() + (spent / 4).clamp(std::time::Duration::from_millis(200), std::time::Duration::from_secs(1)))
        };
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let params = MipParams {
            deadline: tier_deadline,
            rel_gap: if tier.exact { rel_gap } else { 1e-3 },
            // Objectives are integer-valued: a bound within 1 of the incumbent proves it.
            abs_gap: if tier.exact { 0.999 } else { 1e-6 },
            live: Some(Arc::clone(&live)),
            stop: Some(Arc::clone(&stop)),
            cancel: Some(Arc::clone(cycle.cancel.flag())),
            // Only what beats the incumbent: HiGHS prunes and fixes columns by reduced
            // cost against it from the start instead of after its own first good
            // solution (flat-256 seed 4, term-3 bound after 10 s: 26 287 -> 23 947).
            beat_start: tier.exact && rel_gap == 0.0 && !cycle.diag.no_cutoff,
            ..MipParams::until(tier_deadline, 0.0, 0.0).with(&cycle.diag)
        };
        // The incumbent is not handed to HiGHS (see highs.rs); its value goes in as a
        // row instead, so HiGHS prunes what cannot beat it. Exact: the incumbent itself
        // satisfies the row, and the row never cuts a better solution.
        let mut tier_mip_extra = None;
        let floor_here = match cycle.diag.floor {
            crate::options::FloorRows::None => false,
            crate::options::FloorRows::All => tier.exact,
            crate::options::FloorRows::Term1 => tier.exact && tier.names.iter().all(|n| n.starts_with("placed@")),
        };
        if floor_here {
            if let Some(v) = incumbent.as_ref() {
                let val = tier_value(&tier.coefs, v);
                mip.add_row(val.round() - 0.5, highs::INF, tier.coefs.clone());
                tier_mip_extra = Some(mip.rows.len() - 1);
            }
        }
        // Large models: a neighbourhood search on the second core looks for a better
        // incumbent meanwhile (lns.rs), and stops HiGHS once it meets HiGHS's bound.
        // The first exact tier too since the ninth session (it was left out when on
        // flat-1024 a search beside it cost HiGHS more than it found): HiGHS's root work
        // there can take a short budget whole. Measured, the same session: flat-256 (25
        // seeds) 720 -> 741 groups placed at 2 s and 781 -> 787 at 10 s (term 1 proven on
        // 21 -> 22 of 25), flat-1024 (5 seeds, 10 s) 340 -> 348.
        let lns_start =
            incumbent.as_deref().filter(|_| tier.exact && mip.num_cols() >= super::lns::MIN_COLUMNS && !cycle.diag.no_lns);
        // Terms 1-2 only, with `TESSERA_MIN_PODS=1`: minimum pods per placed group (exact,
        // see the method). Off by default since the eighth session: it made HiGHS faster on
        // the four flat-256 seeds it was chosen on, and slower at the tail of 25 seeds.
        let minimum_only = cycle.diag.min_pods
            && tier.names.iter().all(|n| n.starts_with("placed@") || n.starts_with("evicted@"))
            && model.minimum_pods_only(&mut mip, true);
        // Look-ahead: in the term-1 tier, once the search has stalled (nothing found for
        // a quarter of the time left and at least `LOOK_AHEAD_MIN_PATIENCE`, or a round
        // of its largest blocks found nothing), the second core moves on to the next
        // tier's evictions with term 1 held at the best value found (a floor row), while
        // HiGHS goes on with term 1. If HiGHS then proves term 1 at that value, the
        // eviction tier starts from the look-ahead's placement; if it finds a better
        // term 1, that wins; at the deadline the decision has term 1's best value and
        // fewer evictions. Nothing is claimed proven that was not. Why: at 1,024 nodes
        // term 1 takes the whole budget, so the eviction tier never ran and the decision
        // kept every eviction of the term-1 incumbent (models/cycle.md 6.7).
        let ahead = lns_start.and_then(|start| {
            if !only_term1 || rel_gap > 0.0 || cycle.diag.no_look_ahead {
                return None;
            }
            let next = tiers[ti + 1..].iter().find(|t| t.exact)?;
            (next.names.iter().all(|n| n.starts_with("evicted@")) && tier_value(&next.coefs, start) < -0.5).then_some(next)
        });
        let patience = ahead.map(|_| {
            cycle.diag
                .look_ahead_patience
                .unwrap_or((deadline.saturating_duration_since(Instant::now()) / 4).max(LOOK_AHEAD_MIN_PATIENCE))
        });
        let (res, lns_best, ahead_best) = loop {
            let (res, lns_best, ahead_best) = std::thread::scope(|s| {
                let search = lns_start.map(|start| {
                    let (mip, stop, live) = (&mip, &stop, &live);
                    s.spawn(move || {
                        let mut publish = |v: &[f64]| progress.lock().unwrap().values = Some(v.to_vec());
                        let until = super::lns::Until {
                            deadline,
                            stop,
                            live,
                            fixed_groups_first: !cycle.diag.no_fixed_groups,
                            patience,
                        };
                        let found = super::lns::search(model, mip, tier, start, until, &mut publish);
                        let ahead_best = ahead.filter(|_| !stop.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline);
                        let ahead_best = ahead_best.and_then(|next| {
                            let from = found.as_deref().unwrap_or(start);
                            let held_at = tier_value(&tier.coefs, from);
                            progress.lock().unwrap().look_ahead = Some((next.names.join("+"), held_at));
                            say.line(format_args!(
                                "tier {}: the search stalled (patience {} ms); it works on {} with this tier held at {held_at}, while HiGHS goes on",
                                tier.names.join("+"),
                                patience.unwrap_or_default().as_millis(),
                                next.names.join("+")
                            ));
                            super::lns::look_ahead(model, mip, (tier, next), from, (deadline, stop), &mut publish)
                        });
                        (found, ahead_best)
                    })
                });
                let res = highs::solve(&mip, incumbent.as_deref(), &params);
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                let (found, ahead_best) = search.and_then(|h| h.join().ok()).unwrap_or_default();
                (res, found, ahead_best)
            });
            // HiGHS's answer overflows a capacity row it sees only scaled (4.7): the same
            // tier again, with those rows sharpened so that HiGHS sees the overflow too.
            // Without this the tier can never be proven (models/cycle.md 10, item 4).
            if super::milp::verify_rows(&mip, &res.values).is_none()
                && Instant::now() < tier_deadline
                && super::milp::sharpen_broken_rows(&mut mip, &res.values) > 0
            {
                say.line(format_args!(
                    "tier {}: a solution overflowed a capacity row by less than HiGHS's tolerance; rows sharpened, solving again",
                    tier.names.join("+")
                ));
                stop.store(false, std::sync::atomic::Ordering::Relaxed);
                continue;
            }
            break (res, lns_best, ahead_best);
        };
        if minimum_only {
            model.minimum_pods_only(&mut mip, false);
        }
        if let Some(i) = tier_mip_extra {
            mip.rows.remove(i);
        }
        // Checked against the rows that hold earlier tiers too.
        let verified = super::milp::verify_rows(&mip, &res.values);
        let verified_ok = verified.is_some();
        let improved = match (&verified, &incumbent) {
            (Some(v), Some(old)) => tier_value(&tier.coefs, v) >= tier_value(&tier.coefs, old) - 1e-6,
            (Some(_), None) => true,
            _ => false,
        };
        if improved {
            incumbent = verified;
        }
        // The search's best, if strictly better (HiGHS's own answer wins ties, so a tier
        // HiGHS proves ends with the same solution with or without the search).
        if let Some(l) = lns_best {
            if incumbent.as_ref().is_none_or(|inc| tier_value(&tier.coefs, &l) > tier_value(&tier.coefs, inc) + 0.5) {
                incumbent = Some(l);
            }
        }
        // The look-ahead's placement, if it has this tier's best value and fewer evictions.
        if let (Some(la), Some(next)) = (ahead_best, ahead) {
            let (t, n) = (|v: &[f64]| tier_value(&tier.coefs, v), |v: &[f64]| tier_value(&next.coefs, v));
            if incumbent.as_deref().is_none_or(|inc| t(&la) >= t(inc) - 0.5 && n(&la) > n(inc) + 0.5) {
                incumbent = Some(la);
            }
        }
        // Published at once: the caller may stop waiting at the deadline while the steps
        // below still run, and must not fall back to an older incumbent (measured: a
        // flat-1024 cycle returned its warm start, 13 groups fewer, when the assignment
        // read-back was slow).
        progress.lock().unwrap().values = incumbent.clone();
        // No incumbent keeps evictions it does not need (term 2 would only get better).
        if let Some(v) = incumbent.as_mut() {
            model.drop_unneeded_evictions_in(cycle, &mip, v);
        }
        // Before a tier that counts elastic pods, top the incumbent up with them.
        if tier.exact && incumbent.is_some() {
            if let Some(better) = fill_elastic_values(cycle, model, &mip, incumbent.as_ref().unwrap()) {
                incumbent = Some(better);
            }
        }
        let value = incumbent.as_ref().map(|v| tier_value(&tier.coefs, v));
        if cycle.diag.debug {
            eprintln!(
                "[{} ms] tier {}: status {:?}, verified {}, improved {}, value {:?}, bound {}",
                started.elapsed().as_millis(),
                tier.names.join("+"),
                res.status,
                verified_ok,
                improved,
                value,
                res.dual_bound
            );
        }
        {
            let mut p = progress.lock().unwrap();
            p.values = incumbent.clone();
            p.nodes += res.nodes;
        }
        // Proven when HiGHS says so with a solution we verified, or when a bound alone is
        // within 1 of our incumbent (integer objective): HiGHS's, or the ceiling known
        // before the tier; e.g. interrupted with nothing better found while the bound
        // already meets the incumbent.
        let bound = live.cap(res.dual_bound);
        let bound_meets = tier.exact && rel_gap == 0.0 && bound.is_finite() && value.is_some_and(|v| bound < v + 0.999);
        let done = (res.status == MipStatus::Optimal && improved) || bound_meets;
        if say.sink.is_some() {
            let how = match res.status {
                MipStatus::Optimal if tier.exact => "proven",
                _ if done && ceiling.is_some_and(|c| value.is_some_and(|v| c < v + 0.999)) => {
                    "proven (the incumbent meets the relaxation bound)"
                }
                _ if done => "proven (the incumbent meets HiGHS's bound)",
                MipStatus::Optimal => "best effort, done",
                _ if !tier.exact => "best effort, its time slice ended",
                _ if Instant::now() >= tier_deadline => "stopped by the deadline",
                _ => "stopped",
            };
            let value = value.map_or("none".to_string(), |v| v.to_string());
            let bound = if bound.is_finite() { bound.to_string() } else { "none".to_string() };
            say.line(format_args!("tier {}: {how}, value {value}, bound {bound}", tier.names.join("+")));
        }
        if tier.exact && !done {
            proven = false;
            if let Some(val) = value {
                // No bound from HiGHS (stopped before its first LP): nothing proven.
                if res.dual_bound.is_finite() {
                    gap = relative_gap(res.dual_bound, val);
                } else {
                    gap = if only_term1 { relax_gap(&incumbent).unwrap_or(1.0) } else { 1.0 };
                }
            }
            break;
        }
        if tier.exact && rel_gap > 0.0 && res.dual_bound.is_finite() {
            if let Some(val) = value {
                gap = relative_gap(res.dual_bound, val).max(gap);
            }
        }
        // Fix the tier at its optimum before the next one.
        let fixed_at = match value {
            Some(val) => {
                let floor = if tier.exact && rel_gap == 0.0 { val.round() - 0.5 } else { val - 1e-6 * val.abs().max(1.0) };
                mip.add_row(floor, highs::INF, tier.coefs.clone());
                if tier.exact && rel_gap == 0.0 {
                    fix_components(model, &mut mip, tier, incumbent.as_ref().unwrap());
                }
                val
            }
            None => break,
        };
        let mut p = progress.lock().unwrap();
        p.live = None;
        p.tier_done(tier.names.join("+"), start, fixed_at);
        if tier.exact {
            exact_done += 1;
            // Terms 1-3 are settled once the last exact tier is: term 4 may still run
            // into the deadline without changing the status.
            p.proven_exact = proven && exact_done == exact_total && gap == 0.0;
            p.gap = gap;
        }
    }
    let mut p = progress.lock().unwrap();
    p.proven_exact = proven && exact_done == exact_total && incumbent.is_some() && gap == 0.0;
    p.gap = gap;
}

/// Screens the candidate domains of required levels and prunes the cycle by them;
/// `None` when no pending group has a required level.
pub(super) fn prepare_topology(
    cycle: &mut Cycle,
    deadline: Instant,
) -> Option<(super::topology::TopologyGraph, super::candidates::Screening)> {
    if !cycle.pending.iter().any(|&g| cycle.inst.groups[g].required.is_some()) {
        return None;
    }
    let topo = super::topology::TopologyGraph::new(cycle);
    let s = super::candidates::screen(cycle, &topo, deadline);
    super::candidates::prune(cycle, &s);
    Some((topo, s))
}

pub(super) fn screening_stats(d: &mut Decision, s: &super::candidates::Screening, millis: u64) {
    use super::candidates::Verdict;
    let all = s.candidates.iter().flatten();
    let count = |v: Verdict| s.candidates.iter().flatten().filter(|c| c.verdict == v).count();
    d.stats.insert("candidateDomains".into(), all.count().into());
    d.stats.insert("candidatesInfeasible".into(), count(Verdict::Infeasible).into());
    d.stats.insert("candidatesUnknown".into(), count(Verdict::Unknown).into());
    d.stats.insert("candidateSubModels".into(), s.sub_models.into());
    d.stats.insert("screenMillis".into(), millis.into());
}

/// After a proven tier (zero gap) made of several components: each component fixed at
/// the incumbent's value, `c_i = c_i(inc)`. Exact: the incumbent is a lexicographic
/// maximizer of the tier's components, so a solution with `W >= W(inc)` (the fixing row)
/// has the same value in every component (at the first component where it differed it
/// would be lower, and by the safe weights `W` would drop by at least 1). The rows cut
/// nothing the fixing row keeps, and give the LP the per-level counts (e.g. groups placed
/// per priority) instead of one weighted sum it can trade fractionally between levels.
fn fix_components(model: &CycleModel, mip: &mut highs::Mip, tier: &Tier, inc: &[f64]) {
    if tier.names.len() < 2 {
        return;
    }
    for name in &tier.names {
        if let Some(c) = model.components.iter().find(|c| &c.name == name) {
            let v = tier_value(&c.coefs, inc).round();
            mip.add_row(v - 0.5, v + 0.5, c.coefs.clone());
        }
    }
}

/// The incumbent's placed groups placed again by the greedy variants (no evictions) and
/// by the k8s-preempt order restricted to them, each topped up with elastic pods; the best
/// by the `later` tiers (lexicographically) if it satisfies every row of `mip` (so every
/// tier fixed so far) and beats the incumbent there. A heuristic: it only supplies
/// incumbents, never a proof. No candidate is started after `until`.
fn repack(cycle: &Cycle, model: &CycleModel, mip: &highs::Mip, inc: &[f64], later: &[&Tier], until: Instant) -> Option<Vec<f64>> {
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
                cands.push(Box::new(move || super::k8s_preempt::preempt_in_given_order(cycle, order, elastic).assignment));
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
        if Instant::now() >= until || cycle.cancel.is_cancelled() {
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

/// Waits for the worker's end signal until `stop_waiting` or a cancel, whichever comes
/// first; true if the worker finished.
fn wait_for_worker(rx: &mpsc::Receiver<()>, stop_waiting: Instant, cancel: &crate::options::CancelHandle) -> bool {
    // Polled in short slices: a cancel is seen within one slice.
    const SLICE: Duration = Duration::from_millis(10);
    loop {
        let left = stop_waiting.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left.min(SLICE)) {
            Ok(()) => return true,
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
            Err(mpsc::RecvTimeoutError::Timeout) if left <= SLICE || cancel.is_cancelled() => return false,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

/// |bound - incumbent| relative to the larger of the two (a maximization), in [0, 1].
fn relative_gap(bound: f64, incumbent: f64) -> f64 {
    if !bound.is_finite() || !incumbent.is_finite() {
        return 1.0;
    }
    let diff = (bound - incumbent).max(0.0);
    (diff / bound.abs().max(incumbent.abs()).max(1.0)).clamp(0.0, 1.0)
}

/// Progress lines (`solve --progress`), timestamped from the start of the solve, or nothing.
#[derive(Clone)]
struct Say {
    sink: Option<crate::options::ProgressSink>,
    start: Instant,
}

impl Say {
    fn line(&self, msg: std::fmt::Arguments) {
        if let Some(sink) = &self.sink {
            sink.say(&format!("[{} ms] {msg}", self.start.elapsed().as_millis()));
        }
    }
}
