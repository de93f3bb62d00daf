//! The extender's cluster view and its plan.
//!
//! kube-scheduler's `ExtenderArgs` carry one pod and candidate nodes only: no pods bound
//! on them, no other members of the pod's gang. So the extender keeps a view of the
//! cluster (pushed as `kubectl … -o json` to `POST /v1/cluster`, replaced at each push)
//! and plans every pending group whole on it, ahead of the calls: each change of the
//! view starts a new plan (cancelling one in progress), and the extender answers from
//! the newest plan of the current view. A pod the view does not know yet is added from
//! the call's own Pod object, which starts a new plan.

use super::metrics::Metrics;
use crate::kube::import::{import, Imported, PodRef};
use crate::kube::objects::Pod;
use crate::kube::read::{At, Objects};
use crate::wire::decision::{Decision, ReasonCode};
use crate::wire::InputError;
use crate::{CancelHandle, Instance, Options};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Where the plan puts one pending pod.
#[derive(Clone, Debug)]
pub enum Planned {
    /// On this node; `victims` are the bound pods of that node the plan evicts.
    Node {
        /// Node name.
        node: String,
        /// The plan's victims on that node.
        victims: Vec<PodRef>,
    },
    /// Its group is left unplaced (or this pod is an elastic member left out).
    Unplaced {
        /// Reason code, when the solver gave one.
        code: Option<ReasonCode>,
        /// Reason for people.
        reason: String,
    },
}

/// A finished plan of one version of the view.
#[derive(Debug)]
pub struct Plan {
    /// The view version it was made on.
    pub version: u64,
    /// The decision.
    pub decision: Decision,
    /// Per pending pod `(namespace, name)`.
    pub pods: BTreeMap<(String, String), Planned>,
    /// How long the solve took.
    pub took: Duration,
}

/// The view as imported.
pub struct View {
    /// Version, increased by every change.
    pub version: u64,
    /// The objects (kept to add pods the calls bring).
    pub objects: Objects,
    /// The import of `objects`.
    pub imported: Arc<Imported>,
    /// Pending pods by `(namespace, name)`, with their uid.
    pub pending: BTreeMap<(String, String), Option<String>>,
}

impl View {
    fn new(version: u64, objects: Objects, imported: Arc<Imported>) -> View {
        let mut pending = BTreeMap::new();
        for tasks in imported.pending.values() {
            for p in tasks.values().flatten() {
                pending.insert((p.namespace.clone(), p.name.clone()), p.uid.clone());
            }
        }
        View { version, objects, imported, pending }
    }
}

struct Inner {
    view: Option<View>,
    plan: Option<Arc<Plan>>,
    planning: Option<CancelHandle>,
    stopped: bool,
}

/// The cluster view, its plan, and the planner.
pub struct Cluster {
    inner: Mutex<Inner>,
    plan_time_limit: Duration,
    metrics: Arc<Metrics>,
    /// Version of the newest finished plan.
    done: watch::Sender<u64>,
}

impl Cluster {
    pub(crate) fn new(plan_time_limit: Duration, metrics: Arc<Metrics>) -> Cluster {
        Cluster {
            inner: Mutex::new(Inner { view: None, plan: None, planning: None, stopped: false }),
            plan_time_limit,
            metrics,
            done: watch::channel(0).0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the view with `objects` and starts planning it. Returns the import.
    pub fn replace(self: &Arc<Self>, objects: Objects) -> Result<Arc<Imported>, InputError> {
        let imported = Arc::new(import(&objects)?);
        let mut inner = self.lock();
        let version = inner.view.as_ref().map_or(0, |v| v.version) + 1;
        inner.view = Some(View::new(version, objects, imported.clone()));
        self.replan(&mut inner);
        Ok(imported)
    }

    /// Adds a pod the view does not know (from an extender call) and replans. Returns
    /// false when there is no view to add it to or it cannot be imported.
    pub fn add_pod(self: &Arc<Self>, pod: Pod) -> bool {
        let mut inner = self.lock();
        let Some(view) = inner.view.as_ref() else { return false };
        let mut objects = view.objects.clone();
        let key = (pod.metadata.namespace.clone().unwrap_or_else(|| "default".into()), pod.metadata.name.clone());
        objects.pods.retain(|p| (p.obj.metadata.namespace.clone().unwrap_or_else(|| "default".into()), p.obj.metadata.name.clone()) != key);
        objects.pods.push(At { path: "extender pod".into(), obj: pod });
        let Ok(imported) = import(&objects) else { return false };
        let version = view.version + 1;
        inner.view = Some(View::new(version, objects, Arc::new(imported)));
        self.replan(&mut inner);
        true
    }

    fn replan(self: &Arc<Self>, inner: &mut Inner) {
        if inner.stopped {
            return;
        }
        if let Some(c) = inner.planning.take() {
            c.cancel();
            self.metrics.plan("superseded");
        }
        let Some(view) = inner.view.as_ref() else { return };
        let (version, imported) = (view.version, view.imported.clone());
        let cancel = CancelHandle::new();
        inner.planning = Some(cancel.clone());
        let me = self.clone();
        let limit = self.plan_time_limit;
        tokio::task::spawn_blocking(move || {
            let t = Instant::now();
            let Ok(inst) = Instance::from_doc(&imported.instance) else { return };
            let decision = crate::solve(&inst, &Options { time_limit: Some(limit), cancel: cancel.clone(), ..Options::default() });
            if cancel.is_cancelled() {
                return; // a newer view, or shutdown: this plan is not wanted
            }
            let plan = Arc::new(Plan { version, pods: assign(&imported, &decision), decision, took: t.elapsed() });
            let mut inner = me.lock();
            if inner.view.as_ref().map(|v| v.version) == Some(version) {
                inner.plan = Some(plan);
                inner.planning = None;
                drop(inner);
                me.metrics.plan("done");
                me.done.send_replace(version);
            }
        });
    }

    /// The current view's version and import, if any.
    pub fn view(&self) -> Option<(u64, Arc<Imported>)> {
        self.lock().view.as_ref().map(|v| (v.version, v.imported.clone()))
    }

    /// What the view knows of a pod: `Some(Some(uid))` / `Some(None)` pending (with or
    /// without uid), `None` not pending there; and whether it is bound there.
    pub fn lookup(&self, key: &(String, String)) -> (Option<Option<String>>, bool) {
        let inner = self.lock();
        let Some(v) = inner.view.as_ref() else { return (None, false) };
        let bound = v.imported.bound.contains_key(&format!("{}/{}", key.0, key.1));
        (v.pending.get(key).cloned(), bound)
    }

    /// The newest plan, whatever view it was made on.
    pub fn plan(&self) -> Option<Arc<Plan>> {
        self.lock().plan.clone()
    }

    /// Waits up to `wait` for a plan of the current view.
    pub async fn current_plan(&self, wait: Duration) -> Option<Arc<Plan>> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut rx = self.done.subscribe();
        loop {
            {
                let inner = self.lock();
                let version = inner.view.as_ref()?.version;
                if let Some(p) = inner.plan.as_ref().filter(|p| p.version == version) {
                    return Some(p.clone());
                }
            }
            if tokio::time::timeout_at(deadline, rx.changed()).await.is_err() {
                return None;
            }
        }
    }

    /// Stops planning (shutdown).
    pub fn stop(&self) {
        let mut inner = self.lock();
        inner.stopped = true;
        if let Some(c) = inner.planning.take() {
            c.cancel();
        }
    }
}

/// Each pending pod's place in `decision`: the k-th placed entry of a task is the k-th
/// pending pod of that task in the import.
pub fn assign(imported: &Imported, decision: &Decision) -> BTreeMap<(String, String), Planned> {
    let node_of: BTreeMap<&str, &str> = imported.instance.pods.iter().map(|p| (p.name.as_str(), p.node.as_str())).collect();
    let mut victims: BTreeMap<&str, Vec<PodRef>> = BTreeMap::new();
    for e in &decision.evictions {
        if let (Some(n), Some(p)) = (node_of.get(e.pod.as_str()), imported.bound.get(&e.pod)) {
            victims.entry(n).or_default().push(p.clone());
        }
    }
    let mut out = BTreeMap::new();
    let unplaced: BTreeMap<&str, (Option<ReasonCode>, String)> =
        decision.unplaced.iter().map(|u| (u.pod_group.as_str(), (u.reason_code, u.reason.clone()))).collect();
    for (group, tasks) in &imported.pending {
        let placement = decision.placements.iter().find(|p| &p.pod_group == group);
        for (task, pods) in tasks {
            let nodes: Vec<&str> =
                placement.map(|p| p.pods.iter().filter(|x| &x.task == task).map(|x| x.node.as_str()).collect()).unwrap_or_default();
            for (k, pod) in pods.iter().enumerate() {
                let planned = match (nodes.get(k), placement) {
                    (Some(n), _) => Planned::Node { node: n.to_string(), victims: victims.get(n).cloned().unwrap_or_default() },
                    (None, Some(_)) => Planned::Unplaced { code: None, reason: "an elastic member the plan leaves out".into() },
                    (None, None) => {
                        let (code, reason) = unplaced.get(group.as_str()).cloned().unwrap_or((None, "not placed".into()));
                        Planned::Unplaced { code, reason }
                    }
                };
                out.insert((pod.namespace.clone(), pod.name.clone()), planned);
            }
        }
    }
    out
}
