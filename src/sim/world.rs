//! The simulated world: nodes, pods, applications with their core and shim state, timers,
//! releases in flight, and the event log. The gang lifecycle follows
//! `shared/spec/yunikorn-gang-lifecycle.md` (sections named at each rule); the cycle step
//! (replacement, placement, decisions) is in [`super::cycle`].

use super::scenario::{Event, Ms, PodSpec, Scenario, Submit, TaskGroup};
use super::state::{AppEvent, AppState, ShimState, Termination};
use super::{PlaceholderMode, SimOptions};
use crate::wire::{NodeDoc, PodDoc};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

pub(super) type PodId = usize;
pub(super) type AppIdx = usize;

/// YuniKorn's default placeholder timeout (`defaultPlaceholderTimeout`, §2).
pub(super) const DEFAULT_PLACEHOLDER_TIMEOUT: Ms = 15 * 60_000;
/// `completingTimeout` (§4).
pub(super) const COMPLETING_TIMEOUT: Ms = 30_000;
/// `terminatedTimeout` (§1).
pub(super) const TERMINATED_TIMEOUT: Ms = 3 * 24 * 3_600_000;

/// Where a pod is bound.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Place {
    pub node: String,
    pub devices: BTreeMap<String, Vec<i64>>,
    pub since: Ms,
}

/// A pod's life as the simulator sees it.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Phase {
    /// Created; the shim holds it (application reserving, resuming, or not accepted yet).
    Held,
    /// An ask in the core, not allocated.
    Pending,
    /// Allocated by the core as the replacement of placeholder `ph`, on `node` (the
    /// first-fit fallback) or, `None`, on the placeholder's node; bound once the
    /// placeholder's release is confirmed.
    Swapping { ph: PodId, node: Option<Place> },
    /// Running on a node.
    Bound(Place),
    /// Finished, deleted, failed or timed out.
    Gone,
}

pub(super) struct Pod {
    pub name: String,
    pub app: Option<AppIdx>,
    pub spec: PodSpec,
    /// Created at (creation order breaks ties by id).
    pub created: Ms,
    pub phase: Phase,
    /// The core has released it (the shim deletes it; the confirmation is in flight).
    pub released: Option<Termination>,
    /// Generation of its completion timer.
    pub finish_gen: u64,
    /// A pod of the initial instance (or one dropped at recovery): its document.
    pub background: Option<PodDoc>,
}

/// `PlaceholderData` of one task group (§2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct PhData {
    pub tg: String,
    pub count: i64,
    pub replaced: i64,
    pub timed_out: i64,
}

/// The core's application object.
pub(super) struct Core {
    pub state: AppState,
    /// `creationTime` tag: creation of the application's first pod.
    pub creation: Ms,
    /// The placeholder timeout as adjusted at core creation (§2).
    pub exec_timeout: Ms,
    pub ph_data: Vec<PhData>,
    /// Live timers by id.
    pub ph_timer: Option<u64>,
    pub state_timer: Option<u64>,
}

pub(super) struct App {
    pub id: String,
    pub attempt: u32,
    pub queue: Option<String>,
    pub priority: i64,
    pub tgs: Vec<TaskGroup>,
    pub timeout_secs: i64,
    pub hard: bool,
    pub submitted: Ms,
    pub shim: ShimState,
    /// The shim dropped the application (core Completed) or forgot it (restart).
    pub dropped: bool,
    pub core: Option<Core>,
    pub pods: Vec<PodId>,
    next_ph: usize,
    // What the summary reports.
    pub start: Option<Ms>,
    pub finish: Option<Ms>,
    pub ended: Option<(Ms, AppState)>,
    pub created_ph: i64,
    pub replaced: i64,
    pub timed_out: i64,
    pub timer_fired: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Timer {
    Placeholder(AppIdx, u64),
    State(AppIdx, u64, AppState, AppEvent),
    Finish(PodId, u64),
}

/// One decision of a cycle, for the summary.
#[derive(Clone, Debug, Default)]
pub(super) struct CycleStat {
    pub at: Ms,
    pub decisions: u32,
    pub placed: u32,
    pub pending: u32,
    pub solve_micros: u64,
    pub used: Vec<i64>,
    pub reserved: Vec<i64>,
    pub cap: Vec<i64>,
}

pub(super) struct World<'s> {
    pub sc: &'s Scenario,
    pub opts: &'s SimOptions,
    pub now: Ms,
    pub nodes: Vec<NodeDoc>,
    pub pods: Vec<Pod>,
    pub by_name: BTreeMap<String, PodId>,
    pub apps: Vec<App>,
    pub current: BTreeMap<String, AppIdx>,
    timers: BinaryHeap<std::cmp::Reverse<(Ms, u64)>>,
    timer_kinds: BTreeMap<u64, Timer>,
    seq: u64,
    /// Releases sent to the shim, confirmed at the first cycle after they were sent.
    pub in_flight: Vec<(PodId, Termination, Ms)>,
    pub log: Vec<Value>,
    /// Something changed since the last cycle (a new cycle may decide differently).
    pub dirty: bool,
    pub changed: bool,
    pub last_cycle: Option<Ms>,
    pub cycles: Vec<CycleStat>,
    // Usage accounting (per resource of the scenario) and its time integrals.
    pub used: Vec<i64>,
    pub reserved: Vec<i64>,
    pub cap: Vec<i64>,
    last_t: Ms,
    pub acc_used: Vec<i128>,
    pub acc_reserved: Vec<i128>,
    pub acc_cap: Vec<i128>,
    /// The integrals at the last change of usage (the horizon without `until`).
    pub acc_at_activity: (Ms, Vec<i128>, Vec<i128>, Vec<i128>),
    pub decisions_checked: u64,
    /// Decisions that failed [`crate::check()`] (not applied).
    pub check_failures: u64,
}

fn secs(ms: Ms) -> Value {
    if ms % 1000 == 0 {
        json!(ms / 1000)
    } else {
        json!(ms as f64 / 1000.0)
    }
}

impl<'s> World<'s> {
    pub fn new(sc: &'s Scenario, opts: &'s SimOptions) -> World<'s> {
        let nres = sc.resources.len();
        let mut w = World {
            sc,
            opts,
            now: 0,
            nodes: sc.instance.nodes.clone(),
            pods: Vec::new(),
            by_name: BTreeMap::new(),
            apps: Vec::new(),
            current: BTreeMap::new(),
            timers: BinaryHeap::new(),
            timer_kinds: BTreeMap::new(),
            seq: 0,
            in_flight: Vec::new(),
            log: Vec::new(),
            dirty: false,
            changed: false,
            last_cycle: None,
            cycles: Vec::new(),
            used: vec![0; nres],
            reserved: vec![0; nres],
            cap: vec![0; nres],
            last_t: 0,
            acc_used: vec![0; nres],
            acc_reserved: vec![0; nres],
            acc_cap: vec![0; nres],
            acc_at_activity: (0, vec![0; nres], vec![0; nres], vec![0; nres]),
            decisions_checked: 0,
            check_failures: 0,
        };
        for n in sc.instance.nodes.clone() {
            w.add_capacity(&n, 1);
        }
        for d in &sc.instance.pods {
            let req = w.requests_of(&d.requests);
            let id = w.pods.len();
            w.pods.push(Pod {
                name: d.name.clone(),
                app: None,
                spec: PodSpec {
                    name: d.name.clone(),
                    task_group: None,
                    req,
                    node_selector: Default::default(),
                    tolerations: Vec::new(),
                    node_affinity: None,
                    duration: None,
                    placeholder: d.placeholder,
                },
                created: 0,
                phase: Phase::Bound(Place { node: d.node.clone(), devices: d.device_ids.clone(), since: 0 }),
                released: None,
                finish_gen: 0,
                background: Some(d.clone()),
            });
            w.by_name.insert(d.name.clone(), id);
            w.on_bound(id);
        }
        w
    }

    fn requests_of(&self, m: &crate::wire::ResourcesDoc) -> Vec<i64> {
        let mut v = vec![0; self.sc.resources.len()];
        for (k, q) in m {
            if let Some(r) = self.sc.resources.iter().position(|x| x == k) {
                v[r] = crate::wire::quantity::parse(&q.text(), self.sc.scales[r]).unwrap_or(0);
            }
        }
        v
    }

    fn add_capacity(&mut self, n: &NodeDoc, sign: i64) {
        let v = self.requests_of(&n.allocatable);
        for (c, x) in self.cap.iter_mut().zip(v) {
            *c += sign * x;
        }
    }

    // ---------------------------------------------------------------------------------
    // Time, log, accounting
    // ---------------------------------------------------------------------------------

    /// Moves the clock to `t`, integrating usage over the elapsed time.
    pub fn advance(&mut self, t: Ms) {
        let dt = (t - self.last_t) as i128;
        if dt > 0 {
            for r in 0..self.cap.len() {
                self.acc_used[r] += self.used[r] as i128 * dt;
                self.acc_reserved[r] += self.reserved[r] as i128 * dt;
                self.acc_cap[r] += self.cap[r] as i128 * dt;
            }
            self.last_t = t;
        }
        self.now = t;
    }

    fn activity(&mut self) {
        self.acc_at_activity = (self.now, self.acc_used.clone(), self.acc_reserved.clone(), self.acc_cap.clone());
        self.touch();
    }

    pub fn touch(&mut self) {
        self.dirty = true;
        self.changed = true;
    }

    /// Appends a log line: `at`, `app` (and `attempt` when above 1), `kind`, then `fields`.
    pub fn emit(&mut self, app: Option<AppIdx>, kind: &str, fields: Vec<(&str, Value)>) {
        let mut m = Map::new();
        m.insert("at".into(), secs(self.now));
        if let Some(a) = app {
            m.insert("app".into(), json!(self.apps[a].id));
            if self.apps[a].attempt > 1 {
                m.insert("attempt".into(), json!(self.apps[a].attempt));
            }
        }
        m.insert("kind".into(), json!(kind));
        for (k, v) in fields {
            m.insert(k.into(), v);
        }
        self.log.push(Value::Object(m));
    }

    pub(super) fn on_bound(&mut self, p: PodId) {
        let ph = self.is_ph(p);
        for (r, &q) in self.pods[p].spec.req.iter().enumerate() {
            if ph {
                self.reserved[r] += q;
            } else {
                self.used[r] += q;
            }
        }
        self.activity();
    }

    fn on_unbound(&mut self, p: PodId) {
        let ph = self.is_ph(p);
        for (r, &q) in self.pods[p].spec.req.iter().enumerate() {
            if ph {
                self.reserved[r] -= q;
            } else {
                self.used[r] -= q;
            }
        }
        self.activity();
    }

    fn at_timer(&mut self, delay: Ms, t: Timer) -> u64 {
        self.seq += 1;
        let id = self.seq;
        self.timers.push(std::cmp::Reverse((self.now + delay, id)));
        self.timer_kinds.insert(id, t);
        id
    }

    // ---------------------------------------------------------------------------------
    // Pods and applications
    // ---------------------------------------------------------------------------------

    /// A placeholder as the core sees it: the flag and a task group (the flag is ignored
    /// without one, §6).
    pub fn is_ph(&self, p: PodId) -> bool {
        self.pods[p].spec.placeholder && self.pods[p].spec.task_group.is_some()
    }

    pub fn group_name(&self, a: AppIdx) -> String {
        let app = &self.apps[a];
        if app.attempt > 1 {
            format!("{}#{}", app.id, app.attempt)
        } else {
            app.id.clone()
        }
    }

    fn state(&self, a: AppIdx) -> Option<AppState> {
        self.apps[a].core.as_ref().map(|c| c.state)
    }

    fn live_pods(&self, a: AppIdx) -> Vec<PodId> {
        self.apps[a].pods.clone()
    }

    /// `allocatedPlaceholder` is zero.
    fn ph_alloc_zero(&self, a: AppIdx) -> bool {
        !self.apps[a].pods.iter().any(|&p| self.is_ph(p) && matches!(self.pods[p].phase, Phase::Bound(_)))
    }

    /// `allocatedPlaceholder` equals `placeholderAsk` (resources and pod count).
    fn ph_alloc_complete(&self, a: AppIdx) -> bool {
        let app = &self.apps[a];
        let n = self.sc.resources.len();
        let mut ask = vec![0i64; n + 1];
        for g in &app.tgs {
            for r in 0..n {
                ask[r] += g.min_member * g.req[r];
            }
            ask[n] += g.min_member;
        }
        let mut have = vec![0i64; n + 1];
        for &p in &app.pods {
            if self.is_ph(p) && matches!(self.pods[p].phase, Phase::Bound(_)) {
                for r in 0..n {
                    have[r] += self.pods[p].spec.req[r];
                }
                have[n] += 1;
            }
        }
        !app.tgs.is_empty() && ask == have
    }

    /// No pending ask in the core.
    fn pending_zero(&self, a: AppIdx) -> bool {
        !self.apps[a].pods.iter().any(|&p| self.pods[p].phase == Phase::Pending)
    }

    /// `allocatedResource` (real allocations) is zero.
    fn real_alloc_zero(&self, a: AppIdx) -> bool {
        !self.apps[a].pods.iter().any(|&p| !self.is_ph(p) && matches!(self.pods[p].phase, Phase::Bound(_)))
    }

    /// `canReplace`: the real ask's task group still has placeholders not replaced nor
    /// timed out (§3).
    pub fn can_replace(&self, p: PodId) -> bool {
        let (Some(a), Some(tg)) = (self.pods[p].app, &self.pods[p].spec.task_group) else { return false };
        let Some(core) = &self.apps[a].core else { return false };
        core.ph_data.iter().any(|d| &d.tg == tg && d.count > d.replaced + d.timed_out)
    }

    fn ph_data(&mut self, a: AppIdx, tg: &str) -> &mut PhData {
        let core = self.apps[a].core.as_mut().expect("core application");
        if let Some(i) = core.ph_data.iter().position(|d| d.tg == tg) {
            return &mut core.ph_data[i];
        }
        core.ph_data.push(PhData { tg: tg.to_string(), ..Default::default() });
        core.ph_data.last_mut().expect("just pushed")
    }

    fn counters(&self, a: AppIdx, tg: &str) -> Value {
        let d = self.apps[a].core.as_ref().and_then(|c| c.ph_data.iter().find(|d| d.tg == tg)).cloned().unwrap_or_default();
        json!({"count": d.count, "replaced": d.replaced, "timedOut": d.timed_out})
    }

    fn pod_fields(&self, p: PodId) -> Vec<(&'static str, Value)> {
        let pod = &self.pods[p];
        let mut f = vec![("pod", json!(pod.name))];
        if pod.spec.placeholder {
            f.push(("placeholder", json!(true)));
        }
        if let Some(tg) = &pod.spec.task_group {
            f.push(("taskGroup", json!(tg)));
        }
        f
    }

    fn node_of(&self, p: PodId) -> Option<String> {
        match &self.pods[p].phase {
            Phase::Bound(pl) => Some(pl.node.clone()),
            Phase::Swapping { node: Some(pl), .. } => Some(pl.node.clone()),
            _ => None,
        }
    }

    fn new_pod(&mut self, a: AppIdx, spec: PodSpec) -> PodId {
        let id = self.pods.len();
        self.by_name.insert(spec.name.clone(), id);
        self.pods.push(Pod {
            name: spec.name.clone(),
            app: Some(a),
            spec,
            created: self.now,
            phase: Phase::Held,
            released: None,
            finish_gen: 0,
            background: None,
        });
        self.apps[a].pods.push(id);
        self.touch();
        id
    }

    // ---------------------------------------------------------------------------------
    // The core's state machine (§1)
    // ---------------------------------------------------------------------------------

    /// Fires `event`; returns whether the state changed.
    pub fn fire(&mut self, a: AppIdx, event: AppEvent, info: Option<&str>) -> bool {
        let Some(core) = self.apps[a].core.as_mut() else { return false };
        let from = core.state;
        let Some(to) = from.on(event) else { return false };
        if to == from {
            return false;
        }
        // Every leave_state clears the state timer.
        core.state_timer = None;
        core.state = to;
        let mut f = vec![("from", json!(from.to_string())), ("to", json!(to.to_string())), ("event", json!(event.name()))];
        if let Some(m) = info {
            f.push(("message", json!(m)));
        }
        self.emit(Some(a), "state", f);
        self.touch();
        self.enter(a, to, info.unwrap_or(event.name()));
        true
    }

    fn set_state_timer(&mut self, a: AppIdx, delay: Ms, expect: AppState, event: AppEvent) {
        let id = self.at_timer(delay, Timer::State(a, 0, expect, event));
        self.timer_kinds.insert(id, Timer::State(a, id, expect, event));
        if let Some(c) = self.apps[a].core.as_mut() {
            c.state_timer = Some(id);
        }
    }

    fn enter(&mut self, a: AppIdx, s: AppState, message: &str) {
        match s {
            AppState::Completing => self.set_state_timer(a, COMPLETING_TIMEOUT, AppState::Completing, AppEvent::Complete),
            AppState::Completed | AppState::Failed | AppState::Rejected => {
                if s == AppState::Completed {
                    self.clear_ph_timer(a);
                }
                if s != AppState::Rejected {
                    self.cleanup_asks(a);
                }
                self.set_state_timer(a, TERMINATED_TIMEOUT, s, AppEvent::Expire);
                self.apps[a].ended = Some((self.now, s));
            }
            _ => {}
        }
        // The shim's side (scheduler_callback.go UpdateApplication, §7).
        match s {
            AppState::Resuming if self.apps[a].shim == ShimState::Reserving => self.shim_set(a, ShimState::Resuming),
            AppState::Failing | AppState::Failed => self.shim_fail(a, message),
            AppState::Completed => {
                self.apps[a].dropped = true;
            }
            _ => {}
        }
    }

    /// `cleanupAsks` on entering Completed or Failed: pending asks go.
    fn cleanup_asks(&mut self, a: AppIdx) {
        for p in self.live_pods(a) {
            if self.pods[p].phase == Phase::Pending {
                self.pods[p].phase = Phase::Gone;
                let f = self.pod_fields(p);
                self.emit(Some(a), "askRemoved", f);
            }
        }
    }

    fn init_ph_timer(&mut self, a: AppIdx) {
        let Some(core) = self.apps[a].core.as_ref() else { return };
        if core.ph_timer.is_some() || core.state != AppState::Accepted || core.exec_timeout <= 0 {
            return;
        }
        let delay = core.exec_timeout;
        let id = self.at_timer(delay, Timer::Placeholder(a, 0));
        self.timer_kinds.insert(id, Timer::Placeholder(a, id));
        self.apps[a].core.as_mut().expect("core").ph_timer = Some(id);
        let fires = secs(self.now + delay);
        self.emit(Some(a), "placeholderTimer", vec![("action", json!("started")), ("fires", fires)]);
    }

    fn clear_ph_timer(&mut self, a: AppIdx) {
        if let Some(c) = self.apps[a].core.as_mut() {
            if c.ph_timer.take().is_some() {
                self.emit(Some(a), "placeholderTimer", vec![("action", json!("cleared"))]);
            }
        }
    }

    // ---------------------------------------------------------------------------------
    // Core operations on asks and allocations (§1-§4)
    // ---------------------------------------------------------------------------------

    /// `AddAllocationAsk`: the shim sends pod `p` to the core.
    pub fn add_ask(&mut self, a: AppIdx, p: PodId) {
        self.pods[p].phase = Phase::Pending;
        let f = self.pod_fields(p);
        self.emit(Some(a), "ask", f);
        self.touch();
        if matches!(self.state(a), Some(AppState::New | AppState::Completing)) {
            self.fire(a, AppEvent::Run, None);
        }
        if self.is_ph(p) {
            let tg = self.pods[p].spec.task_group.clone().expect("placeholder task group");
            self.ph_data(a, &tg).count += 1;
        }
    }

    /// A new allocation from a cycle's decision (`addAllocationInternal`).
    pub fn allocate(&mut self, a: AppIdx, p: PodId, place: Place) {
        let ph = self.is_ph(p);
        let was_zero = self.ph_alloc_zero(a);
        let node = place.node.clone();
        self.pods[p].phase = Phase::Bound(place);
        self.on_bound(p);
        let mut f = self.pod_fields(p);
        f.insert(1, ("node", json!(node)));
        self.emit(Some(a), "allocation", f);
        self.after_allocation(a, p, ph, was_zero);
        self.start_pod(p);
    }

    fn after_allocation(&mut self, a: AppIdx, p: PodId, ph: bool, was_zero: bool) {
        if ph {
            if was_zero {
                self.init_ph_timer(a);
            }
            if self.ph_alloc_complete(a) {
                self.fire(a, AppEvent::Run, None);
            }
            self.shim_check_reserved(a);
        } else {
            self.fire(a, AppEvent::Run, None);
        }
        let _ = p;
    }

    /// A pod starts running: its completion timer, the application's start.
    fn start_pod(&mut self, p: PodId) {
        if let Some(a) = self.pods[p].app {
            if !self.is_ph(p) && self.apps[a].start.is_none() {
                self.apps[a].start = Some(self.now);
            }
        }
        if let Some(d) = self.pods[p].spec.duration {
            self.pods[p].finish_gen += 1;
            let g = self.pods[p].finish_gen;
            self.at_timer(d, Timer::Finish(p, g));
        }
    }

    /// The core releases allocation `p` to the shim.
    pub fn release(&mut self, a: AppIdx, p: PodId, term: Termination, message: &str) {
        self.pods[p].released = Some(term);
        self.in_flight.push((p, term, self.now));
        let f = self.release_fields(p, self.node_of(p), term, message);
        self.emit(Some(a), "release", f);
        self.touch();
        // ReleaseAppAllocation moves a shim application in Reserving to Running (§7).
        if term != Termination::StoppedByRm && self.apps[a].shim == ShimState::Reserving {
            self.shim_set(a, ShimState::Running);
            self.shim_send_reals(a);
        }
    }

    /// The fields of a `release` line: the pod, its node, the termination type, the message.
    fn release_fields(&self, p: PodId, node: Option<String>, term: Termination, message: &str) -> Vec<(&'static str, Value)> {
        let mut f = self.pod_fields(p);
        if let Some(n) = node {
            f.insert(1, ("node", json!(n)));
        }
        f.push(("terminationType", json!(term.name())));
        f.push(("message", json!(message)));
        f
    }

    /// The shim's confirmation of a release reaches the core (`partition.removeAllocation`).
    pub fn confirm(&mut self, p: PodId, term: Termination) {
        let Some(a) = self.pods[p].app else { return };
        if !matches!(self.pods[p].phase, Phase::Bound(_)) {
            return;
        }
        if term == Termination::PlaceholderReplaced {
            self.replace_allocation(a, p);
        } else {
            self.remove_allocation(a, p, term);
        }
    }

    /// `removeAllocationInternal`.
    pub fn remove_allocation(&mut self, a: AppIdx, p: PodId, term: Termination) {
        let ph = self.is_ph(p);
        let node = self.node_of(p);
        self.pods[p].phase = Phase::Gone;
        self.on_unbound(p);
        let mut f = self.pod_fields(p);
        if let Some(n) = node {
            f.insert(1, ("node", json!(n)));
        }
        f.push(("terminationType", json!(term.name())));
        if ph {
            let tg = self.pods[p].spec.task_group.clone().expect("placeholder task group");
            let d = self.ph_data(a, &tg);
            if term == Termination::PlaceholderReplaced {
                d.replaced += 1;
            } else {
                d.timed_out += 1;
            }
            if term == Termination::PlaceholderReplaced {
                self.apps[a].replaced += 1;
            } else {
                self.apps[a].timed_out += 1;
            }
            f.push(("counters", self.counters(a, &tg)));
        }
        self.emit(Some(a), "released", f);
        if ph {
            if self.ph_alloc_zero(a) {
                self.clear_ph_timer(a);
                match self.state(a) {
                    Some(AppState::Resuming) => {
                        self.fire(a, AppEvent::Run, None);
                    }
                    Some(AppState::Failing) => {
                        self.fire(a, AppEvent::Fail, None);
                    }
                    Some(AppState::Completing) => {
                        self.fire(a, AppEvent::Complete, None);
                    }
                    Some(AppState::Accepted | AppState::Running) if self.pending_zero(a) && self.real_alloc_zero(a) => {
                        self.fire(a, AppEvent::Complete, None);
                    }
                    _ => {}
                }
            }
            self.shim_check_resumed(a);
        } else {
            self.note_finish(a);
            if self.pending_zero(a) && self.real_alloc_zero(a) && matches!(self.state(a), Some(AppState::Accepted | AppState::Running)) {
                self.fire(a, AppEvent::Complete, None);
            }
        }
    }

    fn note_finish(&mut self, a: AppIdx) {
        let busy = self.apps[a].pods.iter().any(|&q| {
            !self.is_ph(q) && matches!(self.pods[q].phase, Phase::Bound(_) | Phase::Pending | Phase::Held | Phase::Swapping { .. })
        });
        if !busy {
            self.apps[a].finish = Some(self.now);
        }
    }

    /// `ReplaceAllocation`: the placeholder goes, its replacement is bound (§3).
    fn replace_allocation(&mut self, a: AppIdx, ph: PodId) {
        let real = self.apps[a].pods.iter().copied().find(|&q| matches!(&self.pods[q].phase, Phase::Swapping { ph: x, .. } if *x == ph));
        let Some(r) = real else {
            // The replacement went away meanwhile: the placeholder is just removed.
            self.remove_allocation(a, ph, Termination::PlaceholderReplaced);
            return;
        };
        let Phase::Bound(ph_place) = self.pods[ph].phase.clone() else { return };
        let Phase::Swapping { node, .. } = self.pods[r].phase.clone() else { return };
        let tg = self.pods[ph].spec.task_group.clone().expect("placeholder task group");
        self.pods[ph].phase = Phase::Gone;
        self.on_unbound(ph);
        let d = self.ph_data(a, &tg);
        d.replaced += 1;
        self.apps[a].replaced += 1;
        let mut f = self.pod_fields(ph);
        f.insert(1, ("node", json!(ph_place.node)));
        f.push(("terminationType", json!(Termination::PlaceholderReplaced.name())));
        f.push(("counters", self.counters(a, &tg)));
        self.emit(Some(a), "released", f);
        if self.ph_alloc_zero(a) {
            self.clear_ph_timer(a);
        }
        let first = self.real_alloc_zero(a) && self.state(a) != Some(AppState::Completing);
        let place = match node {
            Some(mut pl) => {
                pl.since = self.now;
                pl
            }
            None => Place { node: ph_place.node.clone(), devices: self.devices_within(r, &ph_place.devices), since: self.now },
        };
        if matches!(self.pods[r].phase, Phase::Swapping { node: Some(_), .. }) {
            // Already counted on its node since the swap.
            self.pods[r].phase = Phase::Bound(place.clone());
            self.activity();
        } else {
            self.pods[r].phase = Phase::Bound(place.clone());
            self.on_bound(r);
        }
        let mut f = self.pod_fields(r);
        f.insert(1, ("node", json!(place.node)));
        f.push(("replaced", json!(self.pods[ph].name)));
        self.emit(Some(a), "allocation", f);
        // The first swap does not fire runApplication (§1).
        if !first {
            self.fire(a, AppEvent::Run, None);
        }
        self.start_pod(r);
        self.shim_check_resumed(a);
    }

    /// The devices a replacement takes among its placeholder's: a share on the first,
    /// whole devices from the first on.
    fn devices_within(&self, r: PodId, ph: &BTreeMap<String, Vec<i64>>) -> BTreeMap<String, Vec<i64>> {
        let mut out = BTreeMap::new();
        for (res, ids) in ph {
            let Some(i) = self.sc.resources.iter().position(|x| x == res) else { continue };
            let q = self.pods[r].spec.req[i];
            if q <= 0 || ids.is_empty() {
                continue;
            }
            let k = if q < 1000 { 1 } else { (q / 1000) as usize };
            out.insert(res.clone(), ids.iter().copied().take(k).collect());
        }
        out
    }

    /// `removeAsksInternal` for one ask (its pod is deleted before it ran).
    fn remove_ask(&mut self, a: AppIdx, p: PodId) {
        self.pods[p].phase = Phase::Gone;
        let f = self.pod_fields(p);
        self.emit(Some(a), "askRemoved", f);
        self.touch();
        self.note_finish(a);
        let st = self.state(a);
        if self.pending_zero(a)
            && self.real_alloc_zero(a)
            && self.ph_alloc_zero(a)
            && !matches!(st, Some(AppState::Failing | AppState::Completing))
        {
            self.fire(a, AppEvent::Complete, None);
        }
    }

    // ---------------------------------------------------------------------------------
    // The shim (§7)
    // ---------------------------------------------------------------------------------

    fn shim_set(&mut self, a: AppIdx, to: ShimState) {
        let from = self.apps[a].shim;
        if from == to {
            return;
        }
        self.apps[a].shim = to;
        self.emit(Some(a), "shimState", vec![("from", json!(from.to_string())), ("to", json!(to.to_string()))]);
        self.touch();
    }

    /// The held real pods go to the core, in creation order.
    fn shim_send_reals(&mut self, a: AppIdx) {
        for p in self.live_pods(a) {
            if self.pods[p].phase == Phase::Held && !self.is_ph(p) {
                self.add_ask(a, p);
            }
        }
    }

    /// Reserving -> Running once every task group has `minMember` bound placeholders.
    fn shim_check_reserved(&mut self, a: AppIdx) {
        if self.apps[a].shim != ShimState::Reserving {
            return;
        }
        let done = self.apps[a].tgs.iter().all(|g| {
            let bound = self.apps[a]
                .pods
                .iter()
                .filter(|&&p| {
                    self.is_ph(p)
                        && self.pods[p].spec.task_group.as_deref() == Some(&g.name)
                        && matches!(self.pods[p].phase, Phase::Bound(_))
                })
                .count() as i64;
            bound >= g.min_member
        });
        if done {
            self.shim_set(a, ShimState::Running);
            self.shim_send_reals(a);
        }
    }

    /// Resuming -> Running once every placeholder pod is gone.
    fn shim_check_resumed(&mut self, a: AppIdx) {
        if self.apps[a].shim != ShimState::Resuming {
            return;
        }
        let left = self.apps[a].pods.iter().any(|&p| self.pods[p].spec.placeholder && self.pods[p].phase != Phase::Gone);
        if !left {
            self.shim_set(a, ShimState::Running);
            self.shim_send_reals(a);
        }
    }

    /// `FailApplication`: real pods not running yet fail.
    fn shim_fail(&mut self, a: AppIdx, message: &str) {
        if matches!(self.apps[a].shim, ShimState::Failed | ShimState::Rejected) {
            return;
        }
        self.shim_set(a, ShimState::Failed);
        for p in self.live_pods(a) {
            if self.is_ph(p) {
                continue;
            }
            match self.pods[p].phase {
                Phase::Held => {
                    self.pods[p].phase = Phase::Gone;
                    self.pod_failed(a, p, message);
                }
                Phase::Pending => {
                    self.pod_failed(a, p, message);
                    self.pods[p].phase = Phase::Gone;
                    let f = self.pod_fields(p);
                    self.emit(Some(a), "askRemoved", f);
                }
                _ => {}
            }
        }
    }

    fn pod_failed(&mut self, a: AppIdx, p: PodId, reason: &str) {
        let mut f = self.pod_fields(p);
        f.push(("reason", json!(reason)));
        self.emit(Some(a), "podFailed", f);
        self.touch();
    }

    // ---------------------------------------------------------------------------------
    // Admission and submission (§5, §4 app-ID reuse)
    // ---------------------------------------------------------------------------------

    /// `partition.AddApplication`'s gang checks: a FIFO leaf, and `placeholderAsk` within
    /// the smallest `max` along the queue path.
    fn admission(&self, a: AppIdx) -> Result<(), String> {
        let app = &self.apps[a];
        if app.tgs.is_empty() {
            return Ok(());
        }
        let Some(qs) = &self.sc.base.queues else { return Ok(()) };
        let path = app.queue.clone().unwrap_or_else(|| "root.default".into());
        let Some(leaf) = qs.tree.get(&path) else { return Ok(()) };
        if qs.tree.rejects_gangs(leaf) {
            return Err(format!("queue {path} cannot run application {} with task group request: unsupported sort type", app.id));
        }
        let inst = &self.sc.base;
        for q in qs.tree.ancestors(leaf) {
            for &(r, m) in &qs.max[q] {
                let name = &inst.resources[r];
                let ask: i64 = if name == crate::model::PODS {
                    app.tgs.iter().map(|g| g.min_member).sum()
                } else {
                    match self.sc.resources.iter().position(|x| x == name) {
                        Some(i) => app.tgs.iter().map(|g| g.min_member * g.req[i]).sum(),
                        None => 0,
                    }
                };
                if ask > m {
                    let scale = inst.scale(r);
                    return Err(format!(
                        "task group request of application {} ({name} {}) is larger than max queue allocation of {} ({name} {})",
                        app.id,
                        crate::wire::quantity::format(ask, scale),
                        qs.tree.queues[q].path,
                        crate::wire::quantity::format(m, scale)
                    ));
                }
            }
        }
        Ok(())
    }

    fn new_core(&self, a: AppIdx, creation: Ms) -> Core {
        let app = &self.apps[a];
        let timeout = if app.timeout_secs > 0 { app.timeout_secs * 1000 } else { DEFAULT_PLACEHOLDER_TIMEOUT };
        Core {
            state: AppState::New,
            creation,
            exec_timeout: (creation + timeout - self.now).max(1),
            ph_data: Vec::new(),
            ph_timer: None,
            state_timer: None,
        }
    }

    /// Whether the latest attempt of `id` still takes new pods (not terminated, not dropped).
    fn live_attempt(&self, id: &str) -> Option<AppIdx> {
        let &a = self.current.get(id)?;
        let app = &self.apps[a];
        let terminated = app.core.as_ref().is_some_and(|c| c.state.is_terminated());
        (!terminated && !app.dropped).then_some(a)
    }

    fn submit(&mut self, s: &Submit) {
        if let Some(a) = self.live_attempt(&s.app) {
            // The shim keeps one application per id: the pods join it (§4).
            let names: Vec<Value> = s.pods.iter().map(|p| json!(p.name)).collect();
            self.emit(Some(a), "submitted", vec![("joined", json!(true)), ("pods", Value::Array(names))]);
            for spec in &s.pods {
                self.create_pod(a, spec.clone());
            }
            return;
        }
        let a = self.new_app(s.app.clone(), s.queue.clone(), s.priority, s.task_groups.clone(), s.timeout_secs, s.hard);
        let mut f = vec![];
        if let Some(q) = &self.apps[a].queue {
            f.push(("queue", json!(q)));
        }
        if !s.task_groups.is_empty() {
            let tgs: Vec<Value> = s.task_groups.iter().map(|g| json!({"name": g.name, "minMember": g.min_member})).collect();
            f.push(("taskGroups", Value::Array(tgs)));
            f.push(("placeholderTimeout", secs(self.new_core(a, self.now).exec_timeout)));
            f.push(("gangSchedulingStyle", json!(if s.hard { "Hard" } else { "Soft" })));
        }
        f.push(("pods", Value::Array(s.pods.iter().map(|p| json!(p.name)).collect())));
        self.emit(Some(a), "submitted", f);
        let pods: Vec<PodId> = s.pods.iter().map(|spec| self.new_pod(a, spec.clone())).collect();
        self.start_app(a, pods);
    }

    fn new_app(&mut self, id: String, queue: Option<String>, priority: i64, tgs: Vec<TaskGroup>, timeout_secs: i64, hard: bool) -> AppIdx {
        let attempt = self.current.get(&id).map_or(1, |&a| self.apps[a].attempt + 1);
        let queue = queue.or_else(|| self.sc.base.queues.as_ref().map(|_| "root.default".to_string()));
        self.apps.push(App {
            id: id.clone(),
            attempt,
            queue,
            priority,
            tgs,
            timeout_secs,
            hard,
            submitted: self.now,
            shim: ShimState::New,
            dropped: false,
            core: None,
            pods: Vec::new(),
            next_ph: 0,
            start: None,
            finish: None,
            ended: None,
            created_ph: 0,
            replaced: 0,
            timed_out: 0,
            timer_fired: 0,
        });
        let a = self.apps.len() - 1;
        self.current.insert(id, a);
        self.touch();
        a
    }

    /// AddApplication, then the shim's first steps: placeholders (Reserving) or the pods.
    fn start_app(&mut self, a: AppIdx, pods: Vec<PodId>) {
        let core = self.new_core(a, self.now);
        self.apps[a].core = Some(core);
        if let Err(msg) = self.admission(a) {
            self.fire(a, AppEvent::Reject, Some(&msg));
            self.shim_set(a, ShimState::Rejected);
            for p in pods {
                self.pods[p].phase = Phase::Gone;
                self.pod_failed(a, p, "ApplicationRejected");
            }
            return;
        }
        self.shim_set(a, ShimState::Accepted);
        if self.apps[a].tgs.is_empty() {
            self.shim_set(a, ShimState::Running);
            self.shim_send_reals(a);
        } else {
            self.shim_set(a, ShimState::Reserving);
            let tgs = self.apps[a].tgs.clone();
            for g in &tgs {
                for _ in 0..g.min_member {
                    self.create_placeholder(a, g);
                }
            }
        }
    }

    /// The shim's placeholder pod for one member of `g` (`placeholder.go newPlaceholder`),
    /// sent to the core at once.
    fn create_placeholder(&mut self, a: AppIdx, g: &TaskGroup) {
        let app = &self.apps[a];
        let id: String = app.id.chars().take(28).collect();
        let tg: String = g.name.chars().take(20).collect();
        let suffix = if app.attempt > 1 { format!("{}-", app.attempt) } else { String::new() };
        let name = format!("tg-{id}-{tg}-{suffix}{}", app.next_ph);
        self.apps[a].next_ph += 1;
        self.apps[a].created_ph += 1;
        let spec = PodSpec {
            name,
            task_group: Some(g.name.clone()),
            req: g.req.clone(),
            node_selector: g.node_selector.clone(),
            tolerations: g.tolerations.clone(),
            node_affinity: g.node_affinity.clone(),
            duration: None,
            placeholder: true,
        };
        let p = self.new_pod(a, spec);
        self.add_ask(a, p);
    }

    /// A pod of application `a` is created: sent to the core if the shim is running it.
    fn create_pod(&mut self, a: AppIdx, spec: PodSpec) {
        let p = self.new_pod(a, spec);
        match self.apps[a].shim {
            ShimState::Running => self.add_ask(a, p),
            ShimState::Reserving if self.is_ph(p) => self.add_ask(a, p),
            _ => {}
        }
    }

    fn create_pod_event(&mut self, id: &str, spec: &PodSpec) {
        let Some(&prev) = self.current.get(id) else { return };
        let a = match self.live_attempt(id) {
            Some(a) => a,
            None if matches!(self.apps[prev].shim, ShimState::Failed | ShimState::Rejected) && !self.apps[prev].dropped => {
                // The shim still knows the application: the pod fails with it.
                let p = self.new_pod(prev, spec.clone());
                self.pods[p].phase = Phase::Gone;
                let reason = if self.apps[prev].shim == ShimState::Rejected { "ApplicationRejected" } else { "ResourceReservationTimeout" };
                self.emit(Some(prev), "podCreated", vec![("pod", json!(spec.name))]);
                self.pod_failed(prev, p, reason);
                return;
            }
            None => {
                // The shim dropped the application: the pod creates a new one, without
                // task groups (they came with the old submission's originator).
                let (q, pr) = (self.apps[prev].queue.clone(), self.apps[prev].priority);
                let a = self.new_app(id.to_string(), q, pr, Vec::new(), 0, false);
                self.emit(Some(a), "submitted", vec![("implicit", json!(true)), ("pods", json!([spec.name]))]);
                let p = self.new_pod(a, spec.clone());
                self.start_app(a, vec![p]);
                return;
            }
        };
        let mut f = vec![("pod", json!(spec.name))];
        if let Some(tg) = &spec.task_group {
            f.push(("taskGroup", json!(tg)));
        }
        self.emit(Some(a), "podCreated", f);
        self.create_pod(a, spec.clone());
    }

    // ---------------------------------------------------------------------------------
    // Pods ending, nodes, evictions
    // ---------------------------------------------------------------------------------

    /// A pod completes or is deleted (the shim sends STOPPED_BY_RM for an allocation).
    pub fn pod_done(&mut self, p: PodId) {
        let app = self.pods[p].app;
        match (self.pods[p].phase.clone(), app) {
            (Phase::Gone, _) => {}
            (Phase::Held, Some(a)) => {
                self.pods[p].phase = Phase::Gone;
                let f = self.pod_fields(p);
                self.emit(Some(a), "podDeleted", f);
                self.note_finish(a);
                self.touch();
            }
            (Phase::Pending, Some(a)) => self.remove_ask(a, p),
            (Phase::Swapping { node, .. }, Some(a)) => {
                // Allocated but never bound: the swap is abandoned.
                if node.is_some() {
                    self.on_unbound(p);
                }
                self.pods[p].phase = Phase::Gone;
                let f = self.pod_fields(p);
                self.emit(Some(a), "podDeleted", f);
                self.note_finish(a);
            }
            (Phase::Bound(_), Some(a)) => {
                self.in_flight.retain(|&(q, _, _)| q != p);
                self.remove_allocation(a, p, Termination::StoppedByRm);
            }
            (Phase::Bound(pl), None) => {
                self.pods[p].phase = Phase::Gone;
                self.on_unbound(p);
                self.emit(
                    None,
                    "released",
                    vec![
                        ("pod", json!(self.pods[p].name)),
                        ("node", json!(pl.node)),
                        ("terminationType", json!(Termination::StoppedByRm.name())),
                    ],
                );
            }
            _ => {}
        }
    }

    /// A pod of an application lost to an eviction or a node removal: its controller
    /// creates it again.
    fn recreate(&mut self, p: PodId) {
        let Some(a) = self.pods[p].app else { return };
        if self.is_ph(p) || self.pods[p].spec.placeholder {
            return;
        }
        self.pods[p].phase = Phase::Held;
        self.pods[p].released = None;
        self.pods[p].created = self.now;
        self.emit(Some(a), "podCreated", vec![("pod", json!(self.pods[p].name)), ("recreated", json!(true))]);
        if self.apps[a].shim == ShimState::Running && self.live_attempt(&self.apps[a].id.clone()) == Some(a) {
            self.add_ask(a, p);
        }
    }

    /// An eviction of a cycle's decision: released PREEMPTED_BY_SCHEDULER and removed at
    /// once (the decision already uses the room).
    pub fn evict(&mut self, p: PodId, preemptor: &str) {
        let msg = format!("preempted by {preemptor}");
        match self.pods[p].app {
            None => {
                let node = self.node_of(p).unwrap_or_default();
                self.pods[p].phase = Phase::Gone;
                self.on_unbound(p);
                self.emit(
                    None,
                    "released",
                    vec![
                        ("pod", json!(self.pods[p].name)),
                        ("node", json!(node)),
                        ("terminationType", json!(Termination::PreemptedByScheduler.name())),
                        ("message", json!(msg)),
                    ],
                );
            }
            Some(a) => {
                self.release(a, p, Termination::PreemptedByScheduler, &msg);
                self.in_flight.retain(|&(q, _, _)| q != p);
                self.remove_allocation(a, p, Termination::PreemptedByScheduler);
                self.recreate(p);
            }
        }
    }

    /// A node leaves with its pods (partition.go `removeNode`, `removeNodeAllocations`;
    /// context.go `updateNode`, case DECOMISSION).
    fn remove_node(&mut self, name: &str) {
        self.emit(None, "nodeRemoved", vec![("node", json!(name))]);
        let on: Vec<PodId> = (0..self.pods.len()).filter(|&p| self.node_of(p).as_deref() == Some(name)).collect();
        // Every application allocation removed here is then sent to the shim in one batch
        // (context.go updateNode, DECOMISSION: STOPPED_BY_RM "Node <id> Removed"); the shim
        // acts on no release of that type, so nothing follows from it.
        let mut to_shim = Vec::new();
        // Real pods come back after that (their controllers' doing, seen later).
        let mut recreated = Vec::new();
        for p in on {
            if let (Phase::Bound(_), Some(a)) = (&self.pods[p].phase, self.pods[p].app) {
                to_shim
                    .push((a, self.release_fields(p, Some(name.to_string()), Termination::StoppedByRm, &format!("Node {name} Removed"))));
            }
            match (self.pods[p].phase.clone(), self.pods[p].app) {
                (Phase::Bound(_), None) => {
                    self.pods[p].phase = Phase::Gone;
                    self.on_unbound(p);
                    self.emit(
                        None,
                        "released",
                        vec![
                            ("pod", json!(self.pods[p].name)),
                            ("node", json!(name)),
                            ("terminationType", json!(Termination::Unknown.name())),
                        ],
                    );
                }
                (Phase::Swapping { .. }, Some(a)) => {
                    // Its fallback node went: the real ask is allocated again later.
                    self.on_unbound(p);
                    self.pods[p].phase = Phase::Pending;
                    let f = self.pod_fields(p);
                    self.emit(Some(a), "ask", f);
                }
                (Phase::Bound(_), Some(a)) => {
                    let swap =
                        self.apps[a].pods.iter().copied().find(|&q| matches!(&self.pods[q].phase, Phase::Swapping { ph, .. } if *ph == p));
                    self.in_flight.retain(|&(q, _, _)| q != p);
                    match swap {
                        // Real on another node: the replacement is confirmed at once.
                        Some(r) if matches!(self.pods[r].phase, Phase::Swapping { node: Some(_), .. }) => self.replace_allocation(a, p),
                        Some(r) => {
                            // Same node: the link is cleared, the real ask rescheduled.
                            self.pods[r].phase = Phase::Pending;
                            self.remove_allocation(a, p, Termination::Unknown);
                        }
                        None => {
                            self.remove_allocation(a, p, Termination::Unknown);
                            recreated.push(p);
                        }
                    }
                }
                _ => {}
            }
        }
        for (a, f) in to_shim {
            self.emit(Some(a), "release", f);
        }
        for p in recreated {
            self.recreate(p);
        }
        if let Some(i) = self.nodes.iter().position(|n| n.name == name) {
            let n = self.nodes.remove(i);
            self.add_capacity(&n, -1);
        }
        self.activity();
    }

    // ---------------------------------------------------------------------------------
    // Timers
    // ---------------------------------------------------------------------------------

    /// `timeoutPlaceholderProcessing` (§2).
    fn placeholder_timeout(&mut self, a: AppIdx) {
        self.emit(Some(a), "placeholderTimer", vec![("action", json!("fired"))]);
        self.apps[a].timer_fired += 1;
        if let Some(c) = self.apps[a].core.as_mut() {
            c.ph_timer = None;
        }
        let st = self.state(a);
        let bound_ph: Vec<PodId> =
            self.live_pods(a).into_iter().filter(|&p| self.is_ph(p) && matches!(self.pods[p].phase, Phase::Bound(_))).collect();
        if matches!(st, Some(AppState::Running | AppState::Completing)) && !bound_ph.is_empty() {
            // Case 1: only the leftover placeholders go; no state change.
            for p in bound_ph {
                if self.pods[p].released.is_none() {
                    self.release(a, p, Termination::Timeout, "releasing allocated placeholders on placeholder timeout");
                }
            }
            return;
        }
        // Case 2: the state event first, then every allocation, then the pending asks.
        let event = if self.apps[a].hard { AppEvent::Fail } else { AppEvent::Resume };
        self.fire(a, event, Some("ResourceReservationTimeout"));
        for p in self.live_pods(a) {
            if matches!(self.pods[p].phase, Phase::Bound(_)) && self.pods[p].released.is_none() {
                self.release(a, p, Termination::Timeout, "releasing allocated placeholders on placeholder timeout");
            }
        }
        for p in self.live_pods(a) {
            if self.pods[p].phase == Phase::Pending {
                self.pods[p].phase = Phase::Gone;
                if self.is_ph(p) {
                    let tg = self.pods[p].spec.task_group.clone().expect("placeholder task group");
                    self.ph_data(a, &tg).timed_out += 1;
                    self.apps[a].timed_out += 1;
                }
                let mut f = self.pod_fields(p);
                f.push(("terminationType", json!(Termination::Timeout.name())));
                f.push(("message", json!("releasing pending placeholders on placeholder timeout")));
                if let Some(tg) = self.pods[p].spec.task_group.clone() {
                    f.push(("counters", self.counters(a, &tg)));
                }
                self.emit(Some(a), "askTimedOut", f);
            }
        }
        self.touch();
        self.shim_check_resumed(a);
    }

    /// `timeoutStateTimer` (§4): Completing cleans up leftover placeholders first.
    fn state_timeout(&mut self, a: AppIdx, expect: AppState, event: AppEvent) {
        if self.state(a) != Some(expect) {
            return;
        }
        if expect == AppState::Completing && !self.ph_alloc_zero(a) {
            for p in self.live_pods(a) {
                if self.is_ph(p) && matches!(self.pods[p].phase, Phase::Bound(_)) && self.pods[p].released.is_none() {
                    self.release(a, p, Termination::Timeout, "releasing placeholders on app complete");
                }
            }
            if let Some(c) = self.apps[a].core.as_mut() {
                c.state_timer = None;
            }
            return;
        }
        self.fire(a, event, None);
    }

    fn fire_timer(&mut self, id: u64) {
        let Some(t) = self.timer_kinds.remove(&id) else { return };
        match t {
            Timer::Placeholder(a, tid) => {
                if self.apps[a].core.as_ref().is_some_and(|c| c.ph_timer == Some(tid)) {
                    self.placeholder_timeout(a);
                }
            }
            Timer::State(a, tid, expect, event) => {
                if self.apps[a].core.as_ref().is_some_and(|c| c.state_timer == Some(tid)) {
                    self.state_timeout(a, expect, event);
                }
            }
            Timer::Finish(p, g) => {
                if self.pods[p].finish_gen == g && matches!(self.pods[p].phase, Phase::Bound(_)) {
                    self.pod_done(p);
                }
            }
        }
    }

    pub fn next_timer(&self) -> Option<Ms> {
        self.timers.peek().map(|r| r.0 .0)
    }

    /// Fires every timer due at `t` (new ones due at `t` included).
    pub fn fire_timers_at(&mut self, t: Ms) {
        while let Some(&std::cmp::Reverse((at, id))) = self.timers.peek() {
            if at > t {
                break;
            }
            self.timers.pop();
            self.fire_timer(id);
        }
    }

    // ---------------------------------------------------------------------------------
    // Scenario events
    // ---------------------------------------------------------------------------------

    pub fn apply_event(&mut self, e: &Event) {
        self.touch();
        match e {
            Event::Submit(s) => self.submit(s),
            Event::CreatePod { app, pod } => self.create_pod_event(app, pod),
            Event::CompletePod(n) | Event::DeletePod(n) => {
                if let Some(&p) = self.by_name.get(n) {
                    self.pod_done(p);
                }
            }
            Event::AddNode(n) => {
                self.emit(None, "nodeAdded", vec![("node", json!(n.name))]);
                self.nodes.push(n.clone());
                self.add_capacity(n, 1);
                self.activity();
            }
            Event::RemoveNode(n) => self.remove_node(n),
            Event::Restart => self.restart(),
        }
    }

    // ---------------------------------------------------------------------------------
    // Recovery (§6)
    // ---------------------------------------------------------------------------------

    fn restart(&mut self) {
        self.emit(None, "restart", vec![]);
        // Releases in flight: the shim had already deleted those pods.
        for (p, term, _) in std::mem::take(&mut self.in_flight) {
            if term == Termination::PlaceholderReplaced {
                if let Some(a) = self.pods[p].app {
                    for q in self.live_pods(a) {
                        if let Phase::Swapping { ph, node } = self.pods[q].phase.clone() {
                            if ph == p {
                                if node.is_some() {
                                    self.on_unbound(q);
                                }
                                self.pods[q].phase = Phase::Held;
                            }
                        }
                    }
                }
            }
            if matches!(self.pods[p].phase, Phase::Bound(_)) {
                self.pods[p].phase = Phase::Gone;
                self.on_unbound(p);
            }
        }
        // The new core knows nothing: asks are sent again by the shim, timers are gone.
        for p in 0..self.pods.len() {
            if self.pods[p].phase == Phase::Pending {
                self.pods[p].phase = Phase::Held;
            }
            self.pods[p].released = None;
        }
        let mut live_apps = BTreeSet::new();
        for a in 0..self.apps.len() {
            if let Some(c) = self.apps[a].core.as_mut() {
                c.ph_timer = None;
                c.state_timer = None;
            }
            let live = self.apps[a].pods.iter().any(|&p| matches!(self.pods[p].phase, Phase::Held | Phase::Bound(_)));
            if live && !self.apps[a].dropped {
                live_apps.insert(a);
            } else if self.apps[a].core.as_ref().is_some_and(|c| !c.state.is_terminated()) {
                self.apps[a].dropped = true;
            }
        }
        // Pods registered in creation order; an application is created with its first pod.
        let mut order: Vec<PodId> = (0..self.pods.len())
            .filter(|&p| self.pods[p].app.is_some_and(|a| live_apps.contains(&a)) && self.pods[p].phase != Phase::Gone)
            .collect();
        order.sort_by_key(|&p| (self.pods[p].created, p));
        let mut rebuilt: Vec<AppIdx> = Vec::new();
        for p in order {
            let a = self.pods[p].app.expect("application pod");
            if !rebuilt.contains(&a) {
                rebuilt.push(a);
                let creation = self.apps[a]
                    .pods
                    .iter()
                    .filter(|&&q| self.pods[q].phase != Phase::Gone)
                    .map(|&q| self.pods[q].created)
                    .min()
                    .unwrap_or(self.now);
                let core = self.new_core(a, creation);
                self.apps[a].core = Some(core);
                self.apps[a].shim = ShimState::New;
                self.emit(
                    Some(a),
                    "recovering",
                    vec![
                        ("creationTime", secs(creation)),
                        ("placeholderTimeout", secs(self.apps[a].core.as_ref().expect("core").exec_timeout)),
                    ],
                );
                self.shim_set(a, ShimState::Accepted);
            }
            let Phase::Bound(pl) = self.pods[p].phase.clone() else { continue };
            if self.pods[p].spec.placeholder && self.pods[p].spec.task_group.is_none() {
                // NewAllocationFromSI drops a placeholder without task group: the pod stays
                // on its node, unknown to the core.
                self.emit(
                    Some(a),
                    "recoveryDropped",
                    vec![("pod", json!(self.pods[p].name)), ("node", json!(pl.node)), ("reason", json!("placeholder without task group"))],
                );
                let doc = PodDoc {
                    name: self.pods[p].name.clone(),
                    node: pl.node.clone(),
                    requests: self.sc.resources_doc(&self.pods[p].spec.req),
                    device_ids: pl.devices.clone(),
                    placeholder: true,
                    ..Default::default()
                };
                self.apps[a].pods.retain(|&q| q != p);
                self.pods[p].app = None;
                self.pods[p].background = Some(doc);
                continue;
            }
            let mut f = self.pod_fields(p);
            f.insert(1, ("node", json!(pl.node)));
            self.emit(Some(a), "recovered", f);
            let ph = self.is_ph(p);
            // RecoverAllocationAsk, then AddAllocation.
            if ph {
                let tg = self.pods[p].spec.task_group.clone().expect("placeholder task group");
                self.ph_data(a, &tg).count += 1;
            }
            if self.state(a) == Some(AppState::New) {
                self.fire(a, AppEvent::Run, None);
            }
            let was_zero = {
                // This pod is already bound: allocatedPlaceholder before it counts the others.
                !self.apps[a]
                    .pods
                    .iter()
                    .any(|&q| q != p && self.is_ph(q) && matches!(self.pods[q].phase, Phase::Bound(_)) && self.recovered_before(q, p))
            };
            self.after_allocation_recovered(a, p, ph, was_zero);
        }
        // The shim's state machine for each application (§6).
        for a in rebuilt {
            if self.apps[a].tgs.is_empty() {
                self.shim_set(a, ShimState::Running);
                self.shim_send_reals(a);
                continue;
            }
            let creation = self.apps[a].core.as_ref().expect("core").creation;
            let phs: Vec<PodId> =
                self.apps[a].pods.iter().copied().filter(|&q| self.is_ph(q) && matches!(self.pods[q].phase, Phase::Bound(_))).collect();
            let t = self.apps[a].timeout_secs;
            if phs.is_empty() && t > 0 && self.now - creation >= t * 1000 {
                // YUNIKORN-3332: too late to reserve.
                if self.apps[a].hard {
                    self.shim_fail(a, "ResourceReservationTimeout");
                } else {
                    self.shim_set(a, ShimState::Running);
                    self.shim_send_reals(a);
                }
                continue;
            }
            self.shim_set(a, ShimState::Reserving);
            let tgs = self.apps[a].tgs.clone();
            for g in &tgs {
                let have = phs.iter().filter(|&&q| self.pods[q].spec.task_group.as_deref() == Some(&g.name)).count() as i64;
                for _ in have..g.min_member {
                    self.create_placeholder(a, g);
                }
            }
            self.shim_check_reserved(a);
        }
    }

    fn recovered_before(&self, q: PodId, p: PodId) -> bool {
        (self.pods[q].created, q) < (self.pods[p].created, p)
    }

    /// `AddAllocation` of a recovered allocation: as a new one, but only the placeholders
    /// recovered so far count.
    fn after_allocation_recovered(&mut self, a: AppIdx, p: PodId, ph: bool, was_zero: bool) {
        if ph {
            if was_zero {
                self.init_ph_timer(a);
            }
            // Running once all placeholders recovered so far make the whole ask.
            let n = self.sc.resources.len();
            let app = &self.apps[a];
            let mut ask = vec![0i64; n + 1];
            for g in &app.tgs {
                for r in 0..n {
                    ask[r] += g.min_member * g.req[r];
                }
                ask[n] += g.min_member;
            }
            let mut have = vec![0i64; n + 1];
            for &q in &app.pods {
                if (q == p || self.recovered_before(q, p)) && self.is_ph(q) && matches!(self.pods[q].phase, Phase::Bound(_)) {
                    for r in 0..n {
                        have[r] += self.pods[q].spec.req[r];
                    }
                    have[n] += 1;
                }
            }
            if ask == have {
                self.fire(a, AppEvent::Run, None);
            }
        } else {
            self.fire(a, AppEvent::Run, None);
            if self.apps[a].start.is_none() {
                self.apps[a].start = Some(self.now);
            }
        }
    }

    pub fn has_asks(&self) -> bool {
        self.pods.iter().any(|p| p.phase == Phase::Pending)
    }

    pub fn mode(&self) -> PlaceholderMode {
        self.opts.placeholders
    }
}
