//! A decision → the Kubernetes objects that carry it out (`tessera export`): first one
//! `policy/v1` Eviction per victim, then one `v1` Binding per placed pending pod, in the
//! order they must be applied (the victims' room must be free before the binds).
//!
//! Both carry the pod's uid when the import had one (Eviction as a delete precondition,
//! Binding in its metadata, as kube-scheduler's DefaultBinder sets it), so that a pod
//! recreated under the same name since the import is never evicted or bound by mistake.

use super::import::{Imported, PodRef};
use crate::wire::decision::Decision;
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn eviction(p: &PodRef) -> Value {
    let mut v = json!({
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": p.name, "namespace": p.namespace},
    });
    if let Some(uid) = &p.uid {
        v["deleteOptions"] = json!({"preconditions": {"uid": uid}});
    }
    v
}

fn binding(p: &PodRef, node: &str) -> Value {
    let mut meta = json!({"name": p.name, "namespace": p.namespace});
    if let Some(uid) = &p.uid {
        meta["uid"] = json!(uid);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": meta,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    })
}

/// The Evictions then the Bindings of `decision`, as a `v1` List. The decision must be
/// one made on `imported.instance` (the caller checks it first); a group, task or pod it
/// names that the import does not know is an error.
pub fn export(imported: &Imported, decision: &Decision) -> Result<Value, String> {
    let mut items = Vec::new();
    for (i, e) in decision.evictions.iter().enumerate() {
        let p = imported.bound.get(&e.pod).ok_or_else(|| format!("evictions[{i}].pod: {:?} is not a bound pod of the import", e.pod))?;
        items.push(eviction(p));
    }
    for (i, pl) in decision.placements.iter().enumerate() {
        let tasks = imported
            .pending
            .get(&pl.pod_group)
            .ok_or_else(|| format!("placements[{i}].podGroup: {:?} has no pending pods in the import", pl.pod_group))?;
        let mut next: BTreeMap<&str, usize> = BTreeMap::new();
        for (j, pod) in pl.pods.iter().enumerate() {
            let path = format!("placements[{i}].pods[{j}]");
            let list =
                tasks.get(&pod.task).ok_or_else(|| format!("{path}.task: {:?} has no pending pods in {:?}", pod.task, pl.pod_group))?;
            let k = next.entry(pod.task.as_str()).or_insert(0);
            let p = list.get(*k).ok_or_else(|| format!("{path}: more pods of task {:?} than are pending ({})", pod.task, list.len()))?;
            *k += 1;
            items.push(binding(p, &pod.node));
        }
    }
    Ok(json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}))
}
