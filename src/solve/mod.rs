//! Solvers: the exact MILP solver and the heuristics, all behind [`Solver`].
//!
//! The placement model ([`crate::model::Instance`]) knows nothing of any solver; the
//! backend is chosen at one point ([`solvers::by_name`]).

use crate::decision::Decision;
use crate::model::Instance;
use std::time::Duration;

/// Settings of one solve; instance `options` fill what is left `None` here.
#[derive(Clone, Debug, Default)]
pub struct SolveConfig {
    /// Wall-clock budget (hard deadline). Default: `options.timeLimit`, else 10 s.
    pub time_limit: Option<Duration>,
    /// Relative gap at which the exact solver may stop. Default: `options.relativeGap`, else 0.
    pub relative_gap: Option<f64>,
    /// Rayon threads for parallel phases (None = rayon's default). Never changes the answer.
    pub threads: Option<usize>,
}

impl SolveConfig {
    pub fn time_limit(&self, inst: &Instance) -> Duration {
        self.time_limit.or(inst.options.time_limit).unwrap_or(Duration::from_secs(10))
    }
    pub fn relative_gap(&self, inst: &Instance) -> f64 {
        self.relative_gap.unwrap_or(inst.options.relative_gap)
    }
}

/// One way of deciding a cycle. Every implementation returns a [`Decision`] that passes
/// [`crate::check::check`].
pub trait Solver: Send + Sync {
    /// Short name used on the command line (`--solver NAME`).
    fn name(&self) -> &'static str;
    /// One line on what it does and where its behaviour comes from.
    fn describe(&self) -> &'static str;
    fn solve(&self, inst: &Instance, cfg: &SolveConfig) -> Decision;
}

pub mod solvers {
    //! The registry of solvers.
    use super::*;

    /// All solvers, the exact one first.
    pub fn all() -> Vec<Box<dyn Solver>> {
        vec![
            Box::new(super::exact::Exact),
            Box::new(super::greedy::FirstFitDecreasing),
            Box::new(super::k8s_preempt::K8sPreemption),
            Box::new(super::heuristics::k8s_pod::K8sPod { most_allocated: false }),
            Box::new(super::heuristics::k8s_pod::K8sPod { most_allocated: true }),
            Box::new(super::heuristics::k8s_podgroup::K8sPodGroup),
            Box::new(super::heuristics::kueue::Kueue { least_free: false }),
            Box::new(super::heuristics::kueue::Kueue { least_free: true }),
            Box::new(super::heuristics::yunikorn::YuniKorn { binpacking: false }),
            Box::new(super::heuristics::yunikorn::YuniKorn { binpacking: true }),
            Box::new(super::heuristics::bfd::BestFitDecreasing),
        ]
    }

    pub fn by_name(name: &str) -> Option<Box<dyn Solver>> {
        all().into_iter().find(|s| s.name() == name)
    }
}

mod assemble;
mod bound;
mod cycle;
mod exact;
mod explain;
mod greedy;
mod heuristics;
mod highs;
mod k8s_preempt;
mod milp;
mod quota;
mod repair;
mod tuning;

/// The cycle MILP of an instance in CPLEX LP format, all objective components merged
/// into their first tier's weights (what `models/*.lp` shows).
pub fn export_lp(inst: &Instance) -> String {
    let cycle = cycle::Cycle::new(inst);
    let model = milp::CycleModel::build(&cycle);
    let mut mip = model.mip.clone();
    let mut header = String::from("\\ Objective tiers, solved in order (each fixed before the next):\n");
    for (i, t) in model.tiers().iter().enumerate() {
        header.push_str(&format!("\\   tier {}: {} ({})\n", i + 1, t.names.join(" + "), if t.exact { "proven" } else { "best effort" }));
        if i == 0 {
            for &(c, v) in &t.coefs {
                mip.col_cost[c] = v;
            }
        }
    }
    header.push_str("\\ The objective below is tier 1.\n");
    header + &mip.to_lp()
}
