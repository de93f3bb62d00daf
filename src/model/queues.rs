//! YuniKorn queues: the queue configuration (an instance's `queues` list or a whole
//! YuniKorn `queues.yaml`), its validation, and the effective priority order of
//! applications (pod groups) of `shared/spec/semantics.md`, "Effective priority with
//! queues".
//!
//! [`crate::Instance::from_doc`] turns the tree into the engine's [`crate::model::Queues`]
//! and ranks pending groups by [`effective_keys`] for objective term 1; `tessera queues`
//! shows the tree, the computed priorities and the scheduling order.
//!
//! Priorities follow YuniKorn's documentation (seed document on priorities):
//! - an application's priority is the highest priority of its pending requests (a pod
//!   group has one priority);
//! - a queue's priority is the highest priority among its pending applications (leaf) or
//!   child queues (parent), plus its `priority.offset`; a queue with
//!   `priority.policy: fence` shows only its offset to the outside;
//! - the *effective key* of an application ([`effective_key`]) walks from its leaf queue to
//!   `root`: at an unfenced queue the offset is added to the running value v; at a fenced
//!   queue v becomes an inner component of the key and the walk continues with the queue's
//!   offset. Keys compare lexicographically, outermost component first. On the worked
//!   example of the priority document they give exactly its 11-step order (see the tests).

use crate::wire::parse_duration;
use crate::wire::quantity::{self, Scale};
use crate::wire::{self, InputError, InstanceDoc, QueueDoc, QueuesYamlDoc, ResourcesDoc};
use indexmap::IndexMap;
use std::collections::HashMap;
use std::fmt;

// ---------------------------------------------------------------------------------------
// Validated tree
// ---------------------------------------------------------------------------------------

/// The queue of a pod group that names none, as YuniKorn's Kubernetes shim assigns it.
pub const DEFAULT_QUEUE: &str = "root.default";

/// Dense queue id: the index in [`QueueTree::queues`]; `root` is 0.
pub type QueueId = usize;

/// `application.sort.policy` of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortPolicy {
    /// First in, first out by creation time.
    Fifo,
    /// Fair sharing by usage (gangs are not admitted).
    Fair,
    /// `stateaware`: deprecated in YuniKorn and ordered as FIFO.
    StateAware,
}

/// `preemption.policy` of a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PreemptionPolicy {
    /// No restriction beyond the preemption rules.
    Default,
    /// Its groups evict only inside the fenced subtree.
    Fence,
    /// Pods below it are never victims.
    Disabled,
}

impl fmt::Display for SortPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SortPolicy::Fifo => "fifo",
            SortPolicy::Fair => "fair",
            SortPolicy::StateAware => "stateaware",
        })
    }
}

impl fmt::Display for PreemptionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PreemptionPolicy::Default => "default",
            PreemptionPolicy::Fence => "fence",
            PreemptionPolicy::Disabled => "disabled",
        })
    }
}

/// One validated queue.
#[derive(Clone, Debug, PartialEq)]
pub struct Queue {
    /// Its own id.
    pub id: QueueId,
    /// Its name: the last component of its path.
    pub name: String,
    /// Full dotted path from `root`, e.g. `root.tenants.a`.
    pub path: String,
    /// Where the queue was written (`queues[0].queues[1]`), for messages; empty for an
    /// implicit root.
    pub source: String,
    /// Its parent queue; `None` for `root`.
    pub parent: Option<QueueId>,
    /// Its child queues, in file order.
    pub children: Vec<QueueId>,
    /// A parent queue (has children, or `parent: true`); otherwise a leaf.
    pub is_parent: bool,
    /// Depth below `root` (0 for `root`).
    pub depth: usize,
    /// `maxapplications`, when set.
    pub max_applications: Option<u64>,
    /// `application.sort.policy`, inherited from the parent when not set.
    pub sort_policy: SortPolicy,
    /// `application.sort.priority` (`enabled` = true), inherited from the parent when not set.
    pub sort_priority: bool,
    /// `priority.policy: fence` (not inherited).
    pub fenced: bool,
    /// `priority.offset` (not inherited; 0 when not set).
    pub offset: i64,
    /// `preemption.policy` as set on this queue (None = not set here).
    pub preemption_policy: Option<PreemptionPolicy>,
    /// `preemption.delay` as written (validated; no effect within one cycle).
    pub preemption_delay: Option<String>,
    /// Guaranteed and max resources in engine units (cpu and shared devices in milli,
    /// others in base units), names normalized (`vcore` -> `cpu`). A resource missing from
    /// `max` is unlimited.
    pub guaranteed: IndexMap<String, i64>,
    /// Max resources (same units and names as `guaranteed`).
    pub max: IndexMap<String, i64>,
    /// The properties as written, for display.
    pub properties: IndexMap<String, String>,
}

/// A validated queue tree of one partition.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueTree {
    /// Name of the partition.
    pub partition: String,
    /// Dense, parents before children (depth-first in file order); `queues[0]` is `root`.
    pub queues: Vec<Queue>,
    /// `sharedDevices` of the instance: resources held in milli-devices.
    pub shared_devices: Vec<String>,
    by_path: HashMap<String, QueueId>,
}

/// The resource name YuniKorn and Kubernetes spellings map to.
pub fn normalize_resource(name: &str) -> &str {
    match name {
        "vcore" => "cpu",
        other => other,
    }
}

fn scale_of(resource: &str, shared: &[String]) -> Scale {
    if resource == "cpu" || shared.iter().any(|s| s == resource) {
        Scale::Milli
    } else {
        Scale::Base
    }
}

fn valid_queue_name(name: &str) -> bool {
    // YuniKorn: ^[a-zA-Z0-9_:#/@-]{1,64}$ (a dot would break the dotted path).
    !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || "_:#/@-".contains(c))
}

const PROPERTIES: &[&str] = &[
    "application.sort.policy",
    "application.sort.priority",
    "priority.policy",
    "priority.offset",
    "preemption.policy",
    "preemption.delay",
];

/// Reads a whole YuniKorn `queues.yaml` (YAML or JSON) into the tree of its partition.
/// Exactly one partition is accepted: a Tessera cycle is the cycle of one partition.
pub fn parse_queues_yaml(text: &str) -> Result<QueueTree, InputError> {
    let doc: QueuesYamlDoc = wire::from_text(text)?;
    QueueTree::from_yaml_doc(&doc, &[])
}

impl QueueTree {
    /// The tree of a parsed `queues.yaml`; `shared` names the shared-device resources
    /// (held in milli-devices), if known.
    pub fn from_yaml_doc(doc: &QueuesYamlDoc, shared: &[String]) -> Result<QueueTree, InputError> {
        match doc.partitions.len() {
            0 => Err(InputError::new("partitions", "no partition")),
            1 => {
                let p = &doc.partitions[0];
                if p.name.trim().is_empty() {
                    return Err(InputError::new("partitions[0].name", "must not be empty"));
                }
                if p.queues.is_empty() {
                    return Err(InputError::new("partitions[0].queues", "no queues"));
                }
                QueueTree::build(&p.name, &p.queues, "partitions[0].queues", shared)
            }
            n => Err(InputError::new("partitions", format!("{n} partitions; a cycle is scheduled per partition, give exactly one"))),
        }
    }

    /// The tree of an instance's `queues` key (the `queues` list of one partition), with
    /// paths of errors starting at `queues`.
    pub fn from_instance(doc: &InstanceDoc) -> Result<Option<QueueTree>, InputError> {
        if doc.queues.is_empty() {
            return Ok(None);
        }
        QueueTree::build("default", &doc.queues, "queues", &doc.shared_devices).map(Some)
    }

    /// Validates a partition's top-level queue list. A single queue named `root` is the
    /// root; a list without `root` is wrapped in an implicit `root` (as YuniKorn does).
    pub fn build(partition: &str, list: &[QueueDoc], prefix: &str, shared: &[String]) -> Result<QueueTree, InputError> {
        let mut tree =
            QueueTree { partition: partition.to_string(), queues: Vec::new(), shared_devices: shared.to_vec(), by_path: HashMap::new() };
        if list.is_empty() {
            return Err(InputError::new(prefix, "no queues"));
        }
        if list.len() == 1 && list[0].name.eq_ignore_ascii_case("root") {
            let src = format!("{prefix}[0]");
            if list[0].name != "root" {
                return Err(InputError::new(format!("{src}.name"), format!("the root queue is named \"root\", not {:?}", list[0].name)));
            }
            tree.add(&list[0], src, None)?;
        } else {
            if let Some(i) = list.iter().position(|q| q.name.eq_ignore_ascii_case("root")) {
                return Err(InputError::new(
                    format!("{prefix}[{i}].name"),
                    "root must be the only top-level queue (put the others under it)",
                ));
            }
            let root = QueueDoc { name: "root".into(), parent: Some(true), ..Default::default() };
            let id = tree.add(&root, String::new(), None)?;
            for (i, q) in list.iter().enumerate() {
                tree.add_child(id, q, format!("{prefix}[{i}]"))?;
            }
        }
        let root = &tree.queues[0];
        if !root.is_parent {
            return Err(InputError::new(format!("{}.parent", root.source), "root must be a parent queue"));
        }
        if !root.max.is_empty() || !root.guaranteed.is_empty() {
            return Err(InputError::new(format!("{}.resources", root.source), "the root queue carries no resource limits"));
        }
        tree.check_limits()?;
        Ok(tree)
    }

    fn add_child(&mut self, parent: QueueId, doc: &QueueDoc, src: String) -> Result<QueueId, InputError> {
        let lower = doc.name.to_ascii_lowercase();
        if let Some(&dup) = self.queues[parent].children.iter().find(|&&c| self.queues[c].name.to_ascii_lowercase() == lower) {
            return Err(InputError::new(
                format!("{src}.name"),
                format!("duplicate queue name {:?} under {} (also {})", doc.name, self.queues[parent].path, self.queues[dup].source),
            ));
        }
        let id = self.add(doc, src, Some(parent))?;
        self.queues[parent].children.push(id);
        Ok(id)
    }

    fn add(&mut self, doc: &QueueDoc, src: String, parent: Option<QueueId>) -> Result<QueueId, InputError> {
        let at = |field: &str| if src.is_empty() { field.to_string() } else { format!("{src}.{field}") };
        if !valid_queue_name(&doc.name) {
            return Err(InputError::new(
                at("name"),
                format!("invalid queue name {:?} (1-64 characters of a-z A-Z 0-9 _ : # / @ -)", doc.name),
            ));
        }
        if parent.is_some() && doc.name.eq_ignore_ascii_case("root") {
            return Err(InputError::new(at("name"), "\"root\" is reserved for the top-level queue"));
        }
        if doc.parent == Some(false) && !doc.queues.is_empty() {
            return Err(InputError::new(at("parent"), "a queue with child queues cannot be a leaf (parent: false)"));
        }
        if doc.maxapplications == Some(0) {
            return Err(InputError::new(at("maxapplications"), "must be at least 1 (0 would block every application)"));
        }
        let (path, depth) = match parent {
            None => (doc.name.clone(), 0),
            Some(p) => (format!("{}.{}", self.queues[p].path, doc.name), self.queues[p].depth + 1),
        };
        let inherited_sort = parent.map(|p| (self.queues[p].sort_policy, self.queues[p].sort_priority));
        let (mut sort_policy, mut sort_priority) = inherited_sort.unwrap_or((SortPolicy::Fifo, true));
        let (mut fenced, mut offset, mut preemption_policy, mut preemption_delay) = (false, 0, None, None);
        let mut properties = IndexMap::new();
        for (k, v) in &doc.properties {
            let p = at(&format!("properties.{k}"));
            let text = v.text();
            let val = text.trim().to_ascii_lowercase();
            let bad = |allowed: &str| InputError::new(p.clone(), format!("invalid value {text:?} (expected {allowed})"));
            match k.as_str() {
                "application.sort.policy" => {
                    sort_policy = match val.as_str() {
                        "fifo" => SortPolicy::Fifo,
                        "fair" => SortPolicy::Fair,
                        "stateaware" => SortPolicy::StateAware,
                        _ => return Err(bad("fifo, fair or stateaware")),
                    }
                }
                "application.sort.priority" => {
                    sort_priority = match val.as_str() {
                        "enabled" => true,
                        "disabled" => false,
                        _ => return Err(bad("enabled or disabled")),
                    }
                }
                "priority.policy" => {
                    fenced = match val.as_str() {
                        "default" => false,
                        "fence" => true,
                        _ => return Err(bad("default or fence")),
                    }
                }
                "priority.offset" => {
                    let o: i64 = val.parse().map_err(|_| bad("an integer"))?;
                    if o < i32::MIN as i64 || o > i32::MAX as i64 {
                        return Err(InputError::new(p, format!("offset {o} is outside int32")));
                    }
                    offset = o;
                }
                "preemption.policy" => {
                    preemption_policy = Some(match val.as_str() {
                        "default" => PreemptionPolicy::Default,
                        "fence" => PreemptionPolicy::Fence,
                        "disabled" => PreemptionPolicy::Disabled,
                        _ => return Err(bad("default, fence or disabled")),
                    })
                }
                "preemption.delay" => {
                    parse_duration(&text).map_err(|e| InputError::new(p.clone(), e))?;
                    preemption_delay = Some(text.clone());
                }
                _ => return Err(InputError::new(p, format!("unknown queue property {k:?} (supported: {})", PROPERTIES.join(", ")))),
            }
            properties.insert(k.clone(), text);
        }
        let shared = self.shared_devices.clone();
        let read = |m: &ResourcesDoc, field: &str| -> Result<IndexMap<String, i64>, InputError> {
            let mut out = IndexMap::new();
            for (name, q) in m {
                let rp = at(&format!("resources.{field}.{name}"));
                let norm = normalize_resource(name);
                if norm.trim().is_empty() {
                    return Err(InputError::new(rp, "empty resource name"));
                }
                let v = quantity::parse(&q.text(), scale_of(norm, &shared))
                    .map_err(|e| InputError::new(rp.clone(), format!("{e} {:?}", q.text())))?;
                if out.insert(norm.to_string(), v).is_some() {
                    return Err(InputError::new(rp, format!("{name:?} names the same resource as another entry (vcore = cpu)")));
                }
            }
            Ok(out)
        };
        let (guaranteed, max) = match &doc.resources {
            Some(r) => (read(&r.guaranteed, "guaranteed")?, read(&r.max, "max")?),
            None => (IndexMap::new(), IndexMap::new()),
        };
        let id = self.queues.len();
        if self.by_path.insert(path.clone(), id).is_some() {
            return Err(InputError::new(at("name"), format!("duplicate queue {path}")));
        }
        self.queues.push(Queue {
            id,
            name: doc.name.clone(),
            path,
            source: src.clone(),
            parent,
            children: Vec::new(),
            // root is always a parent (`parent: false` on it is refused in `build`).
            is_parent: doc.parent == Some(true) || !doc.queues.is_empty() || (parent.is_none() && doc.parent.is_none()),
            depth,
            max_applications: doc.maxapplications,
            sort_policy,
            sort_priority,
            fenced,
            offset,
            preemption_policy,
            preemption_delay,
            guaranteed,
            max,
            properties,
        });
        for (i, c) in doc.queues.iter().enumerate() {
            self.add_child(id, c, at(&format!("queues[{i}]")))?;
        }
        Ok(id)
    }

    /// YuniKorn's configuration checks on limits (`checkQueueResource` and
    /// `checkQueueMaxApplications` in yunikorn-core `pkg/common/configs/configvalidator.go`):
    /// guaranteed not above max in a queue; a child's max not above the nearest ancestor's;
    /// the children's guaranteed (a child without one counts its own children's) summed
    /// not above the parent's guaranteed, where set, nor its effective max (the smallest on
    /// its path); a parent's maxapplications, where set, at least each child's, and set on
    /// every child.
    fn check_limits(&self) -> Result<(), InputError> {
        for q in &self.queues {
            let at = |field: &str| if q.source.is_empty() { field.to_string() } else { format!("{}.{field}", q.source) };
            for (r, &g) in &q.guaranteed {
                if let Some(&m) = q.max.get(r) {
                    if g > m {
                        return Err(InputError::new(
                            at(&format!("resources.guaranteed.{r}")),
                            format!("guaranteed {} exceeds max {} of the same queue", self.fmt_quantity(r, g), self.fmt_quantity(r, m)),
                        ));
                    }
                }
            }
            for (r, &m) in &q.max {
                if let Some((anc, am)) = self.ancestors(q.id).skip(1).find_map(|a| self.queues[a].max.get(r).map(|&v| (a, v))) {
                    if m > am {
                        return Err(InputError::new(
                            at(&format!("resources.max.{r}")),
                            format!(
                                "max {} exceeds max {} of {}",
                                self.fmt_quantity(r, m),
                                self.fmt_quantity(r, am),
                                self.queues[anc].path
                            ),
                        ));
                    }
                }
            }
            self.check_children_guaranteed(q, &at)?;
            if let Some(n) = q.max_applications {
                for &c in &q.children {
                    let child = &self.queues[c];
                    let cat = |field: &str| format!("{}.{field}", child.source);
                    match child.max_applications {
                        None => {
                            return Err(InputError::new(
                                cat("maxapplications"),
                                format!("must be set, as its parent {} sets maxapplications {n}", q.path),
                            ))
                        }
                        Some(m) if m > n => {
                            return Err(InputError::new(cat("maxapplications"), format!("{m} exceeds maxapplications {n} of {}", q.path)))
                        }
                        Some(_) => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// What a queue guarantees as its parent sees it: its own guaranteed per resource, or
    /// (none set) the sum over its children.
    fn effective_guaranteed(&self, q: QueueId) -> IndexMap<String, i64> {
        let queue = &self.queues[q];
        if !queue.guaranteed.is_empty() {
            return queue.guaranteed.clone();
        }
        let mut sum: IndexMap<String, i64> = IndexMap::new();
        for &c in &queue.children {
            for (r, v) in self.effective_guaranteed(c) {
                let e = sum.entry(r).or_insert(0);
                *e = e.saturating_add(v);
            }
        }
        sum
    }

    /// The children's guaranteed summed: within the parent's guaranteed (where it sets
    /// one for that resource) and within its effective max.
    fn check_children_guaranteed(&self, q: &Queue, at: &dyn Fn(&str) -> String) -> Result<(), InputError> {
        let mut sum: IndexMap<String, i64> = IndexMap::new();
        for &c in &q.children {
            for (r, v) in self.effective_guaranteed(c) {
                let e = sum.entry(r).or_insert(0);
                *e = e.saturating_add(v);
            }
        }
        for (r, &total) in &sum {
            if let Some(&g) = q.guaranteed.get(r) {
                if total > g {
                    return Err(InputError::new(
                        at(&format!("resources.guaranteed.{r}")),
                        format!(
                            "the children's guaranteed {} sum above this queue's {}",
                            self.fmt_quantity(r, total),
                            self.fmt_quantity(r, g)
                        ),
                    ));
                }
            }
            let max = self.ancestors(q.id).filter_map(|a| self.queues[a].max.get(r).map(|&m| (a, m))).min_by_key(|&(_, m)| m);
            if let Some((a, m)) = max {
                if total > m {
                    let field = if a == q.id { at(&format!("resources.max.{r}")) } else { at("queues") };
                    return Err(InputError::new(
                        field,
                        format!(
                            "the children's guaranteed {} sum above the max {} of {}",
                            self.fmt_quantity(r, total),
                            self.fmt_quantity(r, m),
                            self.queues[a].path
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// A resource value in Kubernetes notation.
    pub fn fmt_quantity(&self, resource: &str, v: i64) -> String {
        quantity::format(v, scale_of(resource, &self.shared_devices))
    }

    /// The `root` queue.
    pub fn root(&self) -> &Queue {
        &self.queues[0]
    }

    /// The queue at dotted `path`.
    pub fn get(&self, path: &str) -> Option<QueueId> {
        self.by_path.get(path).copied()
    }

    /// Whether `q` is a leaf queue (applications run only there).
    pub fn is_leaf(&self, q: QueueId) -> bool {
        !self.queues[q].is_parent
    }

    /// `q`, its parent, ..., `root`.
    pub fn ancestors(&self, q: QueueId) -> impl Iterator<Item = QueueId> + '_ {
        std::iter::successors(Some(q), move |&a| self.queues[a].parent)
    }

    /// Whether `q` is `anc` or below it.
    pub fn is_under(&self, q: QueueId, anc: QueueId) -> bool {
        self.ancestors(q).any(|a| a == anc)
    }

    /// The leaf queue a pod group names, with an error at `path` when it is missing or a
    /// parent queue.
    pub fn leaf(&self, queue: &str, path: &str) -> Result<QueueId, InputError> {
        let q = self.get(queue).ok_or_else(|| {
            let hint = if queue.starts_with("root.") || queue == "root" { "" } else { " (paths start at root, e.g. root.default)" };
            InputError::new(path, format!("unknown queue {queue:?}{hint}"))
        })?;
        if !self.is_leaf(q) {
            return Err(InputError::new(path, format!("{queue} is a parent queue; applications run in leaf queues")));
        }
        Ok(q)
    }

    /// Gangs are rejected in a leaf sorting `fair` (seed document on gang scheduling).
    pub fn rejects_gangs(&self, leaf: QueueId) -> bool {
        self.queues[leaf].sort_policy == SortPolicy::Fair
    }
}

// ---------------------------------------------------------------------------------------
// Applications and effective priority
// ---------------------------------------------------------------------------------------

/// An application (pod group) for ordering: its leaf queue, priority and creation time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct App {
    /// Group name.
    pub name: String,
    /// Its leaf queue.
    pub queue: QueueId,
    /// Raw priority.
    pub priority: i64,
    /// Creation time in seconds (`createdAt`).
    pub created_at: i64,
}

pub use crate::wire::decision::PriorityKey;

/// The effective key of priority `priority` in leaf `leaf`, before
/// `application.sort.priority` (see [`effective_keys`]).
pub fn effective_key(tree: &QueueTree, leaf: QueueId, priority: i64) -> PriorityKey {
    let mut v = priority;
    let mut inner = Vec::new();
    for q in tree.ancestors(leaf) {
        let queue = &tree.queues[q];
        if queue.fenced {
            inner.push(v);
            v = queue.offset;
        } else {
            v += queue.offset;
        }
    }
    inner.push(v);
    inner.reverse();
    PriorityKey(inner)
}

/// The effective keys of `apps` (all pending): [`effective_key`], then for every queue with
/// `application.sort.priority: disabled` (the topmost one on the path) all applications
/// below it share the highest key among them.
pub fn effective_keys(tree: &QueueTree, apps: &[App]) -> Vec<PriorityKey> {
    let mut keys: Vec<PriorityKey> = apps.iter().map(|a| effective_key(tree, a.queue, a.priority)).collect();
    let top_disabled = |leaf: QueueId| tree.ancestors(leaf).filter(|&q| !tree.queues[q].sort_priority).last();
    let mut best: HashMap<QueueId, PriorityKey> = HashMap::new();
    for (a, k) in apps.iter().zip(&keys) {
        if let Some(d) = top_disabled(a.queue) {
            let e = best.entry(d).or_insert_with(|| k.clone());
            if *k > *e {
                *e = k.clone();
            }
        }
    }
    for (a, k) in apps.iter().zip(keys.iter_mut()) {
        if let Some(d) = top_disabled(a.queue) {
            *k = best[&d].clone();
        }
    }
    keys
}

/// The scheduling order of `apps` (indices): effective key descending, then FIFO
/// (`created_at` ascending), then input order.
pub fn scheduling_order(tree: &QueueTree, apps: &[App]) -> Vec<usize> {
    let keys = effective_keys(tree, apps);
    let mut order: Vec<usize> = (0..apps.len()).collect();
    order.sort_by(|&a, &b| keys[b].cmp(&keys[a]).then(apps[a].created_at.cmp(&apps[b].created_at)).then(a.cmp(&b)));
    order
}

/// YuniKorn's dynamic queue priorities for display, per queue id: a leaf's is the
/// highest priority of its pending applications, a parent's the highest of its children;
/// plus `priority.offset`, or only the offset when fenced. `None` (n/a) when nothing is
/// pending below the queue.
pub fn queue_priorities(tree: &QueueTree, apps: &[App]) -> Vec<Option<i64>> {
    let mut inner: Vec<Option<i64>> = vec![None; tree.queues.len()];
    for a in apps {
        let e = &mut inner[a.queue];
        *e = Some(e.map_or(a.priority, |v| v.max(a.priority)));
    }
    let mut out: Vec<Option<i64>> = vec![None; tree.queues.len()];
    // Children come after their parent in the dense order: fold bottom-up.
    for q in (0..tree.queues.len()).rev() {
        let queue = &tree.queues[q];
        let below = queue.children.iter().filter_map(|&c| out[c]).max();
        let m = match (inner[q], below) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        out[q] = m.map(|v| if queue.fenced { queue.offset } else { v + queue.offset });
    }
    out
}

/// The applications of an instance document's pod groups in `tree`: priority from
/// `priority` or `priorityClassName` (default 0), `createdAt` (default: file order), and
/// the leaf queue the group names (required when queues are given).
pub fn apps_from_doc(doc: &InstanceDoc, tree: &QueueTree) -> Result<Vec<App>, InputError> {
    let classes: HashMap<&str, i64> = doc.priority_classes.iter().map(|c| (c.name.as_str(), c.value)).collect();
    let mut out = Vec::with_capacity(doc.pod_groups.len());
    for (i, g) in doc.pod_groups.iter().enumerate() {
        let p = format!("podGroups[{i}]");
        let priority = match (&g.priority, &g.priority_class_name) {
            (Some(v), _) => *v,
            (None, Some(c)) => *classes
                .get(c.as_str())
                .ok_or_else(|| InputError::new(format!("{p}.priorityClassName"), format!("unknown priority class {c:?}")))?,
            (None, None) => 0,
        };
        let queue = g.queue.as_deref().unwrap_or(DEFAULT_QUEUE);
        let q = tree.leaf(queue, &format!("{p}.queue"))?;
        out.push(App { name: g.name.clone(), queue: q, priority, created_at: g.created_at.unwrap_or(i as i64) });
    }
    Ok(out)
}

/// The tree and scheduling order as text (`tessera queues`).
pub fn render(tree: &QueueTree, apps: &[App]) -> String {
    use std::fmt::Write;
    let prios = queue_priorities(tree, apps);
    let mut s = String::new();
    let _ = writeln!(s, "partition {}", tree.partition);
    fn walk(tree: &QueueTree, q: QueueId, prios: &[Option<i64>], s: &mut String) {
        let queue = &tree.queues[q];
        let mut parts = Vec::new();
        parts.push(format!("priority {}", prios[q].map_or("n/a".to_string(), |v| v.to_string())));
        if queue.fenced {
            parts.push(format!("fence offset {}", queue.offset));
        } else if queue.offset != 0 {
            parts.push(format!("offset {}", queue.offset));
        }
        if !queue.is_parent {
            parts.push(format!("sort {}", queue.sort_policy));
        }
        if !queue.sort_priority {
            parts.push("sort.priority disabled".into());
        }
        if let Some(p) = queue.preemption_policy {
            parts.push(format!("preemption {p}"));
        }
        if let Some(n) = queue.max_applications {
            parts.push(format!("maxapplications {n}"));
        }
        let res = |m: &IndexMap<String, i64>| -> String {
            m.iter().map(|(r, &v)| format!("{r}: {}", tree.fmt_quantity(r, v))).collect::<Vec<_>>().join(", ")
        };
        if !queue.guaranteed.is_empty() {
            parts.push(format!("guaranteed {{{}}}", res(&queue.guaranteed)));
        }
        if !queue.max.is_empty() {
            parts.push(format!("max {{{}}}", res(&queue.max)));
        }
        let kind = if queue.is_parent { "" } else { " (leaf)" };
        let _ = writeln!(s, "{}{}{kind}  {}", "  ".repeat(queue.depth), queue.name, parts.join("; "));
        for &c in &queue.children {
            walk(tree, c, prios, s);
        }
    }
    walk(tree, 0, &prios, &mut s);
    if !apps.is_empty() {
        let keys = effective_keys(tree, apps);
        let _ = writeln!(s, "\nscheduling order (effective key, then createdAt):");
        for (rank, &a) in scheduling_order(tree, apps).iter().enumerate() {
            let app = &apps[a];
            let _ = writeln!(
                s,
                "{:>3}. {}  queue {}  priority {}  key {}  createdAt {}",
                rank + 1,
                app.name,
                tree.queues[app.queue].path,
                app.priority,
                keys[a],
                app.created_at
            );
        }
    }
    s
}

#[cfg(test)]
mod tests;
