//! The wire format: the documents of the public contract (`shared/spec/instance-format.md`)
//! exactly as callers write them (serde types with camelCase keys, unknown keys rejected),
//! the [`decision::Decision`] every solver answers with, Kubernetes quantities, and the
//! reader that turns YAML or JSON into any of them with the path of a bad field.
//!
//! [`crate::model::Instance`] is the validated engine model built from these documents;
//! nothing in the solvers reads them directly.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A quantity as written: `2`, `1.5`, `"500m"`, `8Gi`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QuantityDoc {
    /// An integer as written (`2`).
    Int(i64),
    /// A decimal number as written (`1.5`).
    Float(f64),
    /// A string with an optional suffix (`"500m"`, `8Gi`, `1e3`).
    Text(String),
}

impl QuantityDoc {
    /// The text form used for parsing and in error messages.
    pub fn text(&self) -> String {
        match self {
            QuantityDoc::Int(i) => i.to_string(),
            QuantityDoc::Float(f) => format!("{f}"),
            QuantityDoc::Text(s) => s.clone(),
        }
    }
}

impl From<&str> for QuantityDoc {
    fn from(s: &str) -> Self {
        QuantityDoc::Text(s.to_string())
    }
}

pub mod decision;
pub mod quantity;
pub mod queues;

pub use queues::{PartitionDoc, QueueDoc, QueueResourcesDoc, QueuesYamlDoc};

/// Resource name -> quantity (`allocatable`, `requests`); a resource left out is 0.
pub type ResourcesDoc = IndexMap<String, QuantityDoc>;

/// The instance document: one scheduling-cycle snapshot (top level of the instance format).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InstanceDoc {
    /// `topology`: the topology levels; absent means hostname only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyDoc>,
    /// `sharedDevices`: resources counted in whole physical devices shared by fractions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared_devices: Vec<String>,
    /// `priorityClasses`: Kubernetes PriorityClass name -> value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub priority_classes: Vec<PriorityClassDoc>,
    /// `nodes`: the cluster's nodes.
    #[serde(default)]
    pub nodes: Vec<NodeDoc>,
    /// `podGroups`: running and pending groups (gangs, jobs, apps).
    #[serde(default)]
    pub pod_groups: Vec<PodGroupDoc>,
    /// `pods`: pods already bound to nodes.
    #[serde(default)]
    pub pods: Vec<PodDoc>,
    /// `queues`: the queue list of one YuniKorn partition; empty means no queues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queues: Vec<QueueDoc>,
    /// `options`: solve options of the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub options: Option<OptionsDoc>,
}

/// `topology` of an instance.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TopologyDoc {
    /// `levels`: node label keys, coarse -> fine (hostname is the implicit finest level).
    #[serde(default)]
    pub levels: Vec<String>,
}

/// An entry of `priorityClasses`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriorityClassDoc {
    /// `name`: the PriorityClass name groups refer to with `priorityClassName`.
    pub name: String,
    /// `value`: the priority (int32 range).
    pub value: i64,
}

/// An entry of `nodes`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeDoc {
    /// `name`: unique node name.
    pub name: String,
    /// `labels`: node labels (topology levels, selectors, affinity).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_map")]
    pub labels: BTreeMap<String, String>,
    /// `allocatable`: capacity per resource; a missing resource is 0.
    #[serde(default, deserialize_with = "unique_map")]
    pub allocatable: ResourcesDoc,
    /// `taints`: taints that pods must tolerate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<TaintDoc>,
    /// `unschedulable`: cordoned; no new pod goes there (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unschedulable: bool,
}

/// An entry of a node's `taints`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaintDoc {
    /// `key`: the taint key.
    pub key: String,
    /// `value`: the taint value, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `effect`: `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

/// An entry of a task's `tolerations`, as in Kubernetes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TolerationDoc {
    /// `key`: the taint key tolerated; absent with `Exists` tolerates every taint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// `operator`: `Equal` (default) or `Exists`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// `value`: the value matched by `Equal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `effect`: the effect tolerated; absent tolerates every effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
}

/// `topology` of a pod group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupTopologyDoc {
    /// `required`: level whose ONE domain must hold every pod of the group (bound ones too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<String>,
    /// `preferred`: level whose domains the group should use as few of as possible (soft).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred: Option<String>,
}

/// An entry of `podGroups`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodGroupDoc {
    /// `name`: unique group name.
    pub name: String,
    /// Kubernetes namespace (informational; carried into exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Kubernetes object uid (informational; carried into exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `queue`: full dotted YuniKorn queue path from `root` to a leaf.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// `priority`: int32; default from `priorityClassName`, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// `priorityClassName`: names an entry of `priorityClasses` (alternative to `priority`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
    /// `preemptionPolicy`: `PreemptLowerPriority` (default) or `Never`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_policy: Option<String>,
    /// `disruptionMode`: `Pod` (default, members evictable one by one) or `PodGroup` (all together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disruption_mode: Option<String>,
    /// `policy`: `gang` (default) or `basic` (each pod independent, best effort).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// `minCount`: gang minimum over the whole group; default the sum of the tasks' `minCount`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<i64>,
    /// `topology`: required and preferred topology of the group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<GroupTopologyDoc>,
    /// `createdAt`: seconds; FIFO order among equals (default: file order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<i64>,
    /// `tasks`: the task groups; several make a heterogeneous gang.
    #[serde(default)]
    pub tasks: Vec<TaskDoc>,
}

/// A task's `slice`: its pods come in slices of `size`, each inside one domain of `topology`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SliceDoc {
    /// `topology`: the level whose one domain holds each slice.
    pub topology: String,
    /// `size`: pods per slice.
    pub size: i64,
}

/// An entry of a group's `tasks`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskDoc {
    /// `name`: task name, unique within the group.
    pub name: String,
    /// `count`: pods still pending for this task (0 = nothing to place).
    #[serde(default)]
    pub count: i64,
    /// `minCount`: gang minimum of this task; default `count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_count: Option<i64>,
    /// `requests`: per-pod resource requests.
    #[serde(default, deserialize_with = "unique_map")]
    pub requests: ResourcesDoc,
    /// `nodeSelector`: node labels that must all match.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_map")]
    pub node_selector: BTreeMap<String, String>,
    /// `tolerations`: taints the task's pods tolerate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<TolerationDoc>,
    /// `slice`: optional slicing of the task's pods by topology domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<SliceDoc>,
    /// Required node affinity: any term must match (OR); within a term every
    /// requirement must (AND). Absent: no constraint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
}

/// One requirement of a node affinity term, with Kubernetes' operators.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodeSelectorRequirementDoc {
    /// `key`: the node label key.
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt` or `Lt`.
    pub operator: String,
    /// `values`: the values of `In`/`NotIn`, or the one integer of `Gt`/`Lt`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

/// An entry of `pods`: a pod already bound to a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodDoc {
    /// `name`: unique pod name.
    pub name: String,
    /// Kubernetes namespace (informational; carried into exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Kubernetes object uid (informational; carried into exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// `node`: the node it is bound to.
    pub node: String,
    /// `podGroup`: names an entry of `podGroups`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_group: Option<String>,
    /// `task`: the task of its group, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// `priority`: default its group's priority, else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// `requests`: resource requests.
    #[serde(default, deserialize_with = "unique_map")]
    pub requests: ResourcesDoc,
    /// `deviceIds`: shared-device resource -> indices (0..count-1) of the devices it holds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_map")]
    pub device_ids: BTreeMap<String, Vec<i64>>,
    /// `placeholder`: a YuniKorn placeholder pod (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub placeholder: bool,
    /// Being released (a placeholder whose replacement is in flight): holds its node,
    /// counts in no queue, never a victim.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub releasing: bool,
    /// `preemptible`: false means never a victim (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptible: Option<bool>,
    /// `startedAt`: start time in seconds, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
}

/// `options` of an instance: solve options.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptionsDoc {
    /// `preemption`: allow evictions (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption: Option<bool>,
    /// `timeLimit`: wall-clock budget for the cycle (`10s`, `500ms`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<String>,
    /// `relativeGap`: stop within this relative gap (0 = prove optimal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_gap: Option<f64>,
    /// `preemptionModel`: `default` (rule 6) or `yunikorn` (adds YuniKorn's rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption_model: Option<String>,
    /// Deterministic budget in solver work units (0 or absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_limit: Option<u64>,
}

/// Error of reading or validating an input document: the path of the bad field and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// Path of the bad field (`nodes[3].allocatable.memory`); empty for the whole document.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// An error at `path` with `message`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        InputError { path: path.into(), message: message.into() }
    }
}

/// Maps whose keys must be unique: YAML and JSON parsers keep the last of duplicate
/// keys, which would silently drop a value the caller wrote.
pub(crate) fn unique_map<'de, D, M, K, V>(de: D) -> Result<M, D::Error>
where
    D: serde::Deserializer<'de>,
    M: Default + Extend<(K, V)>,
    K: serde::Deserialize<'de> + Ord + std::fmt::Debug + Clone,
    V: serde::Deserialize<'de>,
{
    struct Visit<M, K, V>(std::marker::PhantomData<(M, K, V)>);
    impl<'de, M, K, V> serde::de::Visitor<'de> for Visit<M, K, V>
    where
        M: Default + Extend<(K, V)>,
        K: serde::Deserialize<'de> + Ord + std::fmt::Debug + Clone,
        V: serde::Deserialize<'de>,
    {
        type Value = M;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            write!(f, "a map")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<M, A::Error> {
            let mut seen = std::collections::BTreeSet::new();
            let mut out = M::default();
            while let Some(k) = access.next_key::<K>()? {
                if !seen.insert(k.clone()) {
                    return Err(serde::de::Error::custom(format!("duplicate key {k:?}")));
                }
                let v = access.next_value::<V>()?;
                out.extend(std::iter::once((k, v)));
            }
            Ok(out)
        }
    }
    de.deserialize_map(Visit(std::marker::PhantomData))
}

/// Deepest bracket nesting accepted; the YAML parser is quadratic in it.
const MAX_NESTING: usize = 64;

fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for b in text.bytes() {
        match b {
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Reads a document as YAML or JSON (JSON when the text is JSON), with the path of the
/// offending field in every error.
pub fn from_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, InputError> {
    let blank = text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---" || l == "..."
    });
    if blank {
        return Err(InputError::new("", "empty document"));
    }
    if nesting_depth(text) > MAX_NESTING {
        return Err(InputError::new("", format!("nesting deeper than {MAX_NESTING} levels")));
    }
    let trimmed = text.trim_start();
    let json = |text: &str| -> Result<T, InputError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = serde_path_to_error::deserialize(&mut de).map_err(|e| path_error(e.path().to_string(), e.inner().to_string()))?;
        de.end().map_err(|e| InputError::new("", format!("invalid JSON: {e}")))?;
        Ok(value)
    };
    // JSON when it is JSON; a YAML flow mapping also starts with '{', so text that is
    // not even JSON syntax gets a YAML reading, and the JSON error if that fails too.
    if trimmed.starts_with('{') {
        if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
            return json(text);
        }
        let json_err = json(text).err();
        return from_yaml(text).map_err(|yaml_err| json_err.unwrap_or(yaml_err));
    }
    from_yaml(text)
}

fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, InputError> {
    {
        let mut docs = serde_yaml_ng::Deserializer::from_str(text);
        let first = match docs.next() {
            Some(d) => d,
            None => return Err(InputError::new("", "empty document")),
        };
        let value = serde_path_to_error::deserialize(first).map_err(|e| path_error(e.path().to_string(), e.inner().to_string()))?;
        if docs.next().is_some() {
            return Err(InputError::new("", "more than one YAML document in the input"));
        }
        Ok(value)
    }
}

fn path_error(path: String, message: String) -> InputError {
    // serde's messages carry their own position suffix; keep it, it helps. The YAML
    // parser also prefixes its own (shorter) path: drop that, ours is the precise one.
    let path = if path == "." { String::new() } else { path };
    let message = match message.split_once(": ") {
        Some((head, rest)) if !head.is_empty() && !head.contains(' ') && (path.starts_with(head) || head == ".") => rest.to_string(),
        _ => message,
    };
    InputError::new(path, message)
}

/// Parses `10s`, `500ms`, `2m`, `1.5s` or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num.trim().parse().map_err(|_| format!("invalid duration {text:?} (e.g. 10s, 500ms, 2m)"))?;
    let secs = v * mult;
    if !secs.is_finite() || !(0.001..=7.0 * 24.0 * 3600.0).contains(&secs) {
        return Err(format!("duration {text:?} must be between 1ms and a week"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}
