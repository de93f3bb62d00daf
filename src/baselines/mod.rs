//! Baselines: re-implementations of the schedulers people run, behind
//! [`crate::engine::Solver`], so that the exact solver can be compared with them on the
//! same instances.
//!
//! Each module documents where its behaviour comes from. They share the building blocks
//! here: the queue order, Kubernetes `NodeResourcesFit`-style node scores, and placement
//! of one pod (or one slice of pods) on the node a rule picks, with fit decided by
//! [`crate::engine::cycle::NodeState::take`] on the nodes of [`crate::engine::cycle::Cycle::eligible`]. No heuristic here evicts
//! anything (`k8s-preempt` is the preempting baseline); every decision is `Feasible`.
//!
//! Common choices, documented once:
//! - a group with a `required` topology level keeps all its new pods in one domain of
//!   that level: the domain its bound members pin (see [`crate::engine::cycle::Cycle::pinned`]), else the domain
//!   of its first placed pod (pod-by-pod schedulers) or the domain the algorithm chose;
//! - a task with a `slice` is placed a whole slice at a time (all `size` pods in one
//!   domain of the slice level, rolled back if the slice does not complete); a slice is one
//!   "unit" of the pod-by-pod loops below;
//! - `preferred` topology is ignored except by the Kueue profiles.
//!
//! The Kueue (`kueue_tas`) and YuniKorn (`yunikorn`) baselines are ports of those
//! schedulers' code and document their own choices; they check queue quotas at admission
//! or allocation instead of trimming afterwards.

pub mod bfd;
pub mod common;
pub mod ffd;
pub mod k8s_pod;
pub mod k8s_podgroup;
pub mod k8s_preempt;
pub mod kueue_tas;
pub mod yunikorn;
