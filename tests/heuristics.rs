//! The heuristic baselines (`src/baselines`, `ffd` among them): every decision
//! passes the validator on generated instances; one hand-made instance per heuristic where
//! it is provably suboptimal (worked out by hand below) and the exact solver does better;
//! and the exact solver is never worse than any heuristic on terms 1-3.

use std::cmp::Ordering;

use tessera::tooling::generate;
use tessera::wire::decision::Decision;
use tessera::wire::OptionsDoc;
use tessera::{check, Instance, Options, SolverKind, Status};

const HEURISTICS: &[&str] =
    &["ffd", "bfd", "k8s-pod", "k8s-pod-mostalloc", "k8s-podgroup", "kueue", "kueue-bestfit", "yunikorn-fair", "yunikorn-binpacking"];

fn solver(name: &str) -> SolverKind {
    SolverKind::from_name(name).unwrap_or_else(|| panic!("solver {name} not registered"))
}

fn assert_valid(inst: &Instance, d: &Decision, what: &str) {
    let report = check::check(inst, d);
    assert!(report.is_valid(), "{what}: invalid decision\n{}\n{}", check::render(&report), d.to_yaml());
}

fn instances() -> Vec<(String, Instance)> {
    let mut v = Vec::new();
    for seed in 0..60 {
        let doc = generate::generate("tiny", seed).unwrap();
        v.push((format!("tiny/{seed}"), Instance::from_doc(&doc).unwrap()));
    }
    for seed in 0..32 {
        let doc = generate::generate("hetero-trap", seed).unwrap();
        v.push((format!("hetero-trap/{seed}"), Instance::from_doc(&doc).unwrap()));
    }
    for seed in 0..8 {
        let mut doc = generate::generate("flat-64", seed).unwrap();
        doc.options.get_or_insert_with(OptionsDoc::default).preemption = Some(false);
        v.push((format!("flat-64/{seed}"), Instance::from_doc(&doc).unwrap()));
    }
    // Topology (required/preferred racks and zones, slices) at a larger scale.
    for seed in 0..3 {
        let mut doc = generate::generate("rack-256", seed).unwrap();
        doc.options.get_or_insert_with(OptionsDoc::default).preemption = Some(false);
        v.push((format!("rack-256/{seed}"), Instance::from_doc(&doc).unwrap()));
    }
    for seed in 0..2 {
        let doc = generate::generate("preempt-256", seed).unwrap();
        v.push((format!("preempt-256/{seed}"), Instance::from_doc(&doc).unwrap()));
    }
    v
}

#[test]
fn every_heuristic_is_registered_and_named() {
    let names: Vec<&str> = SolverKind::ALL.iter().map(|s| s.name()).collect();
    for h in HEURISTICS {
        assert!(names.contains(h), "{h} missing from SolverKind::ALL: {names:?}");
    }
    for s in SolverKind::ALL {
        assert!(!s.describe().is_empty());
    }
}

#[test]
fn heuristic_decisions_pass_check_on_generated_instances() {
    for (name, inst) in instances() {
        for h in HEURISTICS {
            let s = solver(h);
            let d = s.solve(&inst, &Options::default());
            assert_eq!(d.status, Status::Feasible, "{h} on {name}");
            assert!(d.evictions.is_empty(), "{h} on {name} evicts");
            assert_valid(&inst, &d, &format!("{h} on {name}"));
            // Deterministic: the same input gives the same decision.
            let again = s.solve(&inst, &Options::default());
            assert_eq!(d.without_timings().placements, again.without_timings().placements, "{h} on {name} not deterministic");
        }
    }
}

#[test]
fn exact_is_never_worse_than_any_heuristic_on_tiny_instances() {
    let exact = solver("exact");
    for seed in 1000..1200 {
        let doc = generate::generate("tiny", seed).unwrap();
        let inst = Instance::from_doc(&doc).unwrap();
        let e = exact.solve(&inst, &Options::default());
        assert_valid(&inst, &e, &format!("exact on tiny/{seed}"));
        for h in HEURISTICS {
            let d = solver(h).solve(&inst, &Options::default());
            assert_valid(&inst, &d, &format!("{h} on tiny/{seed}"));
            assert_ne!(
                e.objective.compare(&d.objective),
                Ordering::Less,
                "exact worse than {h} on tiny/{seed}:\nexact {:?}\n{h} {:?}",
                e.objective,
                d.objective
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hand-made instances: one per heuristic where it is provably suboptimal. Only `cpu` is
// declared, so every score below is computed on cpu alone.
// ---------------------------------------------------------------------------------------

/// (priority, placed) per level, highest first.
fn placed(d: &Decision) -> Vec<(i64, i64)> {
    d.objective.placed_by_priority.iter().map(|r| (r.priority.0[0], r.placed)).collect()
}

/// Runs heuristic `h` and the exact solver; both valid, exact strictly better; returns
/// (heuristic, exact) decisions.
fn worse(yaml: &str, h: &str) -> (Decision, Decision) {
    let inst = Instance::from_text(yaml).unwrap();
    let hd = solver(h).solve(&inst, &Options::default());
    let ed = solver("exact").solve(&inst, &Options::default());
    assert_valid(&inst, &hd, h);
    assert_valid(&inst, &ed, "exact");
    assert_eq!(ed.status, Status::Optimal);
    assert_eq!(ed.objective.compare(&hd.objective), Ordering::Greater, "exact {:?} vs {h} {:?}", ed.objective, hd.objective);
    (hd, ed)
}

/// Spreading (LeastAllocated) blocks a big pod. n1, n2: cpu 4. `small` (priority 10) is a
/// gang of 2 pods of cpu 2; `big` (priority 0) one pod of cpu 4. Queue: s0, s1, big.
/// s0: both nodes score (4-2)/4 = 0.5, tie -> n1. s1: n1 scores 0, n2 0.5 -> n2. big: 2
/// free on each node -> unschedulable. k8s-pod places 1 of 2 groups; exact puts both
/// small pods on n1 and big on n2: 2 of 2.
#[test]
fn k8s_pod_least_allocated_spreading_blocks_a_big_pod() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: small, priority: 10, createdAt: 0, tasks: [{name: w, count: 2, requests: {cpu: "2"}}]}
  - {name: big, priority: 0, createdAt: 0, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
"#;
    let (h, e) = worse(yaml, "k8s-pod");
    assert_eq!(placed(&h), vec![(10, 1), (0, 0)]);
    assert_eq!(placed(&e), vec![(10, 1), (0, 1)]);
    let nodes: Vec<&str> = h.placements[0].pods.iter().map(|p| p.node.as_str()).collect();
    assert_eq!(nodes, vec!["n1", "n2"]);
}

/// Two interleaved gangs deadlock under the 1.35 Permit barrier. n1, n2: cpu 4; gangs A and
/// B (same priority and createdAt), each 2 pods of cpu 3. Queue: A0, B0, A1, B1 (pods of
/// tied groups alternate). A0: both nodes score 3/4, tie -> n1. B0: n1 has 1 left -> n2.
/// A1, B1: 1 cpu free on each node -> unschedulable. Neither gang reaches minCount 2 at
/// Permit: both are released at the end, 0 of 2 placed. Exact: A on n1 and n2, 1 of 2.
#[test]
fn k8s_pod_mostalloc_interleaved_gangs_deadlock_at_permit() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: a, createdAt: 0, tasks: [{name: w, count: 2, requests: {cpu: "3"}}]}
  - {name: b, createdAt: 0, tasks: [{name: w, count: 2, requests: {cpu: "3"}}]}
"#;
    let (h, e) = worse(yaml, "k8s-pod-mostalloc");
    assert_eq!(placed(&h), vec![(0, 0)]);
    assert_eq!(placed(&e), vec![(0, 1)]);
    // The default (LeastAllocated) profile deadlocks the same way.
    let (h, _) = worse(yaml, "k8s-pod");
    assert_eq!(placed(&h), vec![(0, 0)]);
}

/// The fixed-order failure of a heterogeneous group (1.36 pod-group cycle). n1: cpu 4,
/// n2: cpu 2. One gang with task `a` (written first, 1 pod of cpu 2) and task `b` (1 pod
/// of cpu 4). Fixed order a, b: a scores (4-2)/4 = 0.5 on n1 and 0 on n2 -> n1; b needs
/// 4, n1 has 2 and n2 has 2 -> the gang is infeasible, 0 placed. Exact: a on n2, b on n1.
#[test]
fn k8s_podgroup_fixed_order_fails_a_heterogeneous_gang() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "2"}}
podGroups:
  - name: hetero
    tasks:
      - {name: a, count: 1, requests: {cpu: "2"}}
      - {name: b, count: 1, requests: {cpu: "4"}}
"#;
    let (h, e) = worse(yaml, "k8s-podgroup");
    assert_eq!(placed(&h), vec![(0, 0)]);
    assert_eq!(placed(&e), vec![(0, 1)]);
}

/// Best fit (and first fit) takes the tight node another group needs. n1: cpu 4, label
/// pool=x (listed first); n2: cpu 8. `a`: 1 pod of cpu 3 (size 3/8); `b`: 1 pod of cpu 2
/// with nodeSelector pool=x (size 2/8); same priority, so `a` goes first (decreasing
/// size). bfd: remaining after a is 1/4 on n1 and 5/8 on n2 -> n1; ffd: n1 is first. Then
/// b fits only on n1, which has 1 cpu left: 1 of 2 placed. Exact: a on n2, b on n1.
#[test]
fn bfd_and_ffd_take_the_tight_node_a_selector_needs() {
    let yaml = r#"
nodes:
  - {name: n1, labels: {pool: x}, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "8"}}
podGroups:
  - {name: a, tasks: [{name: w, count: 1, requests: {cpu: "3"}}]}
  - {name: b, tasks: [{name: w, count: 1, requests: {cpu: "2"}, nodeSelector: {pool: x}}]}
"#;
    for h in ["bfd", "ffd"] {
        let (hd, ed) = worse(yaml, h);
        assert_eq!(placed(&hd), vec![(0, 1)], "{h}");
        assert_eq!(hd.placements[0].pod_group, "a");
        assert_eq!(hd.placements[0].pods[0].node, "n1", "{h}");
        assert_eq!(placed(&ed), vec![(0, 2)]);
    }
}

/// YuniKorn `fair` node sort spreads and blocks a big pod. n1, n2: cpu 4. App `small`
/// (priority 10): gang of 2 pods of cpu 2 (2 placeholders); app `big` (priority 0): 1 pod of
/// cpu 4. Placeholder 1: both nodes fully available, tie -> n1; placeholder 2: n2 is more
/// available -> n2. big: 2 free on each -> not allocated: 1 of 2. Exact: 2 of 2.
#[test]
fn yunikorn_fair_spreading_blocks_a_big_pod() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: small, priority: 10, tasks: [{name: w, count: 2, requests: {cpu: "2"}}]}
  - {name: big, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
"#;
    let (h, e) = worse(yaml, "yunikorn-fair");
    assert_eq!(placed(&h), vec![(10, 1), (0, 0)]);
    assert_eq!(placed(&e), vec![(10, 1), (0, 1)]);
}

/// YuniKorn `binpacking` fills the fuller node that a later app needs. n1: cpu 4, pool=x,
/// 1 cpu held by a non-preemptible running pod (3/4 available); n2: cpu 8 (all available).
/// App `a` (priority 10): 1 pod of cpu 2 -> least available first: n1. App `b` (priority 0):
/// 1 pod of cpu 2 with nodeSelector pool=x: n1 has 1 left -> not allocated: 1 of 2.
/// Exact: a on n2, b on n1.
#[test]
fn yunikorn_binpacking_fills_the_node_a_selector_needs() {
    let yaml = r#"
nodes:
  - {name: n1, labels: {pool: x}, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "8"}}
podGroups:
  - {name: a, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: b, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}, nodeSelector: {pool: x}}]}
pods:
  - {name: sys, node: n1, requests: {cpu: "1"}, preemptible: false}
"#;
    let (h, e) = worse(yaml, "yunikorn-binpacking");
    assert_eq!(placed(&h), vec![(10, 1), (0, 0)]);
    assert_eq!(h.placements[0].pods[0].node, "n1");
    assert_eq!(placed(&e), vec![(10, 1), (0, 1)]);
}

/// Kueue BestFit on a required rack takes the tightest rack, which a later workload needs.
/// r1 = {n1, n2} (cpu 2 each, pool=x), r2 = {n3} (cpu 6). `a` (priority 10): gang of 2 pods
/// of cpu 2, required rack: capacity r1 = 2 pods, r2 = 3 pods; both fit, BestFit picks the
/// least free: r1. `b` (priority 0): 1 pod of cpu 2, nodeSelector pool=x: r1 is full -> 1 of
/// 2. Exact: a in r2, b on n1: 2 of 2.
#[test]
fn kueue_bestfit_takes_the_tight_rack_a_later_workload_needs() {
    let yaml = r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: n1, labels: {example.com/rack: r1, pool: x}, allocatable: {cpu: "2"}}
  - {name: n2, labels: {example.com/rack: r1, pool: x}, allocatable: {cpu: "2"}}
  - {name: n3, labels: {example.com/rack: r2}, allocatable: {cpu: "6"}}
podGroups:
  - {name: a, priority: 10, topology: {required: example.com/rack}, tasks: [{name: w, count: 2, requests: {cpu: "2"}}]}
  - {name: b, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}, nodeSelector: {pool: x}}]}
"#;
    let (h, e) = worse(yaml, "kueue-bestfit");
    assert_eq!(placed(&h), vec![(10, 1), (0, 0)]);
    assert_eq!(h.placements[0].domains.get("example.com/rack").map(|s| s.as_str()), Some("r1"));
    assert_eq!(placed(&e), vec![(10, 1), (0, 1)]);
}

/// Kueue's default (Mixed) profile places a PodSet without topology annotations
/// (implied TAS, unconstrained at the hostname level) by LeastFreeCapacity; with
/// `TASProfileMixed` off it is BestFit. n1: cpu 1, n2: cpu 2 (pool=x), n3: cpu 3. `a`
/// (priority 10): gang of 4 pods of cpu 1: no single node holds 4. LeastFreeCapacity fills
/// nodes by increasing capacity: n1 1, n2 2, n3 1 (n2 full). BestFit fills by decreasing
/// capacity, the last node the tightest that holds the rest: n3 3, then of n2 (2) and n1
/// (1) the tightest holding 1: n1. `b` (priority 0): 1 pod of cpu 2 on pool=x (n2 only):
/// `kueue` leaves it out (1 of 2), `kueue-bestfit` places it on n2 (2 of 2, = exact).
#[test]
fn kueue_mixed_fills_small_nodes_first_for_podsets_without_topology() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "1"}}
  - {name: n2, labels: {pool: x}, allocatable: {cpu: "2"}}
  - {name: n3, allocatable: {cpu: "3"}}
podGroups:
  - {name: a, priority: 10, tasks: [{name: w, count: 4, requests: {cpu: "1"}}]}
  - {name: b, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}, nodeSelector: {pool: x}}]}
"#;
    let (h, e) = worse(yaml, "kueue");
    assert_eq!(placed(&h), vec![(10, 1), (0, 0)]);
    let on = |d: &Decision, node: &str| d.placements[0].pods.iter().filter(|p| p.node == node).count();
    assert_eq!((on(&h, "n1"), on(&h, "n2"), on(&h, "n3")), (1, 2, 1));
    assert_eq!(placed(&e), vec![(10, 1), (0, 1)]);
    let inst = Instance::from_text(yaml).unwrap();
    let b = solver("kueue-bestfit").solve(&inst, &Options::default());
    assert_valid(&inst, &b, "kueue-bestfit");
    assert_eq!(placed(&b), vec![(10, 1), (0, 1)]);
    assert_eq!((on(&b, "n1"), on(&b, "n2"), on(&b, "n3")), (1, 0, 3));
}
