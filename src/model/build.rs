//! From document to model: [`Instance::from_doc`] validates an [`InstanceDoc`] in named
//! phases (topology levels, shared devices, priority classes, the resource dictionary,
//! nodes, pod groups and their tasks, bound pods, options, then the checks that need the
//! whole instance). Every error names the path of the bad field.

use super::limits::Queues;
use super::queues::{App, QueueTree, DEFAULT_QUEUE};
use super::*;
use crate::wire::quantity::{self, Scale};
use crate::wire::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What the phases share: the levels, resources and names read so far.
struct Reader<'d> {
    doc: &'d InstanceDoc,
    /// Topology levels, coarse to fine, ending with the implicit hostname level.
    levels: Vec<String>,
    resources: Vec<String>,
    shared: Vec<bool>,
    rid: HashMap<String, ResourceId>,
    /// The `pods` resource, when some node declares it.
    pods_rid: Option<ResourceId>,
    classes: HashMap<String, i64>,
}

impl Instance {
    /// Validates a document into the engine model.
    pub fn from_doc(doc: &InstanceDoc) -> Result<Instance, InputError> {
        let tree = QueueTree::from_instance(doc)?;
        let levels = read_levels(doc)?;
        let shared_set = read_shared_devices(doc)?;
        let classes = read_priority_classes(doc)?;
        let (resources, shared) = resource_dictionary(doc, &shared_set);
        let rid: HashMap<String, ResourceId> = resources.iter().enumerate().map(|(i, r)| (r.clone(), i)).collect();
        let pods_rid = rid.get(PODS).copied();
        let reader = Reader { doc, levels, resources, shared, rid, pods_rid, classes };
        let (nodes, node_index) = reader.nodes()?;
        let (mut groups, tasks, group_index) = reader.groups(tree.as_ref())?;
        let (pods, pod_index) = reader.pods(&nodes, &node_index, &mut groups, &tasks, &group_index)?;
        let options = read_options(doc, tree.is_some())?;
        let Reader { levels, resources, shared, .. } = reader;
        let mut inst = Instance {
            resources,
            shared,
            levels,
            nodes,
            groups,
            tasks,
            pods,
            options,
            queues: None,
            level_keys: Vec::new(),
            node_index,
            group_index,
            pod_index,
        };
        inst.assign_missing_devices()?;
        inst.check_bound_capacity()?;
        if let Some(tree) = tree {
            let queues = inst.queue_limits(tree)?;
            inst.check_bound_queue_usage(&queues)?;
            inst.queues = Some(queues);
            inst.rank_by_effective_keys();
        }
        Ok(inst)
    }
}

fn read_levels(doc: &InstanceDoc) -> Result<Vec<String>, InputError> {
    let mut levels: Vec<String> = Vec::new();
    if let Some(t) = &doc.topology {
        for (i, l) in t.levels.iter().enumerate() {
            let p = format!("topology.levels[{i}]");
            check_name(l, &p)?;
            if l == HOSTNAME {
                return Err(InputError::new(p, format!("{HOSTNAME} is the implicit finest level; do not list it")));
            }
            if levels.contains(l) {
                return Err(InputError::new(p, format!("duplicate level {l:?}")));
            }
            levels.push(l.clone());
        }
    }
    levels.push(HOSTNAME.to_string());
    Ok(levels)
}

fn read_shared_devices(doc: &InstanceDoc) -> Result<BTreeSet<String>, InputError> {
    let mut shared_set = BTreeSet::new();
    for (i, s) in doc.shared_devices.iter().enumerate() {
        let p = format!("sharedDevices[{i}]");
        check_name(s, &p)?;
        if s == "cpu" || s == "memory" || s == PODS {
            return Err(InputError::new(p, format!("{s:?} cannot be a shared device")));
        }
        if !shared_set.insert(s.clone()) {
            return Err(InputError::new(p, format!("duplicate shared device {s:?}")));
        }
    }
    Ok(shared_set)
}

fn read_priority_classes(doc: &InstanceDoc) -> Result<HashMap<String, i64>, InputError> {
    let mut classes = HashMap::new();
    for (i, pc) in doc.priority_classes.iter().enumerate() {
        let p = format!("priorityClasses[{i}]");
        check_name(&pc.name, &format!("{p}.name"))?;
        check_priority(pc.value, &format!("{p}.value"))?;
        if classes.insert(pc.name.clone(), pc.value).is_some() {
            return Err(InputError::new(format!("{p}.name"), format!("duplicate priority class {:?}", pc.name)));
        }
    }
    Ok(classes)
}

/// Every resource name used anywhere, sorted for determinism, and which are shared
/// devices. `pods` is a resource only when some node declares it.
fn resource_dictionary(doc: &InstanceDoc, shared_set: &BTreeSet<String>) -> (Vec<String>, Vec<bool>) {
    let mut names: BTreeSet<String> = shared_set.clone();
    let mut uses_pods = false;
    for n in &doc.nodes {
        for k in n.allocatable.keys() {
            names.insert(k.clone());
            uses_pods |= k == PODS;
        }
    }
    for g in &doc.pod_groups {
        for t in &g.tasks {
            names.extend(t.requests.keys().cloned());
        }
    }
    for p in &doc.pods {
        names.extend(p.requests.keys().cloned());
    }
    if uses_pods {
        names.insert(PODS.to_string());
    }
    let resources: Vec<String> = names.into_iter().collect();
    let shared = resources.iter().map(|r| shared_set.contains(r)).collect();
    (resources, shared)
}

fn read_options(doc: &InstanceDoc, has_queues: bool) -> Result<InstanceOptions, InputError> {
    let Some(o) = &doc.options else {
        return Ok(InstanceOptions { preemption: true, yunikorn_preemption: false, time_limit: None, relative_gap: 0.0, work_limit: 0 });
    };
    let time_limit = match &o.time_limit {
        None => None,
        Some(t) => Some(parse_duration(t).map_err(|m| InputError::new("options.timeLimit", m))?),
    };
    let gap = o.relative_gap.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&gap) {
        return Err(InputError::new("options.relativeGap", format!("must be between 0 and 1, got {gap}")));
    }
    let yunikorn_preemption = match o.preemption_model.as_deref() {
        None | Some("default") => false,
        Some("yunikorn") if !has_queues => {
            return Err(InputError::new("options.preemptionModel", "yunikorn needs queues (the queues key or --queues)"))
        }
        Some("yunikorn") => true,
        Some(m) => return Err(InputError::new("options.preemptionModel", format!("unknown preemption model {m:?} (default, yunikorn)"))),
    };
    Ok(InstanceOptions {
        preemption: o.preemption.unwrap_or(true),
        yunikorn_preemption,
        time_limit,
        relative_gap: gap,
        work_limit: o.work_limit.unwrap_or(0),
    })
}

impl Reader<'_> {
    /// Requests or allocatable in engine units. Shared devices: a node holds whole
    /// devices (at most [`MAX_DEVICES`]); a request above one device is whole. A request
    /// counts one `pods` when nodes declare pods.
    fn resources(&self, res: &ResourcesDoc, path: &str, is_request: bool) -> Result<Vec<i64>, InputError> {
        let mut v = vec![0i64; self.resources.len()];
        for (k, q) in res {
            let p = format!("{path}.{k}");
            if k.trim().is_empty() {
                return Err(InputError::new(p, "empty resource name"));
            }
            let r = self.rid[k.as_str()];
            let val = quantity(q, &p, scale_of(k, self.shared[r]))?;
            if self.shared[r] {
                if !is_request && val > MAX_DEVICES * 1000 {
                    return Err(InputError::new(p, format!("at most {MAX_DEVICES} devices per node, got {:?}", q.text())));
                }
                if !is_request && val % 1000 != 0 {
                    return Err(InputError::new(p, format!("shared device count must be whole, got {:?}", q.text())));
                }
                if is_request && val > 1000 && val % 1000 != 0 {
                    return Err(InputError::new(
                        p,
                        format!("a request of more than one shared device must be a whole number, got {:?}", q.text()),
                    ));
                }
            }
            v[r] = val;
        }
        if is_request {
            if let Some(pr) = self.pods_rid {
                if res.get(PODS).is_none() {
                    v[pr] = 1;
                }
            }
        }
        Ok(v)
    }

    fn level_of(&self, name: &str, path: &str) -> Result<usize, InputError> {
        self.levels
            .iter()
            .position(|l| l == name)
            .ok_or_else(|| InputError::new(path, format!("unknown topology level {name:?} (levels: {})", self.levels.join(", "))))
    }

    fn nodes(&self) -> Result<(Vec<Node>, HashMap<String, NodeId>), InputError> {
        let mut nodes = Vec::with_capacity(self.doc.nodes.len());
        let mut node_index = HashMap::new();
        for (i, n) in self.doc.nodes.iter().enumerate() {
            let p = format!("nodes[{i}]");
            check_name(&n.name, &format!("{p}.name"))?;
            if node_index.insert(n.name.clone(), i).is_some() {
                return Err(InputError::new(format!("{p}.name"), format!("duplicate node name {:?}", n.name)));
            }
            let allocatable = self.resources(&n.allocatable, &format!("{p}.allocatable"), false)?;
            let mut taints = Vec::new();
            for (j, t) in n.taints.iter().enumerate() {
                let tp = format!("{p}.taints[{j}]");
                check_name(&t.key, &format!("{tp}.key"))?;
                if !matches!(t.effect.as_str(), "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
                    return Err(InputError::new(
                        format!("{tp}.effect"),
                        format!("unknown taint effect {:?} (NoSchedule, PreferNoSchedule, NoExecute)", t.effect),
                    ));
                }
                taints.push(Taint { key: t.key.clone(), value: t.value.clone().unwrap_or_default(), effect: t.effect.clone() });
            }
            nodes.push(Node {
                name: n.name.clone(),
                labels: n.labels.clone(),
                allocatable,
                taints,
                unschedulable: n.unschedulable,
                limits_pods: n.allocatable.contains_key(PODS),
            });
        }
        Ok((nodes, node_index))
    }

    /// Pod groups and their tasks (task ids in input order).
    #[allow(clippy::type_complexity)]
    fn groups(&self, tree: Option<&QueueTree>) -> Result<(Vec<Group>, Vec<Task>, HashMap<String, GroupId>), InputError> {
        let mut groups = Vec::new();
        let mut tasks = Vec::new();
        let mut group_index = HashMap::new();
        for (i, g) in self.doc.pod_groups.iter().enumerate() {
            let p = format!("podGroups[{i}]");
            check_name(&g.name, &format!("{p}.name"))?;
            if group_index.insert(g.name.clone(), i).is_some() {
                return Err(InputError::new(format!("{p}.name"), format!("duplicate pod group name {:?}", g.name)));
            }
            groups.push(self.group(g, i, &p, tree, &mut tasks)?);
        }
        Ok((groups, tasks, group_index))
    }

    fn group(&self, g: &PodGroupDoc, i: usize, p: &str, tree: Option<&QueueTree>, tasks: &mut Vec<Task>) -> Result<Group, InputError> {
        let priority = self.group_priority(g, p)?;
        let preempt_never = match g.preemption_policy.as_deref() {
            None | Some("PreemptLowerPriority") => false,
            Some("Never") => true,
            Some(o) => {
                return Err(InputError::new(
                    format!("{p}.preemptionPolicy"),
                    format!("unknown preemption policy {o:?} (PreemptLowerPriority, Never)"),
                ))
            }
        };
        let disruption = match g.disruption_mode.as_deref() {
            None | Some("Pod") => DisruptionMode::Pod,
            Some("PodGroup") => DisruptionMode::PodGroup,
            Some(o) => {
                return Err(InputError::new(format!("{p}.disruptionMode"), format!("unknown disruption mode {o:?} (Pod, PodGroup)")))
            }
        };
        let policy = match g.policy.as_deref() {
            None | Some("gang") => Policy::Gang,
            Some("basic") => Policy::Basic,
            Some(o) => return Err(InputError::new(format!("{p}.policy"), format!("unknown policy {o:?} (gang, basic)"))),
        };
        let (mut required, mut preferred) = (None, None);
        if let Some(t) = &g.topology {
            if let Some(r) = &t.required {
                required = Some(self.level_of(r, &format!("{p}.topology.required"))?);
            }
            if let Some(r) = &t.preferred {
                preferred = Some(self.level_of(r, &format!("{p}.topology.preferred"))?);
            }
        }
        if g.tasks.is_empty() {
            return Err(InputError::new(format!("{p}.tasks"), "a pod group needs at least one task"));
        }
        let mut task_ids = Vec::new();
        let mut task_names = BTreeSet::new();
        for (j, t) in g.tasks.iter().enumerate() {
            let tp = format!("{p}.tasks[{j}]");
            check_name(&t.name, &format!("{tp}.name"))?;
            if !task_names.insert(t.name.clone()) {
                return Err(InputError::new(format!("{tp}.name"), format!("duplicate task name {:?}", t.name)));
            }
            task_ids.push(tasks.len());
            tasks.push(self.task(t, i, &tp, required)?);
        }
        let sum_min: i64 = task_ids.iter().map(|&t| tasks[t].min_count).sum();
        let min_count = g.min_count.unwrap_or(sum_min);
        if min_count < 0 {
            return Err(InputError::new(format!("{p}.minCount"), format!("must not be negative, got {min_count}")));
        }
        // Without a queue, a group is in root.default, as YuniKorn's Kubernetes shim puts it.
        let queue_id = match (tree, &g.queue) {
            (None, _) => None,
            (Some(tree), Some(q)) => Some(tree.leaf(q, &format!("{p}.queue"))?),
            (Some(tree), None) => Some(tree.leaf(DEFAULT_QUEUE, &format!("{p}.queue")).map_err(|_| {
                InputError::new(
                    format!("{p}.queue"),
                    format!("not given, so the group is in {DEFAULT_QUEUE}, which the queue tree lacks as a leaf"),
                )
            })?),
        };
        Ok(Group {
            name: g.name.clone(),
            namespace: g.namespace.clone(),
            uid: g.uid.clone(),
            queue: g.queue.clone().or_else(|| tree.map(|_| DEFAULT_QUEUE.to_string())),
            queue_id,
            priority,
            rank: priority,
            preempt_never,
            disruption,
            policy,
            min_count,
            required,
            preferred,
            created_at: g.created_at.unwrap_or(i as i64),
            order: i,
            tasks: task_ids,
            bound: Vec::new(),
        })
    }

    /// `priority`, or the value of `priorityClassName`; both given, they must agree (as
    /// the API server enforces for pods).
    fn group_priority(&self, g: &PodGroupDoc, p: &str) -> Result<i64, InputError> {
        let class = |c: &String| {
            self.classes
                .get(c.as_str())
                .copied()
                .ok_or_else(|| InputError::new(format!("{p}.priorityClassName"), format!("unknown priority class {c:?}")))
        };
        match (&g.priority, &g.priority_class_name) {
            (Some(v), None) => {
                check_priority(*v, &format!("{p}.priority"))?;
                Ok(*v)
            }
            (None, Some(c)) => class(c),
            (None, None) => Ok(0),
            (Some(v), Some(c)) => {
                let cv = class(c)?;
                if cv != *v {
                    return Err(InputError::new(format!("{p}.priority"), format!("{v} disagrees with priorityClassName {c:?} ({cv})")));
                }
                Ok(cv)
            }
        }
    }

    fn task(&self, t: &TaskDoc, group: GroupId, tp: &str, required: Option<usize>) -> Result<Task, InputError> {
        if t.count < 0 || t.count > 1_000_000 {
            return Err(InputError::new(format!("{tp}.count"), format!("must be between 0 and 1000000, got {}", t.count)));
        }
        let min_count = t.min_count.unwrap_or(t.count);
        if min_count < 0 {
            return Err(InputError::new(format!("{tp}.minCount"), format!("must not be negative, got {min_count}")));
        }
        if min_count > t.count {
            return Err(InputError::new(format!("{tp}.minCount"), format!("minCount {min_count} exceeds count {}", t.count)));
        }
        let requests = self.resources(&t.requests, &format!("{tp}.requests"), true)?;
        let tolerations = read_tolerations(&t.tolerations, tp)?;
        let slice = match &t.slice {
            None => None,
            Some(s) => {
                let l = self.level_of(&s.topology, &format!("{tp}.slice.topology"))?;
                if s.size < 1 || s.size > 1_000_000 {
                    return Err(InputError::new(format!("{tp}.slice.size"), format!("must be between 1 and 1000000, got {}", s.size)));
                }
                if let Some(r) = required {
                    if l < r {
                        return Err(InputError::new(
                            format!("{tp}.slice.topology"),
                            format!("slice level {:?} is coarser than the group's required level {:?}", s.topology, self.levels[r]),
                        ));
                    }
                }
                Some((l, s.size))
            }
        };
        Ok(Task {
            name: t.name.clone(),
            group,
            count: t.count,
            min_count,
            requests,
            node_selector: t.node_selector.clone(),
            tolerations,
            slice,
            node_affinity: read_affinity(t.node_affinity.as_deref(), &format!("{tp}.nodeAffinity"))?,
        })
    }

    /// Bound pods; each is recorded among its group's bound members.
    fn pods(
        &self,
        nodes: &[Node],
        node_index: &HashMap<String, NodeId>,
        groups: &mut [Group],
        tasks: &[Task],
        group_index: &HashMap<String, GroupId>,
    ) -> Result<(Vec<BoundPod>, HashMap<String, PodId>), InputError> {
        let mut pods = Vec::new();
        let mut pod_index = HashMap::new();
        for (i, pd) in self.doc.pods.iter().enumerate() {
            let p = format!("pods[{i}]");
            check_name(&pd.name, &format!("{p}.name"))?;
            if pod_index.insert(pd.name.clone(), i).is_some() {
                return Err(InputError::new(format!("{p}.name"), format!("duplicate pod name {:?}", pd.name)));
            }
            let node =
                *node_index.get(&pd.node).ok_or_else(|| InputError::new(format!("{p}.node"), format!("unknown node {:?}", pd.node)))?;
            let group = match &pd.pod_group {
                None => None,
                Some(gname) => Some(
                    *group_index
                        .get(gname)
                        .ok_or_else(|| InputError::new(format!("{p}.podGroup"), format!("unknown pod group {gname:?}")))?,
                ),
            };
            if let Some(t) = &pd.task {
                match group {
                    None => return Err(InputError::new(format!("{p}.task"), "a task needs a podGroup")),
                    Some(g) if !groups[g].tasks.iter().any(|&tid| &tasks[tid].name == t) => {
                        return Err(InputError::new(format!("{p}.task"), format!("pod group {:?} has no task {t:?}", groups[g].name)));
                    }
                    Some(_) => {}
                }
            }
            let priority = match pd.priority {
                Some(v) => {
                    check_priority(v, &format!("{p}.priority"))?;
                    v
                }
                None => group.map(|g| groups[g].priority).unwrap_or(0),
            };
            let requests = self.resources(&pd.requests, &format!("{p}.requests"), true)?;
            let devices = self.device_ids(pd, &p, &nodes[node], &requests)?;
            pods.push(BoundPod {
                name: pd.name.clone(),
                namespace: pd.namespace.clone(),
                uid: pd.uid.clone(),
                node,
                group,
                task: pd.task.clone(),
                priority,
                requests,
                devices,
                placeholder: pd.placeholder,
                releasing: pd.releasing,
                preemptible: pd.preemptible.unwrap_or(true),
            });
            if let Some(g) = group {
                groups[g].bound.push(i);
            }
        }
        Ok((pods, pod_index))
    }

    /// The devices a bound pod says it holds: existing, distinct, as many as its request needs.
    fn device_ids(&self, pd: &PodDoc, p: &str, node: &Node, requests: &[i64]) -> Result<BTreeMap<ResourceId, Vec<usize>>, InputError> {
        let mut devices = BTreeMap::new();
        for (res, ids) in &pd.device_ids {
            let dp = format!("{p}.deviceIds.{res}");
            let r = match self.rid.get(res.as_str()) {
                Some(&r) if self.shared[r] => r,
                _ => return Err(InputError::new(dp, format!("{res:?} is not listed in sharedDevices"))),
            };
            let count = node.allocatable[r] / 1000;
            let mut seen = BTreeSet::new();
            for (k, &d) in ids.iter().enumerate() {
                if d < 0 || d >= count {
                    return Err(InputError::new(
                        format!("{dp}[{k}]"),
                        format!("device {d} does not exist on node {:?} ({count} devices)", pd.node),
                    ));
                }
                if !seen.insert(d) {
                    return Err(InputError::new(format!("{dp}[{k}]"), format!("device {d} listed twice")));
                }
            }
            let req = requests[r];
            let expect = if req < 1000 { (req > 0) as usize } else { (req / 1000) as usize };
            if ids.len() != expect {
                return Err(InputError::new(
                    dp,
                    format!("request {} needs {expect} device id(s), got {}", quantity::format(req, Scale::Milli), ids.len()),
                ));
            }
            devices.insert(r, ids.iter().map(|&d| d as usize).collect());
        }
        Ok(devices)
    }
}

fn read_tolerations(tols: &[TolerationDoc], tp: &str) -> Result<Vec<Toleration>, InputError> {
    let mut tolerations = Vec::new();
    for (k, tol) in tols.iter().enumerate() {
        let op = format!("{tp}.tolerations[{k}]");
        let exists = match tol.operator.as_deref() {
            None | Some("Equal") => false,
            Some("Exists") => true,
            Some(o) => return Err(InputError::new(format!("{op}.operator"), format!("unknown operator {o:?} (Equal, Exists)"))),
        };
        if !exists && tol.key.as_deref().unwrap_or("").is_empty() {
            return Err(InputError::new(format!("{op}.key"), "operator Equal needs a key"));
        }
        if exists && tol.value.as_deref().is_some_and(|v| !v.is_empty()) {
            return Err(InputError::new(format!("{op}.value"), "operator Exists takes no value"));
        }
        let effect = tol.effect.clone().unwrap_or_default();
        if !matches!(effect.as_str(), "" | "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
            return Err(InputError::new(format!("{op}.effect"), format!("unknown taint effect {effect:?}")));
        }
        tolerations.push(Toleration {
            key: tol.key.clone().unwrap_or_default(),
            exists,
            value: tol.value.clone().unwrap_or_default(),
            effect,
        });
    }
    Ok(tolerations)
}

/// Validates `nodeAffinity` as Kubernetes' API validation does: at least one term;
/// `In`/`NotIn` need values, `Exists`/`DoesNotExist` take none, `Gt`/`Lt` take exactly one
/// integer. An empty term is accepted and, as in Kubernetes, matches no node.
fn read_affinity(
    terms: Option<&[Vec<NodeSelectorRequirementDoc>]>,
    path: &str,
) -> Result<Option<Vec<Vec<AffinityRequirement>>>, InputError> {
    let Some(terms) = terms else { return Ok(None) };
    if terms.is_empty() {
        return Err(InputError::new(path, "needs at least one term (omit nodeAffinity for no constraint)"));
    }
    let mut out = Vec::with_capacity(terms.len());
    for (i, term) in terms.iter().enumerate() {
        let mut reqs = Vec::with_capacity(term.len());
        for (j, r) in term.iter().enumerate() {
            reqs.push(read_requirement(r, &format!("{path}[{i}][{j}]"))?);
        }
        out.push(reqs);
    }
    Ok(Some(out))
}

fn read_requirement(r: &NodeSelectorRequirementDoc, p: &str) -> Result<AffinityRequirement, InputError> {
    check_name(&r.key, &format!("{p}.key"))?;
    let operator = match r.operator.as_str() {
        "In" => AffinityOperator::In,
        "NotIn" => AffinityOperator::NotIn,
        "Exists" => AffinityOperator::Exists,
        "DoesNotExist" => AffinityOperator::DoesNotExist,
        "Gt" => AffinityOperator::Gt,
        "Lt" => AffinityOperator::Lt,
        o => {
            return Err(InputError::new(
                format!("{p}.operator"),
                format!("unknown operator {o:?} (In, NotIn, Exists, DoesNotExist, Gt, Lt)"),
            ))
        }
    };
    let values_ok = match operator {
        AffinityOperator::In | AffinityOperator::NotIn if r.values.is_empty() => {
            Err(format!("operator {} needs at least one value", r.operator))
        }
        AffinityOperator::Exists | AffinityOperator::DoesNotExist if !r.values.is_empty() => {
            Err(format!("operator {} takes no values", r.operator))
        }
        AffinityOperator::Gt | AffinityOperator::Lt => match r.values.as_slice() {
            [v] if v.trim().parse::<i64>().is_ok() => Ok(()),
            [v] => Err(format!("operator {} needs an integer, got {v:?}", r.operator)),
            _ => Err(format!("operator {} takes exactly one value", r.operator)),
        },
        _ => Ok(()),
    };
    values_ok.map_err(|m| InputError::new(format!("{p}.values"), m))?;
    Ok(AffinityRequirement { key: r.key.clone(), operator, values: r.values.clone() })
}

fn quantity(q: &QuantityDoc, path: &str, scale: Scale) -> Result<i64, InputError> {
    let text = q.text();
    quantity::parse(&text, scale).map_err(|e| InputError::new(path, format!("{e} {text:?}")))
}

fn check_name(name: &str, path: &str) -> Result<(), InputError> {
    if name.trim().is_empty() {
        return Err(InputError::new(path, "must not be empty"));
    }
    Ok(())
}

fn check_priority(v: i64, path: &str) -> Result<(), InputError> {
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        return Err(InputError::new(path, format!("priority {v} is outside int32")));
    }
    Ok(())
}

/// Checks that need the whole instance, and the ranks of term 1 with queues.
impl Instance {
    /// Bound pods that hold shared devices but do not say which get devices assigned
    /// first-fit in input order (traces rarely record device ids).
    fn assign_missing_devices(&mut self) -> Result<(), InputError> {
        for r in 0..self.resources.len() {
            if !self.shared[r] {
                continue;
            }
            let mut used: Vec<Vec<i64>> = self.nodes.iter().enumerate().map(|(n, _)| vec![0; self.device_count(n, r)]).collect();
            let mut whole: Vec<Vec<bool>> = used.iter().map(|u| vec![false; u.len()]).collect();
            // First the pods that say where they are.
            for (i, p) in self.pods.iter().enumerate() {
                if let Some(ids) = p.devices.get(&r) {
                    for &d in ids {
                        let amount = p.requests[r].min(1000);
                        if whole[p.node][d] || (p.requests[r] >= 1000 && used[p.node][d] > 0) || used[p.node][d] + amount > 1000 {
                            return Err(InputError::new(
                                format!("pods[{i}].deviceIds.{}", self.resources[r]),
                                format!("device {d} of node {:?} is over-committed", self.nodes[p.node].name),
                            ));
                        }
                        used[p.node][d] += amount;
                        whole[p.node][d] |= p.requests[r] >= 1000;
                    }
                }
            }
            for i in 0..self.pods.len() {
                let p = &self.pods[i];
                let req = p.requests[r];
                if req == 0 || p.devices.contains_key(&r) {
                    continue;
                }
                let n = p.node;
                let ids: Vec<usize> = if req < 1000 {
                    let best = (0..used[n].len()).find(|&d| !whole[n][d] && used[n][d] + req <= 1000);
                    best.into_iter().collect()
                } else {
                    (0..used[n].len()).filter(|&d| used[n][d] == 0).take((req / 1000) as usize).collect()
                };
                let need = if req < 1000 { 1 } else { (req / 1000) as usize };
                if ids.len() < need {
                    return Err(InputError::new(
                        format!("pods[{i}].requests.{}", self.resources[r]),
                        format!("bound pods already exceed the devices of node {:?} for {}", self.nodes[n].name, self.resources[r]),
                    ));
                }
                for &d in &ids {
                    used[n][d] += req.min(1000);
                    whole[n][d] |= req >= 1000;
                }
                self.pods[i].devices.insert(r, ids);
            }
        }
        Ok(())
    }

    fn check_bound_capacity(&self) -> Result<(), InputError> {
        let mut used = vec![vec![0i64; self.resources.len()]; self.nodes.len()];
        for (i, p) in self.pods.iter().enumerate() {
            for r in 0..self.resources.len() {
                if r == self.resource_id(PODS).unwrap_or(usize::MAX) && !self.nodes[p.node].limits_pods {
                    continue;
                }
                used[p.node][r] = used[p.node][r].saturating_add(p.requests[r]);
                if used[p.node][r] > self.nodes[p.node].allocatable[r] {
                    return Err(InputError::new(
                        format!("pods[{i}]"),
                        format!(
                            "bound pods on node {:?} already exceed its allocatable {} ({} > {})",
                            self.nodes[p.node].name,
                            self.resources[r],
                            quantity::format(used[p.node][r], self.scale(r)),
                            quantity::format(self.nodes[p.node].allocatable[r], self.scale(r)),
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// With queues, term 1 ranks pending groups by their effective priority keys
    /// (semantics.md): equal keys share a rank, a higher key a higher rank.
    fn rank_by_effective_keys(&mut self) {
        let Some(q) = &self.queues else { return };
        let pending: Vec<GroupId> = self.pending_groups().collect();
        let apps: Vec<App> = pending
            .iter()
            .map(|&g| {
                let grp = &self.groups[g];
                App {
                    name: grp.name.clone(),
                    queue: grp.queue_id.expect("with queues every group has a leaf queue"),
                    priority: grp.priority,
                    created_at: grp.created_at,
                }
            })
            .collect();
        let keys = super::queues::effective_keys(&q.tree, &apps);
        let mut distinct = keys.clone();
        distinct.sort();
        distinct.dedup();
        for (i, &g) in pending.iter().enumerate() {
            self.groups[g].rank = distinct.binary_search(&keys[i]).expect("key is among the distinct keys") as i64;
        }
        self.level_keys = distinct;
    }
}

/// The queue limits in engine ids, checked against what the bound pods already use.
impl Instance {
    fn queue_limits(&self, tree: QueueTree) -> Result<Queues, InputError> {
        let mut max = Vec::with_capacity(tree.queues.len());
        let mut guaranteed = Vec::with_capacity(tree.queues.len());
        for q in &tree.queues {
            let limits = |m: &indexmap::IndexMap<String, i64>, kind: &str| -> Result<Vec<(ResourceId, i64)>, InputError> {
                let mut out = Vec::new();
                for (name, &v) in m {
                    match self.resource_id(name) {
                        Some(r) => out.push((r, v)),
                        // Every pod counts one `pods`, but this instance does not count pods
                        // (no node declares them): a limit on them cannot be honoured.
                        None if name == PODS => {
                            return Err(InputError::new(
                                format!("{}.resources.{kind}.pods", q.source),
                                "a pods limit needs the pods resource (declare pods in the nodes' allocatable)",
                            ))
                        }
                        None => {}
                    }
                }
                Ok(out)
            };
            max.push(limits(&q.max, "max")?);
            guaranteed.push(limits(&q.guaranteed, "guaranteed")?);
        }
        let mut groups_under = vec![Vec::new(); tree.queues.len()];
        for (g, grp) in self.groups.iter().enumerate() {
            if let Some(leaf) = grp.queue_id {
                for q in tree.ancestors(leaf) {
                    groups_under[q].push(g);
                }
            }
        }
        let bound = groups_under
            .iter()
            .map(|under| {
                let mut use_r = vec![0i64; self.resources.len()];
                // A pod being released holds its node but counts in no queue.
                for p in under.iter().flat_map(|&g| &self.groups[g].bound).filter(|&&p| !self.pods[p].releasing) {
                    for (r, u) in use_r.iter_mut().enumerate() {
                        *u += self.pods[*p].requests[r];
                    }
                }
                use_r
            })
            .collect();
        let runs = |g: GroupId| self.groups[g].bound.iter().any(|&p| !self.pods[p].releasing);
        let running = groups_under.iter().map(|under| under.iter().filter(|&&g| runs(g)).count()).collect();
        Ok(Queues { tree, max, guaranteed, groups_under, bound, running })
    }

    /// The input must already satisfy rule 7 (as bound pods must fit their nodes): a queue
    /// whose bound pods exceed its `max`, or whose running groups exceed
    /// `maxapplications`, is an input error naming the limit.
    fn check_bound_queue_usage(&self, queues: &Queues) -> Result<(), InputError> {
        let at = |q: QueueId, field: &str| {
            let src = &queues.tree.queues[q].source;
            if src.is_empty() {
                field.to_string()
            } else {
                format!("{src}.{field}")
            }
        };
        let text = |r: ResourceId, v: i64| quantity::format(v, self.scale(r));
        for (q, queue) in queues.tree.queues.iter().enumerate() {
            for &(r, m) in &queues.max[q] {
                let used = queues.bound_usage(q, r);
                if used > m {
                    return Err(InputError::new(
                        at(q, &format!("resources.max.{}", self.resources[r])),
                        format!(
                            "bound pods of queue {} already use {} {}, above its max {}",
                            queue.path,
                            text(r, used),
                            self.resources[r],
                            text(r, m)
                        ),
                    ));
                }
            }
            if let Some(n) = queue.max_applications {
                let running = queues.running_before(q) as u64;
                if running > n {
                    return Err(InputError::new(
                        at(q, "maxapplications"),
                        format!("queue {} already runs {running} groups, above its maxapplications {n}", queue.path),
                    ));
                }
            }
        }
        Ok(())
    }
}
