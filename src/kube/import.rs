//! Cluster objects → instance (`tessera import kube`). See the module docs of
//! [`crate::kube`] for the mapping and its sources.

use super::objects::*;
use super::read::{join, namespace_of, parse_rfc3339, At, Key, Objects};
use super::requests::{pod_requests, scale_of};
use crate::wire::quantity;
use crate::wire::*;
use indexmap::IndexMap;
use std::collections::{BTreeMap, BTreeSet};

/// Label key the importer gives every node (value: the node's name) when some pod selects
/// nodes by `matchFields` on `metadata.name`, which node affinity on labels can then express.
pub const NODE_NAME_LABEL: &str = "metadata.name";

/// Label key of the node affinity that makes a pod unplaceable; no imported node carries it.
pub const UNPLACEABLE_LABEL: &str = "tessera.io/unplaceable";

/// A Kubernetes object's identity, as exports need it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PodRef {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Uid, when the input had one.
    pub uid: Option<String>,
}

/// The result of an import: the instance, what the importer had to say, and which
/// Kubernetes pod stands behind each pending slot and each bound pod.
#[derive(Clone, Debug, Default)]
pub struct Imported {
    /// The instance (valid: [`crate::Instance::from_doc`] accepts it).
    pub instance: InstanceDoc,
    /// One line per object the importer could not map exactly, naming the object.
    pub warnings: Vec<String>,
    /// Per pending group, per task: the pending pods, in the order a decision's placement
    /// entries of that task are matched to them (the k-th entry of the task is the k-th pod).
    pub pending: BTreeMap<String, BTreeMap<String, Vec<PodRef>>>,
    /// Bound pods by their instance name.
    pub bound: BTreeMap<String, PodRef>,
}

impl Imported {
    /// `(group, task, index)` of every pending pod, by `(namespace, name)`.
    pub fn pending_slots(&self) -> BTreeMap<(String, String), (String, String, usize)> {
        let mut out = BTreeMap::new();
        for (g, tasks) in &self.pending {
            for (t, pods) in tasks {
                for (i, p) in pods.iter().enumerate() {
                    out.insert((p.namespace.clone(), p.name.clone()), (g.clone(), t.clone(), i));
                }
            }
        }
        out
    }
}

/// Reads the texts (each JSON or YAML, a `List` or objects) and builds the instance.
/// `names[i]` names `texts[i]` in errors (empty: no prefix).
pub fn import_texts(sources: &[(&str, &str)]) -> Result<Imported, InputError> {
    let mut objects = Objects::default();
    for (name, text) in sources {
        objects.add_text(name, text)?;
    }
    import(&objects)
}

/// YuniKorn task groups per application: the pod that carried them, (name, minMember).
type TaskGroups = BTreeMap<Key, (String, Vec<(String, i64)>)>;

/// The group convention a pod follows (kubernetes-objects.md section 0, in that order).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Convention {
    /// 1.36+: `spec.schedulingGroup.podGroupName` (a PodGroup, maybe under a composite).
    Upstream(Key),
    /// 1.37 composite: the root CompositePodGroup; its child PodGroups are roles.
    Composite(Key),
    /// 1.35: (namespace, workload, pod group, replica key).
    Workload(String, String, String, String),
    /// scheduler-plugins coscheduling.
    Coscheduling(Key),
    /// Volcano.
    Volcano(Key),
    /// YuniKorn application (namespace, app id).
    YuniKorn(Key),
    /// Kueue plain-pod group.
    KueuePodGroup(Key),
    /// Kueue topology-aware pods of one owner (namespace, `Kind/name`).
    KueueOwner(Key),
    /// No convention: the pod alone, a basic group.
    Single(Key),
}

/// What one pod contributes.
#[derive(Clone)]
struct Member {
    pod: PodRef,
    /// The Kubernetes object, for warnings.
    label: String,
    bound_node: Option<String>,
    role: Option<String>,
    priority: i64,
    preemption_policy: Option<String>,
    requests: BTreeMap<String, i64>,
    node_selector: BTreeMap<String, String>,
    tolerations: Vec<TolerationDoc>,
    node_affinity: Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
    slice: Option<(String, i64)>,
    required: Option<String>,
    preferred: Option<String>,
    /// Why it cannot be placed (empty: it can).
    unplaceable: Vec<String>,
    placeholder: bool,
    releasing: bool,
    preemptible: bool,
    created_at: Option<i64>,
}

/// A group being built.
#[derive(Default)]
struct Build {
    name: String,
    namespace: Option<String>,
    uid: Option<String>,
    object: String,
    gang: bool,
    min_count: Option<i64>,
    role_mins: BTreeMap<String, i64>,
    priority: Option<i64>,
    preemption_policy: Option<String>,
    disruption: Option<String>,
    required: Option<String>,
    preferred: Option<String>,
    queue: Option<String>,
    created_at: Option<i64>,
    /// Why the whole group cannot be placed.
    unplaceable: Vec<String>,
    /// Whether it came from a group object or convention (else a single pod).
    convention: bool,
    members: Vec<Member>,
}

const YK_APP_ID: &str = "yunikorn.apache.org/app-id";
const YK_QUEUE: &str = "yunikorn.apache.org/queue";
const YK_TASK_GROUPS: &str = "yunikorn.apache.org/task-groups";
const YK_TASK_GROUP_NAME: &str = "yunikorn.apache.org/task-group-name";
const YK_PLACEHOLDER: &str = "internal.yunikorn.apache.org/placeholder";
const COSCHED_LABEL: &str = "scheduling.x-k8s.io/pod-group";
const COSCHED_LABEL_OLD: &str = "pod-group.scheduling.sigs.k8s.io";
const VOLCANO_GROUP: &str = "scheduling.k8s.io/group-name";
const VOLCANO_TASK: &str = "volcano.sh/task-spec";
const KUEUE_GROUP: &str = "kueue.x-k8s.io/pod-group-name";
const KUEUE_TOTAL: &str = "kueue.x-k8s.io/pod-group-total-count";
const KUEUE_REQUIRED: &str = "kueue.x-k8s.io/podset-required-topology";
const KUEUE_PREFERRED: &str = "kueue.x-k8s.io/podset-preferred-topology";
const KUEUE_SLICE: &str = "kueue.x-k8s.io/podset-slice-required-topology";
const KUEUE_SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
const KUEUE_SLICE_LAYERS: &str = "kueue.x-k8s.io/podset-slice-required-topology-constraints";
const HOSTNAME: &str = "kubernetes.io/hostname";
const MIRROR: &str = "kubernetes.io/config.mirror";

/// Builds the instance from objects already read.
pub fn import(objects: &Objects) -> Result<Imported, InputError> {
    let mut warnings = objects.warnings.clone();
    for (kind, n) in &objects.ignored {
        warnings.push(format!("{n} object(s) of {kind} ignored (not read by the importer)"));
    }

    // Priority classes; built-in system classes unless the input lists them.
    let mut classes: BTreeMap<String, (i64, Option<String>)> = BTreeMap::new();
    classes.insert("system-cluster-critical".into(), (2_000_000_000, None));
    classes.insert("system-node-critical".into(), (2_000_001_000, None));
    let mut global_default: Option<i64> = None;
    let mut class_docs = Vec::new();
    for pc in &objects.priority_classes {
        let (name, v) = (&pc.obj.metadata.name, pc.obj.value);
        if name.is_empty() {
            return Err(InputError::new(join(&pc.path, "metadata.name"), "missing"));
        }
        if v < i32::MIN as i64 || v > i32::MAX as i64 {
            return Err(InputError::new(join(&pc.path, "value"), format!("priority {v} is outside int32")));
        }
        if class_docs.iter().any(|c: &PriorityClassDoc| &c.name == name) {
            warnings.push(format!("PriorityClass {name}: given twice; the first is kept"));
            continue;
        }
        classes.insert(name.clone(), (v, pc.obj.preemption_policy.clone()));
        if pc.obj.global_default == Some(true) {
            global_default = Some(global_default.map_or(v, |g: i64| g.min(v)));
        }
        class_docs.push(PriorityClassDoc { name: name.clone(), value: v });
    }

    // Nodes.
    let mut nodes = Vec::new();
    let mut node_names = BTreeSet::new();
    for n in &objects.nodes {
        let name = n.obj.metadata.name.clone();
        if name.is_empty() {
            return Err(InputError::new(join(&n.path, "metadata.name"), "missing"));
        }
        if !node_names.insert(name.clone()) {
            warnings.push(format!("Node {name}: given twice (at {}); the first is kept", n.path));
            continue;
        }
        let (list, key) = if n.obj.status.allocatable.is_empty() {
            (&n.obj.status.capacity, "capacity")
        } else {
            (&n.obj.status.allocatable, "allocatable")
        };
        let mut allocatable = ResourcesDoc::new();
        for (r, q) in list {
            let text = q.text();
            let v = quantity::parse(&text, scale_of(r))
                .map_err(|e| InputError::new(join(&n.path, &format!("status.{key}.{r}")), format!("{e} {text:?}")))?;
            allocatable.insert(r.clone(), QuantityDoc::Text(quantity::format(v, scale_of(r))));
        }
        let mut taints = Vec::new();
        for (j, t) in n.obj.spec.taints.iter().enumerate() {
            if !matches!(t.effect.as_str(), "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
                return Err(InputError::new(
                    join(&n.path, &format!("spec.taints[{j}].effect")),
                    format!("unknown taint effect {:?} (NoSchedule, PreferNoSchedule, NoExecute)", t.effect),
                ));
            }
            if t.key.is_empty() {
                return Err(InputError::new(join(&n.path, &format!("spec.taints[{j}].key")), "must not be empty"));
            }
            taints.push(TaintDoc { key: t.key.clone(), value: t.value.clone().filter(|v| !v.is_empty()), effect: t.effect.clone() });
        }
        let mut labels = n.obj.metadata.labels.clone();
        labels.remove(UNPLACEABLE_LABEL);
        nodes.push(NodeDoc { name, labels, allocatable, taints, unschedulable: n.obj.spec.unschedulable.unwrap_or(false) });
    }

    // YuniKorn task groups per app, from the first pod that carries them.
    let mut yk_task_groups: TaskGroups = BTreeMap::new();
    for p in &objects.pods {
        if let (Some(app), Some(tg)) = (yunikorn_app(&p.obj), p.obj.metadata.annotations.get(YK_TASK_GROUPS)) {
            let key = (namespace_of(&p.obj.metadata), app);
            if yk_task_groups.contains_key(&key) {
                continue;
            }
            match parse_task_groups(tg) {
                Ok(groups) => {
                    yk_task_groups.insert(key, (pod_label(&p.obj), groups));
                }
                Err(m) => warnings.push(format!(
                    "{}: annotation {YK_TASK_GROUPS} ignored ({m}); YuniKorn runs the application without gang",
                    pod_label(&p.obj)
                )),
            }
        }
    }

    // Pods into groups.
    let mut groups: IndexMap<Convention, Build> = IndexMap::new();
    let mut plain_bound: Vec<Member> = Vec::new();
    let mut uses_node_name = false;
    for p in &objects.pods {
        let pod = &p.obj;
        let label = pod_label(pod);
        if pod.metadata.name.is_empty() {
            return Err(InputError::new(join(&p.path, "metadata.name"), "missing"));
        }
        if matches!(pod.status.phase.as_deref(), Some("Succeeded") | Some("Failed")) {
            continue; // finished: holds nothing (kube-scheduler's informer skips it too)
        }
        let bound_node = pod.spec.node_name.clone().filter(|n| !n.is_empty());
        if let Some(n) = &bound_node {
            if !node_names.contains(n) {
                warnings.push(format!("{label}: bound to node {n} which is not in the input; left out"));
                continue;
            }
        }
        let placeholder = pod.metadata.annotations.get(YK_PLACEHOLDER).is_some_and(|v| v == "true");
        if placeholder && bound_node.is_none() {
            warnings.push(format!("{label}: YuniKorn placeholder not bound yet; left out (Tessera places the real pods)"));
            continue;
        }
        let requests = pod_requests(pod, bound_node.is_some(), &p.path)?;
        let (priority, policy) = pod_priority(pod, &classes, global_default, &label, &mut warnings);
        let mut m = Member {
            pod: PodRef { namespace: namespace_of(&pod.metadata), name: pod.metadata.name.clone(), uid: pod.metadata.uid.clone() },
            label: label.clone(),
            bound_node: bound_node.clone(),
            role: None,
            priority,
            preemption_policy: policy,
            requests,
            node_selector: pod.spec.node_selector.clone(),
            tolerations: Vec::new(),
            node_affinity: None,
            slice: None,
            required: None,
            preferred: None,
            unplaceable: Vec::new(),
            placeholder,
            releasing: pod.metadata.deletion_timestamp.is_some(),
            preemptible: !pod.metadata.annotations.contains_key(MIRROR),
            created_at: pod.metadata.creation_timestamp.as_deref().and_then(parse_rfc3339),
        };
        if bound_node.is_none() {
            read_filters(pod, &mut m, &mut uses_node_name);
            read_kueue(pod, &mut m);
        }
        let ns = m.pod.namespace.clone();
        let ann = &pod.metadata.annotations;
        let lab = &pod.metadata.labels;
        let conv = if let Some(pg) = pod.spec.scheduling_group.as_ref().and_then(|s| s.pod_group_name.clone()) {
            let key = (ns.clone(), pg.clone());
            match objects.upstream_pod_groups.get(&key).and_then(|g| g.obj.spec.parent_composite_pod_group_name.clone()) {
                Some(parent) => {
                    m.role = Some(pg);
                    Convention::Composite((ns.clone(), parent))
                }
                None => Convention::Upstream(key),
            }
        } else if let Some(w) = &pod.spec.workload_ref {
            Convention::Workload(ns.clone(), w.name.clone(), w.pod_group.clone(), w.pod_group_replica_key.clone().unwrap_or_default())
        } else if let Some(g) = lab.get(COSCHED_LABEL).or_else(|| lab.get(COSCHED_LABEL_OLD)) {
            Convention::Coscheduling((ns.clone(), g.clone()))
        } else if let Some(g) = ann.get(VOLCANO_GROUP) {
            m.role = ann.get(VOLCANO_TASK).or_else(|| lab.get(VOLCANO_TASK)).cloned();
            Convention::Volcano((ns.clone(), g.clone()))
        } else if let Some(app) = yunikorn_app(pod) {
            m.role = ann.get(YK_TASK_GROUP_NAME).cloned();
            Convention::YuniKorn((ns.clone(), app))
        } else if let Some(g) = lab.get(KUEUE_GROUP) {
            Convention::KueuePodGroup((ns.clone(), g.clone()))
        } else if (m.required.is_some() || m.preferred.is_some() || m.slice.is_some()) && controller(pod).is_some() {
            Convention::KueueOwner((ns.clone(), controller(pod).unwrap_or_default()))
        } else if bound_node.is_some() {
            plain_bound.push(m);
            continue;
        } else {
            Convention::Single((ns.clone(), pod.metadata.name.clone()))
        };
        if !groups.contains_key(&conv) {
            let b = new_build(&conv, objects, &yk_task_groups, pod, &mut warnings);
            groups.insert(conv.clone(), b);
        }
        let b = groups.get_mut(&conv).expect("inserted above");
        if conv_is_yunikorn(&conv) && b.queue.is_none() {
            b.queue = lab.get(YK_QUEUE).or_else(|| ann.get(YK_QUEUE)).or_else(|| lab.get("queue")).cloned();
        }
        b.members.push(m);
    }

    // Group names: unique, readable, namespace first.
    let mut used: BTreeSet<String> = BTreeSet::new();
    for b in groups.values_mut() {
        let mut name = b.name.clone();
        let mut k = 2;
        while used.contains(&name) {
            name = format!("{}~{k}", b.name);
            k += 1;
        }
        used.insert(name.clone());
        b.name = name;
    }

    // Topology levels: Kueue's order first, then every other key in order of use.
    let mut levels: Vec<String> = objects.kueue_levels.iter().filter(|l| l.as_str() != HOSTNAME).cloned().collect();
    let mut note_level = |l: &Option<String>| {
        if let Some(l) = l {
            if l != HOSTNAME && !levels.contains(l) {
                levels.push(l.clone());
            }
        }
    };
    for b in groups.values_mut() {
        // Group topology from the object, else from the members' Kueue annotations.
        for m in &b.members {
            for (mine, theirs, what) in [(&mut b.required, &m.required, "required"), (&mut b.preferred, &m.preferred, "preferred")] {
                match (mine.as_ref(), theirs) {
                    (None, Some(t)) => *mine = Some(t.clone()),
                    (Some(a), Some(t)) if a != t => {
                        warnings.push(format!("{}: {what} topology {t:?} differs from its group's {a:?}; the group's is used", m.label))
                    }
                    _ => {}
                }
            }
        }
        note_level(&b.required);
        note_level(&b.preferred);
        for m in &b.members {
            note_level(&m.slice.as_ref().map(|s| s.0.clone()));
        }
    }

    // Groups → pod groups, tasks and bound pods.
    let mut pod_groups = Vec::new();
    let mut pods = Vec::new();
    let mut pending: BTreeMap<String, BTreeMap<String, Vec<PodRef>>> = BTreeMap::new();
    let mut bound: BTreeMap<String, PodRef> = BTreeMap::new();
    for b in groups.values_mut() {
        finish_group(b, &mut warnings);
        let (doc, slots, bound_members) = group_doc(b);
        for (m, task) in bound_members {
            let name = format!("{}/{}", m.pod.namespace, m.pod.name);
            pods.push(pod_doc(&m, &name, Some(b.name.clone()), task));
            bound.insert(name, m.pod.clone());
        }
        if !slots.is_empty() {
            pending.insert(b.name.clone(), slots);
        }
        pod_groups.push(doc);
    }
    for m in plain_bound {
        let name = format!("{}/{}", m.pod.namespace, m.pod.name);
        pods.push(pod_doc(&m, &name, None, None));
        bound.insert(name, m.pod.clone());
    }
    if uses_node_name {
        for n in &mut nodes {
            n.labels.insert(NODE_NAME_LABEL.to_string(), n.name.clone());
        }
    }
    let instance = InstanceDoc {
        topology: (!levels.is_empty()).then_some(TopologyDoc { levels }),
        shared_devices: Vec::new(),
        priority_classes: class_docs,
        nodes,
        pod_groups,
        pods,
        queues: Vec::new(),
        options: None,
    };
    crate::Instance::from_doc(&instance).map_err(|e| InputError::new("", format!("the cluster does not make a valid instance: {e}")))?;
    Ok(Imported { instance, warnings, pending, bound })
}

fn conv_is_yunikorn(c: &Convention) -> bool {
    matches!(c, Convention::YuniKorn(_))
}

fn pod_label(pod: &Pod) -> String {
    format!("Pod {}/{}", namespace_of(&pod.metadata), pod.metadata.name)
}

/// YuniKorn's application id, only for pods it schedules (k8shim `utils.GetApplicationIDFromPod`).
fn yunikorn_app(pod: &Pod) -> Option<String> {
    if pod.spec.scheduler_name.as_deref() != Some("yunikorn") {
        return None;
    }
    let (l, a) = (&pod.metadata.labels, &pod.metadata.annotations);
    let id = l.get(YK_APP_ID).or_else(|| a.get(YK_APP_ID)).or_else(|| l.get("applicationId")).or_else(|| l.get("spark-app-selector"))?;
    Some(match id.strip_suffix("-uniqueautogen") {
        Some(base) => format!("{base}-{}", pod.metadata.uid.clone().unwrap_or_default()),
        None => id.clone(),
    })
}

/// `Kind/name` of the pod's controller.
fn controller(pod: &Pod) -> Option<String> {
    let refs = &pod.metadata.owner_references;
    let o = refs.iter().find(|o| o.controller == Some(true)).or_else(|| refs.first())?;
    Some(format!("{}/{}", o.kind, o.name))
}

/// YuniKorn's `task-groups` annotation: a JSON array of TaskGroup, keys matched
/// case-insensitively (the Go struct has no json tags). Name and minMember > 0 required.
fn parse_task_groups(text: &str) -> Result<Vec<(String, i64)>, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {e}"))?;
    let arr = v.as_array().ok_or("not a JSON array")?;
    let mut out = Vec::new();
    for (i, tg) in arr.iter().enumerate() {
        let obj = tg.as_object().ok_or(format!("[{i}] is not an object"))?;
        let get = |k: &str| obj.iter().find(|(key, _)| key.eq_ignore_ascii_case(k)).map(|(_, v)| v);
        let name = get("name").and_then(|v| v.as_str()).filter(|s| !s.is_empty()).ok_or(format!("[{i}].name missing"))?;
        let min = get("minMember").and_then(|v| v.as_i64()).filter(|&m| m > 0).ok_or(format!("[{i}].minMember must be above 0"))?;
        if get("minResource").is_none() {
            return Err(format!("[{i}].minResource missing"));
        }
        out.push((name.to_string(), min));
    }
    Ok(out)
}

/// The pod's priority (admission-resolved `spec.priority`, else its class, else the
/// global default class, else 0) and preemption policy.
fn pod_priority(
    pod: &Pod,
    classes: &BTreeMap<String, (i64, Option<String>)>,
    global_default: Option<i64>,
    label: &str,
    warnings: &mut Vec<String>,
) -> (i64, Option<String>) {
    let class = pod.spec.priority_class_name.as_ref().filter(|c| !c.is_empty());
    let from_class = class.and_then(|c| classes.get(c));
    if let (Some(c), None, None) = (class, from_class, pod.spec.priority) {
        warnings.push(format!("{label}: priority class {c:?} is not in the input; priority 0 assumed"));
    }
    let priority = pod.spec.priority.or(from_class.map(|c| c.0)).or(global_default).unwrap_or(0).clamp(i32::MIN as i64, i32::MAX as i64);
    let policy = pod.spec.preemption_policy.clone().or_else(|| from_class.and_then(|c| c.1.clone()));
    (priority, policy)
}

/// Node selector, tolerations and node affinity of a pending pod, and the hard
/// constraints that cannot be mapped (which make it unplaceable).
fn read_filters(pod: &Pod, m: &mut Member, uses_node_name: &mut bool) {
    let spec = &pod.spec;
    for t in &spec.tolerations {
        let op = t.operator.clone().filter(|o| !o.is_empty());
        let key = t.key.clone().filter(|k| !k.is_empty());
        let value = t.value.clone().filter(|v| !v.is_empty());
        let effect = t.effect.clone().filter(|e| !e.is_empty());
        match op.as_deref() {
            None | Some("Equal") if key.is_none() => m.unplaceable.push("a toleration with operator Equal and no key".into()),
            None | Some("Equal") | Some("Exists") => {}
            Some(o) => m.unplaceable.push(format!("toleration operator {o:?} is not mapped (Equal, Exists)")),
        }
        if op.as_deref() == Some("Exists") && value.is_some() {
            m.unplaceable.push("a toleration with operator Exists and a value".into());
        }
        if !matches!(effect.as_deref(), None | Some("NoSchedule") | Some("PreferNoSchedule") | Some("NoExecute")) {
            m.unplaceable.push(format!("toleration effect {:?} is unknown", effect.unwrap_or_default()));
            continue;
        }
        m.tolerations.push(TolerationDoc { key, operator: op, value, effect });
    }
    if let Some(aff) = &spec.affinity {
        if aff.pod_affinity.as_ref().is_some_and(|a| !a.required_during_scheduling_ignored_during_execution.is_empty()) {
            m.unplaceable.push("required inter-pod affinity is not mapped".into());
        }
        if aff.pod_anti_affinity.as_ref().is_some_and(|a| !a.required_during_scheduling_ignored_during_execution.is_empty()) {
            m.unplaceable.push("required inter-pod anti-affinity is not mapped".into());
        }
        if let Some(sel) = aff.node_affinity.as_ref().and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref()) {
            let mut terms = Vec::new();
            for term in &sel.node_selector_terms {
                let mut reqs = Vec::new();
                for r in &term.match_expressions {
                    match requirement(&r.key, r) {
                        Ok(req) => reqs.push(req),
                        Err(msg) => m.unplaceable.push(msg),
                    }
                }
                for r in &term.match_fields {
                    if r.key != "metadata.name" || !matches!(r.operator.as_str(), "In" | "NotIn") {
                        m.unplaceable.push(format!("node affinity matchFields {} {} is not mapped", r.key, r.operator));
                        continue;
                    }
                    *uses_node_name = true;
                    match requirement(NODE_NAME_LABEL, r) {
                        Ok(req) => reqs.push(req),
                        Err(msg) => m.unplaceable.push(msg),
                    }
                }
                // An empty term matches no node (Kubernetes): it adds nothing to the OR.
                if !term.match_expressions.is_empty() || !term.match_fields.is_empty() {
                    terms.push(reqs);
                }
            }
            if terms.is_empty() {
                m.unplaceable.push("required node affinity without a non-empty term matches no node".into());
            } else {
                m.node_affinity = Some(terms);
            }
        }
    }
    for c in &spec.topology_spread_constraints {
        if c.when_unsatisfiable.as_deref() != Some("ScheduleAnyway") {
            m.unplaceable.push(format!("topology spread constraint on {:?} (DoNotSchedule) is not mapped", c.topology_key));
        }
    }
    if !spec.resource_claims.is_empty() {
        m.unplaceable.push("dynamic resource claims (DRA) are not mapped".into());
    }
    if spec.containers.iter().chain(&spec.init_containers).any(|c| c.ports.iter().any(|p| p.host_port.is_some_and(|h| h > 0))) {
        m.unplaceable.push("host ports are not mapped".into());
    }
}

/// The node affinity of an unplaceable pod: a label no node carries (the importer removes
/// it from nodes), its values the reasons, so that the instance says why.
fn unplaceable_affinity(reasons: &[String]) -> Vec<Vec<NodeSelectorRequirementDoc>> {
    let mut values: Vec<String> = reasons.to_vec();
    values.dedup();
    vec![vec![NodeSelectorRequirementDoc { key: UNPLACEABLE_LABEL.to_string(), operator: "In".into(), values }]]
}

fn requirement(key: &str, r: &NodeSelectorRequirement) -> Result<NodeSelectorRequirementDoc, String> {
    let ok = match r.operator.as_str() {
        "In" | "NotIn" => !r.values.is_empty(),
        "Exists" | "DoesNotExist" => r.values.is_empty(),
        "Gt" | "Lt" => r.values.len() == 1 && r.values[0].trim().parse::<i64>().is_ok(),
        _ => false,
    };
    if !ok || key.is_empty() {
        return Err(format!("node affinity requirement {} {} {:?} is malformed", r.key, r.operator, r.values));
    }
    Ok(NodeSelectorRequirementDoc { key: key.to_string(), operator: r.operator.clone(), values: r.values.clone() })
}

/// Kueue topology annotations (jobframework `tas.go`): required beats preferred beats
/// unconstrained; a slice needs both its level and its size.
fn read_kueue(pod: &Pod, m: &mut Member) {
    let a = &pod.metadata.annotations;
    if let Some(r) = a.get(KUEUE_REQUIRED).filter(|s| !s.is_empty()) {
        m.required = Some(r.clone());
    } else if let Some(p) = a.get(KUEUE_PREFERRED).filter(|s| !s.is_empty()) {
        m.preferred = Some(p.clone());
    }
    if let Some(layers) = a.get(KUEUE_SLICE_LAYERS) {
        let parsed: Option<Vec<(String, i64)>> = serde_json::from_str::<serde_json::Value>(layers).ok().and_then(|v| {
            v.as_array()?.iter().map(|l| Some((l.get("topology")?.as_str()?.to_string(), l.get("size")?.as_i64()?))).collect()
        });
        match parsed.as_deref() {
            Some([one]) if one.1 >= 1 => m.slice = Some(one.clone()),
            Some(list) if list.len() > 1 => m.unplaceable.push(format!("{} slice layers (only one is mapped)", list.len())),
            _ => m.unplaceable.push(format!("annotation {KUEUE_SLICE_LAYERS} is malformed")),
        }
        return;
    }
    match (a.get(KUEUE_SLICE), a.get(KUEUE_SLICE_SIZE)) {
        (Some(level), Some(size)) => match size.trim().parse::<i64>() {
            Ok(s) if s >= 1 => m.slice = Some((level.clone(), s)),
            _ => m.unplaceable.push(format!("annotation {KUEUE_SLICE_SIZE} {size:?} is not a positive integer")),
        },
        (Some(_), None) | (None, Some(_)) => m.unplaceable.push(format!("{KUEUE_SLICE} and {KUEUE_SLICE_SIZE} must be given together")),
        _ => {}
    }
}

/// Reads a `disruptionMode`: `{"all":{}}` / `"PodGroup"` evict the group together.
fn disruption(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) if s == "PodGroup" => Some("PodGroup".into()),
        serde_json::Value::String(s) if s == "Pod" => Some("Pod".into()),
        serde_json::Value::Object(o) if o.contains_key("all") => Some("PodGroup".into()),
        serde_json::Value::Object(o) if o.contains_key("single") => Some("Pod".into()),
        _ => None,
    }
}

/// Applies an upstream PodGroup-shaped spec (policy, topology, disruption, priority).
fn apply_upstream(b: &mut Build, spec: &UpstreamPodGroupSpec, classes_hint: Option<i64>, warnings: &mut Vec<String>) {
    match &spec.scheduling_policy {
        Some(SchedulingPolicy { gang: Some(g), .. }) => {
            b.gang = true;
            b.min_count = g.min_count;
        }
        _ => b.gang = false,
    }
    if let Some(c) = &spec.scheduling_constraints {
        if let Some(t) = c.topology.first() {
            b.required = Some(t.key.clone());
        }
        if c.topology.len() > 1 {
            warnings.push(format!("{}: more than one topology constraint (the API allows one); the first is used", b.object));
        }
    }
    b.disruption = spec.disruption_mode.as_ref().and_then(disruption);
    b.priority = spec.priority.or(classes_hint);
    b.preemption_policy = spec.preemption_policy.clone();
}

fn new_build(conv: &Convention, objects: &Objects, yk: &TaskGroups, pod: &Pod, warnings: &mut Vec<String>) -> Build {
    let class_value = |name: &Option<String>| -> Option<i64> {
        let n = name.as_ref()?;
        objects.priority_classes.iter().find(|c| &c.obj.metadata.name == n).map(|c| c.obj.value)
    };
    let from_meta = |b: &mut Build, m: &ObjectMeta| {
        b.uid = m.uid.clone();
        b.created_at = m.creation_timestamp.as_deref().and_then(parse_rfc3339);
    };
    let mut b = Build { convention: true, gang: true, ..Build::default() };
    match conv {
        Convention::Upstream((ns, name)) => {
            b.name = format!("{ns}/{name}");
            b.namespace = Some(ns.clone());
            b.object = format!("PodGroup {ns}/{name}");
            match objects.upstream_pod_groups.get(&(ns.clone(), name.clone())) {
                Some(g) => {
                    from_meta(&mut b, &g.obj.metadata);
                    apply_upstream(&mut b, &g.obj.spec, class_value(&g.obj.spec.priority_class_name), warnings);
                }
                None => b.unplaceable.push(format!("its PodGroup {ns}/{name} is not in the input (the pod stays pending)")),
            }
        }
        Convention::Composite((ns, name)) => {
            b.name = format!("{ns}/{name}");
            b.namespace = Some(ns.clone());
            b.object = format!("CompositePodGroup {ns}/{name}");
            match objects.composite_pod_groups.get(&(ns.clone(), name.clone())) {
                None => b.unplaceable.push(format!("its CompositePodGroup {ns}/{name} is not in the input")),
                Some(c) => {
                    from_meta(&mut b, &c.obj.metadata);
                    apply_upstream(&mut b, &c.obj.spec, class_value(&c.obj.spec.priority_class_name), warnings);
                    if c.obj.spec.parent_composite_pod_group_name.is_some() {
                        b.unplaceable.push("nested composite pod groups are not mapped".into());
                    }
                    // Children: the PodGroups naming it; each child is a role with its own minimum.
                    let children: Vec<&At<UpstreamPodGroup>> = objects
                        .upstream_pod_groups
                        .iter()
                        .filter(|((cns, _), g)| cns == ns && g.obj.spec.parent_composite_pod_group_name.as_deref() == Some(name))
                        .map(|(_, g)| g)
                        .collect();
                    let min_groups = c.obj.spec.scheduling_policy.as_ref().and_then(|p| p.gang.as_ref()).and_then(|g| g.min_group_count);
                    if b.gang && min_groups.is_some_and(|k| k < children.len() as i64) {
                        b.unplaceable.push(format!(
                            "minGroupCount {} of {} child groups is not mapped (only all of them)",
                            min_groups.unwrap_or(0),
                            children.len()
                        ));
                    }
                    let mut total = 0;
                    for ch in children {
                        let min = match &ch.obj.spec.scheduling_policy {
                            Some(SchedulingPolicy { gang: Some(g), .. }) => g.min_count.unwrap_or(0),
                            _ => 0,
                        };
                        if ch.obj.spec.scheduling_constraints.as_ref().is_some_and(|s| !s.topology.is_empty()) {
                            b.unplaceable
                                .push(format!("child PodGroup {ns}/{}: a topology per child group is not mapped", ch.obj.metadata.name));
                        }
                        b.role_mins.insert(ch.obj.metadata.name.clone(), min);
                        total += min;
                    }
                    b.gang = true;
                    b.min_count = Some(total);
                }
            }
        }
        Convention::Workload(ns, w, pg, replica) => {
            b.name = if replica.is_empty() { format!("{ns}/{w}/{pg}") } else { format!("{ns}/{w}/{pg}/{replica}") };
            b.namespace = Some(ns.clone());
            b.object = format!("Workload {ns}/{w} pod group {pg}");
            match objects.workloads_v1alpha1.get(&(ns.clone(), w.clone())) {
                None => b.unplaceable.push(format!("its Workload {ns}/{w} is not in the input")),
                Some(wl) => {
                    b.uid = wl.obj.metadata.uid.clone();
                    match wl.obj.spec.pod_groups.iter().find(|g| &g.name == pg) {
                        None => b.unplaceable.push(format!("Workload {ns}/{w} has no pod group {pg:?}")),
                        Some(g) => match &g.policy {
                            Some(SchedulingPolicy { gang: Some(gp), .. }) => b.min_count = gp.min_count,
                            _ => b.gang = false,
                        },
                    }
                }
            }
        }
        Convention::Coscheduling((ns, name)) => {
            b.name = format!("{ns}/{name}");
            b.namespace = Some(ns.clone());
            b.object = format!("PodGroup {ns}/{name} (coscheduling)");
            match objects.coscheduling_pod_groups.get(&(ns.clone(), name.clone())) {
                None => {
                    b.unplaceable.push(format!("its coscheduling PodGroup {ns}/{name} is not in the input (PreFilter rejects the pod)"))
                }
                Some(g) => {
                    from_meta(&mut b, &g.obj.metadata);
                    b.min_count = g.obj.spec.min_member;
                }
            }
        }
        Convention::Volcano((ns, name)) => {
            b.name = format!("{ns}/{name}");
            b.namespace = Some(ns.clone());
            b.object = format!("PodGroup {ns}/{name} (Volcano)");
            match objects.volcano_pod_groups.get(&(ns.clone(), name.clone())) {
                None => b.unplaceable.push(format!("its Volcano PodGroup {ns}/{name} is not in the input")),
                Some(g) => {
                    let s = &g.obj.spec;
                    from_meta(&mut b, &g.obj.metadata);
                    b.min_count = s.min_member;
                    let sum: i64 = s.min_task_member.values().sum();
                    // Volcano ignores minTaskMember when minMember is below their sum (CheckTaskValid).
                    if !s.min_task_member.is_empty() && s.min_member.unwrap_or(0) >= sum {
                        b.role_mins = s.min_task_member.clone();
                    }
                    b.priority = class_value(&s.priority_class_name);
                    if let Some(nt) = &s.network_topology {
                        if nt.mode.as_deref().unwrap_or("hard") == "hard" {
                            b.unplaceable.push("hard networkTopology (HyperNode tiers) is not mapped".into());
                        }
                    }
                    for sg in &s.sub_group_policy {
                        let sg_name = sg.name.clone().unwrap_or_default();
                        if sg.min_sub_groups.unwrap_or(0) > 0 {
                            b.unplaceable.push(format!("subGroupPolicy {sg_name:?} with minSubGroups is not mapped"));
                        } else if sg.network_topology.as_ref().is_some_and(|n| n.mode.as_deref().unwrap_or("hard") == "hard") {
                            b.unplaceable.push(format!("subGroupPolicy {sg_name:?} with hard networkTopology is not mapped"));
                        }
                    }
                }
            }
        }
        Convention::YuniKorn((ns, app)) => {
            b.name = format!("{ns}/{app}");
            b.namespace = Some(ns.clone());
            b.object = format!("YuniKorn application {app}");
            match yk.get(&(ns.clone(), app.clone())) {
                Some((_, tgs)) => {
                    b.role_mins = tgs.iter().cloned().collect();
                    b.min_count = Some(tgs.iter().map(|t| t.1).sum());
                }
                None => b.gang = false,
            }
        }
        Convention::KueuePodGroup((ns, name)) => {
            b.name = format!("{ns}/{name}");
            b.namespace = Some(ns.clone());
            b.object = format!("Kueue pod group {ns}/{name}");
            match pod.metadata.annotations.get(KUEUE_TOTAL).map(|t| t.trim().parse::<i64>()) {
                Some(Ok(n)) if n >= 1 => b.min_count = Some(n),
                Some(_) => b.unplaceable.push(format!("annotation {KUEUE_TOTAL} is not a positive integer")),
                None => b.unplaceable.push(format!("annotation {KUEUE_TOTAL} is missing")),
            }
        }
        Convention::KueueOwner((ns, owner)) => {
            // Kueue admits a workload whole: the owner's pods are one gang of all of them.
            b.name = format!("{ns}/{owner}");
            b.namespace = Some(ns.clone());
            b.object = format!("{owner} in {ns} (Kueue)");
        }
        Convention::Single((ns, name)) => {
            b.name = format!("{ns}/{name}");
            b.namespace = Some(ns.clone());
            b.object = format!("Pod {ns}/{name}");
            b.gang = false;
            b.convention = false;
        }
    }
    b
}

/// Group-level checks once all members are known: minimums that the existing pods
/// cannot meet make the group unplaceable.
fn finish_group(b: &mut Build, warnings: &mut Vec<String>) {
    let total = b.members.len() as i64;
    if b.gang {
        if let Some(mc) = b.min_count {
            if mc > total {
                b.unplaceable.push(format!("its gang needs {mc} pods and {total} exist"));
            }
        } else {
            b.min_count = Some(total);
        }
        for (role, &min) in &b.role_mins {
            let have = b.members.iter().filter(|m| m.role.as_deref() == Some(role)).count() as i64;
            if min > have {
                b.unplaceable.push(format!("task {role:?} needs {min} pods and {have} exist"));
            }
        }
    }
    if b.members.iter().any(|m| m.bound_node.is_none()) {
        for why in &b.unplaceable {
            warnings.push(format!("{}: unplaceable: {why}", b.object));
        }
    }
    let group_blocked = !b.unplaceable.is_empty();
    for m in &mut b.members {
        if m.bound_node.is_none() {
            for why in &m.unplaceable {
                warnings.push(format!("{}: unplaceable: {why}", m.label));
            }
            if group_blocked {
                m.unplaceable.push("its group is unplaceable".into());
            }
        }
    }
    if b.created_at.is_none() {
        b.created_at = b.members.iter().filter_map(|m| m.created_at).min();
    }
}

/// The pod group document, the pending pods per task, and the bound members with their task.
#[allow(clippy::type_complexity)]
fn group_doc(b: &Build) -> (PodGroupDoc, BTreeMap<String, Vec<PodRef>>, Vec<(Member, Option<String>)>) {
    // Tasks: pending members of equal role and equal shape, in order of first member.
    #[derive(PartialEq)]
    struct Shape<'a> {
        role: Option<&'a str>,
        requests: &'a BTreeMap<String, i64>,
        node_selector: &'a BTreeMap<String, String>,
        tolerations: &'a [TolerationDoc],
        node_affinity: Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
        slice: Option<&'a (String, i64)>,
    }
    let mut shapes: Vec<(Shape, Vec<&Member>)> = Vec::new();
    for m in b.members.iter().filter(|m| m.bound_node.is_none()) {
        let s = Shape {
            role: m.role.as_deref(),
            requests: &m.requests,
            node_selector: &m.node_selector,
            tolerations: &m.tolerations,
            node_affinity: if m.unplaceable.is_empty() { m.node_affinity.clone() } else { Some(unplaceable_affinity(&m.unplaceable)) },
            slice: m.slice.as_ref(),
        };
        match shapes.iter_mut().find(|(t, _)| *t == s) {
            Some((_, list)) => list.push(m),
            None => shapes.push((s, vec![m])),
        }
    }
    // Names: the role (or `pods`), numbered when a role has several shapes.
    let mut names: Vec<String> = Vec::new();
    for (s, _) in &shapes {
        let base = s.role.unwrap_or("pods").to_string();
        let mut name = base.clone();
        let mut k = 2;
        while names.contains(&name) {
            name = format!("{base}-{k}");
            k += 1;
        }
        names.push(name);
    }
    // Minimum new pods per task: each role's minimum less its bound members, spread over
    // its placeable tasks first.
    let mut mins: Vec<Option<i64>> = vec![None; shapes.len()];
    if b.gang {
        for m in mins.iter_mut() {
            *m = Some(0);
        }
        for (role, &min) in &b.role_mins {
            let bound = b.members.iter().filter(|m| m.bound_node.is_some() && m.role.as_deref() == Some(role)).count() as i64;
            let mut need = (min - bound).max(0);
            let mut order: Vec<usize> = (0..shapes.len()).filter(|&i| shapes[i].0.role == Some(role.as_str())).collect();
            order.sort_by_key(|&i| {
                shapes[i].0.node_affinity.as_ref().is_some_and(|a| a.iter().flatten().any(|r| r.key == UNPLACEABLE_LABEL))
            });
            for i in order {
                let take = need.min(shapes[i].1.len() as i64);
                mins[i] = Some(take);
                need -= take;
            }
        }
    }
    let mut tasks = Vec::new();
    let mut slots = BTreeMap::new();
    for (i, (s, list)) in shapes.iter().enumerate() {
        let mut pods: Vec<PodRef> = list.iter().map(|m| m.pod.clone()).collect();
        pods.sort();
        slots.insert(names[i].clone(), pods);
        tasks.push(TaskDoc {
            name: names[i].clone(),
            count: list.len() as i64,
            min_count: mins[i],
            requests: resources_doc(s.requests),
            node_selector: s.node_selector.clone(),
            tolerations: s.tolerations.to_vec(),
            slice: s.slice.map(|(t, size)| SliceDoc { topology: t.clone(), size: *size }),
            node_affinity: s.node_affinity.clone(),
        });
    }
    // Bound members: the first task of their role; a role (or group) without pending
    // pods gets an empty task so that the group has one and the pods can name it.
    let mut bound_members = Vec::new();
    for m in b.members.iter().filter(|m| m.bound_node.is_some()) {
        let role = m.role.clone().unwrap_or_else(|| "pods".into());
        let task = match shapes.iter().position(|(s, _)| s.role.unwrap_or("pods") == role) {
            Some(i) => names[i].clone(),
            None => {
                if !tasks.iter().any(|t: &TaskDoc| t.name == role) {
                    tasks.push(TaskDoc {
                        name: role.clone(),
                        count: 0,
                        min_count: None,
                        requests: resources_doc(&m.requests),
                        ..TaskDoc::default()
                    });
                }
                role
            }
        };
        bound_members.push((m.clone(), Some(task)));
    }
    let priority = b.priority.or_else(|| {
        let pending: Vec<i64> = b.members.iter().filter(|m| m.bound_node.is_none()).map(|m| m.priority).collect();
        pending.iter().max().copied().or_else(|| b.members.iter().map(|m| m.priority).max())
    });
    let policy = b.members.iter().find(|m| m.bound_node.is_none()).and_then(|m| m.preemption_policy.clone());
    let doc = PodGroupDoc {
        name: b.name.clone(),
        namespace: b.namespace.clone(),
        uid: b.uid.clone(),
        queue: b.queue.clone(),
        priority,
        priority_class_name: None,
        preemption_policy: b.preemption_policy.clone().or(policy).filter(|p| p == "Never"),
        disruption_mode: b.disruption.clone().filter(|d| d == "PodGroup"),
        policy: Some(if b.gang { "gang" } else { "basic" }.to_string()),
        min_count: if b.gang { b.min_count } else { None },
        topology: (b.required.is_some() || b.preferred.is_some())
            .then(|| GroupTopologyDoc { required: b.required.clone(), preferred: b.preferred.clone() }),
        created_at: b.created_at,
        tasks,
    };
    (doc, slots, bound_members)
}

fn resources_doc(r: &BTreeMap<String, i64>) -> ResourcesDoc {
    r.iter().map(|(k, &v)| (k.clone(), QuantityDoc::Text(quantity::format(v, scale_of(k))))).collect()
}

fn pod_doc(m: &Member, name: &str, group: Option<String>, task: Option<String>) -> PodDoc {
    PodDoc {
        name: name.to_string(),
        namespace: Some(m.pod.namespace.clone()),
        uid: m.pod.uid.clone(),
        node: m.bound_node.clone().unwrap_or_default(),
        pod_group: group,
        task,
        priority: Some(m.priority),
        requests: resources_doc(&m.requests),
        device_ids: BTreeMap::new(),
        placeholder: m.placeholder,
        releasing: m.releasing,
        preemptible: (!m.preemptible).then_some(false),
        started_at: None,
    }
}
