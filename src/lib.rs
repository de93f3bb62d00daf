//! # Tessera
//!
//! An exact placement engine for one scheduling cycle: pending pod groups (gangs,
//! heterogeneous gangs, basic groups), shared devices and topology are turned into a
//! MILP and solved with HiGHS, with a greedy incumbent as warm start and a hard deadline.
//!
//! The public surface is small, on the model of pubgrub's `resolve`:
//! - [`solve`] decides one cycle with the solver and budgets of [`Options`];
//! - [`check()`] validates any decision against the hard rules, independently of the solvers;
//! - [`Instance`] is the validated cycle snapshot ([`Instance::from_text`] and
//!   [`Instance::from_reader`] read YAML or JSON of `shared/spec/instance-format.md`;
//!   errors name the path of the bad field);
//! - [`Decision`] is the one answer type of every solver.
//!
//! ```
//! use tessera::{Instance, Options, Status};
//! let inst = Instance::from_text(r#"
//! nodes:
//!   - {name: n1, allocatable: {cpu: "4", memory: 8Gi}}
//!   - {name: n2, allocatable: {cpu: "4", memory: 8Gi}}
//! podGroups:
//!   - name: job
//!     tasks:
//!       - {name: worker, count: 2, requests: {cpu: "3"}}
//! "#).unwrap();
//! let decision = tessera::solve(&inst, &Options::default());
//! assert_eq!(decision.status, Status::Optimal);
//! assert_eq!(decision.placements[0].pods.len(), 2);
//! assert!(tessera::check(&inst, &decision).is_valid());
//! ```

// Per-resource vectors are indexed side by side (requests, free, allocatable): an index
// loop reads clearer there than nested zips. Tuples of ids and scores name their parts at
// the use site.
#![allow(clippy::needless_range_loop, clippy::type_complexity)]
#![warn(missing_docs)]

pub mod check;
pub mod kube;
pub mod model;
#[cfg(feature = "serve")]
pub mod serve;
pub mod sim;
pub mod tooling;
pub mod wire;

mod baselines;
mod engine;
mod exact;
mod options;
mod solvers;

pub use check::Report;
pub use model::Instance;
pub use options::{CancelHandle, Diagnostics, EngineChoice, FloorRows, Options, ProgressSink, SolverKind};
pub use wire::decision::{Decision, Status};
pub use wire::InputError;

/// Decides one cycle: the solver of `opts` places the pending groups of `inst`.
///
/// The answer is always a [`Decision`] (never an error: the instance is already
/// validated); with the exact engine its `status` says whether terms 1-3 are proven,
/// and `gap` how far the first open row may be from its bound. The call returns within
/// the wall-clock budget ([`Options::time_limit`]) or soon after [`CancelHandle::cancel`].
///
/// A heuristic, the exact engine under a deterministic work limit, and what each says
/// about the group it cannot place:
///
/// ```
/// use tessera::{Instance, Options, SolverKind};
/// use tessera::wire::decision::ReasonCode;
/// let inst = Instance::from_reader(r#"
/// nodes: [{name: n1, allocatable: {cpu: "4"}}]
/// podGroups:
///   - {name: high, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "3"}}]}
///   - {name: low, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
///   - {name: huge, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "64"}}]}
/// "#.as_bytes()).unwrap();
/// let ffd = tessera::solve(&inst, &Options { solver: SolverKind::from_name("ffd").unwrap(), ..Options::default() });
/// assert!(ffd.bounds.is_none()); // heuristics prove nothing
/// let exact = tessera::solve(&inst, &Options { work_limit: Some(1_000), ..Options::default() });
/// let code = |name: &str| exact.unplaced.iter().find(|u| u.pod_group == name).and_then(|u| u.reason_code);
/// assert_eq!(code("huge"), Some(ReasonCode::NoNodeFits));
/// assert_eq!(code("low"), Some(ReasonCode::Outranked));
/// // Every row proven: the bound on groups placed at priority 0 is the value, 0.
/// let bounds = exact.bounds.unwrap();
/// assert_eq!(bounds.placed_by_priority.last().map(|b| b.at_most), Some(0));
/// ```
///
/// A cancel handle stops a solve from another thread; the answer is then the best
/// verified incumbent:
///
/// ```
/// use tessera::{CancelHandle, Instance, Options};
/// let inst = Instance::from_text("nodes: [{name: n1, allocatable: {cpu: '1'}}]\npodGroups: []\n").unwrap();
/// let cancel = CancelHandle::default();
/// cancel.cancel(); // e.g. from the thread serving a caller that went away
/// let d = tessera::solve(&inst, &Options { cancel, ..Options::default() });
/// assert!(tessera::check(&inst, &d).is_valid());
/// ```
pub fn solve(inst: &Instance, opts: &Options) -> Decision {
    opts.solver.solve(inst, opts)
}

/// Checks `decision` against every hard rule of the contract and recomputes objective
/// terms 1-3 ([`Report::is_valid`] is true when nothing is broken). Shares no
/// constraint-building code with the solvers.
///
/// ```
/// use tessera::Instance;
/// use tessera::wire::decision::{Decision, PlacedPod, Placement, Status};
/// let inst = Instance::from_text(r#"
/// nodes: [{name: n1, allocatable: {cpu: "2"}}]
/// podGroups: [{name: job, tasks: [{name: w, count: 2, requests: {cpu: "2"}}]}]
/// "#).unwrap();
/// // Both pods on the one 2-cpu node: rule 1 (capacity) is broken.
/// let pod = || PlacedPod { task: "w".into(), node: "n1".into(), device_ids: Default::default() };
/// let placement = Placement { pod_group: "job".into(), domains: Default::default(), pods: vec![pod(), pod()] };
/// let d = Decision {
///     status: Status::Feasible,
///     objective: Default::default(),
///     gap: 0.0,
///     bounds: None,
///     placements: vec![placement],
///     unplaced: vec![],
///     evictions: vec![],
///     stats: Default::default(),
/// };
/// let report = tessera::check(&inst, &d);
/// assert!(!report.is_valid());
/// assert!(tessera::check::render(&report).contains("rule 1"));
/// ```
pub fn check(inst: &Instance, decision: &Decision) -> Report {
    check::check(inst, decision)
}
