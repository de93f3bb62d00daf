//! YuniKorn's queue configuration as written: an instance's `queues` list or a whole
//! `queues.yaml`, with YuniKorn's own keys. Validated into [`crate::model::QueueTree`].

use super::{unique_map, QuantityDoc, ResourcesDoc};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// One queue as written in YuniKorn's configuration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueDoc {
    /// `name`: the queue's name, one component of its dotted path.
    pub name: String,
    /// `true` makes the queue a parent even without configured children.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<bool>,
    /// `queues`: child queues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueDoc>,
    /// `maxapplications`: most running applications (pod groups) in the queue; absent = unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maxapplications: Option<u64>,
    /// YuniKorn properties; values are strings in YuniKorn, numbers are accepted too.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty", deserialize_with = "unique_map")]
    pub properties: IndexMap<String, QuantityDoc>,
    /// `resources`: the queue's `guaranteed` and `max` resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<QueueResourcesDoc>,
    /// Access control lists: accepted so real configurations load; no effect on placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adminacl: Option<String>,
    /// Submit access control list: accepted, no effect on placement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitacl: Option<String>,
}

/// A queue's `resources`: YuniKorn names (`vcore`, `memory`) or Kubernetes names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueResourcesDoc {
    /// `guaranteed`: resources the queue is guaranteed.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty", deserialize_with = "unique_map")]
    pub guaranteed: ResourcesDoc,
    /// `max`: resource limits of the queue; a resource left out is unlimited.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty", deserialize_with = "unique_map")]
    pub max: ResourcesDoc,
}

/// A whole YuniKorn `queues.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueuesYamlDoc {
    /// `partitions`: the partitions of the configuration.
    pub partitions: Vec<PartitionDoc>,
}

/// One partition of a YuniKorn `queues.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartitionDoc {
    /// `name`: the partition's name.
    pub name: String,
    /// `queues`: the queue tree of the partition (root first).
    #[serde(default)]
    pub queues: Vec<QueueDoc>,
    /// Placement rules choose a queue for applications without one; Tessera's pod groups
    /// name their queue, so the rules are accepted and not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placementrules: Option<serde_json::Value>,
    /// Node sorting of YuniKorn's greedy allocator; the solver optimizes instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodesortpolicy: Option<serde_json::Value>,
}
