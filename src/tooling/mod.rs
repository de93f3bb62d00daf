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

/// Writes `text` to `path` whole or not at all: a temporary file beside it, renamed into
/// place (removed if the rename fails), so a failed run leaves no partial file.
pub fn write_atomic(path: &std::path::Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("{}: {e}", path.display())
    })
}
