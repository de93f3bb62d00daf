//! What every solver shares: the [`Solver`] trait, the cycle as solvers see it (free
//! capacity, eligibility, topology domains, victim units), assignments and their
//! assembly into a [`Decision`] with explanations, the greedy placement primitives and
//! the queue ledger. The validator (`crate::check`) uses none of it.
//!
//! The placement model ([`crate::model::Instance`]) knows nothing of any solver; the
//! backend is chosen at one point (`crate::solvers::solver_of`).

use crate::model::Instance;
use crate::options::Options;
use crate::wire::decision::Decision;

/// One way of deciding a cycle. Every implementation returns a [`Decision`] that passes
/// [`crate::check()`].
pub(crate) trait Solver: Send + Sync {
    /// Short name used on the command line (`--solver NAME`).
    fn name(&self) -> &'static str;
    /// One line on what it does and where its behaviour comes from.
    fn describe(&self) -> &'static str;
    fn solve(&self, inst: &Instance, opts: &Options) -> Decision;
}

pub mod assemble;
pub mod assignment;
pub mod cycle;
pub mod explain;
pub mod fragmentation;
pub mod greedy;
pub mod ledger;
pub mod needed;
pub mod yunikorn_rules;
