//! `ffd`: first-fit decreasing over gangs, no evictions (the engine's greedy placement,
//! [`crate::engine::greedy`], as a solver of its own).

use crate::engine::assemble::assemble;
use crate::engine::cycle::Cycle;
use crate::engine::greedy::{ffd_order, place_in_order};
use crate::engine::Solver;
use crate::model::Instance;
use crate::options::Options;
use crate::wire::decision::{Decision, Status};

/// The `ffd` baseline.
pub struct FirstFitDecreasing;

impl Solver for FirstFitDecreasing {
    fn name(&self) -> &'static str {
        "ffd"
    }
    fn describe(&self) -> &'static str {
        "first-fit decreasing: groups by priority then size, all-or-nothing, pods first fit on nodes in input order"
    }
    fn solve(&self, inst: &Instance, _opts: &Options) -> Decision {
        let start = std::time::Instant::now();
        let cycle = Cycle::new(inst);
        let a = place_in_order(&cycle, &ffd_order(&cycle), None);
        let mut d = assemble(&cycle, &a, Status::Feasible, f64::NAN);
        d.stats.solver = Some("ffd".into());
        d.stats.solve_millis = Some(start.elapsed().as_millis() as u64);
        d
    }
}
