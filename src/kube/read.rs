//! Reading `kubectl get … -o json|yaml` output into typed objects: a `List` or single
//! objects, JSON or (multi-document) YAML, each item dispatched on its `apiVersion` and
//! `kind`. Errors name the path of the bad field (`items[3].spec.containers[0]…`).

use super::objects::*;
use crate::wire::InputError;
use serde_json::Value;
use std::collections::BTreeMap;

/// Deepest bracket nesting accepted before parsing (the YAML parser is quadratic in it).
const MAX_NESTING: usize = 100;

/// A `(namespace, name)` key.
pub type Key = (String, String);

/// An object and where it was read (`items[3]`, `documents[1].items[0]`).
#[derive(Clone, Debug)]
pub struct At<T> {
    /// Path of the object in its document.
    pub path: String,
    /// The object.
    pub obj: T,
}

/// Everything read from the inputs, by kind.
#[derive(Clone, Debug, Default)]
pub struct Objects {
    /// `v1` Nodes, in input order.
    pub nodes: Vec<At<Node>>,
    /// `v1` Pods, in input order.
    pub pods: Vec<At<Pod>>,
    /// PriorityClasses.
    pub priority_classes: Vec<At<PriorityClass>>,
    /// Upstream PodGroups (`v1alpha2`, `v1alpha3`, `v1beta1`).
    pub upstream_pod_groups: BTreeMap<Key, At<UpstreamPodGroup>>,
    /// Upstream CompositePodGroups (`v1alpha3`).
    pub composite_pod_groups: BTreeMap<Key, At<UpstreamPodGroup>>,
    /// 1.35 Workloads (`v1alpha1`).
    pub workloads_v1alpha1: BTreeMap<Key, At<WorkloadV1alpha1>>,
    /// scheduler-plugins coscheduling PodGroups.
    pub coscheduling_pod_groups: BTreeMap<Key, At<CoschedulingPodGroup>>,
    /// Volcano PodGroups.
    pub volcano_pod_groups: BTreeMap<Key, At<VolcanoPodGroup>>,
    /// Kueue Topology levels (node labels, broad to narrow), all Topology objects in order.
    pub kueue_levels: Vec<String>,
    /// Notes on what was read but not used.
    pub warnings: Vec<String>,
    /// Objects of kinds Tessera does not read, counted by `apiVersion kind`.
    pub ignored: BTreeMap<String, usize>,
}

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

/// Parses one input text (JSON, or YAML with one or more documents) into values.
pub fn parse_documents(text: &str) -> Result<Vec<Value>, InputError> {
    if text.trim().is_empty() {
        return Err(InputError::new("", "empty document"));
    }
    if nesting_depth(text) > MAX_NESTING {
        return Err(InputError::new("", format!("nesting deeper than {MAX_NESTING} levels")));
    }
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            return Ok(vec![v]);
        }
        // Not JSON: maybe a YAML flow mapping; report the JSON error if YAML fails too.
        let json_err = serde_json::from_str::<Value>(text).err().map(|e| InputError::new("", format!("invalid JSON: {e}")));
        return parse_yaml(text).map_err(|y| json_err.unwrap_or(y));
    }
    parse_yaml(text)
}

fn parse_yaml(text: &str) -> Result<Vec<Value>, InputError> {
    use serde::Deserialize;
    let mut out = Vec::new();
    for (i, doc) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let v = Value::deserialize(doc)
            .map_err(|e| InputError::new(if i == 0 { String::new() } else { format!("documents[{i}]") }, format!("invalid YAML: {e}")))?;
        if !v.is_null() {
            out.push(v);
        }
    }
    if out.is_empty() {
        return Err(InputError::new("", "empty document"));
    }
    Ok(out)
}

fn typed<T: serde::de::DeserializeOwned>(v: &Value, path: &str) -> Result<T, InputError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let inner = e.path().to_string();
        let p = if inner == "." || inner.is_empty() { path.to_string() } else { join(path, &inner) };
        InputError::new(p, e.inner().to_string())
    })
}

/// `prefix.rest`, or `rest` at the root (and `file: rest` after a file name).
pub fn join(prefix: &str, rest: &str) -> String {
    if prefix.is_empty() || prefix.ends_with(": ") {
        format!("{prefix}{rest}")
    } else {
        format!("{prefix}.{rest}")
    }
}

impl Objects {
    /// Reads one input text; `add_text` may be called for several files in turn. A
    /// non-empty `source` (a file name) starts every path of its objects (`file: items[3]…`).
    pub fn add_text(&mut self, source: &str, text: &str) -> Result<(), InputError> {
        let root = if source.is_empty() { String::new() } else { format!("{source}: ") };
        let docs =
            parse_documents(text).map_err(|e| InputError::new(join(&root, &e.path).trim_end_matches(": ").to_string(), e.message))?;
        let many = docs.len() > 1;
        for (d, doc) in docs.iter().enumerate() {
            let prefix = if many { join(&root, &format!("documents[{d}]")) } else { root.clone() };
            self.add_value(doc, &prefix)?;
        }
        Ok(())
    }

    /// Reads one document: a `List` (any `…List` kind with `items`) or a single object.
    pub fn add_value(&mut self, doc: &Value, prefix: &str) -> Result<(), InputError> {
        let Some(map) = doc.as_object() else {
            return Err(InputError::new(prefix, "expected a Kubernetes object or List (a mapping)"));
        };
        let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind == "List" || (kind.ends_with("List") && map.contains_key("items")) {
            let items = match map.get("items") {
                None | Some(Value::Null) => return Ok(()),
                Some(Value::Array(a)) => a,
                Some(_) => return Err(InputError::new(join(prefix, "items"), "expected a list")),
            };
            for (i, item) in items.iter().enumerate() {
                self.add_object(item, &join(prefix, &format!("items[{i}]")))?;
            }
            return Ok(());
        }
        self.add_object(doc, prefix)
    }

    fn add_object(&mut self, v: &Value, path: &str) -> Result<(), InputError> {
        let Some(map) = v.as_object() else { return Err(InputError::new(path, "expected a Kubernetes object (a mapping)")) };
        let field = |k: &str| -> Result<String, InputError> {
            match map.get(k) {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                _ => Err(InputError::new(join(path, k), "missing (every object needs apiVersion and kind)")),
            }
        };
        let (api, kind) = (field("apiVersion")?, field("kind")?);
        let group = api.split_once('/').map(|(g, _)| g).unwrap_or("");
        let at = |p: &str| p.to_string();
        match (api.as_str(), kind.as_str()) {
            ("v1", "Node") => self.nodes.push(At { path: at(path), obj: typed(v, path)? }),
            ("v1", "Pod") => self.pods.push(At { path: at(path), obj: typed(v, path)? }),
            ("scheduling.k8s.io/v1" | "scheduling.k8s.io/v1beta1", "PriorityClass") => {
                self.priority_classes.push(At { path: at(path), obj: typed(v, path)? })
            }
            ("scheduling.k8s.io/v1alpha1", "Workload") => {
                let w: WorkloadV1alpha1 = typed(v, path)?;
                let key = key_of(&w.metadata);
                self.insert_unique("Workload", key, At { path: at(path), obj: w }, |o| &mut o.workloads_v1alpha1);
            }
            ("scheduling.k8s.io/v1alpha2" | "scheduling.k8s.io/v1alpha3" | "scheduling.k8s.io/v1beta1", "PodGroup") => {
                let g: UpstreamPodGroup = typed(v, path)?;
                let key = key_of(&g.metadata);
                self.insert_unique("PodGroup", key, At { path: at(path), obj: g }, |o| &mut o.upstream_pod_groups);
            }
            ("scheduling.k8s.io/v1alpha3", "CompositePodGroup") => {
                let g: UpstreamPodGroup = typed(v, path)?;
                let key = key_of(&g.metadata);
                self.insert_unique("CompositePodGroup", key, At { path: at(path), obj: g }, |o| &mut o.composite_pod_groups);
            }
            // Newer Workloads only hold templates; the PodGroups made from them carry
            // everything a placement needs.
            (_, "Workload") if group == "scheduling.k8s.io" => {}
            // Kueue injects a flavor's node labels into the admitted pods' nodeSelector,
            // which the pods themselves carry.
            (_, "ResourceFlavor") if group == "kueue.x-k8s.io" => {}
            ("scheduling.x-k8s.io/v1alpha1" | "scheduling.sigs.k8s.io/v1alpha1", "PodGroup") => {
                let g: CoschedulingPodGroup = typed(v, path)?;
                let key = key_of(&g.metadata);
                self.insert_unique("PodGroup", key, At { path: at(path), obj: g }, |o| &mut o.coscheduling_pod_groups);
            }
            ("scheduling.volcano.sh/v1beta1", "PodGroup") => {
                let g: VolcanoPodGroup = typed(v, path)?;
                let key = key_of(&g.metadata);
                self.insert_unique("PodGroup", key, At { path: at(path), obj: g }, |o| &mut o.volcano_pod_groups);
            }
            (_, "Topology") if group == "kueue.x-k8s.io" => {
                let t: KueueTopology = typed(v, path)?;
                for l in t.spec.levels {
                    if !l.node_label.is_empty() && !self.kueue_levels.contains(&l.node_label) {
                        self.kueue_levels.push(l.node_label);
                    }
                }
            }
            _ => *self.ignored.entry(format!("{api} {kind}")).or_insert(0) += 1,
        }
        Ok(())
    }

    fn insert_unique<T>(&mut self, kind: &str, key: Key, at: At<T>, map: impl Fn(&mut Objects) -> &mut BTreeMap<Key, At<T>>) {
        let name = format!("{kind} {}/{}", key.0, key.1);
        let path = at.path.clone();
        let duplicate = match map(self).entry(key) {
            std::collections::btree_map::Entry::Occupied(_) => true,
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(at);
                false
            }
        };
        if duplicate {
            self.warnings.push(format!("{name}: given twice (at {path}); the first is kept"));
        }
    }
}

/// The namespace of an object (`default` when absent, as the API server fills it).
pub fn namespace_of(m: &ObjectMeta) -> String {
    m.namespace.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "default".to_string())
}

/// `(namespace, name)` of a namespaced object.
pub fn key_of(m: &ObjectMeta) -> Key {
    (namespace_of(m), m.name.clone())
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2026-07-24T10:00:00Z`,
/// `…T10:00:00.5+02:00`); `None` when it does not parse.
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, rest) = s.split_once(['T', 't', ' '])?;
    let mut d = date.splitn(3, '-');
    let (y, mo, da): (i64, i64, i64) = (d.next()?.parse().ok()?, d.next()?.parse().ok()?, d.next()?.parse().ok()?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&da) || rest.len() < 8 {
        return None;
    }
    let (clock, zone) = rest.split_at(8);
    let mut c = clock.splitn(3, ':');
    let (h, mi, se): (i64, i64, i64) = (c.next()?.parse().ok()?, c.next()?.parse().ok()?, c.next()?.parse().ok()?);
    let zone = zone.trim_start_matches(|ch: char| ch == '.' || ch.is_ascii_digit());
    let offset = match zone {
        "Z" | "z" => 0,
        z if z.len() == 6 && (z.starts_with('+') || z.starts_with('-')) => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let (zh, zm): (i64, i64) = (z[1..3].parse().ok()?, z[4..6].parse().ok()?);
            sign * (zh * 3600 + zm * 60)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = if y2 >= 0 { y2 } else { y2 - 399 } / 400;
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + da - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146097 + doe - 719468;
    Some(days * 86400 + h * 3600 + mi * 60 + se - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(951868800));
        assert_eq!(parse_rfc3339("2026-07-24T10:00:00Z"), Some(1784887200));
        assert_eq!(parse_rfc3339("2026-07-24T12:00:00.25+02:00"), Some(1784887200));
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn lists_multi_documents_and_paths() {
        let mut o = Objects::default();
        o.add_text("", "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: b}}\n- {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}}\n").unwrap();
        assert_eq!(o.nodes.iter().map(|n| n.obj.metadata.name.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(o.nodes[1].path, "documents[1].items[0]");
        assert_eq!(o.ignored.get("apps/v1 Deployment"), Some(&1));
        let e = Objects::default()
            .add_text("", r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","spec":{"containers":"x"}}]}"#)
            .unwrap_err();
        assert_eq!(e.path, "items[0].spec.containers");
        let e = Objects::default().add_text("", r#"{"kind":"List","items":[{"kind":"Pod"}]}"#).unwrap_err();
        assert_eq!(e.path, "items[0].apiVersion");
    }
}
