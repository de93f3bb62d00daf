//! Dense ids: indices into the `Vec` arenas of [`super::Instance`].

/// A node: index into `Instance::nodes`.
pub type NodeId = usize;
/// A pod group: index into `Instance::groups`.
pub type GroupId = usize;
/// A task: index into `Instance::tasks`.
pub type TaskId = usize;
/// A bound pod: index into `Instance::pods`.
pub type PodId = usize;
/// A resource: index into `Instance::resources`.
pub type ResourceId = usize;
