//! `tessera simulate`: scheduling cycles over time, with YuniKorn's gang lifecycle
//! between them.
//!
//! A [`Scenario`] is an initial instance and a timeline (applications submitted with task
//! groups, pods created, completed or deleted, nodes added or removed, scheduler
//! restarts). The simulator is discrete-event: scenario events and timers happen at their
//! times; every `cyclePeriod` a cycle runs if there is something to decide, and each
//! cycle's new allocations are one [`crate::solve`] call (any [`SolverKind`]) on an
//! instance built from the simulator's state, so heuristics and the exact engine can be
//! compared over a day as well as on one snapshot.
//!
//! Between cycles the simulator does what YuniKorn's code does for gangs, following
//! `shared/spec/yunikorn-gang-lifecycle.md` (read from apache/yunikorn-core at be3bb48729
//! and apache/yunikorn-k8shim at 23b6b47f98; rules cited by section in the code): the
//! application state machine of `objects/application_state.go` ([`state`]), admission of
//! gangs (`partition.go AddApplication`), the shim creating one placeholder per member
//! and holding real pods while reserving (`k8shim cache/application.go`, `placeholder.go`),
//! the placeholder timer and its two cases (`application.go timeoutPlaceholderProcessing`),
//! the asynchronous replacement (`tryPlaceholderAllocate`, `ReplaceAllocation`) with its
//! release confirmations, the Completing timer and leftover cleanup, expiry after three
//! days, app-ID reuse, and recovery after a restart (`context.go InitializeState`,
//! `RecoverAllocationAsk`).
//!
//! Modelling choices, where YuniKorn leaves something open or a snapshot needs it:
//! - release confirmations arrive at the first cycle after the release was sent;
//!   where YuniKorn iterates a Go map (placeholders of an application), ties break by
//!   creation order; applications take part in the replacement step in submission order;
//! - in a cycle, the replacement step runs first, then (with `--placeholders yunikorn`)
//!   the placeholder asks are allocated member by member by the YuniKorn port
//!   (`yunikorn-fair`: queue and application order, headroom per allocation), each
//!   application's placeholders a `basic` group, then the other asks by the cycle solver;
//!   with `--placeholders atomic` one decision of the cycle solver places everything, each
//!   application's remaining placeholders as one gang (all or nothing, jointly with the
//!   other gangs: what the design document asked for and YuniKorn never built);
//! - placeholders are bound pods with `placeholder: true`; one replaced on another node
//!   (the first-fit fallback) is `releasing: true` while its replacement already holds the
//!   new node; one being replaced on its own node, or released with TIMEOUT, keeps
//!   holding its node and queue share until the confirmation, as YuniKorn's core counts
//!   it; all of these are never victims;
//! - a real pod lost to an eviction or a node removal is created again at once (its
//!   controller's doing);
//! - a cycle whose input is unchanged since the previous cycle, which placed nothing, is
//!   not solved again (it would decide the same).

pub mod openb;
pub mod report;
pub mod scenario;
pub mod state;

mod cycle;

mod world;

pub use report::{compare_table, log_table, summary_table, Summary};
pub use scenario::{Scenario, ScenarioDoc};

use crate::options::SolverKind;
use std::time::Duration;

/// How placeholders are placed (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlaceholderMode {
    /// Member by member against the queue headroom, as YuniKorn's core does.
    #[default]
    YuniKorn,
    /// A gang's placeholders only when the whole gang fits, by the cycle solver.
    Atomic,
}

impl PlaceholderMode {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PlaceholderMode::YuniKorn => "yunikorn",
            PlaceholderMode::Atomic => "atomic",
        }
    }

    /// The mode of that name.
    pub fn from_name(name: &str) -> Option<PlaceholderMode> {
        [PlaceholderMode::YuniKorn, PlaceholderMode::Atomic].into_iter().find(|m| m.name() == name)
    }
}

/// How to run a scenario.
#[derive(Clone, Debug, Default)]
pub struct SimOptions {
    /// The cycle solver.
    pub solver: SolverKind,
    /// How placeholder asks are placed ([`PlaceholderMode`]).
    pub placeholders: PlaceholderMode,
    /// Wall-clock budget of each decision (default: the instance's, else 10 s).
    pub time_limit: Option<Duration>,
    /// Deterministic budget of each decision in work units (exact engine).
    pub work_limit: Option<u64>,
    /// Threads for the solver's parallel phases (never changes a decision).
    pub threads: Option<usize>,
    /// Validate every decision with [`crate::check()`]; a decision that fails is logged
    /// (`checkFailed`), counted in the summary and not applied.
    pub check: bool,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The event log, one JSON object per event (`at`, `app`, `kind`, ...).
    pub log: Vec<serde_json::Value>,
    /// Per-application, per-cycle and total figures of the run.
    pub summary: Summary,
}

impl Outcome {
    /// The event log as JSON lines.
    pub fn log_jsonl(&self) -> String {
        let mut s = String::new();
        for l in &self.log {
            s.push_str(&l.to_string());
            s.push('\n');
        }
        s
    }
}

/// Runs `scenario` to its end. Errors: a cycle instance the simulator could not build
/// (a bug, reported rather than hidden).
pub fn simulate(scenario: &Scenario, opts: &SimOptions) -> Result<Outcome, String> {
    simulate_with_progress(scenario, opts, &mut |_| {})
}

/// How far a run has got, passed to the callback of [`simulate_with_progress`] after
/// every cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time reached, in ms.
    pub at: scenario::Ms,
    /// Where the run ends: `until`, else the last timeline event (timers may run later).
    pub end: scenario::Ms,
    /// Cycles run so far.
    pub cycles: u64,
}

/// [`simulate`], reporting progress after every cycle (a day of cycles can take hours).
pub fn simulate_with_progress(scenario: &Scenario, opts: &SimOptions, progress: &mut dyn FnMut(Progress)) -> Result<Outcome, String> {
    let start = std::time::Instant::now();
    let mut w = world::World::new(scenario, opts);
    w.run(progress)?;
    let summary = report::summarize(&w, start.elapsed());
    Ok(Outcome { log: std::mem::take(&mut w.log), summary })
}
