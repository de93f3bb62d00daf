//! Tooling around the engine: instance generators, side-by-side comparison of solvers,
//! benchmarks with their figures, and entry points for replaying the exact engine's
//! models elsewhere.

#[cfg(feature = "cli")]
pub mod bench;
pub mod compare;
pub mod generate;
#[cfg(feature = "cli")]
mod plot;

/// The Kueue Topology-Aware Scheduling port behind the `kueue` baselines (tested against
/// Kueue's own unit-test table).
pub use crate::baselines::kueue_tas;
pub use crate::exact::diagnose::{export_lp, time_screening};
