//! The exact engine: a verified incumbent from the greedy and preemption baselines, then
//! the cycle MILP (`models/cycle.md`) tier by tier with HiGHS, each tier proven or
//! stopped, with bounds on what is left open.
//!
//! Phases of [`solve_exact`]: topology screening (and, for large cycles without victims,
//! a master over domain choices), the model, the warm start, the tiers on a worker
//! thread, and the decision built from the best verified solution.
//!
//! Deadline: HiGHS is told the remaining time and interrupted from its callback when the
//! deadline passes, and the tiers run on a worker thread that the caller stops waiting
//! for at the deadline (plus a small grace): whatever happens inside HiGHS, the caller
//! gets the best verified incumbent on time. With a work limit (`options.workLimit`) every
//! phase is bounded by work instead (branch-and-bound nodes, search passes), the wall
//! clock is only a safety net, and the same input gives the same decision on any machine.

pub(crate) mod bound;
mod bounds;
pub(crate) mod candidates;
#[cfg(test)]
mod crosscheck;
pub(crate) mod decomp;
pub(crate) mod decompose;
pub(crate) mod diagnose;
pub(crate) mod highs;
pub(crate) mod lns;
pub(crate) mod milp;
pub(crate) mod quota_rows;
pub(crate) mod repair;
mod ruin;
mod tiers;
pub(crate) mod topology;
pub(crate) mod witness;

use crate::baselines::k8s_preempt;
use crate::engine::assemble::assemble_with;
use crate::engine::assignment::{beats, Assignment};
use crate::engine::cycle::Cycle;
use crate::engine::{explain, greedy, Solver};
use crate::model::Instance;
use crate::options::Options;
use crate::wire::decision::{Decision, LookAhead, MasterLevel, Status, StopReason};
use milp::{tier_value, CycleModel};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use tiers::{run_tiers, Progress};

/// The exact engine as a [`Solver`].
pub struct Exact;

impl Solver for Exact {
    fn name(&self) -> &'static str {
        "exact"
    }
    fn describe(&self) -> &'static str {
        "exact cycle MILP (HiGHS), lexicographic terms 1-3 proven tier by tier; incumbent from greedy variants and the k8s-preempt baseline, hard deadline"
    }
    fn solve(&self, inst: &Instance, opts: &Options) -> Decision {
        match opts.threads {
            Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n).build() {
                Ok(pool) => pool.install(|| solve_exact(inst, opts)),
                Err(_) => solve_exact(inst, opts),
            },
            None => solve_exact(inst, opts),
        }
    }
}

/// The time and work the solve may take.
#[derive(Clone, Copy)]
struct Clock {
    start: Instant,
    budget: Duration,
    /// The caller's budget is a hard limit on the whole call: HiGHS works to an earlier
    /// deadline, leaving a reserve for it to notice the interrupt and for the decision to
    /// be built from the incumbent (explanations included).
    reserve: Duration,
    hard_deadline: Instant,
    deadline: Instant,
    /// `options.workLimit`, if any (deterministic mode).
    work: Option<u64>,
}

impl Clock {
    fn new(inst: &Instance, opts: &Options, start: Instant) -> Clock {
        let budget = opts.time_limit(inst);
        let reserve = (budget / 20).clamp(Duration::from_millis(50), Duration::from_millis(500));
        let hard_deadline = start + budget;
        let deadline = hard_deadline.checked_sub(reserve).unwrap_or(hard_deadline).max(start);
        Clock { start, budget, reserve, hard_deadline, deadline, work: opts.work_limit(inst) }
    }
}

/// Topology screening, and the decomposition master when it applies.
struct Prepared {
    topology: Option<(topology::TopologyGraph, candidates::Screening)>,
    screen_millis: u64,
    master: Option<decompose::Master>,
    /// Eligibility before the master restricted it (for explanations and the second
    /// master pass).
    unrestricted: Vec<Vec<crate::model::NodeId>>,
    /// The greedy of the whole cycle, when the master restricted it: a floor under the
    /// restricted model's result.
    full_greedy: Option<Assignment>,
}

/// The warm start: the best verified of the greedy variants and the preemption baseline.
struct WarmStart {
    values: Option<Vec<f64>>,
    placed: usize,
    from: &'static str,
}

/// Known bounds per model component (row form: an eviction row bounds minus the pods),
/// from a hand-off's proof; `None` where nothing is known.
fn known_bounds(inst: &Instance, model: &CycleModel, bounds: &crate::wire::decision::Bounds) -> Vec<Option<i64>> {
    use milp::Term;
    model
        .components
        .iter()
        .map(|c| match c.term {
            Term::Placed => bounds.placed_by_priority.iter().find(|b| b.priority == inst.level_key(c.level)).map(|b| b.at_most),
            Term::Evicted => bounds.evicted_by_priority.iter().find(|b| b.priority == c.level).map(|b| -b.at_least),
            Term::Extra => bounds.extra_by_priority.iter().find(|b| b.priority == inst.level_key(c.level)).map(|b| b.at_most),
            Term::Preferred | Term::Packing => None,
        })
        .collect()
}

/// Decides one cycle with the exact engine.
pub fn solve_exact(inst: &Instance, opts: &Options) -> Decision {
    // Large cycles (or when forced): the decomposition engine, where it is exact.
    if let Some(d) = decomp::solve_if_chosen(inst, opts) {
        return d;
    }
    let start = Instant::now();
    // Cycles with victims at a few hundred nodes: the decomposition engine proves term 1
    // first; its decision is a warm start and its bounds are known rows here.
    let handoff = decomp::term1_handoff(inst, opts);
    let mut clock = Clock::new(inst, opts, start);
    // Under a work limit, the work the hand-off took is spent.
    clock.work = clock.work.map(|w| w.saturating_sub(handoff.as_ref().map_or(0, |h| h.work)).max(1));
    let say = Say { sink: opts.progress.clone(), start: clock.start };
    if let Some(h) = &handoff {
        let b = &h.bounds;
        say.line(format_args!(
            "hand-off: the decomposition engine ran {} ms, bounds {:?} {:?}",
            h.millis, b.placed_by_priority, b.evicted_by_priority
        ));
    }
    let mut cycle = Cycle::new(inst);
    cycle.diag = Arc::new(opts.diagnostics.clone());
    cycle.cancel = opts.cancel.clone();
    cycle.work = clock.work;
    let mut prep = prepare(&mut cycle, opts, &clock, &say);
    let model = Arc::new(CycleModel::build(&cycle));
    let warm = warm_start(&cycle, &model, prep.full_greedy.take(), handoff.as_ref().map(|h| &h.assignment));
    say.line(format_args!("{} pending groups; warm start ({}) places {}", cycle.pending.len(), warm.from, warm.placed));
    let assembly = rehearse_assembly(&cycle, &model, &warm, clock.budget);
    // Until HiGHS reports a bound, nothing is proven: the gap is 100 %.
    let known = handoff.as_ref().map(|h| known_bounds(inst, &model, &h.bounds)).unwrap_or_default();
    let progress = Arc::new(Mutex::new(Progress { values: warm.values.clone(), gap: 1.0, known, ..Default::default() }));
    let rx = spawn_tiers(&cycle, &model, &progress, &clock, opts, &say);
    // Grace: HiGHS polls its interrupt between nodes and iterations.
    let stop_waiting = clock.hard_deadline.checked_sub(clock.reserve / 2 + assembly).unwrap_or(clock.start).max(clock.start);
    let finished = wait_for_worker(&rx, stop_waiting, &cycle.cancel);
    let mut p = progress.lock().map(|p| p.clone()).unwrap_or_default();
    if !finished {
        take_live_incumbent(&mut p, &model);
        say.line(format_args!("deadline: the best verified incumbent is returned, gap {:.4} %", 100.0 * p.gap));
    }
    let stopped_by = if !finished || p.cut_short {
        Some(if cycle.cancel.is_cancelled() { StopReason::Cancelled } else { StopReason::Deadline })
    } else {
        p.work_spent.then_some(StopReason::WorkLimit)
    };
    p.work_used += handoff.as_ref().map_or(0, |h| h.work);
    let mut d = finish(&mut cycle, &model, &mut prep, p, (&warm, &clock, stopped_by));
    if let Some(h) = &handoff {
        d.stats.other.insert("handoffMillis".into(), h.millis.into());
    }
    d
}

/// Topology: every (group, domain) pair of a required level screened, and the domains a
/// group cannot use even alone dropped (exact; see candidates.rs). Large cycles without
/// victims: a master over domain choices, then the joint model restricted to the chosen
/// domains (decompose.rs).
fn prepare(cycle: &mut Cycle, opts: &Options, clock: &Clock, say: &Say) -> Prepared {
    let screen_start = Instant::now();
    let screen_deadline = if clock.work.is_some() { clock.deadline } else { clock.start + clock.budget / 10 };
    let topology = prepare_topology(cycle, screen_deadline);
    let screen_millis = screen_start.elapsed().as_millis() as u64;
    let unrestricted = cycle.eligible.clone();
    let mut prep = Prepared { topology, screen_millis, master: None, unrestricted, full_greedy: None };
    let decompose = opts.diagnostics.decompose.unwrap_or_else(|| decompose::applies(cycle)) && cycle.victims.is_empty();
    if let Some((topo, s)) = prep.topology.as_ref().filter(|_| decompose) {
        let hint = greedy::best_start(cycle);
        let master_deadline = if clock.work.is_some() {
            clock.deadline
        } else {
            Instant::now() + clock.hard_deadline.saturating_duration_since(Instant::now()) * 2 / 5
        };
        let m = decompose::solve_master(cycle, topo, s, &hint, master_deadline);
        say.line(format_args!(
            "master over topology domains: {}, bounds per level {:?} (priority, groups)",
            if m.proven { "proven" } else { "not proven" },
            m.bounds
        ));
        cycle.eligible = decompose::restrict(cycle, &m, &hint);
        prep.master = Some(m);
        prep.full_greedy = Some(hint);
    }
    prep
}

/// The warm start: the best verified of the greedy variants (no evictions), the greedy of
/// the whole cycle when a master restricted it (its domains are kept, so it stays
/// feasible), the Kubernetes-style preemption baseline (evictions, reprieved) and a
/// hand-off's decision.
fn warm_start(cycle: &Cycle, model: &CycleModel, full_greedy: Option<Assignment>, handoff: Option<&Assignment>) -> WarmStart {
    let inst = cycle.inst;
    let mut best_a = greedy::best_start(cycle);
    let mut warm = model.values_of(cycle, &best_a);
    let mut ok = model.verified(&warm).is_some();
    let mut from = "greedy";
    let better = |a: &Assignment, b: &Assignment| beats(inst, &cycle.victims, a, b);
    if let Some(fg) = full_greedy {
        if let Some(fv) = model.verified(&model.values_of(cycle, &fg)) {
            if !ok || better(&fg, &best_a) {
                (best_a, warm, ok) = (fg, fv, true);
            }
        }
    }
    if !cycle.victims.is_empty() {
        let k8s = k8s_preempt::preempt_in_order(cycle).assignment;
        if let Some(kv) = model.verified(&model.values_of(cycle, &k8s)) {
            if !ok || better(&k8s, &best_a) {
                (best_a, warm, ok, from) = (k8s, kv, true, "k8s-preempt");
            }
        }
    }
    if let Some(h) = handoff {
        if let Some(hv) = model.verified(&model.values_of(cycle, h)) {
            if !ok || better(h, &best_a) {
                (best_a, warm, ok, from) = (h.clone(), hv, true, "decomposition");
            }
        }
    }
    let placed = best_a.pods.iter().filter(|p| !p.is_empty()).count();
    // A rejected warm start is a modelling bug (the greedy and the MILP disagree on a
    // rule): it is reported rather than silently solving cold.
    WarmStart { values: ok.then_some(warm), placed, from: if ok { from } else { "rejected" } }
}

/// After the deadline the decision is built from the final values: unneeded evictions
/// dropped, the assignment decoded, unplaced groups explained. Rehearsed once here on the
/// warm start (the result is thrown away), and the caller stops waiting twice that much
/// earlier: the final incumbent may place and evict more, and the worker's threads still
/// run beside it (measured: 1.45-1.7 times the rehearsal). Why: on openb-1024 seed 4
/// (1 399 groups) that work took 250 ms without victims and 0.7-1.0 s with them, more than
/// the reserve, and the cycle ended at 10.1-10.3 s of a 10 s budget.
fn rehearse_assembly(cycle: &Cycle, model: &CycleModel, warm: &WarmStart, budget: Duration) -> Duration {
    let rehearsal = Instant::now();
    if let Some(v) = &warm.values {
        let mut v = v.clone();
        model.drop_unneeded_evictions(cycle, &mut v);
        let a = model.assignment(cycle, &v);
        let _ = assemble_with(cycle, &a, Status::Feasible, 1.0, explain::Proven::Nothing);
    }
    (rehearsal.elapsed() * 2).min(budget / 4)
}

/// The tiers on a worker thread (HiGHS objects live and die there); the receiver hears
/// when it is done.
fn spawn_tiers(
    cycle: &Cycle,
    model: &Arc<CycleModel>,
    progress: &Arc<Mutex<Progress>>,
    clock: &Clock,
    opts: &Options,
    say: &Say,
) -> mpsc::Receiver<()> {
    let (tx, rx) = mpsc::channel();
    let model = Arc::clone(model);
    let progress = Arc::clone(progress);
    // The worker may outlive this call (the caller stops waiting at the deadline), so it
    // owns its own copy of the instance and of the cycle's pruned eligibility.
    let inst = Arc::new(cycle.inst.clone());
    let (eligible, notes) = (cycle.eligible.clone(), cycle.notes.clone());
    let (diag, cancel, work) = (Arc::clone(&cycle.diag), cycle.cancel.clone(), cycle.work);
    let (say, clock, rel_gap) = (say.clone(), *clock, opts.relative_gap(cycle.inst));
    std::thread::Builder::new()
        .name("tessera-milp".into())
        .spawn(move || {
            let mut cycle = Cycle::new(&inst);
            (cycle.diag, cycle.cancel, cycle.work) = (diag, cancel, work);
            (cycle.eligible, cycle.notes) = (eligible, notes);
            run_tiers(&cycle, &model, &progress, (clock.start, clock.deadline), rel_gap, &say);
            let _ = tx.send(());
        })
        .expect("spawn MILP worker");
    rx
}

/// The worker is still inside a tier. HiGHS's latest improving solution may not have
/// reached `values` yet (HiGHS returns some time after the interrupt, then the worker
/// checks and tops it up): taken here if it passes our own row check and beats what was
/// published on this tier's objective. Its earlier tiers hold: HiGHS's model has their
/// floor rows. The gap is what the live bound proves.
fn take_live_incumbent(p: &mut Progress, model: &CycleModel) {
    let Some((ti, live)) = p.live.clone() else { return };
    let coefs = &model.tiers()[ti].coefs;
    if let Some(v) = live.incumbent().and_then(|v| model.verified(&v)) {
        let val = tier_value(coefs, &v);
        if p.values.as_ref().is_none_or(|cur| val > tier_value(coefs, cur) + 1e-6 * val.abs().max(1.0)) {
            p.values = Some(v);
        }
    }
    if let Some(v) = &p.values {
        let b = live.bound();
        if b.is_finite() {
            p.gap = relative_gap(b, tier_value(coefs, v));
        }
    }
}

/// The decision from the best verified solution: unneeded evictions dropped, the second
/// master pass when it may still prove term 1, the proof, explanations and stats.
fn finish(
    cycle: &mut Cycle,
    model: &CycleModel,
    prep: &mut Prepared,
    p: Progress,
    (warm, clock, stopped_by): (&WarmStart, &Clock, Option<StopReason>),
) -> Decision {
    let inst = cycle.inst;
    let mut undone = 0;
    let assignment = match &p.values {
        Some(v) => {
            let mut v = v.clone();
            undone = model.drop_unneeded_evictions(cycle, &mut v);
            model.assignment(cycle, &v)
        }
        // The greedy start failed our own row check (a modelling bug): refuse to guess.
        None => Assignment::empty(inst),
    };
    second_master_pass(cycle, prep, &assignment, clock);
    let values = model.values_of(cycle, &assignment);
    let rows = match &prep.master {
        Some(m) => bounds::from_master(cycle, model, m, &values),
        None => bounds::from_tiers(cycle, model, &p, &values),
    };
    cycle.eligible = std::mem::take(&mut prep.unrestricted);
    let found = p.values.is_some();
    let status = if rows.all_proven && found { Status::Optimal } else { Status::Feasible };
    let proven = match status {
        Status::Optimal => explain::Proven::All,
        _ if rows.terms_proven.contains(&1) && found => explain::Proven::Term1,
        _ => explain::Proven::Nothing,
    };
    let gap = if found { rows.gap } else { 1.0 };
    let mut d = assemble_with(cycle, &assignment, status, gap, proven);
    d.bounds = Some(rows.bounds);
    let s = &mut d.stats;
    s.solver = Some("exact".into());
    s.solve_millis = Some(clock.start.elapsed().as_millis() as u64);
    s.columns = Some(model.mip.num_cols() as u64);
    s.rows = Some(model.mip.rows.len() as u64);
    s.tiers = Some(p.tiers_done.clone());
    s.tier_millis = Some(p.tier_millis.clone());
    s.tier_values = Some(p.tier_values.clone());
    // When term 1 was settled: the last tier holding a placed@ component.
    if prep.master.is_none() && rows.terms_proven.contains(&1) {
        s.term1_millis = p.tiers_done.iter().zip(&p.tier_millis).filter(|(t, _)| t.contains("placed@")).map(|(_, &ms)| ms).max();
    }
    s.terms_proven = Some(rows.terms_proven);
    if let Some(m) = &prep.master {
        s.decomposition = Some("master over domains + restricted joint model".into());
        s.master_millis = Some(m.millis);
        s.master_columns = Some(m.columns as u64);
        s.master_rows = Some(m.rows as u64);
        s.master_proven = Some(m.proven);
        s.master_bound = Some(
            m.bounds
                .iter()
                .zip(&m.settled)
                .map(|(b, how)| MasterLevel { priority: b.0, placed: b.1, settled_by: how.to_string() })
                .collect(),
        );
    }
    s.mip_nodes = Some(p.nodes);
    if let Some((_, sc)) = &prep.topology {
        screening_stats(s, sc, prep.screen_millis);
    }
    s.term1_bound = p.term1_bound;
    s.look_ahead = p.look_ahead.as_ref().map(|(tier, held)| LookAhead { tier: tier.clone(), term1_held_at: *held });
    s.warm_start_placed_groups = Some(warm.placed as u64);
    s.warm_start = Some(if warm.values.is_some() { format!("accepted ({})", warm.from) } else { "rejected".to_string() });
    s.unneeded_evictions_undone = (undone > 0).then_some(undone as u64);
    if matches!(stopped_by, Some(StopReason::Deadline | StopReason::Cancelled)) {
        s.deadline = Some("hit: returned the best verified incumbent".into());
    }
    s.stopped_by = stopped_by;
    s.work = clock.work.map(|_| p.work_used);
    d
}

/// Decomposed, master unproven, time left after the restricted model: the master's bound
/// decides the proof, so it gets the rest of the time, with the decision found as its hint
/// (a real placement: a higher floor than the greedy's). Both masters' bounds are valid
/// lexicographic upper bounds; the tighter one is kept.
fn second_master_pass(cycle: &mut Cycle, prep: &mut Prepared, assignment: &Assignment, clock: &Clock) {
    let (Some(m), Some((topo, s))) = (&prep.master, &prep.topology) else { return };
    let time_left = clock.deadline.saturating_duration_since(Instant::now()) > Duration::from_millis(500);
    if m.proven || !(time_left || clock.work.is_some()) {
        return;
    }
    let restricted = std::mem::replace(&mut cycle.eligible, prep.unrestricted.clone());
    let again = decompose::solve_master(cycle, topo, s, assignment, clock.deadline);
    cycle.eligible = restricted;
    if again.proven || again.bounds < m.bounds {
        prep.master = Some(again);
    }
}

/// Screens the candidate domains of required levels and prunes the cycle by them;
/// `None` when no pending group has a required level.
pub(super) fn prepare_topology(cycle: &mut Cycle, deadline: Instant) -> Option<(topology::TopologyGraph, candidates::Screening)> {
    if !cycle.pending.iter().any(|&g| cycle.inst.groups[g].required.is_some()) {
        return None;
    }
    let topo = topology::TopologyGraph::new(cycle);
    let s = candidates::screen(cycle, &topo, deadline);
    candidates::prune(cycle, &s);
    Some((topo, s))
}

fn screening_stats(stats: &mut crate::wire::decision::SolveStats, s: &candidates::Screening, millis: u64) {
    use candidates::Verdict;
    let count = |v: Verdict| s.candidates.iter().flatten().filter(|c| c.verdict == v).count() as u64;
    stats.candidate_domains = Some(s.candidates.iter().flatten().count() as u64);
    stats.candidates_infeasible = Some(count(Verdict::Infeasible));
    stats.candidates_unknown = Some(count(Verdict::Unknown));
    stats.candidate_sub_models = Some(s.sub_models as u64);
    stats.screen_millis = Some(millis);
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
pub(crate) struct Say {
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
