//! Seeded generator of synthetic instances in named classes.
//!
//! `generate(class, seed)` is a pure function: the same `(class, seed)` gives the same
//! document, byte for byte, on every machine and in every later version (the test
//! `fingerprints_are_stable` pins a few of them). Randomness comes from a private
//! splitmix64 stream seeded with the seed and the class name; there is no floating point,
//! no hashing of maps and no dependence on the platform.
//!
//! Classes:
//! - `tiny`: brute-forceable instances (<= 3 nodes, <= 8 pending pods) for property tests;
//! - `tiny-queues`: brute-forceable instances with a YuniKorn queue tree (rule 7, effective
//!   priority, gang admission, the YuniKorn preemption model) for property tests;
//! - `flat-64`, `flat-256`, `flat-1024`: flat CPU/GPU clusters, 30-70 % pre-occupied, with a
//!   mix of homogeneous and heterogeneous gangs, elastic and fractional-GPU groups whose
//!   total demand exceeds the free capacity (1.0-1.5x);
//! - `rack-256`: as `flat-256` with zone/rack topology and topology-constrained groups;
//! - `preempt-256`, `preempt-1024`: CPU/GPU clusters with zone/rack labels, 60-90 %
//!   occupied by lower-priority running work (single pods and `disruptionMode: PodGroup`
//!   gangs, non-preemptible system and infrastructure pods, priorities 0/100/1000) and
//!   pending gangs at 1000/10000/100000 (some `Never`, some required rack) whose demand
//!   exceeds the free capacity, so that most of them need evictions;
//! - `topo-512`, `topo-4096`: zones > blocks > racks of 16 GPU nodes, pre-occupied per
//!   rack, with gangs of 8-256 pods under required/preferred topology and host slices
//!   (`generate/topo.rs`);
//! - `tas-unconstrained`, `tas-preferred-slices`, `tas-queues`: 16-node zone/rack
//!   clusters where the scheduler baselines' rules differ: topology-free and slice-only
//!   requests, preferred spreading, quota-bound YuniKorn queues (`generate/profiles.rs`);
//! - `openb-64`, `openb-256`, `openb-1024`: nodes and pod shapes of Alibaba's public
//!   GPU-cluster trace, read from `../shared/data/openb` (`generate/openb.rs`);
//! - `hetero-trap`: small instances where placing a heterogeneous gang task by task,
//!   largest task first, first-fit over nodes in input order, fails although a placement
//!   exists.
//!
//! Every bound pod is placed with exact bookkeeping (cpu, memory, pods and per-device
//! milli-shares), so every document passes [`crate::model::Instance::from_doc`].

use crate::wire::*;
use std::collections::BTreeMap;

const GPU: &str = "nvidia.com/gpu";
const RACK: &str = "example.com/rack";
const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

struct Class {
    name: &'static str,
    about: &'static str,
    /// Only the classes that read files (the `openb-*` trace) can fail.
    build: fn(&mut Rng) -> Result<InstanceDoc, String>,
}

const CLASSES: &[Class] = &[
    Class {
        name: "tiny",
        about: "1-3 nodes, 1-3 pending groups of 1-2 tasks, <= 8 pending pods; sometimes devices, selectors, taints, bound pods, a rack level, slices",
        build: |r| Ok(gen_tiny(r)),
    },
    Class {
        name: "tiny-queues",
        about: "2-4 nodes, 2-4 pending groups (<= 6 pods) in a YuniKorn queue tree (root > 1-2 parents > 2-3 leaves) with tight max, maxapplications, guaranteed, fair leaves, offsets, fences, preemption policies; half of them under preemptionModel yunikorn",
        build: |r| Ok(gen_tiny_queues(r)),
    },
    Class {
        name: "flat-64",
        about: "64 CPU/GPU nodes, 30-70 % pre-occupied, 10-20 pending gangs (homogeneous, heterogeneous, elastic, fractional GPU), demand 1.0-1.5x free",
        build: |r| Ok(gen_flat(r, 64, (10, 20), false)),
    },
    Class {
        name: "flat-256",
        about: "256 CPU/GPU nodes, 30-70 % pre-occupied, 36-44 pending gangs (homogeneous, heterogeneous, elastic, fractional GPU), demand 1.0-1.5x free",
        build: |r| Ok(gen_flat(r, 256, (36, 44), false)),
    },
    Class {
        name: "flat-1024",
        about: "1024 CPU/GPU nodes, 30-70 % pre-occupied, 90-110 pending gangs (homogeneous, heterogeneous, elastic, fractional GPU), demand 1.0-1.5x free",
        build: |r| Ok(gen_flat(r, 1024, (90, 110), false)),
    },
    Class {
        name: "rack-256",
        about: "flat-256 with zone/rack topology (16-node racks): required/preferred rack or zone groups and sliced GPU workers",
        build: |r| Ok(gen_flat(r, 256, (36, 44), true)),
    },
    Class {
        name: "hetero-trap",
        about: "a heterogeneous gang that largest-task-first first-fit cannot place although a placement exists (selector, taint, device or bin-packing trap)",
        build: |r| Ok(gen_hetero_trap(r)),
    },
    Class {
        name: "preempt-256",
        about: "256 CPU/GPU nodes (zone/rack), 60-90 % occupied by lower-priority pods (Pod and PodGroup disruption, non-preemptible system pods, 3 levels); 20-28 higher-priority gangs (some Never, some required rack) that mostly need evictions",
        build: |r| Ok(gen_preempt(r, 256, (20, 28))),
    },
    Class {
        name: "preempt-1024",
        about: "1024 CPU/GPU nodes (zone/rack), 60-90 % occupied by lower-priority pods (Pod and PodGroup disruption, non-preemptible system pods, 3 levels); 60-80 higher-priority gangs (some Never, some required rack) that mostly need evictions",
        build: |r| Ok(gen_preempt(r, 1024, (60, 80))),
    },
    Class {
        name: "topo-512",
        about: "512 GPU nodes as 2 zones > 4 blocks > 4 racks of 16, 45-85 % occupied per rack (non-preemptible); 20-30 gangs of 8-256 pods, required rack/block/zone, preferred rack/block, host slices",
        build: |r| Ok(topo::gen_topo(r, 2, 4, 4, (20, 30))),
    },
    Class {
        name: "topo-4096",
        about: "4096 GPU nodes as 4 zones > 8 blocks > 8 racks of 16, 45-85 % occupied per rack (non-preemptible); 180-220 gangs of 8-256 pods, required rack/block/zone, preferred rack/block, host slices",
        build: |r| Ok(topo::gen_topo(r, 4, 8, 8, (180, 220))),
    },
    Class {
        name: "tas-unconstrained",
        about: "16 nodes (2 zones > 4 racks, mixed sizes, a pool=x per rack): high-priority gangs without topology wider than any node (Kueue: LeastFreeCapacity vs BestFit), then groups that need the pool or a large node",
        build: |r| Ok(profiles::gen_tas_unconstrained(r)),
    },
    Class {
        name: "tas-preferred-slices",
        about: "16 nodes (2 zones > 4 racks, mixed sizes): preferred rack/zone groups (some with host slices), slice-only groups (rack or host slices, no required/preferred), required-rack and topology-free groups",
        build: |r| Ok(profiles::gen_tas_preferred_slices(r)),
    },
    Class {
        name: "tas-queues",
        about: "16 nodes (2 zones > 4 racks) under a YuniKorn queue tree with tight max, guaranteed, maxapplications, FIFO and FAIR leaves and running work; gangs and basic groups with preferred, required or no topology",
        build: |r| Ok(profiles::gen_tas_queues(r)),
    },
    Class {
        name: "openb-64",
        about: "64 nodes of Alibaba's openb GPU-cluster trace, 30-70 % used by trace pods; pending jobs of trace pod shapes (whole-GPU gangs, GPU-share replicas, cpu gangs), GPU demand 1.0-1.5x free",
        build: |r| openb::gen_openb(r, 64),
    },
    Class {
        name: "openb-256",
        about: "256 nodes of Alibaba's openb GPU-cluster trace, 30-70 % used by trace pods; pending jobs of trace pod shapes (whole-GPU gangs, GPU-share replicas, cpu gangs), GPU demand 1.0-1.5x free",
        build: |r| openb::gen_openb(r, 256),
    },
    Class {
        name: "openb-1024",
        about: "1024 nodes of Alibaba's openb GPU-cluster trace, 30-70 % used by trace pods; pending jobs of trace pod shapes (whole-GPU gangs, GPU-share replicas, cpu gangs), GPU demand 1.0-1.5x free",
        build: |r| openb::gen_openb(r, 1024),
    },
];

mod openb;
mod profiles;
mod topo;

/// Names of all instance classes.
pub fn classes() -> Vec<&'static str> {
    CLASSES.iter().map(|c| c.name).collect()
}

/// One line describing a class, `None` for an unknown class.
pub fn describe(class: &str) -> Option<&'static str> {
    CLASSES.iter().find(|c| c.name == class).map(|c| c.about)
}

/// The instance of `class` for `seed`; the same pair always gives the same document (for
/// the `openb-*` classes: as long as the trace files are the same).
pub fn generate(class: &str, seed: u64) -> Result<InstanceDoc, String> {
    let c = CLASSES
        .iter()
        .find(|c| c.name == class)
        .ok_or_else(|| format!("unknown instance class {class:?} (classes: {})", classes().join(", ")))?;
    let mut rng = Rng::new(seed, class);
    (c.build)(&mut rng)
}

// ---------------------------------------------------------------------------------------
// Randomness.

/// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, fully specified.
pub(crate) struct Rng(u64);

impl Rng {
    /// The stream for `seed` and `class` (classes sharing a seed are unrelated).
    pub(crate) fn new(seed: u64, class: &str) -> Rng {
        // FNV-1a of the class name, so that classes sharing a seed are unrelated.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in class.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        Rng(seed ^ h)
    }

    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by the multiply-shift reduction.
    fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        ((self.next() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi);
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `pct` %.
    fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }

    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            xs.swap(i, j);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Requests, nodes and exact bookkeeping of bound pods.

/// A request in engine-like integer units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Req {
    /// Millicores.
    cpu: i64,
    /// MiB.
    mem: i64,
    /// Milli-devices of `nvidia.com/gpu`.
    gpu: i64,
}

impl Req {
    fn new(cpu: i64, mem: i64, gpu: i64) -> Req {
        Req { cpu, mem, gpu }
    }

    fn doc(&self) -> ResourcesDoc {
        let mut r = ResourcesDoc::new();
        if self.cpu > 0 {
            r.insert("cpu".into(), milli_q(self.cpu));
        }
        if self.mem > 0 {
            r.insert("memory".into(), mem_q(self.mem));
        }
        if self.gpu > 0 {
            r.insert(GPU.into(), milli_q(self.gpu));
        }
        r
    }
}

fn milli_q(m: i64) -> QuantityDoc {
    if m % 1000 == 0 {
        QuantityDoc::Text((m / 1000).to_string())
    } else {
        QuantityDoc::Text(format!("{m}m"))
    }
}

fn mem_q(mib: i64) -> QuantityDoc {
    if mib % 1024 == 0 {
        QuantityDoc::Text(format!("{}Gi", mib / 1024))
    } else {
        QuantityDoc::Text(format!("{mib}Mi"))
    }
}

fn gi(g: i64) -> i64 {
    g * 1024
}

fn cores(c: i64) -> i64 {
    c * 1000
}

/// Capacity and usage of one node while bound pods are laid out.
#[derive(Clone, Debug)]
struct NodeState {
    cap: Req,
    used: Req,
    pods_cap: Option<i64>,
    pods_used: i64,
    /// Per device: milli used; a device held whole counts 1000.
    devs: Vec<i64>,
}

impl NodeState {
    fn free(&self) -> Req {
        Req::new(self.cap.cpu - self.used.cpu, self.cap.mem - self.used.mem, self.devs.iter().map(|u| 1000 - u).sum())
    }

    /// Devices for a request, or `None` when it does not fit the devices.
    fn devices_for(&self, gpu: i64, rng: &mut Rng) -> Option<Vec<i64>> {
        if gpu <= 0 {
            return Some(Vec::new());
        }
        if gpu < 1000 {
            let fitting: Vec<usize> = (0..self.devs.len()).filter(|&d| self.devs[d] + gpu <= 1000).collect();
            if fitting.is_empty() {
                return None;
            }
            // Mostly pack fractions onto shared devices, as device plugins do.
            let partial: Vec<usize> = fitting.iter().copied().filter(|&d| self.devs[d] > 0).collect();
            let d = if !partial.is_empty() && rng.chance(70) { rng.pick(&partial) } else { rng.pick(&fitting) };
            Some(vec![d as i64])
        } else {
            let k = (gpu / 1000) as usize;
            let mut free: Vec<usize> = (0..self.devs.len()).filter(|&d| self.devs[d] == 0).collect();
            if free.len() < k {
                return None;
            }
            if rng.chance(50) {
                rng.shuffle(&mut free);
            }
            let mut ids: Vec<i64> = free[..k].iter().map(|&d| d as i64).collect();
            ids.sort_unstable();
            Some(ids)
        }
    }

    /// Takes the request if it fits; returns the devices it holds.
    fn take(&mut self, r: &Req, rng: &mut Rng) -> Option<Vec<i64>> {
        if self.used.cpu + r.cpu > self.cap.cpu || self.used.mem + r.mem > self.cap.mem {
            return None;
        }
        if let Some(p) = self.pods_cap {
            if self.pods_used + 1 > p {
                return None;
            }
        }
        let ids = self.devices_for(r.gpu, rng)?;
        for &d in &ids {
            self.devs[d as usize] += r.gpu.min(1000);
        }
        self.used.cpu += r.cpu;
        self.used.mem += r.mem;
        self.used.gpu += r.gpu;
        self.pods_used += 1;
        Some(ids)
    }
}

/// The document under construction and the exact state of every node.
#[derive(Default)]
struct Builder {
    doc: InstanceDoc,
    nodes: Vec<NodeState>,
}

struct NodeSpec {
    name: String,
    labels: BTreeMap<String, String>,
    cap: Req,
    /// Whole devices of `nvidia.com/gpu`.
    devices: i64,
    pods: Option<i64>,
    taints: Vec<TaintDoc>,
    unschedulable: bool,
}

impl NodeSpec {
    fn new(name: impl Into<String>, cpu: i64, mem: i64) -> NodeSpec {
        NodeSpec {
            name: name.into(),
            labels: BTreeMap::new(),
            cap: Req::new(cpu, mem, 0),
            devices: 0,
            pods: None,
            taints: Vec::new(),
            unschedulable: false,
        }
    }
}

impl Builder {
    fn add_node(&mut self, s: NodeSpec) -> usize {
        let mut alloc = ResourcesDoc::new();
        alloc.insert("cpu".into(), milli_q(s.cap.cpu));
        alloc.insert("memory".into(), mem_q(s.cap.mem));
        if s.devices > 0 {
            alloc.insert(GPU.into(), QuantityDoc::Int(s.devices));
        }
        if let Some(p) = s.pods {
            alloc.insert("pods".into(), QuantityDoc::Int(p));
        }
        self.doc.nodes.push(NodeDoc {
            name: s.name,
            labels: s.labels,
            allocatable: alloc,
            taints: s.taints,
            unschedulable: s.unschedulable,
        });
        self.nodes.push(NodeState {
            cap: Req::new(s.cap.cpu, s.cap.mem, s.devices * 1000),
            used: Req::default(),
            pods_cap: s.pods,
            pods_used: 0,
            devs: vec![0; s.devices as usize],
        });
        self.nodes.len() - 1
    }

    /// Binds up to `count` members `{group}-{i}` of a running group, each on one of up to
    /// 10 randomly picked `nodes`; stops at the first member that finds no room. Returns
    /// how many were bound.
    #[allow(clippy::too_many_arguments)]
    fn bind_members(
        &mut self,
        rng: &mut Rng,
        group: &str,
        task: &str,
        nodes: &[usize],
        req: Req,
        count: i64,
        preemptible: Option<bool>,
    ) -> i64 {
        let mut bound = 0;
        for p in 0..count {
            let placed = (0..10).any(|_| {
                let node = rng.pick(nodes);
                self.bind(rng, format!("{group}-{p}"), node, req, Some(group), Some(task), None, preemptible)
            });
            if !placed {
                break;
            }
            bound += 1;
        }
        bound
    }

    /// Binds a pod to `node` if it fits there (capacity, pods, devices); false otherwise.
    #[allow(clippy::too_many_arguments)]
    fn bind(
        &mut self,
        rng: &mut Rng,
        name: String,
        node: usize,
        req: Req,
        group: Option<&str>,
        task: Option<&str>,
        priority: Option<i64>,
        preemptible: Option<bool>,
    ) -> bool {
        let Some(ids) = self.nodes[node].take(&req, rng) else {
            return false;
        };
        let mut device_ids = BTreeMap::new();
        if !ids.is_empty() {
            device_ids.insert(GPU.to_string(), ids);
        }
        self.doc.pods.push(PodDoc {
            name,
            node: self.doc.nodes[node].name.clone(),
            pod_group: group.map(String::from),
            task: task.map(String::from),
            priority,
            requests: req.doc(),
            device_ids,
            preemptible,
            ..Default::default()
        });
        true
    }

    fn label(&self, node: usize, key: &str) -> Option<&str> {
        self.doc.nodes[node].labels.get(key).map(|s| s.as_str())
    }
}

fn task(name: &str, count: i64, min_count: Option<i64>, req: Req) -> TaskDoc {
    TaskDoc { name: name.into(), count, min_count, requests: req.doc(), ..Default::default() }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn taint(key: &str, value: &str, effect: &str) -> TaintDoc {
    TaintDoc { key: key.into(), value: Some(value.into()), effect: effect.into() }
}

fn tolerate_equal(key: &str, value: &str, effect: Option<&str>) -> TolerationDoc {
    TolerationDoc { key: Some(key.into()), operator: Some("Equal".into()), value: Some(value.into()), effect: effect.map(String::from) }
}

fn tolerate_exists(key: Option<&str>) -> TolerationDoc {
    TolerationDoc { key: key.map(String::from), operator: Some("Exists".into()), value: None, effect: None }
}

/// Priority levels, optionally as priority classes; sets a group's priority fields.
struct Priorities {
    /// (value, class name), ascending.
    levels: Vec<(i64, String)>,
    classes: bool,
}

impl Priorities {
    fn new(rng: &mut Rng, pool: &[(i64, &str)], n: usize, classes: bool, doc: &mut InstanceDoc) -> Priorities {
        let mut idx: Vec<usize> = (0..pool.len()).collect();
        rng.shuffle(&mut idx);
        idx.truncate(n);
        idx.sort_unstable();
        let levels: Vec<(i64, String)> = idx.iter().map(|&i| (pool[i].0, pool[i].1.to_string())).collect();
        if classes {
            for (v, name) in &levels {
                doc.priority_classes.push(PriorityClassDoc { name: name.clone(), value: *v });
            }
        }
        Priorities { levels, classes }
    }

    /// Sets level `i` on a group: by class name (sometimes also the agreeing value) or value.
    fn apply(&self, rng: &mut Rng, i: usize, g: &mut PodGroupDoc) {
        let (v, name) = &self.levels[i];
        if self.classes && rng.chance(85) {
            g.priority_class_name = Some(name.clone());
            if rng.chance(15) {
                g.priority = Some(*v);
            }
        } else if *v != 0 || rng.chance(50) {
            g.priority = Some(*v);
        }
    }

    /// A level index biased towards the low levels (running work is mostly preemptible).
    fn low(&self, rng: &mut Rng) -> usize {
        let n = self.levels.len() as u64;
        rng.below(n).min(rng.below(n)) as usize
    }
}

// ---------------------------------------------------------------------------------------
// tiny

/// Brute-forceable classes: removes pending pods one at a time (a random task of a group
/// with more than one) until at most `max` remain, then gives each task a random
/// minCount with probability `min_pct` percent.
fn cap_pending(rng: &mut Rng, groups: &mut [PodGroupDoc], max: i64, min_pct: u64) {
    loop {
        let total: i64 = groups.iter().flat_map(|g| &g.tasks).map(|t| t.count).sum();
        if total <= max {
            break;
        }
        let mut cands = Vec::new();
        for (gi_, g) in groups.iter().enumerate() {
            let gt: i64 = g.tasks.iter().map(|t| t.count).sum();
            for (ti, t) in g.tasks.iter().enumerate() {
                if t.count > 0 && gt > 1 {
                    cands.push((gi_, ti));
                }
            }
        }
        let (gi_, ti) = rng.pick(&cands);
        groups[gi_].tasks[ti].count -= 1;
    }
    for g in groups.iter_mut() {
        for t in g.tasks.iter_mut() {
            if rng.chance(min_pct) {
                t.min_count = Some(rng.range(0, t.count));
            }
        }
    }
}

fn gen_tiny(rng: &mut Rng) -> InstanceDoc {
    let mut b = Builder::default();
    let gpus = rng.chance(35);
    let topo = rng.chance(35);
    let pods_limit = rng.chance(15);
    let pools = rng.chance(30);
    let taints = rng.chance(30);
    if gpus {
        b.doc.shared_devices.push(GPU.into());
    }
    if topo {
        b.doc.topology = Some(TopologyDoc { levels: vec![RACK.into()] });
    }

    let n_nodes = rng.range(1, 3) as usize;
    for i in 0..n_nodes {
        let mut s = NodeSpec::new(format!("n{i}"), cores(rng.range(2, 8)), gi(rng.range(2, 16)));
        if pools {
            s.labels.insert("pool".into(), rng.pick(&["a", "b"]).into());
        }
        if topo && rng.chance(75) {
            s.labels.insert(RACK.into(), rng.pick(&["r0", "r1"]).into());
        }
        if gpus && rng.chance(80) {
            s.devices = rng.range(1, 2);
        }
        if pods_limit && rng.chance(70) {
            s.pods = Some(rng.range(1, 4));
        }
        if taints && rng.chance(50) {
            let effect = rng.pick(&["NoSchedule", "NoSchedule", "NoExecute", "PreferNoSchedule"]);
            s.taints.push(taint("dedicated", rng.pick(&["x", "y"]), effect));
        }
        s.unschedulable = rng.chance(8);
        b.add_node(s);
    }

    let n_levels = rng.range(1, 3) as usize;
    let use_classes = rng.chance(25);
    let prio = Priorities::new(
        rng,
        &[(-5, "scavenger"), (0, "standard"), (10, "elevated"), (100, "high"), (1000, "critical")],
        n_levels,
        use_classes,
        &mut b.doc,
    );

    // Pending groups.
    let n_groups = rng.range(1, 3) as usize;
    let mut groups: Vec<PodGroupDoc> = Vec::new();
    let mut required: Vec<Option<&str>> = Vec::new();
    for gi_ in 0..n_groups {
        let mut g = PodGroupDoc { name: format!("g{gi_}"), ..Default::default() };
        let gang = rng.chance(70);
        if !gang {
            g.policy = Some("basic".into());
        } else if rng.chance(30) {
            g.policy = Some("gang".into());
        }
        let level = rng.below(n_levels as u64) as usize;
        prio.apply(rng, level, &mut g);
        if rng.chance(10) {
            g.preemption_policy = Some("Never".into());
        }
        if rng.chance(30) {
            g.created_at = Some(rng.range(0, 100));
        }
        let req_level = if topo && rng.chance(40) {
            Some(RACK)
        } else if rng.chance(8) {
            Some(HOST)
        } else {
            None
        };
        let pref_level = if topo && rng.chance(30) {
            Some(RACK)
        } else if rng.chance(5) {
            Some(HOST)
        } else {
            None
        };
        if req_level.is_some() || pref_level.is_some() {
            g.topology = Some(GroupTopologyDoc { required: req_level.map(String::from), preferred: pref_level.map(String::from) });
        }
        let n_tasks = rng.range(1, 2) as usize;
        for ti in 0..n_tasks {
            let req = Req::new(
                if rng.chance(20) { 500 } else { cores(rng.range(1, 4)) },
                if rng.chance(20) { 512 } else { gi(rng.range(1, 8)) },
                if gpus && rng.chance(50) { rng.pick(&[250, 500, 1000, 2000]) } else { 0 },
            );
            let mut t = task(["a", "b"][ti], rng.range(0, 3), None, req);
            if pools && rng.chance(40) {
                t.node_selector.insert("pool".into(), rng.pick(&["a", "b"]).into());
            }
            if taints && rng.chance(50) {
                t.tolerations.push(match rng.below(4) {
                    0 => tolerate_equal("dedicated", "x", Some("NoSchedule")),
                    1 => tolerate_equal("dedicated", rng.pick(&["x", "y"]), None),
                    2 => tolerate_exists(Some("dedicated")),
                    _ => tolerate_exists(None),
                });
            }
            if rng.chance(15) {
                let level = if topo && req_level != Some(HOST) && rng.chance(50) { RACK } else { HOST };
                t.slice = Some(SliceDoc { topology: level.into(), size: rng.range(1, 2) });
            }
            g.tasks.push(t);
        }
        if g.tasks.iter().all(|t| t.count == 0) {
            let ti = rng.below(g.tasks.len() as u64) as usize;
            g.tasks[ti].count = 1;
        }
        groups.push(g);
        required.push(req_level);
    }
    // At most 8 pending pods in all, every group keeping at least one.
    cap_pending(rng, &mut groups, 8, 50);

    // A running (non-pending) group holding part of the capacity.
    let mut running: Option<PodGroupDoc> = None;
    if rng.chance(40) {
        let req = Req::new(
            if rng.chance(30) { 500 } else { cores(rng.range(1, 2)) },
            gi(rng.range(1, 4)),
            if gpus && rng.chance(50) { rng.pick(&[250, 500, 1000]) } else { 0 },
        );
        let mut g = PodGroupDoc { name: "run".into(), tasks: vec![task("main", 0, None, req)], ..Default::default() };
        let level = prio.low(rng);
        prio.apply(rng, level, &mut g);
        if rng.chance(30) {
            g.disruption_mode = Some("PodGroup".into());
        }
        for k in 0..rng.range(1, 3) {
            let node = rng.below(n_nodes as u64) as usize;
            b.bind(rng, format!("run-{k}"), node, req, Some("run"), Some("main"), None, None);
        }
        running = Some(g);
    }
    // Pods of no group.
    if rng.chance(40) {
        for k in 0..rng.range(1, 2) {
            let req = Req::new(
                if rng.chance(30) { 500 } else { cores(rng.range(1, 2)) },
                gi(rng.range(1, 3)),
                if gpus && rng.chance(40) { rng.pick(&[250, 500, 1000]) } else { 0 },
            );
            let level = prio.low(rng);
            let priority = if rng.chance(70) { Some(prio.levels[level].0) } else { None };
            let preemptible = if rng.chance(20) { Some(false) } else { None };
            let node = rng.below(n_nodes as u64) as usize;
            b.bind(rng, format!("solo-{k}"), node, req, None, None, priority, preemptible);
        }
    }
    // Members of pending groups already bound (bound members count toward the gang).
    for (gi_, g) in groups.iter_mut().enumerate() {
        let mut bound = 0;
        if rng.chance(25) {
            let ti = rng.below(g.tasks.len() as u64) as usize;
            let tname = g.tasks[ti].name.clone();
            let req = req_of(&g.tasks[ti]);
            let mut first: Option<usize> = None;
            for k in 0..rng.range(1, 2) {
                let cands: Vec<usize> = (0..n_nodes)
                    .filter(|&n| match required[gi_] {
                        None => true,
                        Some(HOST) => first.is_none_or(|f| f == n),
                        Some(l) => b.label(n, l).is_some() && first.is_none_or(|f| b.label(f, l) == b.label(n, l)),
                    })
                    .collect();
                if cands.is_empty() {
                    break;
                }
                let node = rng.pick(&cands);
                if b.bind(rng, format!("{}-b{k}", g.name), node, req, Some(&g.name), Some(&tname), None, None) {
                    bound += 1;
                    first.get_or_insert(node);
                }
            }
        }
        if g.policy.as_deref() != Some("basic") && rng.chance(25) {
            let sum_min: i64 = g.tasks.iter().map(|t| t.min_count.unwrap_or(t.count)).sum();
            let sum_count: i64 = g.tasks.iter().map(|t| t.count).sum();
            g.min_count = Some(rng.range(sum_min, sum_count + bound));
        }
    }
    if let Some(r) = running {
        let at = rng.below(groups.len() as u64 + 1) as usize;
        groups.insert(at, r);
    }
    b.doc.pod_groups = groups;
    if rng.chance(15) {
        b.doc.options = Some(OptionsDoc { preemption: Some(false), ..Default::default() });
    }
    b.doc
}

/// The request of a generated task back as a [`Req`].
fn req_of(t: &TaskDoc) -> Req {
    let read = |k: &str, scale: crate::wire::quantity::Scale| {
        t.requests.get(k).map(|q| crate::wire::quantity::parse(&q.text(), scale).expect("generated quantity")).unwrap_or(0)
    };
    Req::new(
        read("cpu", crate::wire::quantity::Scale::Milli),
        read("memory", crate::wire::quantity::Scale::Base) / (1024 * 1024),
        read(GPU, crate::wire::quantity::Scale::Milli),
    )
}

// ---------------------------------------------------------------------------------------
// tiny-queues

/// One queue of a generated tree, with its limits (cpu in milli, memory in MiB) and what
/// the bound pods laid out so far use of them.
#[derive(Default)]
struct GenQueue {
    name: String,
    path: String,
    parent: Option<usize>,
    children: Vec<usize>,
    max_cpu: Option<i64>,
    max_mem: Option<i64>,
    guaranteed_cpu: Option<i64>,
    max_apps: Option<u64>,
    properties: Vec<(&'static str, String)>,
    used_cpu: i64,
    used_mem: i64,
    running: u64,
}

/// A queue tree under construction: `queues[0]` is root.
struct GenQueues {
    queues: Vec<GenQueue>,
    /// `vcore` (YuniKorn's name) or `cpu` in the limits.
    cpu_key: &'static str,
}

impl GenQueues {
    fn path_up(&self, q: usize) -> Vec<usize> {
        std::iter::successors(Some(q), |&a| self.queues[a].parent).collect()
    }

    /// Whether a bound pod of `req` fits every max on the path of `leaf`, and (when it
    /// starts a group that is not running yet) every maxapplications.
    fn room(&self, leaf: usize, req: Req, starts_group: bool) -> bool {
        self.path_up(leaf).iter().all(|&q| {
            let x = &self.queues[q];
            x.max_cpu.is_none_or(|m| x.used_cpu + req.cpu <= m)
                && x.max_mem.is_none_or(|m| x.used_mem + req.mem <= m)
                && (!starts_group || x.max_apps.is_none_or(|m| x.running < m))
        })
    }

    fn take(&mut self, leaf: usize, req: Req, starts_group: bool) {
        for q in self.path_up(leaf) {
            let x = &mut self.queues[q];
            x.used_cpu += req.cpu;
            x.used_mem += req.mem;
            x.running += starts_group as u64;
        }
    }

    fn doc(&self, q: usize) -> crate::wire::QueueDoc {
        let x = &self.queues[q];
        let mut resources = crate::wire::QueueResourcesDoc::default();
        if let Some(c) = x.max_cpu {
            resources.max.insert(self.cpu_key.into(), milli_q(c));
        }
        if let Some(m) = x.max_mem {
            resources.max.insert("memory".into(), mem_q(m));
        }
        if let Some(c) = x.guaranteed_cpu {
            resources.guaranteed.insert(self.cpu_key.into(), milli_q(c));
        }
        let has = !resources.max.is_empty() || !resources.guaranteed.is_empty();
        crate::wire::QueueDoc {
            name: x.name.clone(),
            queues: x.children.iter().map(|&c| self.doc(c)).collect(),
            maxapplications: x.max_apps,
            properties: x.properties.iter().map(|(k, v)| (k.to_string(), QuantityDoc::Text(v.clone()))).collect(),
            resources: has.then_some(resources),
            ..Default::default()
        }
    }
}

/// The queue tree of `tiny-queues`: root > 1-2 parents > 2-3 leaves (each parent at least
/// one), with limits tight enough for the instance's few cores to bind often.
fn gen_queue_tree(rng: &mut Rng) -> (GenQueues, Vec<usize>) {
    let mut t = GenQueues {
        queues: vec![GenQueue { name: "root".into(), path: "root".into(), ..Default::default() }],
        cpu_key: if rng.chance(50) { "vcore" } else { "cpu" },
    };
    let n_parents = rng.range(1, 2) as usize;
    let n_leaves = rng.range(2, 3) as usize;
    let mut leaves = Vec::new();
    for pi in 0..n_parents {
        let name = ["p", "q"][pi].to_string();
        let mut p = GenQueue { path: format!("root.{name}"), name, parent: Some(0), ..Default::default() };
        if rng.chance(45) {
            p.max_cpu = Some(cores(rng.range(2, 6)));
        }
        if rng.chance(15) {
            p.max_mem = Some(gi(rng.range(2, 6)));
        }
        if rng.chance(35) {
            p.guaranteed_cpu = Some(cores(rng.range(1, p.max_cpu.map_or(4, |m| m / 1000))));
        }
        if rng.chance(20) {
            p.max_apps = Some(rng.range(1, 3) as u64);
        }
        let id = t.queues.len();
        t.queues.push(p);
        t.queues[0].children.push(id);
        // This parent's leaves: the last parent takes what is left, the others 1 or 2
        // (leaving at least one per later parent).
        let left = n_leaves - leaves.len();
        let later = n_parents - pi - 1;
        let mine = if later == 0 { left } else { rng.range(1, (left - later).min(2) as i64) as usize };
        let mut guaranteed_left = t.queues[id].guaranteed_cpu;
        // YuniKorn's config check: the children's guaranteed within the parent's max too.
        let mut max_left = t.queues[id].max_cpu;
        for _ in 0..mine {
            let name = ["a", "b", "c"][leaves.len()].to_string();
            let parent = &t.queues[id];
            let mut l = GenQueue { path: format!("{}.{name}", parent.path), name, parent: Some(id), ..Default::default() };
            if rng.chance(55) {
                let cap = parent.max_cpu.map_or(4000, |m| m.min(4000));
                l.max_cpu = Some(rng.pick(&[500, 1000, 1000, 2000, 2000, 3000, 4000]).min(cap));
            }
            if rng.chance(10) {
                l.max_mem = Some(gi(rng.range(1, 4)).min(parent.max_mem.unwrap_or(i64::MAX)));
            }
            if rng.chance(50) {
                let mut g = cores(rng.range(1, 2));
                if let Some(m) = l.max_cpu {
                    g = g.min(m);
                }
                if let Some(left) = guaranteed_left {
                    g = g.min(left);
                }
                if let Some(left) = max_left {
                    g = g.min(left);
                }
                if g > 0 {
                    l.guaranteed_cpu = Some(g);
                    guaranteed_left = guaranteed_left.map(|x| x - g);
                    max_left = max_left.map(|x| x - g);
                }
            }
            if rng.chance(25) {
                let n = rng.range(1, 2) as u64;
                l.max_apps = Some(parent.max_apps.map_or(n, |m| n.min(m)));
            }
            // ... and a parent's maxapplications set on every child.
            if l.max_apps.is_none() {
                l.max_apps = parent.max_apps;
            }
            if rng.chance(15) {
                l.properties.push(("application.sort.policy", "fair".into()));
            }
            let lid = t.queues.len();
            t.queues.push(l);
            t.queues[id].children.push(lid);
            leaves.push(lid);
        }
    }
    // Priority and preemption properties on any queue but root.
    for q in 1..t.queues.len() {
        if rng.chance(20) {
            t.queues[q].properties.push(("priority.offset", rng.pick(&[-20i64, 5, 10, 100]).to_string()));
        }
        if rng.chance(12) {
            t.queues[q].properties.push(("priority.policy", "fence".into()));
        }
        if rng.chance(25) {
            t.queues[q].properties.push(("preemption.policy", rng.pick(&["fence", "disabled", "default"]).into()));
        }
    }
    (t, leaves)
}

fn gen_tiny_queues(rng: &mut Rng) -> InstanceDoc {
    let mut b = Builder::default();
    let n_nodes = rng.range(2, 4) as usize;
    for i in 0..n_nodes {
        let s = NodeSpec::new(format!("n{i}"), cores(rng.range(2, 4)), gi(rng.range(4, 8)));
        b.add_node(s);
    }
    let (mut tree, leaves) = gen_queue_tree(rng);
    let n_levels = rng.range(1, 3) as usize;
    let use_classes = rng.chance(20);
    let prio = Priorities::new(rng, &[(0, "standard"), (10, "elevated"), (100, "high")], n_levels, use_classes, &mut b.doc);

    // Pending groups, each in a leaf.
    let n_groups = rng.range(2, 4) as usize;
    let mut groups: Vec<PodGroupDoc> = Vec::new();
    let mut leaf_of: Vec<usize> = Vec::new();
    for gi_ in 0..n_groups {
        let leaf = rng.pick(&leaves);
        let mut g = PodGroupDoc { name: format!("g{gi_}"), queue: Some(tree.queues[leaf].path.clone()), ..Default::default() };
        if rng.chance(30) {
            g.policy = Some("basic".into());
        }
        // Pending work mostly above the running work, so that evictions are an option.
        let level = n_levels - 1 - prio.low(rng);
        prio.apply(rng, level, &mut g);
        if rng.chance(10) {
            g.preemption_policy = Some("Never".into());
        }
        if rng.chance(30) {
            g.created_at = Some(rng.range(0, 100));
        }
        for ti in 0..rng.range(1, 2) as usize {
            let req = Req::new(if rng.chance(30) { 500 } else { cores(rng.range(1, 2)) }, if rng.chance(30) { 512 } else { gi(1) }, 0);
            g.tasks.push(task(["a", "b"][ti], rng.range(0, 2), None, req));
        }
        if g.tasks.iter().all(|t| t.count == 0) {
            g.tasks[0].count = 1;
        }
        groups.push(g);
        leaf_of.push(leaf);
    }
    // At most 6 pending pods in all (4 nodes), every group keeping at least one.
    cap_pending(rng, &mut groups, 6, 40);

    // Bound pods, within every node and every queue limit.
    #[allow(clippy::too_many_arguments)]
    let bind_in = |rng: &mut Rng,
                   b: &mut Builder,
                   tree: &mut GenQueues,
                   name: String,
                   leaf: usize,
                   req: Req,
                   group: &str,
                   task: &str,
                   first: bool| {
        let node = rng.below(n_nodes as u64) as usize;
        if tree.room(leaf, req, first) && b.bind(rng, name, node, req, Some(group), Some(task), None, None) {
            tree.take(leaf, req, first);
            true
        } else {
            false
        }
    };
    let mut running: Vec<PodGroupDoc> = Vec::new();
    for k in 0..rng.range(1, 2) {
        let leaf = rng.pick(&leaves);
        let req = Req::new(if rng.chance(30) { 500 } else { 1000 }, if rng.chance(50) { 512 } else { gi(1) }, 0);
        let name = format!("run{k}");
        let mut g = PodGroupDoc {
            name: name.clone(),
            queue: Some(tree.queues[leaf].path.clone()),
            tasks: vec![task("main", 0, None, req)],
            ..Default::default()
        };
        let level = prio.low(rng);
        prio.apply(rng, level, &mut g);
        if rng.chance(25) {
            g.disruption_mode = Some("PodGroup".into());
        }
        let mut bound = 0;
        for m in 0..rng.range(1, 3) {
            if bind_in(rng, &mut b, &mut tree, format!("{name}-{m}"), leaf, req, &name, "main", bound == 0) {
                bound += 1;
            }
        }
        running.push(g);
    }
    for (gi_, g) in groups.iter_mut().enumerate() {
        if rng.chance(20) {
            let tname = g.tasks[0].name.clone();
            let req = req_of(&g.tasks[0]);
            let name = g.name.clone();
            bind_in(rng, &mut b, &mut tree, format!("{name}-b0"), leaf_of[gi_], req, &name, &tname, true);
        }
    }
    if rng.chance(30) {
        let node = rng.below(n_nodes as u64) as usize;
        let preemptible = if rng.chance(20) { Some(false) } else { None };
        let priority = prio.levels[prio.low(rng)].0;
        b.bind(rng, "solo-0".into(), node, Req::new(1000, gi(1), 0), None, None, Some(priority), preemptible);
    }
    groups.extend(running);
    b.doc.pod_groups = groups;
    b.doc.queues = vec![tree.doc(0)];
    if rng.chance(50) {
        b.doc.options = Some(OptionsDoc { preemption_model: Some("yunikorn".into()), ..Default::default() });
    }
    b.doc
}

// ---------------------------------------------------------------------------------------
// flat-N and rack-N

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NodeKind {
    Cpu,
    HighMem,
    Gpu,
    Infer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GroupKind {
    /// Homogeneous GPU training gang.
    GpuGang,
    /// Driver + GPU workers (+ parameter servers).
    HeteroGpu,
    /// Fractional-GPU inference replicas, basic or elastic gang.
    Inference,
    /// GPU gang with minCount < count.
    ElasticGpu,
    /// Homogeneous CPU gang.
    CpuGang,
    /// Spark-like driver + executors, basic or elastic.
    HeteroCpu,
}

impl GroupKind {
    fn uses_gpu(self) -> bool {
        !matches!(self, GroupKind::CpuGang | GroupKind::HeteroCpu)
    }
}

const FLAT_PRIORITIES: &[(i64, &str)] = &[(0, "low"), (100, "normal"), (1000, "high"), (10000, "critical")];

fn gen_flat(rng: &mut Rng, n: usize, groups: (i64, i64), topo: bool) -> InstanceDoc {
    let mut b = Builder::default();
    b.doc.shared_devices.push(GPU.into());
    if topo {
        b.doc.topology = Some(TopologyDoc { levels: vec![ZONE.into(), RACK.into()] });
    }

    // Node mix: 25-35 % GPU nodes (a quarter of them a tainted inference pool), 10 % high-memory.
    let n_gpu = (n * rng.range(25, 35) as usize / 100).max(2);
    let n_infer = (n_gpu / 4).max(1);
    let n_high = n / 10;
    let mut kinds: Vec<NodeKind> = Vec::with_capacity(n);
    kinds.extend(std::iter::repeat_n(NodeKind::Infer, n_infer));
    kinds.extend(std::iter::repeat_n(NodeKind::Gpu, n_gpu - n_infer));
    kinds.extend(std::iter::repeat_n(NodeKind::HighMem, n_high));
    kinds.extend(std::iter::repeat_n(NodeKind::Cpu, n - n_gpu - n_high));
    rng.shuffle(&mut kinds);
    for (i, &k) in kinds.iter().enumerate() {
        let mut s = match k {
            NodeKind::Cpu => NodeSpec::new(format!("node-{i:04}"), cores(64), gi(256)),
            NodeKind::HighMem => NodeSpec::new(format!("node-{i:04}"), cores(64), gi(512)),
            NodeKind::Gpu | NodeKind::Infer => NodeSpec::new(format!("node-{i:04}"), cores(96), gi(768)),
        };
        let (pool, itype) = match k {
            NodeKind::Cpu => ("cpu", "c64"),
            NodeKind::HighMem => ("cpu", "m64"),
            NodeKind::Gpu => ("gpu", "g96-8"),
            NodeKind::Infer => ("infer", "g96-8"),
        };
        s.labels = labels(&[("pool", pool), ("node.kubernetes.io/instance-type", itype)]);
        if matches!(k, NodeKind::Gpu | NodeKind::Infer) {
            s.devices = 8;
        }
        if k == NodeKind::Infer {
            s.taints.push(taint("dedicated", "infer", "NoSchedule"));
        }
        if topo && !rng.chance(2) {
            let rack = i / 16;
            s.labels.insert(RACK.into(), format!("rack-{rack:02}"));
            s.labels.insert(ZONE.into(), format!("zone-{}", rack / 4));
        }
        s.pods = Some(110);
        s.unschedulable = rng.chance(1);
        b.add_node(s);
    }
    let of_kind = |ks: &[NodeKind]| -> Vec<usize> { (0..n).filter(|&i| ks.contains(&kinds[i])).collect() };
    let cpu_nodes = of_kind(&[NodeKind::Cpu, NodeKind::HighMem]);
    let gpu_nodes = of_kind(&[NodeKind::Gpu]);
    let any_gpu_nodes = of_kind(&[NodeKind::Gpu, NodeKind::Infer]);
    let all_nodes: Vec<usize> = (0..n).collect();

    let n_levels = rng.range(2, 4) as usize;
    let use_classes = rng.chance(50);
    let prio = Priorities::new(rng, FLAT_PRIORITIES, n_levels, use_classes, &mut b.doc);

    // System pods: never preemptible.
    for i in 0..n {
        if rng.chance(20) {
            b.bind(rng, format!("sys-{i:04}"), i, Req::new(500, gi(1), 0), None, None, Some(2_000_000_000), Some(false));
        }
    }

    // Running workloads until the CPU nodes' cpu and the GPU nodes' devices are each
    // filled to their target share (35-65 %, independently).
    let sum_of = |b: &Builder, ns: &[usize], f: &dyn Fn(&NodeState) -> i64| -> i64 { ns.iter().map(|&i| f(&b.nodes[i])).sum() };
    let cpu_cap = sum_of(&b, &cpu_nodes, &|s| s.cap.cpu);
    let gpu_cap = sum_of(&b, &any_gpu_nodes, &|s| s.cap.gpu);
    let cpu_target = rng.range(35, 65);
    let gpu_target = rng.range(35, 65);
    let mut running: Vec<PodGroupDoc> = Vec::new();
    let mut fails = 0;
    let mut ri = 0;
    let mut served = false;
    loop {
        let cpu_short = sum_of(&b, &cpu_nodes, &|s| s.used.cpu) * 100 < cpu_target * cpu_cap;
        let gpu_short = sum_of(&b, &any_gpu_nodes, &|s| s.used.gpu) * 100 < gpu_target * gpu_cap;
        if !(cpu_short || gpu_short) || fails >= 50 {
            break;
        }
        let gpu_side = if cpu_short && gpu_short { rng.chance(50) } else { gpu_short };
        // The first GPU workload serves on fractions, so every instance has some.
        let (name, req, count, nodes) = if gpu_side && served && rng.chance(60) {
            let g = rng.pick(&[1, 1, 2, 2, 4, 8]);
            let req = Req::new(g * cores(rng.range(6, 11)), g * gi(rng.pick(&[48, 64, 80])), g * 1000);
            ("train", req, rng.range(1, 8), &gpu_nodes)
        } else if gpu_side {
            let req = Req::new(cores(rng.range(1, 4)), gi(rng.range(4, 16)), rng.pick(&[250, 250, 500, 500, 750]));
            ("serve", req, rng.range(1, 12), &any_gpu_nodes)
        } else {
            let c = rng.pick(&[1, 2, 4, 8, 16]);
            let req = Req::new(cores(c), gi(c * rng.pick(&[2, 4, 8])), 0);
            ("batch", req, rng.range(1, 16), if rng.chance(90) { &cpu_nodes } else { &all_nodes })
        };
        let gname = format!("run-{ri:04}");
        if b.bind_members(rng, &gname, name, nodes, req, count, None) == 0 {
            fails += 1;
            continue;
        }
        let mut g = PodGroupDoc { name: gname, tasks: vec![task(name, 0, None, req)], ..Default::default() };
        let level = prio.low(rng);
        prio.apply(rng, level, &mut g);
        if name == "train" && rng.chance(40) {
            g.disruption_mode = Some("PodGroup".into());
        }
        if name == "serve" {
            g.policy = Some("basic".into());
            served = true;
        }
        running.push(g);
        ri += 1;
    }

    // Free capacity that pending groups compete for (schedulable nodes).
    let schedulable = |ns: &[usize]| -> Vec<usize> { ns.iter().copied().filter(|&i| !b.doc.nodes[i].unschedulable).collect() };
    let free_gpu: i64 = schedulable(&any_gpu_nodes).iter().map(|&i| b.nodes[i].free().gpu).sum();
    let free_cpu: i64 = schedulable(&all_nodes).iter().map(|&i| b.nodes[i].free().cpu).sum();

    let n_groups = rng.range(groups.0, groups.1) as usize;
    let mut gkinds: Vec<GroupKind> = (0..n_groups)
        .map(|_| {
            let x = rng.below(100);
            match x {
                0..=21 => GroupKind::GpuGang,
                22..=39 => GroupKind::HeteroGpu,
                40..=54 => GroupKind::Inference,
                55..=64 => GroupKind::ElasticGpu,
                65..=84 => GroupKind::CpuGang,
                _ => GroupKind::HeteroCpu,
            }
        })
        .collect();
    // Every instance has each of these kinds at least once; a missing one replaces a
    // group whose kind is not needed or occurs more than once.
    let needed = [GroupKind::HeteroGpu, GroupKind::HeteroCpu, GroupKind::Inference, GroupKind::ElasticGpu];
    for k in needed {
        if !gkinds.contains(&k) {
            let spare: Vec<usize> =
                (0..n_groups).filter(|&i| !needed.contains(&gkinds[i]) || gkinds.iter().filter(|&&x| x == gkinds[i]).count() > 1).collect();
            let at = rng.pick(&spare);
            gkinds[at] = k;
        }
    }
    let first_inference = gkinds.iter().position(|&k| k == GroupKind::Inference);
    let n_gpu_groups = gkinds.iter().filter(|k| k.uses_gpu()).count().max(1) as i64;
    let n_cpu_groups = gkinds.iter().filter(|k| !k.uses_gpu()).count().max(1) as i64;
    let ratio = rng.range(100, 150);
    // Priority level per group; at least two distinct levels among them.
    let mut group_level: Vec<usize> = (0..n_groups).map(|_| rng.below(n_levels as u64) as usize).collect();
    if group_level.iter().all(|&l| l == group_level[0]) {
        let at = rng.below(n_groups as u64) as usize;
        group_level[at] = (group_level[at] + 1 + rng.below(n_levels as u64 - 1) as usize) % n_levels;
    }

    // GPU groups first: they take devices and some cpu; CPU groups get the rest of the
    // cpu budget, so that both totals come to about `ratio` % of what is free.
    let mut built: Vec<Option<PodGroupDoc>> = vec![None; n_groups];
    let mut gpu_groups_cpu = 0;
    for pass_gpu in [true, false] {
        let budget_each = if pass_gpu {
            free_gpu * ratio / 100 / n_gpu_groups
        } else {
            ((free_cpu * ratio / 100 - gpu_groups_cpu) / n_cpu_groups).max(free_cpu / 20 / n_cpu_groups)
        };
        for (i, &kind) in gkinds.iter().enumerate() {
            if kind.uses_gpu() != pass_gpu {
                continue;
            }
            let budget = budget_each * rng.range(50, 150) / 100;
            let mut g = flat_group(rng, kind, i, budget.max(1), topo);
            if Some(i) == first_inference {
                // At least one basic (elastic, best-effort) group per instance.
                g.policy = Some("basic".into());
            }
            if pass_gpu {
                gpu_groups_cpu += g.tasks.iter().map(|t| t.count * req_of(t).cpu).sum::<i64>();
            }
            prio.apply(rng, group_level[i], &mut g);
            g.created_at = Some(rng.range(0, 3600));
            // Some gangs scale up: a few members already run.
            let required = g.topology.as_ref().and_then(|t| t.required.as_ref()).is_some();
            if matches!(kind, GroupKind::GpuGang | GroupKind::ElasticGpu | GroupKind::CpuGang) && !required && rng.chance(10) {
                let t = &g.tasks[0];
                let req = req_of(t);
                let nodes = if kind == GroupKind::CpuGang { &cpu_nodes } else { &gpu_nodes };
                for k in 0..rng.range(1, 2) {
                    for _ in 0..10 {
                        let node = rng.pick(nodes);
                        if b.bind(rng, format!("{}-b{k}", g.name), node, req, Some(&g.name), Some(&t.name), None, None) {
                            break;
                        }
                    }
                }
            }
            built[i] = Some(g);
        }
    }
    let pending: Vec<PodGroupDoc> = built.into_iter().map(|g| g.expect("every group built")).collect();

    // Groups in a plausible file order: running ones first (older), then pending.
    b.doc.pod_groups = running;
    b.doc.pod_groups.extend(pending);
    b.doc
}

fn gpu_worker(rng: &mut Rng, g: i64) -> Req {
    Req::new(g * cores(rng.range(8, 11)), g * gi(rng.pick(&[64, 80])), g * 1000)
}

/// Cores per pod for a budget of millicores: at least two pods, at most `max_count`
/// (the largest size when the budget is too big for that).
fn cpu_size(rng: &mut Rng, budget: i64, sizes: &[i64], max_count: i64) -> i64 {
    let opts: Vec<i64> = sizes.iter().copied().filter(|&c| cores(c) * 2 <= budget && budget / cores(c) <= max_count).collect();
    if !opts.is_empty() {
        rng.pick(&opts)
    } else if budget / cores(sizes[0]) <= max_count {
        sizes[0]
    } else {
        sizes[sizes.len() - 1]
    }
}

/// Whole GPUs per worker and worker count for a budget of milli-GPUs.
fn gpu_shape(rng: &mut Rng, budget: i64, max_count: i64) -> (i64, i64) {
    let opts: Vec<i64> = [1, 2, 4, 8].into_iter().filter(|g| g * 2000 <= budget && budget / (g * 1000) <= max_count).collect();
    let g = if opts.is_empty() {
        if budget / 1000 <= max_count {
            1
        } else {
            8
        }
    } else {
        rng.pick(&opts)
    };
    let mut count = (budget / (g * 1000)).clamp(1, max_count);
    if rng.chance(50) {
        // The nearest power of two (in ratio), within the cap.
        let p = 1i64 << (63 - (count as u64).leading_zeros());
        count = if count * 2 > p * 3 && p * 2 <= max_count { p * 2 } else { p };
    }
    (g, count)
}

fn flat_group(rng: &mut Rng, kind: GroupKind, i: usize, budget: i64, topo: bool) -> PodGroupDoc {
    let infer_tol = || tolerate_equal("dedicated", "infer", Some("NoSchedule"));
    let mut g = PodGroupDoc::default();
    match kind {
        GroupKind::GpuGang | GroupKind::ElasticGpu => {
            let (gpus, mut count) = gpu_shape(rng, budget, 64);
            let mut t = task("worker", count, None, gpu_worker(rng, gpus));
            if kind == GroupKind::ElasticGpu {
                count = count.max(2);
                t.count = count;
                t.min_count = Some(rng.range(1, count - 1));
            }
            if rng.chance(50) {
                t.node_selector.insert("pool".into(), "gpu".into());
            }
            g.name = format!("{}-{i:03}", if kind == GroupKind::GpuGang { "train" } else { "elastic" });
            g.tasks.push(t);
        }
        GroupKind::HeteroGpu => {
            let mut driver = task("driver", 1, None, Req::new(cores(rng.range(2, 8)), gi(rng.range(8, 32)), 0));
            if rng.chance(60) {
                driver.node_selector.insert("pool".into(), "cpu".into());
            }
            g.tasks.push(driver);
            let (gpus, count) = gpu_shape(rng, budget, 32);
            let mut w = task("worker", count, None, gpu_worker(rng, gpus));
            if count > 1 && rng.chance(25) {
                w.min_count = Some(rng.range(1, count - 1));
            }
            g.tasks.push(w);
            if rng.chance(30) {
                let ps = rng.range(1, 4);
                g.tasks.push(task("ps", ps, None, Req::new(cores(rng.range(4, 8)), gi(rng.range(16, 64)), 0)));
            }
            g.name = format!("hetero-{i:03}");
        }
        GroupKind::Inference => {
            let gpu = rng.pick(&[250, 500]);
            let count = (budget / gpu).clamp(1, 48);
            let mut t = task("replica", count, None, Req::new(cores(rng.range(1, 4)), gi(rng.range(4, 16)), gpu));
            t.tolerations.push(infer_tol());
            if rng.chance(30) {
                t.node_selector.insert("pool".into(), "infer".into());
            }
            if rng.chance(50) {
                g.policy = Some("basic".into());
            } else if count > 1 {
                t.min_count = Some(rng.range(1, count - 1));
            }
            if rng.chance(10) {
                g.preemption_policy = Some("Never".into());
            }
            g.name = format!("infer-{i:03}");
            g.tasks.push(t);
        }
        GroupKind::CpuGang => {
            let c = cpu_size(rng, budget, &[2, 4, 8, 16, 32], 128);
            let count = (budget / cores(c)).clamp(1, 128);
            let mut t = task("worker", count, None, Req::new(cores(c), gi(c * rng.pick(&[2, 4, 8])), 0));
            if rng.chance(50) {
                t.node_selector.insert("pool".into(), "cpu".into());
            }
            g.name = format!("batch-{i:03}");
            g.tasks.push(t);
        }
        GroupKind::HeteroCpu => {
            g.tasks.push(task("driver", 1, None, Req::new(cores(rng.range(1, 4)), gi(rng.range(4, 16)), 0)));
            let c = cpu_size(rng, budget, &[2, 4, 8, 16, 32], 96);
            let count = (budget / cores(c)).clamp(1, 96);
            let mut ex = task("executor", count, None, Req::new(cores(c), gi(c * rng.pick(&[2, 4])), 0));
            if rng.chance(30) {
                g.policy = Some("basic".into());
            } else if count > 1 && rng.chance(60) {
                ex.min_count = Some(rng.range(1, count - 1));
            }
            g.tasks.push(ex);
            g.name = format!("spark-{i:03}");
        }
    }
    if topo {
        add_topology(rng, kind, &mut g);
    }
    g
}

/// Topology constraints of `rack-N` groups: required/preferred rack or zone and slices.
fn add_topology(rng: &mut Rng, kind: GroupKind, g: &mut PodGroupDoc) {
    let mut t = GroupTopologyDoc::default();
    if kind.uses_gpu() && kind != GroupKind::Inference {
        let x = rng.below(100);
        if x < 35 {
            t.required = Some(RACK.into());
        } else if x < 45 {
            t.required = Some(ZONE.into());
        }
        if t.required.as_deref() != Some(RACK) && rng.chance(40) {
            t.preferred = Some(RACK.into());
        }
        let wi = g.tasks.iter().position(|t| t.name == "worker").expect("GPU groups have workers");
        let w = &mut g.tasks[wi];
        // A rack holds about five GPU nodes, half used: keep required-rack gangs <= 16 GPUs.
        let gpus = req_of(w).gpu / 1000;
        if t.required.as_deref() == Some(RACK) && w.count * gpus > 16 {
            w.count = (16 / gpus).max(1);
            w.min_count = w.min_count.map(|m| m.min(w.count));
        }
        if kind == GroupKind::ElasticGpu && w.count >= 2 {
            // Stays elastic after the cap.
            w.min_count = w.min_count.map(|m| m.min(w.count - 1));
        } else if rng.chance(30) {
            let (level, size) = if gpus < 8 && rng.chance(50) { (HOST, 8 / gpus) } else { (RACK, rng.pick(&[2, 4])) };
            if w.count >= size {
                w.count -= w.count % size;
                w.min_count = w.min_count.map(|m| (m - m % size).max(size).min(w.count));
                w.slice = Some(SliceDoc { topology: level.into(), size });
            }
        }
    } else if rng.chance(30) {
        t.preferred = Some(rng.pick(&[RACK, ZONE]).into());
    }
    if t.required.is_some() || t.preferred.is_some() {
        g.topology = Some(t);
    }
}

// ---------------------------------------------------------------------------------------
// hetero-trap

/// Name of the trap group in every `hetero-trap` instance.
pub const TRAP_GROUP: &str = "trap";

/// Trap variants. In all of them every pod of a larger task is at least as large, in every
/// resource, as every pod of a smaller task (strictly larger in cpu and memory), so any
/// "largest first" order is the same order.
fn gen_hetero_trap(rng: &mut Rng) -> InstanceDoc {
    let mut b = Builder::default();
    let variant = rng.below(4);
    let u = rng.range(1, 6); // cpu unit, cores
    let mpc = rng.pick(&[1, 2, 4, 8]); // GiB per core
    let sys = rng.chance(50); // a non-preemptible system pod on every trap node
    let sys_req = Req::new(cores(1), gi(1), 0);
    let pad = |r: Req, on: bool| if on { Req::new(r.cpu + sys_req.cpu, r.mem + sys_req.mem, r.gpu) } else { r };

    // Trap nodes in the order that springs the trap (FF goes through them in input order).
    struct TrapNode {
        spec: NodeSpec,
        bound: Vec<Req>,
    }
    let mut trap_nodes: Vec<TrapNode> = Vec::new();
    let mut g = PodGroupDoc { name: TRAP_GROUP.into(), priority: Some(rng.range(1, 1000)), ..Default::default() };
    match variant {
        // 0: selector. The small driver is pinned to the front pool; FF fills the front
        //    nodes with the larger workers first. 1: the same with a taint keeping the
        //    driver off the back nodes. 2: devices: the front nodes have one whole free GPU
        //    and one with 600-750m used, so the driver (500m) only fits a front node without a
        //    worker.
        0..=2 => {
            let k = rng.range(1, 3);
            let cap = if variant == 2 { Req::new(cores(8 * u), gi(8 * u * mpc), 0) } else { Req::new(cores(4 * u), gi(4 * u * mpc), 0) };
            let mut worker = Req::new(cores(3 * u), gi(3 * u * mpc), 0);
            let mut driver = Req::new(cores(2 * u), gi(u * mpc), 0);
            if variant == 2 {
                b.doc.shared_devices.push(GPU.into());
                worker.gpu = 1000;
                driver.gpu = 500;
            }
            for (side, count) in [("front", k), ("back", k)] {
                for _ in 0..count {
                    let on = sys || (variant == 2 && side == "front");
                    let c = pad(cap, on);
                    let mut s = NodeSpec::new("", c.cpu, c.mem);
                    s.labels = labels(&[("pool", if variant == 1 { "general" } else { side })]);
                    let mut bound = Vec::new();
                    if variant == 1 && side == "back" {
                        s.taints.push(taint("dedicated", "batch", "NoSchedule"));
                    }
                    if variant == 2 {
                        s.devices = if side == "front" { 2 } else { 1 };
                        if side == "front" {
                            bound.push(Req::new(sys_req.cpu, sys_req.mem, rng.pick(&[600, 700, 750])));
                        }
                    }
                    if on && bound.is_empty() {
                        bound.push(sys_req);
                    }
                    trap_nodes.push(TrapNode { spec: s, bound });
                }
            }
            let mut w = task("worker", k, None, worker);
            let mut d = task("driver", k, None, driver);
            match variant {
                0 | 2 => {
                    d.node_selector.insert("pool".into(), "front".into());
                }
                _ => {
                    w.tolerations.push(if rng.chance(50) {
                        tolerate_equal("dedicated", "batch", Some("NoSchedule"))
                    } else {
                        tolerate_exists(Some("dedicated"))
                    });
                }
            }
            // Task order in the file is not the size order.
            if rng.chance(50) {
                g.tasks = vec![d, w];
            } else {
                g.tasks = vec![w, d];
            }
        }
        // 3: bin packing. 2k nodes of 12 units; tasks of 2k pods of 5, 4 and 3 units fill
        //    them exactly (5+4+3 per node); FF puts two 5s on a node and wastes 2 units.
        _ => {
            let k = rng.range(1, 2);
            for _ in 0..2 * k {
                let c = pad(Req::new(cores(12 * u), gi(12 * u * mpc), 0), sys);
                let mut s = NodeSpec::new("", c.cpu, c.mem);
                s.labels = labels(&[("pool", "general")]);
                trap_nodes.push(TrapNode { spec: s, bound: if sys { vec![sys_req] } else { Vec::new() } });
            }
            let mut tasks: Vec<TaskDoc> = [("large", 5), ("medium", 4), ("small", 3)]
                .iter()
                .map(|&(name, size)| task(name, 2 * k, None, Req::new(cores(size * u), gi(size * u * mpc), 0)))
                .collect();
            rng.shuffle(&mut tasks);
            g.tasks = tasks;
        }
    }
    let trap_pods: i64 = g.tasks.iter().map(|t| t.count).sum();

    // Decoys no trap pod can use, inserted anywhere (the trap nodes keep their order).
    struct Placed {
        spec: NodeSpec,
        bound: Vec<(Req, Option<bool>, Option<&'static str>)>,
    }
    let mut all: Vec<Placed> = trap_nodes
        .into_iter()
        .map(|t| Placed { spec: t.spec, bound: t.bound.into_iter().map(|r| (r, Some(false), None)).collect() })
        .collect();
    for _ in 0..rng.range(0, 3) {
        let big = Req::new(cores(16 * u), gi(16 * u * mpc), 0);
        let mut s = match rng.below(3) {
            0 => {
                let mut s = NodeSpec::new("", big.cpu, big.mem);
                s.unschedulable = true;
                s
            }
            1 => {
                let mut s = NodeSpec::new("", big.cpu, big.mem);
                s.taints.push(taint("maintenance", "true", "NoExecute"));
                s
            }
            // Smaller than the smallest trap pod (>= 2 cores).
            _ => NodeSpec::new("", cores(1), gi(rng.range(1, 64))),
        };
        s.labels = labels(&[("pool", "spare")]);
        let at = rng.below(all.len() as u64 + 1) as usize;
        all.insert(at, Placed { spec: s, bound: Vec::new() });
    }
    // Sometimes another tenant's pool: its own taint and label, a running and a pending group.
    let other = rng.chance(50);
    if other {
        for _ in 0..rng.range(1, 2) {
            let mut s = NodeSpec::new("", cores(8 * u), gi(8 * u * mpc));
            s.labels = labels(&[("pool", "other")]);
            s.taints.push(taint("tenant", "other", "NoSchedule"));
            let bound = vec![(Req::new(cores(2 * u), gi(2 * u * mpc), 0), None, Some("other-run"))];
            let at = rng.below(all.len() as u64 + 1) as usize;
            all.insert(at, Placed { spec: s, bound });
        }
    }
    let mut running_members = 0;
    for (i, mut p) in all.into_iter().enumerate() {
        p.spec.name = format!("n{i:02}");
        let node = b.add_node(p.spec);
        for (j, (req, preemptible, group)) in p.bound.into_iter().enumerate() {
            let name = match group {
                Some(gname) => {
                    running_members += 1;
                    format!("{gname}-{running_members}")
                }
                None => format!("sys-{i:02}-{j}"),
            };
            let priority = if group.is_some() { None } else { Some(1_000_000) };
            let ok = b.bind(rng, name, node, req, group, group.map(|_| "main"), priority, preemptible);
            assert!(ok, "hetero-trap bound pods fit by construction");
        }
    }
    b.doc.pod_groups.push(g);
    if other {
        let mut run = PodGroupDoc { name: "other-run".into(), priority: Some(0), ..Default::default() };
        run.tasks.push(task("main", 0, None, Req::new(cores(2 * u), gi(2 * u * mpc), 0)));
        b.doc.pod_groups.push(run);
        let mut t = task("main", rng.range(1, 3), None, Req::new(cores(u), gi(u * mpc), 0));
        t.node_selector.insert("pool".into(), "other".into());
        t.tolerations.push(tolerate_equal("tenant", "other", None));
        let og =
            PodGroupDoc { name: "other".into(), policy: Some("basic".into()), priority: Some(0), tasks: vec![t], ..Default::default() };
        b.doc.pod_groups.push(og);
    }
    debug_assert!(trap_pods > 0);
    b.doc
}

// ---------------------------------------------------------------------------------------
// preempt-N

/// Priority classes of `preempt-N`: running work sits on the low levels, pending gangs on
/// the high ones; `production` is both (not evictable by `production` gangs).
const PREEMPT_LEVELS: &[(i64, &str)] = &[(0, "best-effort"), (100, "batch"), (1000, "production"), (10000, "urgent"), (100000, "critical")];
/// System pods: above everything, never preemptible.
const SYSTEM_PRIORITY: i64 = 2_000_000_000;

/// Sets a group's priority to `value`: mostly by class name, sometimes by value.
fn preempt_priority(rng: &mut Rng, value: i64, g: &mut PodGroupDoc) {
    let name = PREEMPT_LEVELS.iter().find(|l| l.0 == value).expect("a preempt level").1;
    if rng.chance(75) {
        g.priority_class_name = Some(name.into());
    } else {
        g.priority = Some(value);
    }
}

/// A cluster 60-90 % occupied by lower-priority work and higher-priority gangs that
/// mostly need evictions to run.
fn gen_preempt(rng: &mut Rng, n: usize, groups: (i64, i64)) -> InstanceDoc {
    let mut b = Builder::default();
    b.doc.shared_devices.push(GPU.into());
    b.doc.topology = Some(TopologyDoc { levels: vec![ZONE.into(), RACK.into()] });
    for (v, name) in PREEMPT_LEVELS {
        b.doc.priority_classes.push(PriorityClassDoc { name: name.to_string(), value: *v });
    }

    // Nodes: 25-35 % GPU nodes, racks of 16 nodes, zones of 4 racks.
    let n_gpu = (n * rng.range(25, 35) as usize / 100).max(2);
    let mut is_gpu = vec![false; n];
    for x in is_gpu.iter_mut().take(n_gpu) {
        *x = true;
    }
    rng.shuffle(&mut is_gpu);
    for (i, &gpu) in is_gpu.iter().enumerate() {
        let mut s = if gpu {
            NodeSpec::new(format!("node-{i:04}"), cores(96), gi(768))
        } else {
            NodeSpec::new(format!("node-{i:04}"), cores(64), gi(256))
        };
        s.labels = labels(&[("pool", if gpu { "gpu" } else { "cpu" })]);
        if gpu {
            s.devices = 8;
        }
        let rack = i / 16;
        s.labels.insert(RACK.into(), format!("rack-{rack:02}"));
        s.labels.insert(ZONE.into(), format!("zone-{}", rack / 4));
        s.pods = Some(110);
        b.add_node(s);
    }
    let cpu_nodes: Vec<usize> = (0..n).filter(|&i| !is_gpu[i]).collect();
    let gpu_nodes: Vec<usize> = (0..n).filter(|&i| is_gpu[i]).collect();

    // System pods: never preemptible.
    for i in 0..n {
        if rng.chance(25) {
            b.bind(rng, format!("sys-{i:04}"), i, Req::new(500, gi(1), 0), None, None, Some(SYSTEM_PRIORITY), Some(false));
        }
    }

    // Running work until cpu (CPU nodes) and devices (GPU nodes) are 60-90 % used.
    let cpu_cap: i64 = cpu_nodes.iter().map(|&i| b.nodes[i].cap.cpu).sum();
    let gpu_cap: i64 = gpu_nodes.iter().map(|&i| b.nodes[i].cap.gpu).sum();
    let cpu_target = rng.range(60, 90);
    let gpu_target = rng.range(60, 90);
    let running_levels = [0, 0, 0, 100, 100, 1000];
    let mut running: Vec<PodGroupDoc> = Vec::new();
    let (mut fails, mut ri, mut solo) = (0, 0, 0);
    loop {
        let cpu_used: i64 = cpu_nodes.iter().map(|&i| b.nodes[i].used.cpu).sum();
        let gpu_used: i64 = gpu_nodes.iter().map(|&i| b.nodes[i].used.gpu).sum();
        let cpu_short = cpu_used * 100 < cpu_target * cpu_cap;
        let gpu_short = gpu_used * 100 < gpu_target * gpu_cap;
        if !(cpu_short || gpu_short) || fails >= 60 {
            break;
        }
        let gpu_side = if cpu_short && gpu_short { rng.chance(50) } else { gpu_short };
        let level = rng.pick(&running_levels);
        if !gpu_side && rng.chance(10) {
            // A pod of no group, with its own priority.
            let c = rng.pick(&[1, 2, 4]);
            let node = rng.pick(&cpu_nodes);
            let prio = if rng.chance(10) { None } else { Some(level) };
            if b.bind(rng, format!("solo-{solo:04}"), node, Req::new(cores(c), gi(2 * c), 0), None, None, prio, None) {
                solo += 1;
            } else {
                fails += 1;
            }
            continue;
        }
        let (kind, req, count, nodes) = if gpu_side && rng.chance(65) {
            let g = rng.pick(&[1, 1, 2, 2, 4, 8]);
            ("train", Req::new(g * cores(rng.range(6, 10)), g * gi(rng.pick(&[48, 64])), g * 1000), rng.range(1, 8), &gpu_nodes)
        } else if gpu_side {
            ("serve", Req::new(cores(rng.range(1, 4)), gi(rng.range(4, 16)), rng.pick(&[250, 500, 500, 750])), rng.range(1, 10), &gpu_nodes)
        } else {
            let c = rng.pick(&[1, 2, 4, 8, 16]);
            ("batch", Req::new(cores(c), gi(c * rng.pick(&[2, 4])), 0), rng.range(1, 16), &cpu_nodes)
        };
        // A few running groups are infrastructure: not preemptible.
        let infra = rng.chance(5);
        let gname = format!("run-{ri:04}");
        let pre = if infra { Some(false) } else { None };
        let bound = b.bind_members(rng, &gname, kind, nodes, req, count, pre);
        if bound == 0 {
            fails += 1;
            continue;
        }
        let mut g = PodGroupDoc { name: gname, tasks: vec![task(kind, 0, None, req)], ..Default::default() };
        preempt_priority(rng, level, &mut g);
        let podgroup = match kind {
            "train" => rng.chance(50),
            "batch" => bound > 1 && rng.chance(25),
            _ => false,
        };
        if podgroup {
            g.disruption_mode = Some("PodGroup".into());
        }
        if kind == "serve" {
            g.policy = Some("basic".into());
        }
        running.push(g);
        ri += 1;
    }

    // What pending gangs compete for: free capacity and what lower-priority pods hold.
    let free_gpu: i64 = gpu_nodes.iter().map(|&i| b.nodes[i].free().gpu).sum();
    let free_cpu: i64 = (0..n).map(|i| b.nodes[i].free().cpu).sum();
    let held_gpu = gpu_cap - free_gpu;
    let held_cpu: i64 = (0..n).map(|i| b.nodes[i].used.cpu).sum();
    let share = rng.range(35, 65);
    let gpu_demand = free_gpu + held_gpu * share / 100;
    let cpu_demand = free_cpu + held_cpu * share / 100;

    let n_groups = rng.range(groups.0, groups.1) as usize;
    // 0 = GPU gang, 1 = driver + GPU workers, 2 = CPU gang.
    let mut kinds: Vec<u8> = (0..n_groups)
        .map(|_| match rng.below(100) {
            0..=49 => 0,
            50..=61 => 1,
            _ => 2,
        })
        .collect();
    for k in 0..3u8 {
        if !kinds.contains(&k) {
            let at = rng.below(n_groups as u64) as usize;
            kinds[at] = k;
        }
    }
    let n_gpu_groups = kinds.iter().filter(|&&k| k < 2).count().max(1) as i64;
    let n_cpu_groups = kinds.iter().filter(|&&k| k == 2).count().max(1) as i64;
    let mut pending: Vec<PodGroupDoc> = Vec::new();
    let mut gpu_groups_cpu = 0;
    let mut never = false;
    for pass_gpu in [true, false] {
        let budget_each = if pass_gpu {
            gpu_demand / n_gpu_groups
        } else {
            ((cpu_demand - gpu_groups_cpu) / n_cpu_groups).max(cpu_demand / 10 / n_cpu_groups)
        };
        for (i, &kind) in kinds.iter().enumerate() {
            if (kind < 2) != pass_gpu {
                continue;
            }
            let budget = (budget_each * rng.range(50, 150) / 100).max(1);
            let mut g = PodGroupDoc { created_at: Some(rng.range(0, 3600)), ..Default::default() };
            let required = kind < 2 && rng.chance(25);
            match kind {
                0 | 1 => {
                    let cap = if required { 24 } else { 64 };
                    let (gpus, mut count) = gpu_shape(rng, budget.min(cap * 1000), 32);
                    if required {
                        count = count.min((24 / gpus).max(1));
                    }
                    let mut w = task("worker", count, None, gpu_worker(rng, gpus));
                    if count > 2 && rng.chance(15) {
                        w.min_count = Some(rng.range(count / 2, count - 1));
                    }
                    if rng.chance(40) {
                        w.node_selector.insert("pool".into(), "gpu".into());
                    }
                    if kind == 1 {
                        g.tasks.push(task("driver", 1, None, Req::new(cores(rng.range(2, 8)), gi(rng.range(8, 32)), 0)));
                        g.name = format!("hetero-{i:03}");
                    } else {
                        g.name = format!("train-{i:03}");
                    }
                    gpu_groups_cpu += w.count * req_of(&w).cpu;
                    g.tasks.push(w);
                    if required {
                        g.topology = Some(GroupTopologyDoc { required: Some(RACK.into()), preferred: None });
                    }
                }
                _ => {
                    let c = cpu_size(rng, budget, &[2, 4, 8, 16, 32], 64);
                    let count = (budget / cores(c)).clamp(1, 64);
                    let mut w = task("worker", count, None, Req::new(cores(c), gi(c * rng.pick(&[2, 4])), 0));
                    if rng.chance(50) {
                        w.node_selector.insert("pool".into(), "cpu".into());
                    }
                    g.tasks.push(w);
                    g.name = format!("batch-{i:03}");
                }
            }
            let level = match rng.below(100) {
                0..=29 => 1000,
                30..=74 => 10000,
                _ => 100000,
            };
            preempt_priority(rng, level, &mut g);
            if rng.chance(12) {
                g.preemption_policy = Some("Never".into());
                never = true;
            }
            pending.push(g);
        }
    }
    if !never {
        let at = rng.below(pending.len() as u64) as usize;
        pending[at].preemption_policy = Some("Never".into());
    }
    // Some gangs scale up: a few members already run (never victims of their own group).
    for g in pending.iter_mut() {
        if g.topology.is_none() && g.tasks.len() == 1 && rng.chance(8) {
            let t = &g.tasks[0];
            let req = req_of(t);
            let nodes = if req.gpu > 0 { &gpu_nodes } else { &cpu_nodes };
            for k in 0..rng.range(1, 2) {
                for _ in 0..10 {
                    let node = rng.pick(nodes);
                    if b.bind(rng, format!("{}-b{k}", g.name), node, req, Some(&g.name), Some(&t.name), None, None) {
                        break;
                    }
                }
            }
        }
    }
    // Pending groups in input order by name index; running ones (older) first.
    pending.sort_by(|x, y| x.name[x.name.len() - 3..].cmp(&y.name[y.name.len() - 3..]));
    b.doc.pod_groups = running;
    b.doc.pod_groups.extend(pending);
    b.doc
}

// ---------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Instance, Policy, PODS};

    fn json(doc: &InstanceDoc) -> String {
        serde_json::to_string(doc).unwrap()
    }

    fn fnv(s: &str) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }

    fn valid(class: &str, seed: u64) -> (InstanceDoc, Instance) {
        let doc = generate(class, seed).unwrap();
        let inst = Instance::from_doc(&doc).unwrap_or_else(|e| panic!("{class} seed {seed}: {e}"));
        // The wire form reads back to the same document.
        let back: InstanceDoc = from_text(&json(&doc)).unwrap();
        assert_eq!(back, doc, "{class} seed {seed}: JSON round trip");
        (doc, inst)
    }

    fn seeds(class: &str) -> u64 {
        match class {
            "tiny" | "tiny-queues" => 200,
            "hetero-trap" => 60,
            "flat-1024" | "preempt-1024" | "openb-1024" => 2,
            _ => 4,
        }
    }

    #[test]
    fn unknown_class_names_the_valid_ones() {
        let e = generate("nope", 1).unwrap_err();
        for c in classes() {
            assert!(e.contains(c), "{e}");
            assert!(describe(c).is_some());
        }
        assert!(describe("nope").is_none());
        assert!(classes().len() >= 5);
    }

    #[test]
    fn all_classes_valid_deterministic_and_seed_dependent() {
        for class in classes() {
            let mut seen = std::collections::BTreeSet::new();
            for seed in 0..seeds(class) {
                let (doc, _) = valid(class, seed);
                let a = json(&doc);
                assert_eq!(a, json(&generate(class, seed).unwrap()), "{class} seed {seed}: not deterministic");
                assert!(seen.insert(a), "{class} seed {seed}: same document as an earlier seed");
            }
        }
    }

    #[test]
    fn classes_sharing_a_seed_differ() {
        assert_ne!(json(&generate("flat-256", 7).unwrap()), json(&generate("rack-256", 7).unwrap()));
    }

    /// Pins the documents of a few seeds: instances are referred to by (class, seed) in
    /// benchmarks and bug reports, so a change here changes what those names mean.
    #[test]
    fn fingerprints_are_stable() {
        let expect: &[(&str, u64, u64)] = &[
            ("tiny", 1, 17040536750643715064),
            ("tiny", 2, 10222095279960222697),
            ("tiny-queues", 1, 6762908056401092173),
            ("tiny-queues", 2, 10822422085088490634),
            ("flat-64", 1, 15110732611997226186),
            ("rack-256", 1, 13936823619375016696),
            ("hetero-trap", 1, 13184376645843295747),
            ("preempt-256", 1, 8806117829184649194),
            ("topo-512", 1, 8731718283650777792),
            ("topo-4096", 1, 6179167110081993045),
            ("openb-256", 1, 9976030634514386663),
        ];
        let mut got = Vec::new();
        for &(class, seed, _) in expect {
            got.push((class, seed, fnv(&json(&generate(class, seed).unwrap()))));
        }
        let want: Vec<(&str, u64, u64)> = expect.to_vec();
        assert_eq!(got, want, "generator output changed; if intended, update the fingerprints");
    }

    #[test]
    fn topo_classes_have_three_levels_and_mixed_constraints() {
        for seed in 0..3 {
            let (_, inst) = valid("topo-512", seed);
            assert_eq!(inst.nodes.len(), 512);
            assert_eq!(inst.levels.len(), 4, "zone, block, rack + hostname");
            let pending: Vec<usize> = inst.pending_groups().collect();
            assert!((20..=30).contains(&pending.len()));
            let req = |l: usize| pending.iter().filter(|&&g| inst.groups[g].required == Some(l)).count();
            assert!(req(0) + req(1) + req(2) > 0, "seed {seed}: required levels");
            assert!(pending.iter().any(|&g| inst.groups[g].preferred.is_some()), "seed {seed}: preferred");
            assert!(inst.tasks.iter().any(|t| t.slice.is_some()), "seed {seed}: slices");
            // Every node has a zone.
            assert!((0..512).all(|n| inst.domain_of(n, 0).is_some()));
        }
    }

    #[test]
    fn tiny_is_brute_forceable_and_varied() {
        let (mut devices, mut topo, mut bound_members, mut slices, mut basic, mut taints) = (0, 0, 0, 0, 0, 0);
        for seed in 0..200 {
            let (doc, inst) = valid("tiny", seed);
            assert!((1..=3).contains(&inst.nodes.len()));
            let pending: Vec<usize> = inst.pending_groups().collect();
            assert!((1..=3).contains(&pending.len()), "seed {seed}");
            let pods: i64 = pending.iter().map(|&g| inst.max_new_pods(g)).sum();
            assert!(pods <= 8, "seed {seed}: {pods} pending pods");
            for &g in &pending {
                assert!((1..=2).contains(&inst.groups[g].tasks.len()));
                for &t in &inst.groups[g].tasks {
                    assert!((0..=3).contains(&inst.tasks[t].count));
                    slices += inst.tasks[t].slice.is_some() as i32;
                }
                bound_members += !inst.groups[g].bound.is_empty() as i32;
                basic += (inst.groups[g].policy == Policy::Basic) as i32;
            }
            assert!(inst.rank_levels().len() <= 3);
            devices += !doc.shared_devices.is_empty() as i32;
            topo += doc.topology.is_some() as i32;
            taints += doc.nodes.iter().any(|n| !n.taints.is_empty()) as i32;
        }
        for (what, n) in [
            ("devices", devices),
            ("topology", topo),
            ("bound members", bound_members),
            ("slices", slices),
            ("basic", basic),
            ("taints", taints),
        ] {
            assert!(n >= 10, "tiny: only {n} of 200 seeds with {what}");
        }
    }

    #[test]
    fn tiny_queues_is_brute_forceable_and_varied() {
        use crate::model::queues::{PreemptionPolicy, SortPolicy};
        let mut seen: BTreeMap<&str, i32> = BTreeMap::new();
        for seed in 0..200 {
            let (doc, inst) = valid("tiny-queues", seed);
            assert!((2..=4).contains(&inst.nodes.len()), "seed {seed}");
            let pending: Vec<usize> = inst.pending_groups().collect();
            assert!((2..=4).contains(&pending.len()), "seed {seed}");
            let pods: i64 = pending.iter().map(|&g| inst.max_new_pods(g)).sum();
            assert!(pods <= 6, "seed {seed}: {pods} pending pods");
            let qs = inst.queues.as_ref().expect("tiny-queues has queues");
            assert!((1..=2).contains(&qs.tree.root().children.len()), "seed {seed}");
            let leaves: Vec<usize> = (0..qs.tree.queues.len()).filter(|&q| qs.tree.is_leaf(q)).collect();
            assert!((2..=3).contains(&leaves.len()), "seed {seed}");
            assert!(leaves.iter().all(|&q| qs.tree.queues[q].depth == 2), "seed {seed}: leaves sit under the parents");
            let mut count = |what: &'static str, yes: bool| *seen.entry(what).or_default() += yes as i32;
            count("a max", qs.max.iter().any(|m| !m.is_empty()));
            count("maxapplications", qs.tree.queues.iter().any(|q| q.max_applications.is_some()));
            count("guaranteed", qs.guaranteed.iter().any(|g| !g.is_empty()));
            count("fair leaf", leaves.iter().any(|&q| qs.tree.queues[q].sort_policy == SortPolicy::Fair));
            count("offset", qs.tree.queues.iter().any(|q| q.offset != 0));
            count("priority fence", qs.tree.queues.iter().any(|q| q.fenced));
            count("preemption fence", qs.tree.queues.iter().any(|q| q.preemption_policy == Some(PreemptionPolicy::Fence)));
            count("preemption disabled", qs.tree.queues.iter().any(|q| q.preemption_policy == Some(PreemptionPolicy::Disabled)));
            count("yunikorn", inst.options.yunikorn_preemption);
            count("bound pods in queues", inst.pods.iter().any(|p| p.group.is_some()));
            count("pods of no queue", inst.pods.iter().any(|p| p.group.is_none()));
            count("rejected gang", pending.iter().any(|&g| inst.queue_rejection(g).is_some()));
            count("vcore", doc.queues.iter().any(|q| serde_json::to_string(q).unwrap().contains("vcore")));
        }
        for (what, n) in &seen {
            assert!(*n >= 10, "tiny-queues: only {n} of 200 seeds with {what}");
        }
        assert_eq!(seen.len(), 13);
    }

    #[test]
    fn preempt_classes_shape() {
        use crate::model::DisruptionMode;
        for (class, nodes, groups) in [("preempt-256", 256, 20..=28), ("preempt-1024", 1024, 60..=80)] {
            for seed in 0..seeds(class) {
                let (_, inst) = valid(class, seed);
                assert_eq!(inst.nodes.len(), nodes);
                let pending: Vec<usize> = inst.pending_groups().collect();
                assert!(groups.contains(&pending.len()), "{class} seed {seed}: {} pending groups", pending.len());
                // 60-90 % occupied: cpu of the CPU nodes and devices of the GPU nodes.
                for (pool, res) in [("cpu", "cpu"), ("gpu", GPU)] {
                    let r = inst.resource_id(res).unwrap();
                    let on: Vec<usize> = (0..nodes).filter(|&n| inst.nodes[n].labels["pool"] == pool).collect();
                    let cap: i64 = on.iter().map(|&n| inst.nodes[n].allocatable[r]).sum();
                    let used: i64 = inst.pods.iter().filter(|p| on.contains(&p.node)).map(|p| p.requests[r]).sum();
                    let f = used as f64 / cap as f64;
                    assert!((0.55..=0.95).contains(&f), "{class} seed {seed}: {pool} nodes {res} {:.0} % used", f * 100.0);
                }
                let top = pending.iter().map(|&g| inst.groups[g].priority).max().unwrap();
                let levels: std::collections::BTreeSet<i64> =
                    inst.pods.iter().filter(|p| p.preemptible && p.priority < top).map(|p| p.priority).collect();
                assert!(levels.len() >= 3, "{class} seed {seed}: victim levels {levels:?}");
                assert!(inst.pods.iter().any(|p| !p.preemptible), "{class} seed {seed}: no non-preemptible pods");
                let running = |m: DisruptionMode| inst.groups.iter().any(|g| !g.bound.is_empty() && g.disruption == m);
                assert!(running(DisruptionMode::PodGroup) && running(DisruptionMode::Pod), "{class} seed {seed}: disruption modes");
                assert!(pending.iter().any(|&g| inst.groups[g].preempt_never), "{class} seed {seed}: no Never gang");
                assert!(pending.iter().any(|&g| inst.groups[g].required.is_some()), "{class} seed {seed}: no topology gang");
                assert!(pending.iter().all(|&g| inst.groups[g].priority >= 1000));
                // Most gangs need evictions: first fit without them places well under half
                // the gangs the preemption baseline places, and that baseline evicts.
                let ffd = crate::solve(&inst, &crate::Options::with_solver(crate::SolverKind::Ffd));
                let k8s = crate::solve(&inst, &crate::Options::with_solver(crate::SolverKind::K8sPreempt));
                let placed = |d: &crate::Decision| d.placements.len();
                assert!(placed(&ffd) * 2 < placed(&k8s), "{class} seed {seed}: ffd places {}, k8s-preempt {}", placed(&ffd), placed(&k8s));
                assert!(!k8s.evictions.is_empty());
            }
        }
    }

    fn cpu_fraction_used(inst: &Instance) -> f64 {
        let r = inst.resource_id("cpu").unwrap();
        let cap: i64 = inst.nodes.iter().map(|n| n.allocatable[r]).sum();
        let used: i64 = inst.pods.iter().map(|p| p.requests[r]).sum();
        used as f64 / cap as f64
    }

    fn heterogeneous(inst: &Instance, g: usize) -> bool {
        inst.groups[g].tasks.iter().filter(|&&t| inst.tasks[t].count > 0).count() >= 2
    }

    #[test]
    fn flat_classes_shape() {
        for (class, nodes, groups) in
            [("flat-64", 64, 10..=20), ("flat-256", 256, 36..=44), ("flat-1024", 1024, 90..=110), ("rack-256", 256, 36..=44)]
        {
            let mut fractions = Vec::new();
            for seed in 0..seeds(class) {
                let (doc, inst) = valid(class, seed);
                assert_eq!(inst.nodes.len(), nodes, "{class}");
                let pending: Vec<usize> = inst.pending_groups().collect();
                assert!(groups.contains(&pending.len()), "{class} seed {seed}: {} pending groups", pending.len());
                assert!(pending.iter().any(|&g| heterogeneous(&inst, g)), "{class} seed {seed}: no heterogeneous gang");
                assert!(pending.iter().any(|&g| !heterogeneous(&inst, g)), "{class} seed {seed}: no homogeneous gang");
                assert!(pending.iter().any(|&g| inst.groups[g].policy == Policy::Basic), "{class} seed {seed}: no basic group");
                assert!(
                    pending.iter().any(|&g| inst.min_new_pods(g) < inst.max_new_pods(g) && inst.groups[g].policy == Policy::Gang),
                    "{class} seed {seed}: no elastic gang"
                );
                let levels = inst.rank_levels().len();
                assert!((2..=4).contains(&levels), "{class} seed {seed}: {levels} levels");
                let gpu = inst.resource_id(GPU).unwrap();
                assert!(inst.pods.iter().any(|p| p.requests[gpu] > 0 && p.requests[gpu] < 1000), "{class}: no fractional bound GPU");
                assert!(inst.pods.iter().any(|p| p.requests[gpu] >= 1000), "{class}: no whole bound GPU");
                assert!(
                    inst.tasks.iter().any(|t| t.count > 0 && t.requests[gpu] > 0 && t.requests[gpu] < 1000),
                    "{class}: no fractional pending GPU"
                );
                assert!(doc.nodes.iter().any(|n| !n.taints.is_empty()), "{class}: no tainted node");
                if class.starts_with("rack") {
                    assert_eq!(inst.levels.len(), 3);
                    assert!(pending.iter().any(|&g| inst.groups[g].required.is_some()), "{class} seed {seed}: no required topology");
                }
                let f = cpu_fraction_used(&inst);
                assert!((0.25..=0.75).contains(&f), "{class} seed {seed}: {f:.2} of cpu pre-occupied");
                fractions.push(f);
                // Demand against free capacity (whole instance, cpu and GPU).
                let free = |r: usize| -> i64 {
                    let cap: i64 = inst.nodes.iter().filter(|n| !n.unschedulable).map(|n| n.allocatable[r]).sum();
                    let used: i64 = inst.pods.iter().filter(|p| !inst.nodes[p.node].unschedulable).map(|p| p.requests[r]).sum();
                    cap - used
                };
                let demand = |r: usize| -> i64 {
                    pending
                        .iter()
                        .flat_map(|&g| inst.groups[g].tasks.iter())
                        .map(|&t| inst.tasks[t].count * inst.tasks[t].requests[r])
                        .sum()
                };
                let gratio = demand(gpu) as f64 / free(gpu) as f64;
                assert!((0.6..=2.5).contains(&gratio), "{class} seed {seed}: GPU demand {gratio:.2}x free");
                let _ = PODS;
            }
            let avg = fractions.iter().sum::<f64>() / fractions.len() as f64;
            assert!((0.3..=0.7).contains(&avg), "{class}: average pre-occupied cpu {avg:.2}");
        }
    }

    // ---- hetero-trap: simulate largest-task-first first-fit and search for a placement.

    #[derive(Clone)]
    struct Sim {
        /// Per node, per resource: free amount (non-shared resources).
        free: Vec<Vec<i64>>,
        /// Per node, per resource: per-device used milli (shared resources).
        devs: Vec<Vec<Vec<i64>>>,
    }

    fn sim(inst: &Instance) -> Sim {
        let nr = inst.resources.len();
        let mut s = Sim {
            free: inst.nodes.iter().map(|n| n.allocatable.clone()).collect(),
            devs: (0..inst.nodes.len())
                .map(|n| (0..nr).map(|r| if inst.shared[r] { vec![0; inst.device_count(n, r)] } else { Vec::new() }).collect())
                .collect(),
        };
        for p in &inst.pods {
            for r in 0..nr {
                if inst.shared[r] {
                    for &d in p.devices.get(&r).into_iter().flatten() {
                        s.devs[p.node][r][d] += p.requests[r].min(1000);
                    }
                } else {
                    s.free[p.node][r] -= p.requests[r];
                }
            }
        }
        s
    }

    fn node_fits(inst: &Instance, n: usize, t: usize) -> bool {
        let node = &inst.nodes[n];
        let task = &inst.tasks[t];
        !node.unschedulable
            && task.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v))
            && node.taints.iter().filter(|x| x.effect != "PreferNoSchedule").all(|x| {
                task.tolerations.iter().any(|tol| {
                    let key = if tol.exists { tol.key.is_empty() || tol.key == x.key } else { tol.key == x.key && tol.value == x.value };
                    key && (tol.effect.is_empty() || tol.effect == x.effect)
                })
            })
    }

    /// Places one pod of task `t` on node `n` (first-fit devices) if it fits.
    #[allow(clippy::needless_range_loop)]
    fn place(inst: &Instance, s: &mut Sim, n: usize, t: usize) -> bool {
        if !node_fits(inst, n, t) {
            return false;
        }
        let req = &inst.tasks[t].requests;
        let pods_r = inst.resource_id(PODS);
        let mut next = s.clone();
        for r in 0..inst.resources.len() {
            if inst.shared[r] {
                let devs = &mut next.devs[n][r];
                if req[r] == 0 {
                    continue;
                } else if req[r] < 1000 {
                    match devs.iter().position(|&u| u + req[r] <= 1000) {
                        Some(d) => devs[d] += req[r],
                        None => return false,
                    }
                } else {
                    let free: Vec<usize> = (0..devs.len()).filter(|&d| devs[d] == 0).take((req[r] / 1000) as usize).collect();
                    if free.len() < (req[r] / 1000) as usize {
                        return false;
                    }
                    for d in free {
                        devs[d] = 1000;
                    }
                }
            } else {
                if Some(r) == pods_r && !inst.nodes[n].limits_pods {
                    continue;
                }
                next.free[n][r] -= req[r];
                if next.free[n][r] < 0 {
                    return false;
                }
            }
        }
        *s = next;
        true
    }

    fn first_fit(inst: &Instance, g: usize, key: &dyn Fn(usize) -> i64) -> bool {
        let mut s = sim(inst);
        let mut tasks = inst.groups[g].tasks.clone();
        tasks.sort_by_key(|&t| std::cmp::Reverse(key(t)));
        for t in tasks {
            for _ in 0..inst.tasks[t].count {
                if !(0..inst.nodes.len()).any(|n| place(inst, &mut s, n, t)) {
                    return false;
                }
            }
        }
        true
    }

    /// Exhaustive: every pod of the group placed (pods of one task on non-decreasing nodes).
    fn exists(inst: &Instance, pods: &[usize], s: &Sim, from: usize) -> bool {
        let Some((&t, rest)) = pods.split_first() else { return true };
        for n in from..inst.nodes.len() {
            let mut next = s.clone();
            if place(inst, &mut next, n, t) {
                let start = if rest.first() == Some(&t) { n } else { 0 };
                if exists(inst, rest, &next, start) {
                    return true;
                }
            }
        }
        false
    }

    #[test]
    fn hetero_trap_defeats_largest_first_first_fit() {
        let mut variants = std::collections::BTreeSet::new();
        for seed in 0..seeds("hetero-trap") {
            let (doc, inst) = valid("hetero-trap", seed);
            let g = inst.group_id(TRAP_GROUP).unwrap();
            assert!(heterogeneous(&inst, g), "seed {seed}");
            let cpu = inst.resource_id("cpu").unwrap();
            let mem = inst.resource_id("memory").unwrap();
            let by_cpu = |t: usize| inst.tasks[t].requests[cpu];
            let by_mem = |t: usize| inst.tasks[t].requests[mem];
            let by_sum = |t: usize| {
                inst.tasks[t]
                    .requests
                    .iter()
                    .enumerate()
                    .filter(|&(r, _)| Some(r) != inst.resource_id(PODS))
                    .map(|(_, &v)| v.min(1 << 40) >> 10)
                    .sum::<i64>()
            };
            for (name, key) in [("cpu", &by_cpu as &dyn Fn(usize) -> i64), ("memory", &by_mem), ("sum", &by_sum)] {
                assert!(!first_fit(&inst, g, key), "seed {seed}: first-fit by {name} places the trap gang");
            }
            let pods: Vec<usize> =
                inst.groups[g].tasks.iter().flat_map(|&t| std::iter::repeat_n(t, inst.tasks[t].count as usize)).collect();
            assert!(exists(&inst, &pods, &sim(&inst), 0), "seed {seed}: no placement exists");
            variants.insert((
                !doc.shared_devices.is_empty(),
                inst.groups[g].tasks.len(),
                doc.nodes.iter().any(|n| n.taints.iter().any(|t| t.value.as_deref() == Some("batch"))),
            ));
        }
        assert_eq!(variants.len(), 4, "all four trap variants appear: {variants:?}");
    }
}
