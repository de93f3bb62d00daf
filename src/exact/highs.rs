//! The one module that talks to HiGHS (through `highs-sys`).
//!
//! Why the raw C API and not `good_lp` or `highs::Model`: we need three things those
//! wrappers do not all give us — a MIP start (kept off by default, see `solve`), an
//! interrupt callback (HiGHS's own `time_limit` is soft; runs overshooting 10x were seen
//! here) and the dual bound / gap of an interrupted run. Everything else in the crate sees
//! only [`Mip`] (plain data, `Send`) and [`MipResult`].

use highs_sys::*;
use std::ffi::{c_int, c_void, CString};
use std::time::Instant;

/// A MIP in row form, solver-agnostic plain data. Objective is maximized.
#[derive(Clone, Debug, Default)]
pub struct Mip {
    pub col_lower: Vec<f64>,
    pub col_upper: Vec<f64>,
    pub col_cost: Vec<f64>,
    pub col_integer: Vec<bool>,
    pub col_names: Vec<String>,
    pub rows: Vec<Row>,
    /// `sum q x <= cap` rows kept in integers where `rows` holds a scaled copy; solutions
    /// are checked against these exactly (the solver itself only sees `rows`).
    pub exact_rows: Vec<ExactRow>,
    /// Disjunctions checked in integers on every solution (the solver sees them only as
    /// big-M rows): see [`ExactAny`].
    pub exact_any: Vec<ExactAny>,
}

/// When column `when` is 1, at least one of `any` holds: `Σ k x ≥ need` over rounded
/// values, in integers (rule 6's witnesses, `witness.rs`).
#[derive(Clone, Debug)]
pub struct ExactAny {
    pub when: usize,
    pub any: Vec<(Vec<(usize, i64)>, i64)>,
}

impl ExactAny {
    /// Whether `v` (rounded) satisfies it.
    pub fn holds(&self, v: &[f64]) -> bool {
        v[self.when].round() < 0.5
            || self
                .any
                .iter()
                .any(|(terms, need)| terms.iter().map(|&(c, k)| k as i128 * v[c].round() as i128).sum::<i128>() >= *need as i128)
    }
}

/// An integer `sum q x <= cap` row, and where its scaled copy is in [`Mip::rows`].
#[derive(Clone, Debug)]
pub struct ExactRow {
    /// Index of the scaled copy in `rows`.
    pub row: usize,
    /// What the integer coefficients were divided by for the scaled copy.
    pub scale: f64,
    pub entries: Vec<(usize, i64)>,
    pub cap: i64,
}

#[derive(Clone, Debug, Default)]
pub struct Row {
    pub lower: f64,
    pub upper: f64,
    pub entries: Vec<(usize, f64)>,
}

pub const INF: f64 = f64::INFINITY;

impl Mip {
    pub fn add_col(&mut self, lower: f64, upper: f64, integer: bool, name: impl Into<String>) -> usize {
        self.col_lower.push(lower);
        self.col_upper.push(upper);
        self.col_cost.push(0.0);
        self.col_integer.push(integer);
        self.col_names.push(name.into());
        self.col_lower.len() - 1
    }
    pub fn add_row(&mut self, lower: f64, upper: f64, entries: Vec<(usize, f64)>) {
        self.rows.push(Row { lower, upper, entries });
    }
    pub fn num_cols(&self) -> usize {
        self.col_lower.len()
    }

    /// CPLEX LP text (what `models/*.lp` holds); readable by HiGHS, CPLEX, Gurobi, SCIP.
    pub fn to_lp(&self) -> String {
        use std::fmt::Write;
        // LP-format names: letters, digits and '_' only, unique (suffix on collision).
        let mut seen = std::collections::HashSet::new();
        let names: Vec<String> = self
            .col_names
            .iter()
            .enumerate()
            .map(|(c, n)| {
                let mut s: String = n.chars().map(|ch| if ch.is_ascii_alphanumeric() || ch == '_' { ch } else { '_' }).collect();
                while s.ends_with('_') {
                    s.pop();
                }
                if !seen.insert(s.clone()) {
                    s = format!("{s}_c{c}");
                    seen.insert(s.clone());
                }
                s
            })
            .collect();
        let name = |c: usize| names[c].clone();
        let term = |out: &mut String, first: bool, c: usize, v: f64| {
            let sign = if v < 0.0 {
                "-"
            } else if first {
                ""
            } else {
                "+"
            };
            let a = v.abs();
            if a == 1.0 {
                let _ = write!(out, " {sign} {}", name(c));
            } else {
                let _ = write!(out, " {sign} {a} {}", name(c));
            }
        };
        let mut out = String::from("\\ Tessera cycle model (maximize)\nMaximize\n obj:");
        let mut first = true;
        for c in 0..self.num_cols() {
            if self.col_cost[c] != 0.0 {
                term(&mut out, first, c, self.col_cost[c]);
                first = false;
            }
        }
        if first {
            out.push_str(" 0");
        }
        out.push_str("\nSubject To\n");
        for (i, r) in self.rows.iter().enumerate() {
            let mut body = String::new();
            for (k, &(c, v)) in r.entries.iter().enumerate() {
                term(&mut body, k == 0, c, v);
            }
            if r.lower == r.upper {
                let _ = writeln!(out, " r{i}:{body} = {}", r.lower);
            } else {
                if r.lower > -INF {
                    let _ = writeln!(out, " r{i}_lo:{body} >= {}", r.lower);
                }
                if r.upper < INF {
                    let _ = writeln!(out, " r{i}_up:{body} <= {}", r.upper);
                }
            }
        }
        out.push_str("Bounds\n");
        for c in 0..self.num_cols() {
            let _ = writeln!(out, " {} <= {} <= {}", self.col_lower[c], name(c), self.col_upper[c]);
        }
        out.push_str("General\n");
        for c in 0..self.num_cols() {
            if self.col_integer[c] {
                let _ = writeln!(out, " {}", name(c));
            }
        }
        out.push_str("End\n");
        out
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MipStatus {
    /// Proven within the requested gap.
    Optimal,
    /// Stopped by the deadline or a limit with an incumbent.
    Interrupted,
    Infeasible,
    /// Stopped with no solution (only possible without a warm start).
    NoSolution,
    Error,
}

#[derive(Clone, Debug)]
pub struct MipResult {
    pub status: MipStatus,
    pub values: Vec<f64>,
    pub objective: f64,
    pub dual_bound: f64,
    pub nodes: i64,
    /// Simplex iterations of the branch and bound (root included), as last reported to
    /// the interrupt callback.
    pub lp_iterations: i64,
}

/// Simplex iterations that count as one work unit of a MIP run; a branch-and-bound node
/// is one too. HiGHS's root (presolve, cut rounds, heuristics) can take many seconds
/// without a node, so nodes alone do not bound a run.
pub const LP_ITERATIONS_PER_UNIT: i64 = 1000;

/// Work units of a run so far that has taken `nodes` and `lp_iterations`.
fn work_units(nodes: i64, lp_iterations: i64) -> u64 {
    (nodes.max(0) + lp_iterations.max(0) / LP_ITERATIONS_PER_UNIT) as u64
}

impl MipResult {
    /// Work units the run took: its nodes and simplex iterations, one at least (a run
    /// that ends at its root still did work).
    pub fn work(&self) -> u64 {
        work_units(self.nodes, self.lp_iterations).max(1)
    }

    fn empty(status: MipStatus, values: Vec<f64>) -> MipResult {
        MipResult { status, values, objective: f64::NAN, dual_bound: f64::NAN, nodes: 0, lp_iterations: 0 }
    }
}

pub struct MipParams {
    pub deadline: Instant,
    pub rel_gap: f64,
    pub abs_gap: f64,
    /// Updated while HiGHS runs with its current dual bound and latest improving
    /// solution, so a caller that stops waiting at the deadline still knows what was
    /// proven and found.
    pub live: Option<std::sync::Arc<LiveRun>>,
    /// Set by another thread to interrupt the solve (checked with the deadline).
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The caller's cancel flag: when set, the run is interrupted and `stop` (if any) is
    /// set too, so that whatever else watches `stop` ends with it.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Branch-and-bound node limit (`mip_max_nodes`): a work limit that, unlike a time
    /// limit, gives the same answer on every run.
    pub max_nodes: Option<i64>,
    /// Work limit ([`MipResult::work`]: nodes and simplex iterations), checked where
    /// HiGHS checks its limits, so that the run stops at the same point every time.
    pub max_work: Option<u64>,
    /// Diagnostic switches for HiGHS (log, presolve, heuristics, extra options).
    pub switches: HighsSwitches,
    /// For an integer-valued objective: look only for solutions better than the start
    /// by at least 1 (HiGHS's `objective_bound` cutoff). HiGHS then prunes and fixes
    /// columns by reduced cost against the start's value from its first node, where it
    /// otherwise waits for its own first good solution. "Infeasible" then proves the
    /// start optimal; [`solve`] reports that as `Optimal` with the start's values.
    pub beat_start: bool,
    /// Look only for solutions with an objective above this value (HiGHS's
    /// `objective_bound`); "infeasible" then means none exists. For objectives that are
    /// not integer-valued, where [`MipParams::beat_start`]'s "better by 1" does not apply.
    pub cutoff: Option<f64>,
}

impl MipParams {
    /// To `deadline`, within the given gaps, nothing else.
    pub fn until(deadline: Instant, rel_gap: f64, abs_gap: f64) -> MipParams {
        MipParams {
            deadline,
            rel_gap,
            abs_gap,
            live: None,
            stop: None,
            cancel: None,
            max_nodes: None,
            max_work: None,
            switches: HighsSwitches::default(),
            beat_start: false,
            cutoff: None,
        }
    }

    /// The same, with the HiGHS switches of `diag`.
    pub fn with(mut self, diag: &crate::options::Diagnostics) -> MipParams {
        self.switches = HighsSwitches::of(diag);
        self
    }

    /// The settings of a run in the phases of one cycle: the HiGHS switches of its
    /// diagnostics and, in deterministic mode, its work limit.
    pub fn of_cycle(deadline: Instant, rel_gap: f64, abs_gap: f64, cycle: &crate::engine::cycle::Cycle) -> MipParams {
        MipParams::until(deadline, rel_gap, abs_gap).with(&cycle.diag).with_work(cycle.work)
    }

    /// The same, with work limit `work` (none if `None`): as node limit and as
    /// [`MipParams::max_work`].
    pub fn with_work(mut self, work: Option<u64>) -> MipParams {
        self.max_nodes = work.map(|w| w.min(i64::MAX as u64) as i64);
        self.max_work = work;
        self
    }
}

/// The diagnostic switches that reach HiGHS itself.
#[derive(Clone, Debug, Default)]
pub struct HighsSwitches {
    pub log: bool,
    pub presolve_off: bool,
    pub heuristic_effort: Option<f64>,
    /// Hand the start to HiGHS as a MIP start (off by default, see [`solve`]).
    pub mip_start: bool,
    pub options: Vec<(String, String)>,
}

impl HighsSwitches {
    pub fn of(diag: &crate::options::Diagnostics) -> HighsSwitches {
        HighsSwitches {
            log: diag.highs_log,
            presolve_off: diag.presolve_off,
            heuristic_effort: diag.heuristic_effort,
            mip_start: diag.mip_start,
            options: diag.highs_options.clone(),
        }
    }
}

/// What HiGHS has reached while it runs, seen from its callback: the latest MIP dual
/// bound (f64 bits; NaN = none yet) and the latest improving solution (original column
/// space). A caller that stops waiting at the deadline reads both, so neither the proof
/// nor the best placement HiGHS found is lost to the time HiGHS takes to notice the
/// interrupt and return (measured: a 2 s flat-256 cycle returned its greedy start, 24
/// groups, where HiGHS held a 34-group solution since 0.6 s into the tier).
#[derive(Debug)]
pub struct LiveRun {
    bound: std::sync::atomic::AtomicU64,
    incumbent: std::sync::Mutex<Option<Vec<f64>>>,
    /// A bound known before the run (maximize: no solution is above it), e.g. term 1's
    /// relaxation bound; `INF` if none.
    ceiling: f64,
}

impl Default for LiveRun {
    fn default() -> Self {
        LiveRun::with_ceiling(INF)
    }
}

impl LiveRun {
    /// With a bound known before the run: [`LiveRun::bound`] never reports more, and an
    /// improving solution that reaches it (within 1: integer objectives) stops HiGHS, since
    /// nothing better exists.
    pub fn with_ceiling(ceiling: f64) -> LiveRun {
        LiveRun { bound: std::sync::atomic::AtomicU64::new(f64::NAN.to_bits()), incumbent: std::sync::Mutex::new(None), ceiling }
    }
    /// The latest dual bound, or the ceiling if that is lower (NaN = neither yet).
    pub fn bound(&self) -> f64 {
        self.cap(f64::from_bits(self.bound.load(std::sync::atomic::Ordering::Relaxed)))
    }
    /// A dual bound `b` of this run, capped by the ceiling (the ceiling alone when `b` is
    /// not finite); `b` unchanged without a ceiling.
    pub fn cap(&self, b: f64) -> f64 {
        match (self.ceiling < INF, b.is_finite()) {
            (false, _) => b,
            (true, true) => b.min(self.ceiling),
            (true, false) => self.ceiling,
        }
    }
    fn set_bound(&self, v: f64) {
        self.bound.store(v.to_bits(), std::sync::atomic::Ordering::Relaxed)
    }
    /// HiGHS's latest improving solution, unchecked (callers verify it).
    pub fn incumbent(&self) -> Option<Vec<f64>> {
        self.incumbent.lock().ok().and_then(|s| s.clone())
    }
    fn set_incumbent(&self, v: &[f64]) {
        if let Ok(mut s) = self.incumbent.lock() {
            *s = Some(v.to_vec());
        }
    }
}

struct CallbackState<'a> {
    deadline: Instant,
    /// Columns of the model passed (an improving solution of another length is ignored).
    num_cols: usize,
    live: Option<std::sync::Arc<LiveRun>>,
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The objective, to tell when an improving solution meets the live ceiling.
    cost: &'a [f64],
    max_work: Option<u64>,
    /// Simplex iterations of the MIP so far (from the interrupt callback).
    lp_iterations: std::sync::atomic::AtomicI64,
}

struct Guard(*mut c_void);
impl Drop for Guard {
    fn drop(&mut self) {
        unsafe { Highs_destroy(self.0) }
    }
}

// HiGHS callback types (highs_c_api.h); bindgen does not export `static const` values.
const CB_SIMPLEX_INTERRUPT: c_int = 1;
const CB_IPM_INTERRUPT: c_int = 2;
const CB_MIP_IMPROVING_SOLUTION: c_int = 4;
const CB_MIP_INTERRUPT: c_int = 6;

extern "C" fn interrupt_cb(
    kind: c_int,
    _msg: *const std::ffi::c_char,
    out: *const HighsCallbackDataOut,
    data_in: *mut HighsCallbackDataIn,
    user: *mut c_void,
) {
    // SAFETY: `user` is the `&CallbackState` passed to Highs_setCallback, alive during
    // Highs_run; `out` and `data_in` are valid for the duration of the callback.
    let state = unsafe { &*(user as *const CallbackState) };
    let mut worked_out = false;
    if kind == CB_MIP_INTERRUPT && !out.is_null() {
        if let Some(live) = &state.live {
            let b = unsafe { (*out).mip_dual_bound };
            if b.is_finite() {
                live.set_bound(b);
            }
        }
        let (nodes, iterations) = unsafe { ((*out).mip_node_count, (*out).mip_total_lp_iterations) };
        state.lp_iterations.store(iterations, std::sync::atomic::Ordering::Relaxed);
        worked_out = state.max_work.is_some_and(|w| work_units(nodes, iterations) >= w);
    }
    if kind == CB_MIP_IMPROVING_SOLUTION {
        if let (Some(live), false) = (&state.live, out.is_null()) {
            // SAFETY: HiGHS passes its incumbent, `mip_solution_size` doubles, valid
            // during the callback; it is copied before returning.
            let (ptr, len) = unsafe { ((*out).mip_solution, (*out).mip_solution_size) };
            if !ptr.is_null() && len as usize == state.num_cols {
                let x = unsafe { std::slice::from_raw_parts(ptr, state.num_cols) };
                live.set_incumbent(x);
                // At the ceiling: proven, so the next interrupt callback stops HiGHS.
                let value: f64 = x.iter().zip(state.cost).map(|(v, c)| v * c).sum();
                if live.ceiling < INF && value >= live.ceiling - 0.5 {
                    if let Some(stop) = &state.stop {
                        stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
        }
        // HiGHS ignores (and asserts against) an interrupt from this callback.
        return;
    }
    let cancelled = state.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed));
    if cancelled {
        if let Some(stop) = &state.stop {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    let stopped = cancelled || state.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed));
    if (stopped || worked_out || Instant::now() >= state.deadline) && !data_in.is_null() {
        unsafe { (*data_in).user_interrupt = 1 };
    }
}

fn set_opt_bool(h: *mut c_void, name: &str, v: bool) {
    let n = CString::new(name).unwrap();
    unsafe { Highs_setBoolOptionValue(h, n.as_ptr(), v as HighsInt) };
}
fn set_opt_int(h: *mut c_void, name: &str, v: i64) {
    let n = CString::new(name).unwrap();
    unsafe { Highs_setIntOptionValue(h, n.as_ptr(), v as HighsInt) };
}
fn set_opt_f64(h: *mut c_void, name: &str, v: f64) {
    let n = CString::new(name).unwrap();
    unsafe { Highs_setDoubleOptionValue(h, n.as_ptr(), v) };
}
fn set_opt_str(h: *mut c_void, name: &str, v: &str) {
    let n = CString::new(name).unwrap();
    let v = CString::new(v).unwrap();
    unsafe { Highs_setStringOptionValue(h, n.as_ptr(), v.as_ptr()) };
}
/// NaN when HiGHS has no valid value (its info is only set after certain phases).
fn info_f64(h: *mut c_void, name: &str) -> f64 {
    let n = CString::new(name).unwrap();
    let mut v = 0.0;
    let status = unsafe { Highs_getDoubleInfoValue(h, n.as_ptr(), &mut v) };
    if status == 0 {
        v
    } else {
        f64::NAN
    }
}
fn info_i64(h: *mut c_void, name: &str) -> i64 {
    let n = CString::new(name).unwrap();
    let mut v: i64 = 0;
    unsafe { Highs_getInt64InfoValue(h, n.as_ptr(), &mut v) };
    v
}

/// The optimum of the LP relaxation of `mip` (maximize), an upper bound on the MIP's, and
/// its solution; `None` if the LP was not solved to optimality by `deadline`.
/// Presolve is off: on the topology master it took 4x the simplex time, and it does not
/// poll the interrupt.
pub fn relaxation(mip: &Mip, deadline: Instant) -> Option<(f64, Vec<f64>)> {
    let mut lp = mip.clone();
    lp.col_integer.iter_mut().for_each(|i| *i = false);
    let mut params = MipParams::until(deadline, 0.0, 0.0);
    params.switches.presolve_off = true;
    let res = solve_detached(lp, params);
    (res.status == MipStatus::Optimal && res.objective.is_finite() && res.values.len() == mip.num_cols())
        .then_some((res.objective, res.values))
}

/// [`solve`] on a thread of its own, waited for until shortly after `params.deadline`
/// and then abandoned (it stops at its next interrupt poll). For callers on the request's
/// own thread: HiGHS's presolve does not poll the interrupt, and took seconds at 4,096
/// nodes, so a solve started late could otherwise overrun the caller's hard deadline.
pub fn solve_detached(mip: Mip, params: MipParams) -> MipResult {
    let wait_until = params.deadline + std::time::Duration::from_millis(50);
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("tessera-highs".into()).spawn(move || {
        let _ = tx.send(solve(&mip, None, &params));
    });
    let none = MipResult::empty(MipStatus::NoSolution, Vec::new());
    if spawned.is_err() {
        return none;
    }
    rx.recv_timeout(wait_until.saturating_duration_since(Instant::now())).unwrap_or(none)
}

/// Solves `mip` (maximize), starting from `start` when given, returning by `deadline`
/// (give or take the time HiGHS takes to notice the interrupt).
pub fn solve(mip: &Mip, start: Option<&[f64]>, params: &MipParams) -> MipResult {
    let n = mip.num_cols();
    let fail = |status| MipResult::empty(status, start.map(|s| s.to_vec()).unwrap_or_default());
    let remaining = params.deadline.saturating_duration_since(Instant::now());
    if remaining.is_zero() {
        return fail(MipStatus::NoSolution);
    }
    // Column-wise sparse matrix.
    let mut col_entries: Vec<Vec<(i32, f64)>> = vec![Vec::new(); n];
    for (i, r) in mip.rows.iter().enumerate() {
        for &(c, v) in &r.entries {
            if v != 0.0 {
                col_entries[c].push((i as i32, v));
            }
        }
    }
    let mut a_start = Vec::with_capacity(n);
    let mut a_index = Vec::new();
    let mut a_value = Vec::new();
    for e in &col_entries {
        a_start.push(a_index.len() as HighsInt);
        for &(i, v) in e {
            a_index.push(i as HighsInt);
            a_value.push(v);
        }
    }
    let row_lower: Vec<f64> = mip.rows.iter().map(|r| r.lower).collect();
    let row_upper: Vec<f64> = mip.rows.iter().map(|r| r.upper).collect();
    let integrality: Vec<HighsInt> = mip.col_integer.iter().map(|&b| b as HighsInt).collect();
    let state = CallbackState {
        deadline: params.deadline,
        num_cols: n,
        live: params.live.clone(),
        stop: params.stop.clone(),
        cancel: params.cancel.clone(),
        cost: &mip.col_cost,
        max_work: params.max_work,
        lp_iterations: std::sync::atomic::AtomicI64::new(0),
    };
    unsafe {
        let h = Guard(Highs_create());
        set_opt_bool(h.0, "output_flag", params.switches.log);
        set_opt_int(h.0, "threads", 1);
        set_opt_int(h.0, "random_seed", 0);
        set_opt_str(h.0, "presolve", if params.switches.presolve_off { "off" } else { "on" });
        set_opt_f64(h.0, "time_limit", remaining.as_secs_f64());
        set_opt_f64(h.0, "mip_rel_gap", params.rel_gap);
        set_opt_f64(h.0, "mip_abs_gap", params.abs_gap);
        if let Some(n) = params.max_nodes {
            set_opt_int(h.0, "mip_max_nodes", n);
        }
        // HiGHS minimizes internally: the cutoff is on the negated objective (measured:
        // maximize 7 with objective_bound -7.5 is infeasible, with -6.5 finds 7).
        let start_value = start.filter(|_| params.beat_start).map(|s| s.iter().zip(&mip.col_cost).map(|(v, c)| v * c).sum::<f64>());
        if let Some(v) = start_value {
            set_opt_f64(h.0, "objective_bound", -(v + 0.5));
        } else if let Some(c) = params.cutoff {
            set_opt_f64(h.0, "objective_bound", -c);
        }
        if let Some(v) = params.switches.heuristic_effort {
            set_opt_f64(h.0, "mip_heuristic_effort", v);
        }
        for (name, value) in &params.switches.options {
            if let (Ok(n), Ok(v)) = (CString::new(name.as_str()), CString::new(value.as_str())) {
                Highs_setOptionValue(h.0, n.as_ptr(), v.as_ptr());
            }
        }
        let status = Highs_passMip(
            h.0,
            n as HighsInt,
            mip.rows.len() as HighsInt,
            a_index.len() as HighsInt,
            1,  // column-wise
            -1, // maximize
            0.0,
            mip.col_cost.as_ptr(),
            mip.col_lower.as_ptr(),
            mip.col_upper.as_ptr(),
            row_lower.as_ptr(),
            row_upper.as_ptr(),
            a_start.as_ptr(),
            a_index.as_ptr(),
            a_value.as_ptr(),
            integrality.as_ptr(),
        );
        if status < 0 {
            return fail(MipStatus::Error);
        }
        // The MIP start is NOT handed to HiGHS by default: HiGHS 1.16 translated it into
        // the presolved space wrongly on a 6-column model (reported "Optimal" at 17
        // where 18 is feasible; found by the brute-force property test). Callers keep
        // their own incumbent and take HiGHS's answer only when it is better, so the
        // start still bounds the result. `Diagnostics::mip_start` re-enables it.
        if let Some(s) = start.filter(|_| params.switches.mip_start) {
            Highs_setSolution(h.0, s.as_ptr(), std::ptr::null(), std::ptr::null(), std::ptr::null());
        }
        Highs_setCallback(h.0, Some(interrupt_cb), &state as *const CallbackState as *mut c_void);
        for cb in [CB_SIMPLEX_INTERRUPT, CB_IPM_INTERRUPT, CB_MIP_INTERRUPT] {
            Highs_startCallback(h.0, cb as HighsInt);
        }
        if params.live.is_some() {
            Highs_startCallback(h.0, CB_MIP_IMPROVING_SOLUTION as HighsInt);
        }
        let run = Highs_run(h.0);
        let model_status = Highs_getModelStatus(h.0);
        // kHighsModelStatus: 7 optimal, 8 infeasible, 13 time limit, 15 solution limit,
        // 16 interrupt, 14 iteration limit, 17 memory limit.
        let mut values = vec![0.0; n];
        let primal_status = {
            let name = CString::new("primal_solution_status").unwrap();
            let mut v: HighsInt = 0;
            Highs_getIntInfoValue(h.0, name.as_ptr(), &mut v);
            v
        };
        let has_solution = primal_status == 2;
        if has_solution {
            let mut rows = vec![0.0; mip.rows.len()];
            Highs_getSolution(h.0, values.as_mut_ptr(), std::ptr::null_mut(), rows.as_mut_ptr(), std::ptr::null_mut());
        }
        let objective = info_f64(h.0, "objective_function_value");
        let dual_bound = info_f64(h.0, "mip_dual_bound");
        let nodes = info_i64(h.0, "mip_node_count");
        let lp_iterations = state.lp_iterations.load(std::sync::atomic::Ordering::Relaxed);
        let status = match model_status {
            _ if run < 0 && !has_solution => MipStatus::Error,
            7 => MipStatus::Optimal,
            8 => MipStatus::Infeasible,
            _ if has_solution => MipStatus::Interrupted,
            _ => MipStatus::NoSolution,
        };
        if !has_solution {
            if let (MipStatus::Infeasible, Some(v), Some(s)) = (status, start_value, start) {
                // Nothing beats the start: it is optimal (nothing above v + 0.5, and the
                // objective is integer-valued).
                return MipResult { status: MipStatus::Optimal, values: s.to_vec(), objective: v, dual_bound: v, nodes, lp_iterations };
            }
            let values = start.map(|s| s.to_vec()).unwrap_or_default();
            return MipResult { status, values, objective: f64::NAN, dual_bound, nodes, lp_iterations };
        }
        MipResult { status, values, objective, dual_bound, nodes, lp_iterations }
    }
}

/// How an [`LpSession`] solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LpStatus {
    Optimal,
    Infeasible,
    /// Deadline, stop flag or an iteration limit before optimality.
    Stopped,
    Error,
}

/// The answer of one [`LpSession::solve`]. Duals follow the convention of the column
/// generation that reads them: the *profit* of a column with objective coefficient `c`
/// (maximized) and entries `a_i` is `c + Σ_i row_duals[i] · a_i`; at an optimum no column
/// of the LP has positive profit, and a new column with positive profit may improve it.
/// (HiGHS solves the negated minimization; these are its row duals unchanged.)
#[derive(Clone, Debug)]
pub struct LpSolution {
    pub status: LpStatus,
    pub objective: f64,
    pub col_values: Vec<f64>,
    pub row_duals: Vec<f64>,
}

/// A linear program kept alive inside HiGHS between solves: column generation adds
/// columns (and branching changes bounds) and the simplex restarts from the last basis
/// instead of from scratch. Maximizes. Lives and dies on the thread that made it.
pub struct LpSession {
    h: Guard,
    state: Box<CallbackState<'static>>,
    row_lower: Vec<f64>,
    row_upper: Vec<f64>,
    num_cols: usize,
    /// Simplex iterations over every solve of this session.
    pub iterations: u64,
    /// Every change so far was accepted by HiGHS (a rejected one, e.g. a duplicate entry
    /// in a column, leaves the LP out of step with its caller: [`LpSession::solve`] then
    /// reports [`LpStatus::Error`]).
    pub ok: bool,
}

impl LpSession {
    /// An empty LP (no rows, no columns), HiGHS single-threaded and silent unless
    /// `switches.log`.
    pub fn new(switches: &HighsSwitches) -> LpSession {
        let h = Guard(unsafe { Highs_create() });
        set_opt_bool(h.0, "output_flag", switches.log);
        set_opt_int(h.0, "threads", 1);
        set_opt_int(h.0, "random_seed", 0);
        // Presolve off: a re-solve then starts from the last basis (new columns keep it
        // primal feasible), which is what makes column generation cheap.
        set_opt_str(h.0, "presolve", "off");
        unsafe { Highs_changeObjectiveSense(h.0, 1) };
        let state = Box::new(CallbackState {
            deadline: Instant::now() + std::time::Duration::from_secs(3600),
            num_cols: 0,
            live: None,
            stop: None,
            cancel: None,
            cost: &[],
            max_work: None,
            lp_iterations: std::sync::atomic::AtomicI64::new(0),
        });
        LpSession { h, state, row_lower: Vec::new(), row_upper: Vec::new(), num_cols: 0, iterations: 0, ok: true }
    }

    /// Appends empty rows `lower <= . <= upper`; returns the index of the first.
    pub fn add_rows(&mut self, bounds: &[(f64, f64)]) -> usize {
        let first = self.row_lower.len();
        if bounds.is_empty() {
            return first;
        }
        let lo: Vec<f64> = bounds.iter().map(|b| b.0).collect();
        let up: Vec<f64> = bounds.iter().map(|b| b.1).collect();
        let starts = vec![0 as HighsInt; bounds.len()];
        let st = unsafe {
            Highs_addRows(
                self.h.0,
                bounds.len() as HighsInt,
                lo.as_ptr(),
                up.as_ptr(),
                0,
                starts.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        self.ok &= st >= 0;
        self.row_lower.extend(lo);
        self.row_upper.extend(up);
        first
    }

    /// Appends columns (objective coefficient, bounds, entries `(row, value)`); returns
    /// the index of the first.
    pub fn add_cols(&mut self, cols: &[(f64, f64, f64, Vec<(usize, f64)>)]) -> usize {
        let first = self.num_cols;
        if cols.is_empty() {
            return first;
        }
        let cost: Vec<f64> = cols.iter().map(|c| -c.0).collect();
        let lo: Vec<f64> = cols.iter().map(|c| c.1).collect();
        let up: Vec<f64> = cols.iter().map(|c| c.2).collect();
        let mut starts = Vec::with_capacity(cols.len());
        let mut index = Vec::new();
        let mut value = Vec::new();
        for c in cols {
            starts.push(index.len() as HighsInt);
            for &(r, v) in &c.3 {
                if v != 0.0 {
                    index.push(r as HighsInt);
                    value.push(v);
                }
            }
        }
        let st = unsafe {
            Highs_addCols(
                self.h.0,
                cols.len() as HighsInt,
                cost.as_ptr(),
                lo.as_ptr(),
                up.as_ptr(),
                index.len() as HighsInt,
                starts.as_ptr(),
                index.as_ptr(),
                value.as_ptr(),
            )
        };
        self.ok &= st >= 0;
        self.num_cols += cols.len();
        first
    }

    /// Appends one row `lower <= Σ entries <= upper` over existing columns.
    pub fn add_row(&mut self, lower: f64, upper: f64, entries: &[(usize, f64)]) {
        let index: Vec<HighsInt> = entries.iter().map(|e| e.0 as HighsInt).collect();
        let value: Vec<f64> = entries.iter().map(|e| e.1).collect();
        let starts = [0 as HighsInt];
        let st =
            unsafe { Highs_addRows(self.h.0, 1, &lower, &upper, index.len() as HighsInt, starts.as_ptr(), index.as_ptr(), value.as_ptr()) };
        self.ok &= st >= 0;
        self.row_lower.push(lower);
        self.row_upper.push(upper);
    }

    pub fn set_col_bounds(&mut self, col: usize, lower: f64, upper: f64) {
        unsafe { Highs_changeColBounds(self.h.0, col as HighsInt, lower, upper) };
    }

    pub fn set_row_bounds(&mut self, row: usize, lower: f64, upper: f64) {
        unsafe { Highs_changeRowBounds(self.h.0, row as HighsInt, lower, upper) };
        self.row_lower[row] = lower;
        self.row_upper[row] = upper;
    }

    /// Sets every column's objective coefficient (maximized); `costs.len()` = columns.
    pub fn set_costs(&mut self, costs: &[f64]) {
        if costs.is_empty() {
            return;
        }
        let neg: Vec<f64> = costs.iter().map(|c| -c).collect();
        let st = unsafe { Highs_changeColsCostByRange(self.h.0, 0, (neg.len() - 1) as HighsInt, neg.as_ptr()) };
        self.ok &= st >= 0;
    }

    /// Solves from the current basis until optimal or `deadline` (or `stop`).
    pub fn solve(&mut self, deadline: Instant, stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) -> LpSolution {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let nrows = self.row_lower.len();
        let stopped = LpSolution { status: LpStatus::Stopped, objective: f64::NAN, col_values: Vec::new(), row_duals: Vec::new() };
        if !self.ok {
            return LpSolution { status: LpStatus::Error, ..stopped };
        }
        if remaining.is_zero() {
            return stopped;
        }
        self.state.deadline = deadline;
        self.state.stop = stop;
        unsafe {
            // HiGHS's clock runs on across the runs of one object: the limit is on it.
            Highs_zeroAllClocks(self.h.0);
            set_opt_f64(self.h.0, "time_limit", remaining.as_secs_f64());
            Highs_setCallback(self.h.0, Some(interrupt_cb), &*self.state as *const CallbackState as *mut c_void);
            Highs_startCallback(self.h.0, CB_SIMPLEX_INTERRUPT as HighsInt);
            let run = Highs_run(self.h.0);
            // Per run (HiGHS resets its info at each run).
            self.iterations += Highs_getSimplexIterationCount(self.h.0).max(0) as u64;
            let model_status = Highs_getModelStatus(self.h.0);
            let status = match model_status {
                _ if run < 0 => LpStatus::Error,
                7 => LpStatus::Optimal,
                8 => LpStatus::Infeasible,
                // Unbounded or infeasible: every column of the callers' LPs is bounded.
                9 => LpStatus::Infeasible,
                _ => LpStatus::Stopped,
            };
            if std::env::var_os("TESSERA_LP_STATUS").is_some() && status != LpStatus::Optimal {
                eprintln!("lp session: model status {model_status}, run {run}");
            }
            if status != LpStatus::Optimal {
                return LpSolution { status, ..stopped };
            }
            let mut col_values = vec![0.0; self.num_cols];
            let mut col_duals = vec![0.0; self.num_cols];
            let mut row_values = vec![0.0; nrows];
            let mut row_duals = vec![0.0; nrows];
            Highs_getSolution(self.h.0, col_values.as_mut_ptr(), col_duals.as_mut_ptr(), row_values.as_mut_ptr(), row_duals.as_mut_ptr());
            let objective = -Highs_getObjectiveValue(self.h.0);
            LpSolution { status, objective, col_values, row_duals }
        }
    }

    /// After a solve that ended [`LpStatus::Infeasible`]: HiGHS's dual ray, one value
    /// per row, a certificate of infeasibility up to its sign (callers check it), if HiGHS
    /// has one.
    pub fn dual_ray(&self) -> Option<Vec<f64>> {
        let mut has: HighsInt = 0;
        let mut ray = vec![0.0; self.row_lower.len()];
        let st = unsafe { Highs_getDualRay(self.h.0, &mut has, ray.as_mut_ptr()) };
        (st >= 0 && has != 0 && ray.iter().all(|v| v.is_finite())).then_some(ray)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// max x + y, x + 2y <= 4, 3x + y <= 6, 0 <= x, y: optimum 2.8 at (1.6, 1.2). The
    /// profit of every column (c + duals · a) is 0 at the optimum (both basic), a column
    /// added later is priced by the same duals, and the solve restarts from the basis.
    #[test]
    fn an_lp_session_reports_duals_that_price_new_columns() {
        let mut lp = LpSession::new(&HighsSwitches::default());
        lp.add_rows(&[(-INF, 4.0), (-INF, 6.0)]);
        lp.add_cols(&[(1.0, 0.0, INF, vec![(0, 1.0), (1, 3.0)]), (1.0, 0.0, INF, vec![(0, 2.0), (1, 1.0)])]);
        let far = Instant::now() + std::time::Duration::from_secs(20);
        let s = lp.solve(far, None);
        assert_eq!(s.status, LpStatus::Optimal);
        assert!((s.objective - 2.8).abs() < 1e-9, "{}", s.objective);
        let profit = |c: f64, a: &[(usize, f64)]| c + a.iter().map(|&(i, v)| s.row_duals[i] * v).sum::<f64>();
        assert!(profit(1.0, &[(0, 1.0), (1, 3.0)]).abs() < 1e-9);
        assert!(profit(1.0, &[(0, 2.0), (1, 1.0)]).abs() < 1e-9);
        // Duals of binding <= rows are <= 0 in this convention: -0.4 and -0.2.
        assert!((s.row_duals[0] + 0.4).abs() < 1e-9 && (s.row_duals[1] + 0.2).abs() < 1e-9, "{:?}", s.row_duals);
        // z with cost 1 using 1 of each row: profit 1 - 0.6 > 0, so it improves: the new
        // optimum takes z = 10/3... bounded by the rows: x + 2y + z <= 4, 3x + y + z <= 6.
        assert!(profit(1.0, &[(0, 1.0), (1, 1.0)]) > 0.0);
        lp.add_cols(&[(1.0, 0.0, INF, vec![(0, 1.0), (1, 1.0)])]);
        let s2 = lp.solve(far, None);
        assert_eq!(s2.status, LpStatus::Optimal);
        assert!((s2.objective - 4.0).abs() < 1e-9, "{}", s2.objective);
        // A bound change (branching) is seen by the next solve.
        lp.set_col_bounds(2, 0.0, 1.0);
        let s3 = lp.solve(far, None);
        assert!((s3.objective - 3.2).abs() < 1e-9, "{}", s3.objective);
        assert_eq!(s3.col_values.len(), 3);
        // New costs (a later tier): max z alone.
        lp.set_costs(&[0.0, 0.0, 1.0]);
        let s4 = lp.solve(far, None);
        assert!((s4.objective - 1.0).abs() < 1e-9, "{}", s4.objective);
        // A row added over existing columns: x + y + z >= 3 (x + y reach 2.2) keeps z at 1;
        // >= 3.5 is infeasible.
        lp.add_row(3.0, INF, &[(0, 1.0), (1, 1.0), (2, 1.0)]);
        let s5 = lp.solve(far, None);
        assert_eq!(s5.status, LpStatus::Optimal);
        assert!((s5.objective - 1.0).abs() < 1e-9, "{}", s5.objective);
        assert_eq!(s5.row_duals.len(), 3);
        lp.set_row_bounds(2, 3.5, INF);
        assert_eq!(lp.solve(far, None).status, LpStatus::Infeasible);
        // The dual ray proves it (up to sign): with y_2 > 0 on x + y + z >= 3.5 and
        // y_0, y_1 <= 0 on the <= rows, every column's profit y·a is at most 0, so
        // the Lagrangian -Σ y_i·(bound) + z's best end is below 0 (x + 2y <= 4 and
        // 3x + y <= 6 cap x + y at 2.8 < 3.5 - 1).
        let ray = lp.dual_ray().expect("a dual ray");
        let cols: [(f64, &[(usize, f64)]); 3] =
            [(INF, &[(0, 1.0), (1, 3.0), (2, 1.0)]), (INF, &[(0, 2.0), (1, 1.0), (2, 1.0)]), (1.0, &[(0, 1.0), (1, 1.0), (2, 1.0)])];
        let rows = [(-INF, 4.0), (-INF, 6.0), (3.5, INF)];
        let lagrangian = |s: f64| {
            let y: Vec<f64> = ray.iter().map(|v| s * v).collect();
            let r: f64 = rows.iter().zip(&y).filter(|(_, &v)| v != 0.0).map(|(&(lo, up), &v)| -v * if v > 0.0 { lo } else { up }).sum();
            // Every column's lower bound is 0: its best end is `up` when it pays.
            let c: f64 = cols
                .iter()
                .map(|&(up, a)| {
                    let profit: f64 = a.iter().map(|&(i, v)| y[i] * v).sum();
                    if profit > 0.0 {
                        profit * up
                    } else {
                        0.0
                    }
                })
                .sum();
            r + c
        };
        assert!(lagrangian(1.0) < -1e-6 || lagrangian(-1.0) < -1e-6, "ray {ray:?}: no sign proves infeasibility");
    }

    /// Costs set before the first solve are the ones solved for.
    #[test]
    fn an_lp_session_takes_costs_set_before_its_first_solve() {
        let mut lp = LpSession::new(&HighsSwitches::default());
        lp.add_rows(&[(-INF, 4.0), (-INF, 6.0)]);
        lp.add_cols(&[(0.0, 0.0, INF, vec![(0, 1.0), (1, 3.0)]), (0.0, 0.0, INF, vec![(0, 2.0), (1, 1.0)])]);
        lp.set_costs(&[1.0, 1.0]);
        let far = Instant::now() + std::time::Duration::from_secs(20);
        let s = lp.solve(far, None);
        assert!((s.objective - 2.8).abs() < 1e-9, "{}", s.objective);
    }

    /// max 3a + 2b + 4c, a + b + c <= 2, binary: the optimum is 7 (a and c).
    fn knapsack() -> Mip {
        let mut mip = Mip::default();
        for (i, cost) in [3.0, 2.0, 4.0].into_iter().enumerate() {
            let c = mip.add_col(0.0, 1.0, true, format!("v{i}"));
            mip.col_cost[c] = cost;
        }
        mip.add_row(-INF, 2.0, vec![(0, 1.0), (1, 1.0), (2, 1.0)]);
        mip
    }

    fn beat(start: &[f64]) -> MipResult {
        let far = Instant::now() + std::time::Duration::from_secs(20);
        solve(&knapsack(), Some(start), &MipParams { beat_start: true, ..MipParams::until(far, 0.0, 0.999) })
    }

    /// The callback keeps HiGHS's improving solutions: after the run the last one is
    /// the optimum HiGHS returns (what a caller that stops waiting at the deadline reads).
    /// Presolve off, so the optimum is found in the search, where the callback fires.
    #[test]
    fn the_live_incumbent_is_the_last_improving_solution() {
        let live = std::sync::Arc::new(LiveRun::default());
        assert_eq!(live.incumbent(), None);
        let far = Instant::now() + std::time::Duration::from_secs(20);
        let mut params = MipParams { live: Some(std::sync::Arc::clone(&live)), ..MipParams::until(far, 0.0, 0.0) };
        params.switches.presolve_off = true;
        let res = solve(&knapsack(), None, &params);
        assert_eq!((res.status, res.objective), (MipStatus::Optimal, 7.0));
        let seen: Vec<f64> = live.incumbent().expect("an improving solution was reported").iter().map(|x| x.round()).collect();
        assert_eq!(seen, vec![1.0, 0.0, 1.0]);
    }

    /// A ceiling caps the reported bound, and an improving solution at the ceiling asks
    /// HiGHS to stop (the stop flag is what the interrupt callback reads); below the
    /// ceiling, or without one, nothing is stopped.
    #[test]
    fn an_improving_solution_at_the_ceiling_stops_the_run() {
        let at = LiveRun::with_ceiling(7.0);
        assert_eq!(at.bound(), 7.0, "no dual bound yet: the ceiling");
        at.set_bound(9.5);
        assert_eq!(at.bound(), 7.0);
        at.set_bound(6.0);
        assert_eq!(at.bound(), 6.0);
        assert!(LiveRun::default().bound().is_nan());
        let far = Instant::now() + std::time::Duration::from_secs(20);
        for (ceiling, stopped) in [(Some(7.0), true), (Some(8.0), false), (None, false)] {
            let live = std::sync::Arc::new(ceiling.map_or_else(LiveRun::default, LiveRun::with_ceiling));
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let params = MipParams {
                live: Some(std::sync::Arc::clone(&live)),
                stop: Some(std::sync::Arc::clone(&stop)),
                switches: HighsSwitches { presolve_off: true, ..Default::default() },
                ..MipParams::until(far, 0.0, 0.0)
            };
            let res = solve(&knapsack(), None, &params);
            assert_eq!(res.objective, 7.0, "{ceiling:?}");
            assert_eq!(stop.load(std::sync::atomic::Ordering::Relaxed), stopped, "{ceiling:?}");
        }
    }

    /// With the cutoff, HiGHS's "infeasible" (nothing beats the start) comes back as the
    /// start, proven optimal; a start that can be beaten is beaten.
    #[test]
    fn a_cutoff_at_the_start_proves_it_or_beats_it() {
        let proven = beat(&[1.0, 0.0, 1.0]);
        assert_eq!(
            (proven.status, proven.values.as_slice(), proven.objective, proven.dual_bound),
            (MipStatus::Optimal, &[1.0, 0.0, 1.0][..], 7.0, 7.0)
        );
        let beaten = beat(&[1.0, 1.0, 0.0]);
        assert_eq!((beaten.status, beaten.objective), (MipStatus::Optimal, 7.0));
        assert_eq!(beaten.values, vec![1.0, 0.0, 1.0]);
    }
}
