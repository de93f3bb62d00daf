//! Classes where the scheduler baselines' rules must show: Kueue's profiles differ only
//! for unconstrained requests (PodSets without topology annotations on a TAS flavor,
//! slice-only requests) and in how `preferred` spreads; YuniKorn's only in queue order and
//! headroom. Each class is small enough that the exact solver proves most seeds.
//!
//! - `tas-unconstrained`: zone > rack > 16 nodes of mixed sizes, some in a `pool=x`;
//!   high-priority gangs without topology, wider than any node (where LeastFreeCapacity
//!   fills small nodes first and BestFit large ones), then lower-priority groups that
//!   need particular nodes (pool=x, or pods as large as a node);
//! - `tas-preferred-slices`: the same cluster shape with `preferred` rack/zone groups,
//!   slice-only groups (slices of a rack or host, no required/preferred: unconstrained at
//!   the top level) and some `required` rack groups;
//! - `tas-queues`: a YuniKorn queue tree with tight `max` (some leaves at their limit with
//!   running work), `guaranteed` and `maxapplications`, FIFO and FAIR leaves, over a rack
//!   topology; gangs and basic groups, with and without topology, in every leaf.

use super::*;

const POOL: &str = "pool";

/// 16 nodes: zones z0, z1 > racks r0..r3 > 4 nodes; sizes mixed per rack so that
/// LeastFreeCapacity and BestFit order them differently; one node per rack in `pool=x`
/// (some racks two); 0-40 % pre-occupied by non-preemptible pods.
fn cluster(rng: &mut Rng, b: &mut Builder) -> Vec<usize> {
    b.doc.topology = Some(TopologyDoc { levels: vec![ZONE.into(), RACK.into()] });
    let mut nodes = Vec::new();
    for r in 0..4 {
        let zone = format!("z{}", r / 2);
        let rack = format!("r{r}");
        let mut sizes = [4i64, 8, 8, 16];
        rng.shuffle(&mut sizes);
        let pool = rng.below(4) as usize;
        for (i, &c) in sizes.iter().enumerate() {
            let mut s = NodeSpec::new(format!("{rack}-n{i}"), cores(c), gi(c * 4));
            s.labels = labels(&[(ZONE, &zone), (RACK, &rack)]);
            if i == pool || rng.chance(15) {
                s.labels.insert(POOL.into(), "x".into());
            }
            nodes.push(b.add_node(s));
        }
    }
    for (k, &n) in nodes.clone().iter().enumerate() {
        let cap = b.nodes[n].cap.cpu / 1000;
        let used = rng.range(0, cap * 2 / 5);
        if used > 0 {
            b.bind(rng, format!("sys-{k}"), n, Req::new(cores(used), gi(used), 0), None, None, None, Some(false));
        }
    }
    nodes
}

fn group(name: String, priority: i64, created: i64) -> PodGroupDoc {
    PodGroupDoc { name, priority: Some(priority), created_at: Some(created), ..Default::default() }
}

pub(super) fn gen_tas_unconstrained(rng: &mut Rng) -> InstanceDoc {
    let mut b = Builder::default();
    cluster(rng, &mut b);
    let mut groups = Vec::new();
    // Wide gangs without topology: more pods than the largest node holds.
    for i in 0..rng.range(3, 5) {
        let cpu = rng.pick(&[2i64, 3, 4]);
        let count = rng.range(16 / cpu + 1, 32 / cpu);
        let mut g = group(format!("wide-{i}"), 100, i);
        g.tasks.push(task("w", count, None, Req::new(cores(cpu), gi(cpu), 0)));
        if rng.chance(30) {
            g.policy = Some("basic".into());
        }
        groups.push(g);
    }
    // Picky groups: the pool, or pods as large as the largest nodes.
    for i in 0..rng.range(4, 7) {
        let mut g = group(format!("picky-{i}"), 10, 10 + i);
        if rng.chance(60) {
            let cpu = rng.pick(&[2i64, 4, 6]);
            let mut t = task("w", rng.range(1, 3), None, Req::new(cores(cpu), gi(cpu), 0));
            t.node_selector.insert(POOL.into(), "x".into());
            g.tasks.push(t);
        } else {
            let cpu = rng.pick(&[8i64, 12, 16]);
            g.tasks.push(task("w", rng.range(1, 2), None, Req::new(cores(cpu), gi(cpu), 0)));
        }
        groups.push(g);
    }
    b.doc.pod_groups = groups;
    b.doc
}

pub(super) fn gen_tas_preferred_slices(rng: &mut Rng) -> InstanceDoc {
    let mut b = Builder::default();
    cluster(rng, &mut b);
    let mut groups = Vec::new();
    let n = rng.range(6, 9);
    for i in 0..n {
        let priority = rng.pick(&[0i64, 10, 100]);
        let mut g = group(format!("g{i}"), priority, i);
        let cpu = rng.pick(&[1i64, 2, 4]);
        let kind = rng.below(4);
        let mut t = task("w", 0, None, Req::new(cores(cpu), gi(cpu), 0));
        match kind {
            // Preferred rack or zone, sometimes with host slices.
            0 => {
                g.topology = Some(GroupTopologyDoc { required: None, preferred: Some(rng.pick(&[RACK, ZONE]).into()) });
                t.count = rng.range(4, 20);
                if rng.chance(40) {
                    let k = rng.pick(&[2i64, 4]);
                    t.count = t.count / k * k + k;
                    t.slice = Some(SliceDoc { topology: HOST.into(), size: k });
                }
            }
            // Slice-only: unconstrained at the top level, slices of a rack or host.
            1 => {
                let (level, k) = if rng.chance(50) { (RACK, rng.pick(&[4i64, 6, 8])) } else { (HOST, rng.pick(&[2i64, 3])) };
                t.count = k * rng.range(1, 4);
                t.slice = Some(SliceDoc { topology: level.into(), size: k });
            }
            // Required rack.
            2 => {
                g.topology = Some(GroupTopologyDoc { required: Some(RACK.into()), preferred: None });
                t.count = rng.range(2, 8);
            }
            // Nothing: implied TAS.
            _ => {
                t.count = rng.range(3, 12);
                if rng.chance(40) {
                    t.node_selector.insert(POOL.into(), "x".into());
                    t.count = t.count.min(3);
                }
            }
        }
        if rng.chance(25) {
            t.min_count = Some(t.count / 2);
        }
        g.tasks.push(t);
        groups.push(g);
    }
    b.doc.pod_groups = groups;
    b.doc
}

pub(super) fn gen_tas_queues(rng: &mut Rng) -> InstanceDoc {
    let mut b = Builder::default();
    let nodes = cluster(rng, &mut b);
    // root > {team-a > {a1, a2}, team-b > {b1}} plus root.default.
    let mut tree =
        GenQueues { queues: vec![GenQueue { name: "root".into(), path: "root".into(), ..Default::default() }], cpu_key: "vcore" };
    fn add(tree: &mut GenQueues, name: &str, parent: usize) -> usize {
        let id = tree.queues.len();
        let path = format!("{}.{name}", tree.queues[parent].path);
        tree.queues.push(GenQueue { name: name.into(), path, parent: Some(parent), ..Default::default() });
        tree.queues[parent].children.push(id);
        id
    }
    let ta = add(&mut tree, "team-a", 0);
    let tb = add(&mut tree, "team-b", 0);
    let a1 = add(&mut tree, "a1", ta);
    let a2 = add(&mut tree, "a2", ta);
    let b1 = add(&mut tree, "b1", tb);
    let _default = add(&mut tree, "default", 0);
    tree.queues[ta].max_cpu = Some(cores(rng.range(40, 64)));
    tree.queues[ta].guaranteed_cpu = Some(cores(rng.range(16, 32)));
    tree.queues[tb].max_cpu = Some(cores(rng.range(24, 48)));
    tree.queues[tb].guaranteed_cpu = Some(cores(rng.range(8, 16)));
    tree.queues[a1].max_cpu = Some(cores(rng.range(16, 32)));
    tree.queues[a2].max_cpu = Some(cores(rng.range(12, 24)));
    if rng.chance(50) {
        tree.queues[a2].properties.push(("application.sort.policy", "fair".into()));
    }
    if rng.chance(40) {
        tree.queues[b1].max_apps = Some(rng.range(2, 4) as u64);
        tree.queues[tb].max_apps = tree.queues[b1].max_apps;
    }
    if rng.chance(30) {
        tree.queues[tb].properties.push(("priority.offset", "10".into()));
    }
    let leaves = [a1, a2, b1];
    // Running work in the leaves, within every limit.
    for (k, &leaf) in leaves.iter().enumerate() {
        let name = format!("run-{k}");
        let req = Req::new(cores(2), gi(2), 0);
        let mut bound = 0;
        for m in 0..rng.range(1, 5) {
            let node = rng.pick(&nodes);
            let first = bound == 0;
            if tree.room(leaf, req, first) && b.bind(rng, format!("{name}-{m}"), node, req, Some(&name), Some("main"), None, None) {
                tree.take(leaf, req, first);
                bound += 1;
            }
        }
        let mut g = group(name, 0, 0);
        g.queue = Some(tree.queues[leaf].path.clone());
        g.tasks.push(task("main", 0, None, req));
        b.doc.pod_groups.push(g);
    }
    for i in 0..rng.range(8, 12) {
        let leaf = rng.pick(&leaves);
        let fair_leaf = tree.queues[leaf].properties.iter().any(|(k, v)| *k == "application.sort.policy" && v == "fair");
        let mut g = group(format!("g{i}"), rng.pick(&[0i64, 10]), 10 + i);
        g.queue = Some(tree.queues[leaf].path.clone());
        let cpu = rng.pick(&[1i64, 2, 4]);
        let mut t = task("w", rng.range(2, 10), None, Req::new(cores(cpu), gi(cpu), 0));
        if fair_leaf || rng.chance(30) {
            g.policy = Some("basic".into());
        } else if rng.chance(30) {
            t.min_count = Some(t.count / 2);
        }
        match rng.below(4) {
            0 => g.topology = Some(GroupTopologyDoc { required: None, preferred: Some(RACK.into()) }),
            1 if g.policy.is_none() => g.topology = Some(GroupTopologyDoc { required: Some(RACK.into()), preferred: None }),
            _ => {}
        }
        g.tasks.push(t);
        b.doc.pod_groups.push(g);
    }
    b.doc.queues = vec![tree.doc(0)];
    b.doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Instance;

    fn inst(class: &str, seed: u64) -> Instance {
        Instance::from_doc(&generate(class, seed).unwrap()).unwrap_or_else(|e| panic!("{class} seed {seed}: {e}"))
    }

    /// Every seed is valid; the groups each class is made for are there.
    #[test]
    fn profile_classes_have_their_groups() {
        for seed in 0..40 {
            // Topology-free gangs wider than the largest node (no single node holds them).
            let i = inst("tas-unconstrained", seed);
            let cpu = i.resource_id("cpu").unwrap();
            let largest = i.nodes.iter().map(|n| n.allocatable[cpu]).max().unwrap();
            let wide = i
                .groups
                .iter()
                .filter(|g| g.required.is_none() && g.preferred.is_none())
                .filter(|g| g.tasks.iter().map(|&t| i.tasks[t].count * i.tasks[t].requests[cpu]).sum::<i64>() > largest);
            assert!(wide.count() >= 3, "tas-unconstrained seed {seed}");
            assert_eq!(i.levels.len(), 3);

            let i = inst("tas-preferred-slices", seed);
            assert!(i.pending_groups().count() >= 6);

            let i = inst("tas-queues", seed);
            let qs = i.queues.as_ref().expect("queues");
            assert_eq!(qs.tree.queues.len(), 7, "root, two parents, three leaves, default");
            assert!(i.groups.iter().any(|g| !g.bound.is_empty()), "running work in the leaves");
        }
        // Across seeds: slice-only and preferred groups, FAIR leaves and maxapplications.
        let mut slice_only = 0;
        let mut preferred = 0;
        let (mut fair, mut max_apps) = (0, 0);
        for seed in 0..40 {
            let i = inst("tas-preferred-slices", seed);
            slice_only += i
                .groups
                .iter()
                .filter(|g| g.required.is_none() && g.preferred.is_none() && g.tasks.iter().any(|&t| i.tasks[t].slice.is_some()))
                .count();
            preferred += i.groups.iter().filter(|g| g.preferred.is_some()).count();
            let q = inst("tas-queues", seed);
            let tree = &q.queues.as_ref().unwrap().tree;
            fair += tree.queues.iter().filter(|x| x.sort_policy == crate::model::queues::SortPolicy::Fair).count();
            max_apps += tree.queues.iter().filter(|x| x.max_applications.is_some()).count();
        }
        assert!(slice_only >= 20 && preferred >= 20, "slice-only {slice_only}, preferred {preferred}");
        assert!(fair >= 5 && max_apps >= 5, "fair {fair}, maxapplications {max_apps}");
    }
}
