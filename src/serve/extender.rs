//! kube-scheduler extender (`/scheduler/filter`, `/scheduler/prioritize`,
//! `/scheduler/preempt`) and the cluster view routes (`/v1/cluster`, `/v1/plan`).
//!
//! Wire format of `k8s.io/kube-scheduler/extender/v1` `types.go` (kubernetes/kube-scheduler
//! e87dbdd) as kube-scheduler's `pkg/scheduler/extender.go` sends it: the Go structs have
//! no json tags, so the keys are the Go field names (`Pod`, `Nodes`, `NodeNames`,
//! `FailedNodes`, `Host`, `Score`, `NodeNameToMetaVictims`, …); Go decodes answers
//! case-insensitively and so do we (lowerCamel aliases). The embedded `v1.Pod` and
//! `v1.NodeList` keep their usual keys.
//!
//! Every answer comes from the plan of the current view (the `cluster` module): a pending
//! member is filtered to its planned node, that node scores `10`
//! (`MaxExtenderPriority`), and preemption keeps only the planned node with the plan's
//! victims. An extender cannot hold pods back: all-or-nothing admission stays with the
//! gang mechanism of the cluster; Tessera supplies the placement.

use super::app::{content_type_ok, json_ok, read_body, ApiError, State};
use super::cluster::Planned;
use crate::kube::objects::Pod;
use crate::kube::read::{namespace_of, Objects};
use crate::wire::decision::ReasonCode;
use axum::body::Body;
use axum::extract::State as AxState;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `MaxExtenderPriority`.
pub const MAX_EXTENDER_PRIORITY: i64 = 10;

/// `v1.NodeList` as the extender sees it: the node objects are echoed back untouched.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NodeList {
    /// List metadata.
    #[serde(default)]
    pub metadata: Value,
    /// Node objects.
    #[serde(default, deserialize_with = "null_vec")]
    pub items: Vec<Value>,
}

fn null_vec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    Ok(Option::<Vec<Value>>::deserialize(d)?.unwrap_or_default())
}

/// `ExtenderArgs`.
#[derive(Clone, Debug, Deserialize)]
pub struct ExtenderArgs {
    /// The pod being scheduled.
    #[serde(rename = "Pod", alias = "pod")]
    pub pod: Value,
    /// Candidate nodes (extender without `nodeCacheCapable`).
    #[serde(rename = "Nodes", alias = "nodes", default)]
    pub nodes: Option<NodeList>,
    /// Candidate node names (`nodeCacheCapable: true`).
    #[serde(rename = "NodeNames", alias = "nodeNames", alias = "nodenames", default)]
    pub node_names: Option<Vec<String>>,
}

/// `ExtenderFilterResult`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExtenderFilterResult {
    /// Nodes that passed (full objects), when the call sent full objects.
    #[serde(rename = "Nodes")]
    pub nodes: Option<NodeList>,
    /// Nodes that passed, by name, when the call sent names.
    #[serde(rename = "NodeNames")]
    pub node_names: Option<Vec<String>>,
    /// Failed nodes and why (preemption may help).
    #[serde(rename = "FailedNodes")]
    pub failed_nodes: BTreeMap<String, String>,
    /// Failed nodes that preemption cannot help.
    #[serde(rename = "FailedAndUnresolvableNodes")]
    pub failed_and_unresolvable_nodes: BTreeMap<String, String>,
    /// A failure of the extender itself.
    #[serde(rename = "Error")]
    pub error: String,
}

/// One entry of a `HostPriorityList`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostPriority {
    /// Node name.
    #[serde(rename = "Host")]
    pub host: String,
    /// 0..=10.
    #[serde(rename = "Score")]
    pub score: i64,
}

/// `MetaPod`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetaPod {
    /// Pod uid.
    #[serde(rename = "UID", alias = "uid")]
    pub uid: String,
}

/// `MetaVictims`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MetaVictims {
    /// Victims.
    #[serde(rename = "Pods", alias = "pods", default)]
    pub pods: Vec<MetaPod>,
    /// PodDisruptionBudget violations.
    #[serde(rename = "NumPDBViolations", alias = "numPDBViolations", default)]
    pub num_pdb_violations: i64,
}

/// `Victims` (full pod objects).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Victims {
    /// Victims.
    #[serde(rename = "Pods", alias = "pods", default, deserialize_with = "null_vec")]
    pub pods: Vec<Value>,
    /// PodDisruptionBudget violations.
    #[serde(rename = "NumPDBViolations", alias = "numPDBViolations", default)]
    pub num_pdb_violations: i64,
}

/// `ExtenderPreemptionArgs`.
#[derive(Clone, Debug, Deserialize)]
pub struct ExtenderPreemptionArgs {
    /// The preemptor.
    #[serde(rename = "Pod", alias = "pod")]
    pub pod: Value,
    /// Candidates with full victims.
    #[serde(rename = "NodeNameToVictims", alias = "nodeNameToVictims", default)]
    pub node_name_to_victims: Option<BTreeMap<String, Victims>>,
    /// Candidates with victim uids (`nodeCacheCapable`).
    #[serde(rename = "NodeNameToMetaVictims", alias = "nodeNameToMetaVictims", default)]
    pub node_name_to_meta_victims: Option<BTreeMap<String, MetaVictims>>,
}

/// `ExtenderPreemptionResult`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ExtenderPreemptionResult {
    /// Candidates kept, with their victims.
    #[serde(rename = "NodeNameToMetaVictims")]
    pub node_name_to_meta_victims: BTreeMap<String, MetaVictims>,
}

fn read_pod(v: &Value) -> Result<Pod, ApiError> {
    serde_path_to_error::deserialize(v)
        .map_err(|e| ApiError::bad(crate::wire::InputError::new(format!("Pod.{}", e.path()), e.inner().to_string())))
}

async fn args<T: serde::de::DeserializeOwned>(state: &State, headers: &HeaderMap, body: Body) -> Result<T, ApiError> {
    let text = read_body(state, headers, body).await?;
    let v: Value = serde_json::from_str(&text).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, format!("invalid JSON: {e}")))?;
    serde_path_to_error::deserialize(&v)
        .map_err(|e| ApiError::bad(crate::wire::InputError::new(e.path().to_string(), e.inner().to_string())))
}

/// What the plan says for `pod`, adding it to the view when it is new there.
enum Answer {
    /// No constraint from Tessera (a bound pod, or no view).
    Open(Option<String>),
    /// The plan of the current view is not ready in time.
    Planning,
    /// The plan's answer.
    Planned(Planned),
}

async fn answer(state: &Arc<State>, pod: Pod) -> Answer {
    let cluster = &state.cluster;
    let key = (namespace_of(&pod.metadata), pod.metadata.name.clone());
    if cluster.view().is_none() {
        return Answer::Open(Some("no cluster view: POST /v1/cluster first".into()));
    }
    let (pending, bound) = cluster.lookup(&key);
    if bound && pending.is_none() {
        return Answer::Open(None);
    }
    let known = match &pending {
        Some(uid) => uid.is_none() || pod.metadata.uid.is_none() || *uid == pod.metadata.uid,
        None => false,
    };
    if !known && !cluster.add_pod(pod) {
        return Answer::Open(Some(format!("pod {}/{} cannot be added to the cluster view", key.0, key.1)));
    }
    match cluster.current_plan(state.config.filter_wait).await {
        None => Answer::Planning,
        Some(plan) => {
            Answer::Planned(plan.pods.get(&key).cloned().unwrap_or(Planned::Unplaced { code: None, reason: "not in the plan".into() }))
        }
    }
}

fn candidate_names(a: &ExtenderArgs) -> Vec<String> {
    match (&a.node_names, &a.nodes) {
        (Some(names), _) => names.clone(),
        (None, Some(list)) => list.items.iter().filter_map(|n| n["metadata"]["name"].as_str().map(str::to_string)).collect(),
        (None, None) => Vec::new(),
    }
}

/// `POST /scheduler/filter`.
pub async fn filter(AxState(state): AxState<Arc<State>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let a: ExtenderArgs = args(&state, &headers, body).await?;
    let pod = read_pod(&a.pod)?;
    let names = candidate_names(&a);
    let keep = |keep: &[String], r: &mut ExtenderFilterResult| match &a.nodes {
        Some(list) if a.node_names.is_none() => {
            let items = list
                .items
                .iter()
                .filter(|n| n["metadata"]["name"].as_str().is_some_and(|x| keep.iter().any(|k| k == x)))
                .cloned()
                .collect();
            r.nodes = Some(NodeList { metadata: serde_json::json!({}), items });
        }
        _ => r.node_names = Some(keep.to_vec()),
    };
    let mut r = ExtenderFilterResult::default();
    match answer(&state, pod).await {
        Answer::Open(error) => {
            keep(&names, &mut r);
            r.error = error.unwrap_or_default();
        }
        Answer::Planning => {
            keep(&[], &mut r);
            for n in &names {
                r.failed_nodes.insert(n.clone(), "tessera: the plan of the current cluster view is not ready; retry".into());
            }
        }
        Answer::Planned(Planned::Node { node, .. }) => {
            let inside = names.contains(&node);
            keep(if inside { std::slice::from_ref(&node) } else { &[] }, &mut r);
            for n in names.iter().filter(|n| **n != node) {
                let why = if inside {
                    format!("tessera: planned on {node}")
                } else {
                    format!("tessera: planned on {node}, which is not a candidate yet")
                };
                r.failed_nodes.insert(n.clone(), why);
            }
        }
        Answer::Planned(Planned::Unplaced { code, reason }) => {
            keep(&[], &mut r);
            // Codes that preemption cannot change (instance-format.md, "Reason codes").
            let unresolvable = matches!(
                code,
                Some(
                    ReasonCode::NoNodeFits
                        | ReasonCode::TopologyDomainTooSmall
                        | ReasonCode::NotAllowedToPreempt
                        | ReasonCode::QueueRejected
                )
            );
            let why = format!("tessera: {}{reason}", code.map(|c| format!("{c}: ")).unwrap_or_default());
            let map = if unresolvable { &mut r.failed_and_unresolvable_nodes } else { &mut r.failed_nodes };
            for n in &names {
                map.insert(n.clone(), why.clone());
            }
        }
    }
    Ok(json_ok(&r))
}

/// `POST /scheduler/prioritize`.
pub async fn prioritize(AxState(state): AxState<Arc<State>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let a: ExtenderArgs = args(&state, &headers, body).await?;
    let pod = read_pod(&a.pod)?;
    let planned = match answer(&state, pod).await {
        Answer::Planned(Planned::Node { node, .. }) => Some(node),
        _ => None,
    };
    let list: Vec<HostPriority> = candidate_names(&a)
        .into_iter()
        .map(|n| HostPriority { score: if Some(&n) == planned.as_ref() { MAX_EXTENDER_PRIORITY } else { 0 }, host: n })
        .collect();
    Ok(json_ok(&list))
}

/// `POST /scheduler/preempt`.
pub async fn preempt(AxState(state): AxState<Arc<State>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let a: ExtenderPreemptionArgs = args(&state, &headers, body).await?;
    let pod = read_pod(&a.pod)?;
    let mut out = ExtenderPreemptionResult::default();
    if let Answer::Planned(Planned::Node { node, victims }) = answer(&state, pod).await {
        // The scheduler's own victims on the planned node, as meta victims.
        let theirs: Option<MetaVictims> = match (&a.node_name_to_meta_victims, &a.node_name_to_victims) {
            (Some(m), _) => m.get(&node).cloned(),
            (None, Some(v)) => v.get(&node).map(|v| MetaVictims {
                pods: v.pods.iter().filter_map(|p| p["metadata"]["uid"].as_str().map(|u| MetaPod { uid: u.to_string() })).collect(),
                num_pdb_violations: v.num_pdb_violations,
            }),
            (None, None) => None,
        };
        if let Some(theirs) = theirs {
            // The plan's victims when each has a uid the scheduler can find; else the scheduler's.
            let mine: Option<Vec<MetaPod>> = victims.iter().map(|p| p.uid.clone().map(|uid| MetaPod { uid })).collect();
            let pods = mine.unwrap_or(theirs.pods);
            out.node_name_to_meta_victims.insert(node, MetaVictims { pods, num_pdb_violations: theirs.num_pdb_violations });
        }
    }
    Ok(json_ok(&out))
}

/// `POST /v1/cluster`: replaces the view with `kubectl get … -o json|yaml` output.
pub async fn push_cluster(AxState(state): AxState<Arc<State>>, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let text = read_body(&state, &headers, body).await?;
    content_type_ok(&headers, &text)?;
    let mut objects = Objects::default();
    objects.add_text("", &text).map_err(ApiError::bad)?;
    let imported = state.cluster.replace(objects).map_err(ApiError::bad)?;
    let (version, _) = state.cluster.view().unwrap_or((0, imported.clone()));
    Ok(json_ok(&serde_json::json!({
        "version": version,
        "nodes": imported.instance.nodes.len(),
        "boundPods": imported.instance.pods.len(),
        "pendingGroups": imported.pending.len(),
        "warnings": imported.warnings,
    })))
}

/// `GET /v1/cluster`: the view and the state of its plan.
pub async fn get_cluster(AxState(state): AxState<Arc<State>>) -> Response {
    let Some((version, imported)) = state.cluster.view() else {
        return ApiError::new(StatusCode::NOT_FOUND, "no cluster view: POST /v1/cluster first").into_response();
    };
    let plan = state.cluster.plan().map(|p| {
        serde_json::json!({
            "version": p.version,
            "current": p.version == version,
            "status": p.decision.status,
            "placedGroups": p.decision.placements.len(),
            "unplacedGroups": p.decision.unplaced.len(),
            "evictions": p.decision.evictions.len(),
            "tookMillis": p.took.as_millis() as u64,
        })
    });
    json_ok(&serde_json::json!({
        "version": version,
        "nodes": imported.instance.nodes.len(),
        "boundPods": imported.instance.pods.len(),
        "pendingGroups": imported.pending.len(),
        "warnings": imported.warnings,
        "plan": plan,
    }))
}

/// `GET /v1/plan`: the newest plan's decision (header `tessera-plan-version`).
pub async fn get_plan(AxState(state): AxState<Arc<State>>) -> Response {
    match state.cluster.plan() {
        None => ApiError::new(StatusCode::NOT_FOUND, "no plan yet").into_response(),
        Some(p) => {
            let mut r = json_ok(&p.decision);
            r.headers_mut().insert("tessera-plan-version", HeaderValue::from(p.version));
            r
        }
    }
}
