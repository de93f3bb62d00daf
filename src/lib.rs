//! # Tessera
//!
//! An exact placement engine for one scheduling cycle: pending pod groups (gangs,
//! heterogeneous gangs, basic groups), shared devices and topology are turned into a
//! MILP and solved with HiGHS, with a greedy incumbent as warm start and a hard deadline.
//!
//! The public surface is small:
//! - [`Instance`]: the validated cycle snapshot (`Instance::from_text` reads YAML or JSON
//!   of `shared/spec/instance-format.md`; errors name the path of the bad field);
//! - [`Decision`]: the one answer type of every solver;
//! - [`Solver`] and [`solvers`]: the exact solver and the heuristics behind one trait;
//! - [`check`]: the independent validator of hard rules and objective terms.
//!
//! ```
//! use tessera::{Instance, SolveConfig, Status};
//! let inst = Instance::from_text(r#"
//! nodes:
//!   - {name: n1, allocatable: {cpu: "4", memory: 8Gi}}
//!   - {name: n2, allocatable: {cpu: "4", memory: 8Gi}}
//! podGroups:
//!   - name: job
//!     tasks:
//!       - {name: worker, count: 2, requests: {cpu: "3"}}
//! "#).unwrap();
//! let decision = tessera::solvers::by_name("exact").unwrap().solve(&inst, &SolveConfig::default());
//! assert_eq!(decision.status, Status::Optimal);
//! assert_eq!(decision.placements[0].pods.len(), 2);
//! assert!(tessera::check::check(&inst, &decision).violations.is_empty());
//! ```

pub mod bench;
pub mod check;
pub mod compare;
pub mod decision;
pub mod generate;
pub mod model;
mod plot;
pub mod quantity;
pub mod queues;
pub mod quotas;
pub mod solve;
pub mod spec;

pub use decision::{Decision, Status};
pub use model::Instance;
pub use solve::{solvers, SolveConfig, Solver};
pub use spec::InputError;
