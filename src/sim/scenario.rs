//! The scenario format of `tessera simulate` (documented for users in `docs/simulate.md`):
//! an initial instance and a timeline of events, read strictly (unknown keys are errors)
//! and validated up front, so that a run never stops on bad input half way. Every error
//! names the path of the bad field (`events[3].submit.taskGroups[0].minMember: ...`).

use crate::model::Instance;
use crate::wire::quantity::{self, Scale};
use crate::wire::{
    unique_map, InputError, InstanceDoc, NodeDoc, NodeSelectorRequirementDoc, PodGroupDoc, QuantityDoc, ResourcesDoc, TaskDoc,
    TolerationDoc,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Simulated time in milliseconds.
pub type Ms = i64;

/// The longest time a scenario may name (a year), so that sums of times never overflow.
const MAX_TIME: Ms = 366 * 24 * 3_600_000;

/// A point in time or a duration as written: seconds (`90`, `1.5`) or a number with a
/// unit (`"500ms"`, `"90s"`, `"15m"`, `"2h"`, `"3d"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TimeDoc {
    /// Whole seconds.
    Int(i64),
    /// Seconds with a fraction.
    Float(f64),
    /// A number with a unit (`ms`, `s`, `m`, `h`, `d`).
    Text(String),
}

impl Default for TimeDoc {
    fn default() -> TimeDoc {
        TimeDoc::Int(0)
    }
}

impl TimeDoc {
    /// The time in milliseconds (rounded to the millisecond).
    pub fn ms(&self) -> Result<Ms, String> {
        let (num, unit) = match self {
            TimeDoc::Int(i) => (*i as f64, 1000.0),
            TimeDoc::Float(f) => (*f, 1000.0),
            TimeDoc::Text(t) => {
                let t = t.trim();
                let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
                let (n, u) = t.split_at(split);
                let unit = match u {
                    "" | "s" => 1000.0,
                    "ms" => 1.0,
                    "m" => 60_000.0,
                    "h" => 3_600_000.0,
                    "d" => 86_400_000.0,
                    _ => return Err(format!("invalid time {t:?} (seconds, or a number with ms, s, m, h or d)")),
                };
                let n: f64 = n.trim().parse().map_err(|_| format!("invalid time {t:?} (seconds, or a number with ms, s, m, h or d)"))?;
                (n, unit)
            }
        };
        let v = num * unit;
        if !v.is_finite() || v < 0.0 {
            return Err(format!("time must be a non-negative number, got {self:?}"));
        }
        if v > MAX_TIME as f64 {
            return Err("time must be at most a year".into());
        }
        Ok(v.round() as Ms)
    }
}

/// A whole scenario as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioDoc {
    /// Free text, carried into the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Time between two scheduling cycles (default 10 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle_period: Option<TimeDoc>,
    /// Stop here (default: when nothing is left to happen).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<TimeDoc>,
    /// The cluster at time 0: nodes, queues, options, running pods that belong to no
    /// application. Pending work comes from events, so no pod group may have pods to place.
    #[serde(default)]
    pub instance: InstanceDoc,
    /// The timeline, in non-decreasing `at`.
    #[serde(default)]
    pub events: Vec<EventDoc>,
}

/// One event: `at` and exactly one of the kinds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventDoc {
    /// When the event happens (non-decreasing over the timeline).
    pub at: TimeDoc,
    /// An application is submitted (its originator and other pods, task groups).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<SubmitDoc>,
    /// A pod of an application is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_pod: Option<PodSpecDoc>,
    /// A pod finishes (running) or goes away (not running yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complete_pod: Option<String>,
    /// A pod is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_pod: Option<String>,
    /// A node joins the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add_node: Option<NodeDoc>,
    /// A node leaves the cluster with every pod on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove_node: Option<String>,
    /// The scheduler restarts and recovers its state from the cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<RestartDoc>,
}

/// `restart: {}` (no fields).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RestartDoc {}

/// An application as the Kubernetes shim sees it: the annotations of its originator pod
/// (`yunikorn.apache.org/task-groups`, `schedulingPolicyParameters`) and its pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SubmitDoc {
    /// Application id (`yunikorn.apache.org/app-id`).
    pub app: String,
    /// Leaf queue (default `root.default` when the instance has queues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Priority of the application's pods (the originator's priority class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i64>,
    /// `yunikorn.apache.org/task-groups`: the gang's task groups (none: a plain application).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub task_groups: Vec<TaskGroupDoc>,
    /// `placeholderTimeoutInSeconds` (absent or <= 0: YuniKorn's 15 minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placeholder_timeout_in_seconds: Option<i64>,
    /// `gangSchedulingStyle`: `Hard`, or `Soft` (anything else is `Soft`, as in YuniKorn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gang_scheduling_style: Option<String>,
    /// Pods created with the submission (the originator first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<PodSpecDoc>,
}

/// One task group (YuniKorn's `TaskGroup`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskGroupDoc {
    /// The group's name, referenced by its pods' `taskGroup`.
    pub name: String,
    /// `minMember`: placeholders the shim creates for the group (1 to 10000).
    pub min_member: i64,
    /// `minResource`: the requests of each placeholder of the group.
    #[serde(deserialize_with = "unique_map")]
    pub min_resource: ResourcesDoc,
    /// Copied to the group's placeholders.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_map")]
    pub node_selector: BTreeMap<String, String>,
    /// Copied to the group's placeholders.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<TolerationDoc>,
    /// Required node affinity (OR of ANDed terms), copied to the group's placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
}

/// One pod of an application.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PodSpecDoc {
    /// Unique in the scenario (`tg-` is reserved for the shim's placeholders).
    pub name: String,
    /// The application (required for `createPod`; inside `submit` it is the submission's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// `yunikorn.apache.org/task-group-name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_group: Option<String>,
    /// Resource requests.
    #[serde(default, deserialize_with = "unique_map")]
    pub requests: ResourcesDoc,
    /// Labels a node must carry.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", deserialize_with = "unique_map")]
    pub node_selector: BTreeMap<String, String>,
    /// Taints the pod tolerates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<TolerationDoc>,
    /// Required node affinity (OR of ANDed terms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
    /// Runs this long once bound, then completes (absent: until `completePod`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<TimeDoc>,
    /// Carries YuniKorn's placeholder annotation (a placeholder made by hand).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub placeholder: bool,
}

/// A validated pod spec in engine units.
#[derive(Clone, Debug)]
pub struct PodSpec {
    /// The pod's name.
    pub name: String,
    /// `yunikorn.apache.org/task-group-name`.
    pub task_group: Option<String>,
    /// Per resource of [`Scenario::resources`].
    pub req: Vec<i64>,
    /// Labels a node must carry.
    pub node_selector: BTreeMap<String, String>,
    /// Taints the pod tolerates.
    pub tolerations: Vec<TolerationDoc>,
    /// Required node affinity (OR of ANDed terms).
    pub node_affinity: Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
    /// Run time once bound (none: until `completePod`).
    pub duration: Option<Ms>,
    /// Carries YuniKorn's placeholder annotation.
    pub placeholder: bool,
}

/// A validated task group.
#[derive(Clone, Debug)]
pub struct TaskGroup {
    /// The group's name.
    pub name: String,
    /// `minMember`: placeholders created for the group.
    pub min_member: i64,
    /// `minResource` per resource of [`Scenario::resources`]: one placeholder's requests.
    pub req: Vec<i64>,
    /// Copied to the group's placeholders.
    pub node_selector: BTreeMap<String, String>,
    /// Copied to the group's placeholders.
    pub tolerations: Vec<TolerationDoc>,
    /// Copied to the group's placeholders.
    pub node_affinity: Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
}

/// A validated submission.
#[derive(Clone, Debug)]
pub struct Submit {
    /// The application ID.
    pub app: String,
    /// The leaf queue (none when the instance has no queues).
    pub queue: Option<String>,
    /// Priority of the application's pods.
    pub priority: i64,
    /// The gang's task groups (empty: a plain application).
    pub task_groups: Vec<TaskGroup>,
    /// The configured `placeholderTimeoutInSeconds` (0 when absent).
    pub timeout_secs: i64,
    /// `gangSchedulingStyle: Hard` (a placeholder timeout fails the application).
    pub hard: bool,
    /// Pods created with the submission, the originator first.
    pub pods: Vec<PodSpec>,
}

/// A validated event.
#[derive(Clone, Debug)]
pub enum Event {
    /// An application is submitted.
    Submit(Submit),
    /// A pod of an earlier submitted application is created.
    CreatePod {
        /// The application ID.
        app: String,
        /// The pod.
        pod: PodSpec,
    },
    /// The named pod finishes (running) or goes away (not running yet).
    CompletePod(String),
    /// The named pod is deleted.
    DeletePod(String),
    /// A node joins the cluster.
    AddNode(NodeDoc),
    /// The named node leaves with its pods (the core's node DECOMMISSION).
    RemoveNode(String),
    /// The scheduler restarts and recovers from the cluster.
    Restart,
}

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Free text, copied into the summary.
    pub description: Option<String>,
    /// `cyclePeriod`: time between scheduling cycles.
    pub period: Ms,
    /// Stop here (none: when nothing is left to happen).
    pub until: Option<Ms>,
    /// The initial instance as written (validated).
    pub instance: InstanceDoc,
    /// The initial instance, validated (queues, resources).
    pub base: Instance,
    /// Resource names every request and capacity is indexed by (`pods` excluded).
    pub resources: Vec<String>,
    /// Scale of each resource.
    pub scales: Vec<Scale>,
    /// The timeline, in non-decreasing time.
    pub events: Vec<(Ms, Event)>,
}

impl Scenario {
    /// Reads and validates a scenario (YAML or JSON).
    pub fn from_text(text: &str) -> Result<Scenario, InputError> {
        let doc: ScenarioDoc = crate::wire::from_text(text)?;
        Scenario::from_doc(&doc)
    }

    /// Validates a scenario document.
    pub fn from_doc(doc: &ScenarioDoc) -> Result<Scenario, InputError> {
        Validator::new(doc)?.run(doc)
    }

    /// Requests in engine units written back as a resource map (zero entries dropped).
    pub fn resources_doc(&self, v: &[i64]) -> ResourcesDoc {
        self.resources
            .iter()
            .zip(v)
            .filter(|&(_, &q)| q != 0)
            .map(|(r, &q)| (r.clone(), QuantityDoc::Text(quantity::format(q, self.scales[self.rid(r)]))))
            .collect()
    }

    /// Index of a resource name.
    pub fn rid(&self, name: &str) -> usize {
        self.resources.iter().position(|r| r == name).expect("resource of the scenario")
    }
}

fn at(path: &str, e: InputError) -> InputError {
    // An error of a sub-document keeps its own path under the field it came from.
    let p = if e.path.is_empty() { path.to_string() } else { format!("{path}.{}", e.path) };
    InputError::new(p, e.message)
}

struct Validator {
    base: Instance,
    resources: Vec<String>,
    shared: BTreeSet<String>,
}

impl Validator {
    fn new(doc: &ScenarioDoc) -> Result<Validator, InputError> {
        let base = Instance::from_doc(&doc.instance).map_err(|e| at("instance", e))?;
        for (i, g) in doc.instance.pod_groups.iter().enumerate() {
            for (j, t) in g.tasks.iter().enumerate() {
                if t.count > 0 {
                    return Err(InputError::new(
                        format!("instance.podGroups[{i}].tasks[{j}].count"),
                        "the initial instance holds no pending pods: applications and their pods come from events",
                    ));
                }
            }
        }
        let shared: BTreeSet<String> = doc.instance.shared_devices.iter().cloned().collect();
        // Every resource named anywhere, in order of first appearance.
        let mut resources: Vec<String> = base.resources.iter().filter(|r| *r != crate::model::PODS).cloned().collect();
        let mut add = |m: &ResourcesDoc| {
            for k in m.keys() {
                if k != crate::model::PODS && !resources.contains(k) {
                    resources.push(k.clone());
                }
            }
        };
        for e in &doc.events {
            if let Some(s) = &e.submit {
                s.task_groups.iter().for_each(|t| add(&t.min_resource));
                s.pods.iter().for_each(|p| add(&p.requests));
            }
            if let Some(p) = &e.create_pod {
                add(&p.requests);
            }
            if let Some(n) = &e.add_node {
                add(&n.allocatable);
            }
        }
        Ok(Validator { base, resources, shared })
    }

    fn scale(&self, r: &str) -> Scale {
        if r == "cpu" || self.shared.contains(r) {
            Scale::Milli
        } else {
            Scale::Base
        }
    }

    /// Requests as engine units; `pods` is counted per pod, never requested.
    fn requests(&self, m: &ResourcesDoc, path: &str) -> Result<Vec<i64>, InputError> {
        let mut v = vec![0; self.resources.len()];
        for (k, q) in m {
            let p = format!("{path}.{k}");
            if k == crate::model::PODS {
                return Err(InputError::new(p, "pods is counted once per pod, not requested"));
            }
            let r = self.resources.iter().position(|x| x == k).expect("collected");
            let val = quantity::parse(&q.text(), self.scale(k)).map_err(|e| InputError::new(&p, format!("{e} {:?}", q.text())))?;
            if self.shared.contains(k) && val > 1000 && val % 1000 != 0 {
                return Err(InputError::new(
                    p,
                    format!("a request of more than one shared device must be a whole number, got {:?}", q.text()),
                ));
            }
            v[r] = val;
        }
        Ok(v)
    }

    /// Checks a pod's filters the way an instance would (selector, tolerations, affinity)
    /// by building a one-task instance; errors keep the field names.
    fn filters(
        &self,
        doc: &ScenarioDoc,
        sel: &BTreeMap<String, String>,
        tol: &[TolerationDoc],
        aff: &Option<Vec<Vec<NodeSelectorRequirementDoc>>>,
        path: &str,
    ) -> Result<(), InputError> {
        let probe = InstanceDoc {
            topology: doc.instance.topology.clone(),
            shared_devices: doc.instance.shared_devices.clone(),
            pod_groups: vec![PodGroupDoc {
                name: "probe".into(),
                tasks: vec![TaskDoc {
                    name: "t".into(),
                    count: 1,
                    node_selector: sel.clone(),
                    tolerations: tol.to_vec(),
                    node_affinity: aff.clone(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        Instance::from_doc(&probe).map(|_| ()).map_err(|e| {
            let rest = e.path.strip_prefix("podGroups[0].tasks[0].").unwrap_or(&e.path).to_string();
            at(path, InputError::new(rest, e.message))
        })
    }

    fn pod(&self, doc: &ScenarioDoc, p: &PodSpecDoc, path: &str) -> Result<PodSpec, InputError> {
        if p.name.trim().is_empty() {
            return Err(InputError::new(format!("{path}.name"), "empty pod name"));
        }
        if p.name.starts_with("tg-") {
            return Err(InputError::new(format!("{path}.name"), "names starting with tg- are kept for the placeholders the shim creates"));
        }
        let req = self.requests(&p.requests, &format!("{path}.requests"))?;
        self.filters(doc, &p.node_selector, &p.tolerations, &p.node_affinity, path)?;
        let duration = match &p.duration {
            None => None,
            Some(d) => Some(d.ms().map_err(|e| InputError::new(format!("{path}.duration"), e))?),
        };
        Ok(PodSpec {
            name: p.name.clone(),
            task_group: p.task_group.clone(),
            req,
            node_selector: p.node_selector.clone(),
            tolerations: p.tolerations.clone(),
            node_affinity: p.node_affinity.clone(),
            duration,
            placeholder: p.placeholder,
        })
    }

    fn submit(&self, doc: &ScenarioDoc, s: &SubmitDoc, path: &str) -> Result<Submit, InputError> {
        if s.app.trim().is_empty() {
            return Err(InputError::new(format!("{path}.app"), "empty application id"));
        }
        match (&self.base.queues, &s.queue) {
            (Some(qs), Some(q)) => {
                qs.tree.leaf(q, &format!("{path}.queue"))?;
            }
            (Some(qs), None) => {
                qs.tree.leaf("root.default", &format!("{path}.queue")).map_err(|e| {
                    InputError::new(e.path, format!("no queue named and the instance has no leaf root.default ({})", e.message))
                })?;
            }
            (None, Some(_)) => return Err(InputError::new(format!("{path}.queue"), "the instance has no queues")),
            (None, None) => {}
        }
        if let Some(p) = s.priority {
            if !(-2_147_483_648..=1_000_000_000).contains(&p) {
                return Err(InputError::new(format!("{path}.priority"), format!("must be an int32 of at most 1000000000, got {p}")));
            }
        }
        let mut tgs: Vec<TaskGroup> = Vec::new();
        for (i, t) in s.task_groups.iter().enumerate() {
            let tp = format!("{path}.taskGroups[{i}]");
            if t.name.trim().is_empty() {
                return Err(InputError::new(format!("{tp}.name"), "empty task group name"));
            }
            if tgs.iter().any(|g| g.name == t.name) {
                return Err(InputError::new(format!("{tp}.name"), format!("duplicate task group {:?}", t.name)));
            }
            if !(1..=10_000).contains(&t.min_member) {
                return Err(InputError::new(format!("{tp}.minMember"), format!("must be between 1 and 10000, got {}", t.min_member)));
            }
            if t.min_resource.is_empty() {
                return Err(InputError::new(format!("{tp}.minResource"), "required: the resources of one member"));
            }
            let req = self.requests(&t.min_resource, &format!("{tp}.minResource"))?;
            self.filters(doc, &t.node_selector, &t.tolerations, &t.node_affinity, &tp)?;
            tgs.push(TaskGroup {
                name: t.name.clone(),
                min_member: t.min_member,
                req,
                node_selector: t.node_selector.clone(),
                tolerations: t.tolerations.clone(),
                node_affinity: t.node_affinity.clone(),
            });
        }
        let mut pods = Vec::new();
        for (i, p) in s.pods.iter().enumerate() {
            let pp = format!("{path}.pods[{i}]");
            if let Some(a) = &p.app {
                if a != &s.app {
                    return Err(InputError::new(format!("{pp}.app"), format!("a pod of the submission belongs to {:?}", s.app)));
                }
            }
            let spec = self.pod(doc, p, &pp)?;
            check_task_group(&spec, &tgs, &pp)?;
            pods.push(spec);
        }
        let timeout_secs = s.placeholder_timeout_in_seconds.unwrap_or(0);
        if timeout_secs > 366 * 86_400 {
            return Err(InputError::new(format!("{path}.placeholderTimeoutInSeconds"), "at most a year"));
        }
        Ok(Submit {
            app: s.app.clone(),
            queue: s.queue.clone(),
            priority: s.priority.unwrap_or(0),
            task_groups: tgs,
            timeout_secs,
            hard: s.gang_scheduling_style.as_deref() == Some("Hard"),
            pods,
        })
    }

    fn run(self, doc: &ScenarioDoc) -> Result<Scenario, InputError> {
        let period = match &doc.cycle_period {
            None => 10_000,
            Some(t) => t.ms().map_err(|e| InputError::new("cyclePeriod", e))?,
        };
        if !(1..=86_400_000).contains(&period) {
            return Err(InputError::new("cyclePeriod", "must be between 1ms and a day"));
        }
        let until = match &doc.until {
            None => None,
            Some(t) => Some(t.ms().map_err(|e| InputError::new("until", e))?),
        };
        let mut names: BTreeSet<String> = doc.instance.pods.iter().map(|p| p.name.clone()).collect();
        let mut live_nodes: BTreeSet<String> = doc.instance.nodes.iter().map(|n| n.name.clone()).collect();
        // Task groups of the latest submission of each application, for createPod.
        let mut submitted: BTreeMap<String, Vec<TaskGroup>> = BTreeMap::new();
        let mut events = Vec::new();
        let mut last = 0;
        for (i, e) in doc.events.iter().enumerate() {
            let p = format!("events[{i}]");
            let t = e.at.ms().map_err(|m| InputError::new(format!("{p}.at"), m))?;
            if t < last {
                return Err(InputError::new(format!("{p}.at"), "events must be in non-decreasing time"));
            }
            last = t;
            let kinds = [
                e.submit.is_some(),
                e.create_pod.is_some(),
                e.complete_pod.is_some(),
                e.delete_pod.is_some(),
                e.add_node.is_some(),
                e.remove_node.is_some(),
                e.restart.is_some(),
            ];
            if kinds.iter().filter(|&&k| k).count() != 1 {
                return Err(InputError::new(
                    &p,
                    "exactly one of submit, createPod, completePod, deletePod, addNode, removeNode, restart is needed",
                ));
            }
            let mut fresh = |name: &str, path: String| -> Result<(), InputError> {
                if !names.insert(name.to_string()) {
                    return Err(InputError::new(path, format!("pod name {name:?} is used twice")));
                }
                Ok(())
            };
            let ev = if let Some(s) = &e.submit {
                let s = self.submit(doc, s, &format!("{p}.submit"))?;
                for (j, pod) in s.pods.iter().enumerate() {
                    fresh(&pod.name, format!("{p}.submit.pods[{j}].name"))?;
                }
                submitted.insert(s.app.clone(), s.task_groups.clone());
                Event::Submit(s)
            } else if let Some(c) = &e.create_pod {
                let pp = format!("{p}.createPod");
                let app = c.app.clone().ok_or_else(|| InputError::new(format!("{pp}.app"), "required: the pod's application"))?;
                let tgs = submitted.get(&app).ok_or_else(|| {
                    InputError::new(format!("{pp}.app"), format!("application {app:?} is not submitted by an earlier event"))
                })?;
                let pod = self.pod(doc, c, &pp)?;
                check_task_group(&pod, tgs, &pp)?;
                fresh(&pod.name, format!("{pp}.name"))?;
                Event::CreatePod { app, pod }
            } else if let Some(n) = e.complete_pod.as_ref().or(e.delete_pod.as_ref()) {
                let field = if e.complete_pod.is_some() { "completePod" } else { "deletePod" };
                if !names.contains(n) || doc.instance.pods.iter().any(|p| &p.name == n) {
                    return Err(InputError::new(format!("{p}.{field}"), format!("no pod {n:?} of an application is created before")));
                }
                if e.complete_pod.is_some() {
                    Event::CompletePod(n.clone())
                } else {
                    Event::DeletePod(n.clone())
                }
            } else if let Some(n) = &e.add_node {
                let np = format!("{p}.addNode");
                if !live_nodes.insert(n.name.clone()) {
                    return Err(InputError::new(format!("{np}.name"), format!("node {:?} is already in the cluster", n.name)));
                }
                let probe = InstanceDoc {
                    topology: doc.instance.topology.clone(),
                    shared_devices: doc.instance.shared_devices.clone(),
                    nodes: vec![n.clone()],
                    ..Default::default()
                };
                Instance::from_doc(&probe).map_err(|e| {
                    let rest = e.path.strip_prefix("nodes[0].").or(e.path.strip_prefix("nodes[0]")).unwrap_or(&e.path).to_string();
                    at(&np, InputError::new(rest, e.message))
                })?;
                Event::AddNode(n.clone())
            } else if let Some(n) = &e.remove_node {
                if !live_nodes.remove(n) {
                    return Err(InputError::new(format!("{p}.removeNode"), format!("no node {n:?} in the cluster at that time")));
                }
                Event::RemoveNode(n.clone())
            } else {
                Event::Restart
            };
            events.push((t, ev));
        }
        let scales = self.resources.iter().map(|r| self.scale(r)).collect();
        Ok(Scenario {
            description: doc.description.clone(),
            period,
            until,
            instance: doc.instance.clone(),
            base: self.base,
            resources: self.resources,
            scales,
            events,
        })
    }
}

fn check_task_group(pod: &PodSpec, tgs: &[TaskGroup], path: &str) -> Result<(), InputError> {
    if let Some(tg) = &pod.task_group {
        if !tgs.iter().any(|g| &g.name == tg) {
            return Err(InputError::new(format!("{path}.taskGroup"), format!("the application has no task group {tg:?}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Scenario::from_text(text).map(|_| ()).unwrap_err().to_string()
    }

    const NODES: &str = "instance:\n  nodes: [{name: n1, allocatable: {cpu: 4}}]\n";

    #[test]
    fn times_read_with_units() {
        let t = |d: TimeDoc| d.ms();
        assert_eq!(t(TimeDoc::Int(90)), Ok(90_000));
        assert_eq!(t(TimeDoc::Float(1.5)), Ok(1_500));
        assert_eq!(t(TimeDoc::Text("500ms".into())), Ok(500));
        assert_eq!(t(TimeDoc::Text("15m".into())), Ok(900_000));
        assert_eq!(t(TimeDoc::Text("3d".into())), Ok(259_200_000));
        assert!(t(TimeDoc::Text("3w".into())).is_err());
        assert!(t(TimeDoc::Int(-1)).is_err());
    }

    #[test]
    fn errors_name_the_path() {
        assert_eq!(
            err(&format!(
                "{NODES}events:\n  - {{at: 0, submit: {{app: a, taskGroups: [{{name: g, minMember: 0, minResource: {{cpu: 1}}}}]}}}}\n"
            )),
            "events[0].submit.taskGroups[0].minMember: must be between 1 and 10000, got 0"
        );
        assert!(err(&format!("{NODES}events:\n  - {{at: 0, submit: {{app: a, colour: red}}}}\n"))
            .starts_with("events[0].submit.colour: unknown field `colour`"));
        assert_eq!(
            err(&format!("{NODES}events:\n  - {{at: 0, createPod: {{name: p, app: a}}}}\n")),
            "events[0].createPod.app: application \"a\" is not submitted by an earlier event"
        );
        assert_eq!(
            err(&format!("{NODES}events:\n  - {{at: 5, restart: {{}}}}\n  - {{at: 4, restart: {{}}}}\n")),
            "events[1].at: events must be in non-decreasing time"
        );
        assert_eq!(
            err(&format!("{NODES}events:\n  - {{at: 0, submit: {{app: a, pods: [{{name: p, requests: {{cpu: 12Q}}}}]}}}}\n")),
            "events[0].submit.pods[0].requests.cpu: invalid quantity \"12Q\""
        );
        assert_eq!(
            err(&format!("{NODES}events:\n  - {{at: 0, submit: {{app: a, pods: [{{name: p, taskGroup: x, requests: {{cpu: 1}}}}]}}}}\n")),
            "events[0].submit.pods[0].taskGroup: the application has no task group \"x\""
        );
        assert_eq!(err(&format!("{NODES}events:\n  - {{at: 0}}\n")).split(':').next(), Some("events[0]"));
        assert_eq!(
            err(&format!("{NODES}events:\n  - {{at: 0, removeNode: n2}}\n")),
            "events[0].removeNode: no node \"n2\" in the cluster at that time"
        );
        assert_eq!(
            err("instance:\n  nodes: [{name: n1, allocatable: {cpu: 4}}]\n  podGroups: [{name: g, tasks: [{name: t, count: 1}]}]\n"),
            "instance.podGroups[0].tasks[0].count: the initial instance holds no pending pods: applications and their pods come from events"
        );
        assert_eq!(
            err(&format!("{NODES}events:\n  - {{at: 0, submit: {{app: a, pods: [{{name: p, tolerations: [{{operator: Maybe}}]}}]}}}}\n"))
                .split(':')
                .next(),
            Some("events[0].submit.pods[0].tolerations[0].operator")
        );
    }
}
