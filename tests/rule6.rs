//! Rule 6 without priority inversion (semantics.md): every eviction must be needed by the
//! groups allowed to evict the victim. Hand-computed cases, each solved by the exact
//! engine and the brute-force reference, every decision checked by the validator, and
//! the inversion the old reading allowed shown to be rejected.

mod reference;

use tessera::wire::decision::{Decision, EvictedRow, Eviction, Objective, PlacedPod, PlacedRow, Placement, Status};
use tessera::{check, Instance, Options, SolverKind};

fn solve(inst: &Instance) -> Decision {
    let d = tessera::solve(inst, &Options { time_limit: Some(std::time::Duration::from_secs(60)), ..Options::default() });
    let report = check(inst, &d);
    assert!(report.is_valid(), "exact decision fails check:\n{}\n{}", tessera::check::render(&report), d.to_yaml());
    assert_eq!(d.status, Status::Optimal, "{}", d.to_yaml());
    d
}

/// Placed/pending per level (highest first) and evicted pods per victim level.
fn objective(placed: &[(i64, i64, i64)], evicted: &[(i64, i64)]) -> (Vec<PlacedRow>, Vec<EvictedRow>) {
    (
        placed.iter().map(|&(p, k, n)| PlacedRow { priority: p.into(), placed: k, pending: n }).collect(),
        evicted.iter().map(|&(p, k)| EvictedRow { priority: p, pods: k }).collect(),
    )
}

/// The exact decision and the reference optimum both have terms 1-2 `want`.
fn assert_optimum(inst: &Instance, want: (Vec<PlacedRow>, Vec<EvictedRow>)) -> Decision {
    let d = solve(inst);
    let reference = reference::solve(inst);
    let terms = |o: &Objective| (o.placed_by_priority.clone(), o.evicted_by_priority.clone());
    assert_eq!(terms(&reference.objective), want, "reference");
    assert_eq!(terms(&d.objective), want, "exact:\n{}", d.to_yaml());
    let witness = check(inst, &reference.witness);
    assert!(witness.is_valid(), "the reference's optimum fails check:\n{}", tessera::check::render(&witness));
    d
}

fn evicted(d: &Decision) -> Vec<&str> {
    d.evictions.iter().map(|e| e.pod.as_str()).collect()
}

fn placement(group: &str, pods: &[(&str, &str)]) -> Placement {
    Placement {
        pod_group: group.into(),
        domains: Default::default(),
        pods: pods.iter().map(|&(task, node)| PlacedPod { task: task.into(), node: node.into(), device_ids: Default::default() }).collect(),
    }
}

/// `d` with its objective as the validator counts it (so that only the hard rules speak).
fn recount(inst: &Instance, mut d: Decision) -> Decision {
    d.objective = check(inst, &d).objective;
    d
}

/// One node, 64 cpu: a system pod (20, not preemptible) and two priority-0 pods of 14 and
/// 22 cpu, 8 free. `hi` (priority 10000) needs 16: evicting the 14-cpu pod is enough
/// (22 free). `eq` (priority 0) needs `EQ` cpu and may not evict priority-0 pods.
const NODE_0139: &str = r#"
nodes: [{name: node-0139, allocatable: {cpu: "64"}}]
podGroups:
  - {name: hi, priority: 10000, tasks: [{name: w, count: 1, requests: {cpu: "16"}}]}
  - {name: eq, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "EQ"}}]}
pods:
  - {name: sys, node: node-0139, priority: 100000, preemptible: false, requests: {cpu: "20"}}
  - {name: v14, node: node-0139, requests: {cpu: "14"}}
  - {name: v22, node: node-0139, requests: {cpu: "22"}}
"#;

#[test]
fn only_what_the_higher_priority_group_needs_is_evicted() {
    // eq needs 16: after hi, 6 are left; it would fit only if v22 went too, which nothing
    // allowed to evict v22 needs (hi fits with v22 back: 20 + 22 + 16 = 58 <= 64).
    let inst = Instance::from_text(&NODE_0139.replace("EQ", "16")).unwrap();
    let d = assert_optimum(&inst, objective(&[(10000, 1, 1), (0, 0, 1)], &[(0, 1)]));
    assert_eq!(evicted(&d), ["v14"]);
    // The inversion the old reading allowed: both evicted, eq in v22's room.
    let inversion = Decision {
        placements: vec![placement("hi", &[("w", "node-0139")]), placement("eq", &[("w", "node-0139")])],
        evictions: vec![Eviction { pod: "v14".into(), preemptor: "hi".into() }, Eviction { pod: "v22".into(), preemptor: "hi".into() }],
        ..d.clone()
    };
    let report = check(&inst, &recount(&inst, inversion));
    let text = tessera::check::render(&report);
    assert!(
        text.contains("eviction of v22 (priority 0) on node node-0139 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; its room is used by eq, which may not evict it"),
        "{text}"
    );
    // eq needs 6: it fits in what is left after hi, and may use it.
    let inst = Instance::from_text(&NODE_0139.replace("EQ", "6")).unwrap();
    let d = assert_optimum(&inst, objective(&[(10000, 1, 1), (0, 1, 1)], &[(0, 1)]));
    assert_eq!(evicted(&d), ["v14"]);
}

#[test]
fn a_never_group_uses_only_room_left_over() {
    // 12 cpu: sys 4 (not preemptible), v1 4 and v2 2 (priority 0), 2 free. hi (100) needs
    // 4: one eviction (v1 -> 6 free, or v2 -> 4 free). nev (100, Never) needs 4 as well:
    // after hi at most 2 are left, and evicting the other pod too is needed by no group
    // that may evict (hi fits with it back), so nev stays out.
    let yaml = r#"
nodes: [{name: n, allocatable: {cpu: "12"}}]
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
  - {name: nev, priority: 100, preemptionPolicy: Never, tasks: [{name: w, count: 1, requests: {cpu: "NEV"}}]}
pods:
  - {name: sys, node: n, preemptible: false, priority: 1000, requests: {cpu: "4"}}
  - {name: v1, node: n, requests: {cpu: "4"}}
  - {name: v2, node: n, requests: {cpu: "2"}}
"#;
    let inst = Instance::from_text(&yaml.replace("NEV", "4")).unwrap();
    assert_optimum(&inst, objective(&[(100, 1, 2)], &[(0, 1)]));
    // nev needs 2: with v1 gone (6 free) both fit; nev uses the room hi left over.
    let inst = Instance::from_text(&yaml.replace("NEV", "2")).unwrap();
    let d = assert_optimum(&inst, objective(&[(100, 2, 2)], &[(0, 1)]));
    assert_eq!(evicted(&d), ["v1"]);
}

#[test]
fn a_podgroup_unit_is_needed_as_a_whole() {
    // lo (priority 5, disruptionMode PodGroup) runs lo-0 on n1 and lo-1 on n2, 2 cpu each;
    // each node (4 cpu) also runs a 1-cpu system pod. hi (10) needs 3 on n1: lo must go,
    // both members. Put back, lo overflows n1 (1 + 2 + 3 > 4): needed, by hi. The room lo-1
    // leaves on n2 is then left over, and eq (5, may not evict lo) may use it.
    let yaml = r#"
nodes: [{name: n1, labels: {zone: a}, allocatable: {cpu: "4"}}, {name: n2, allocatable: {cpu: "4"}}]
podGroups:
  - {name: hi, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "3"}, nodeSelector: {zone: a}}]}
  - {name: eq, priority: 5, tasks: [{name: w, count: 1, requests: {cpu: "3"}}]}
  - {name: lo, priority: 5, disruptionMode: PodGroup, tasks: [{name: w, count: 0, requests: {cpu: "2"}}]}
pods:
  - {name: s1, node: n1, preemptible: false, priority: 100, requests: {cpu: "1"}}
  - {name: s2, node: n2, preemptible: false, priority: 100, requests: {cpu: "1"}}
  - {name: lo-0, node: n1, podGroup: lo, requests: {cpu: "2"}}
  - {name: lo-1, node: n2, podGroup: lo, requests: {cpu: "2"}}
"#;
    let inst = Instance::from_text(yaml).unwrap();
    let d = assert_optimum(&inst, objective(&[(10, 1, 1), (5, 1, 1)], &[(5, 2)]));
    assert_eq!(evicted(&d), ["lo-0", "lo-1"]);
    assert!(d.placements.iter().any(|p| p.pod_group == "eq" && p.pods[0].node == "n2"), "{}", d.to_yaml());
}

#[test]
fn a_device_can_be_the_witness() {
    // Two GPUs: v (priority 0) holds 500m of device 0, a system pod 700m of device 1. hi
    // (10) needs a 600m share: neither device has room, so v goes and hi takes device 0.
    // Put back, v overflows device 0 (500 + 600 > 1000), although the node's total (1800
    // of 2000) would fit: the device is the witness. lo (0) needs 600m too and may not
    // evict v: it stays out.
    let yaml = r#"
sharedDevices: [nvidia.com/gpu]
nodes: [{name: g, allocatable: {cpu: "16", nvidia.com/gpu: 2}}]
podGroups:
  - {name: hi, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "1", nvidia.com/gpu: 600m}}]}
  - {name: lo, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "1", nvidia.com/gpu: 600m}}]}
pods:
  - {name: sys, node: g, preemptible: false, priority: 100, requests: {nvidia.com/gpu: 700m}, deviceIds: {nvidia.com/gpu: [1]}}
  - {name: v, node: g, requests: {nvidia.com/gpu: 500m}, deviceIds: {nvidia.com/gpu: [0]}}
"#;
    let inst = Instance::from_text(yaml).unwrap();
    let d = assert_optimum(&inst, objective(&[(10, 1, 1), (0, 0, 1)], &[(0, 1)]));
    assert_eq!(evicted(&d), ["v"]);
    assert_eq!(d.placements[0].pods[0].device_ids["nvidia.com/gpu"], vec![0]);
}

#[test]
fn a_queue_limit_can_be_the_witness() {
    // root.a may use 4 cpu; v (priority 0, 2 cpu) runs in it on n1. hi (10, 3 cpu, also
    // in root.a) has room on n2 but not in the queue (2 + 3 > 4): v goes, and put back it
    // would break the queue's max. hi (kept off n1 by its node affinity) is named
    // although it is not on v's node.
    let yaml = r#"
nodes: [{name: n1, allocatable: {cpu: "4"}}, {name: n2, labels: {pool: big}, allocatable: {cpu: "8"}}]
queues:
  - name: root
    queues:
      - {name: a, resources: {max: {cpu: "4"}}}
      - {name: default}
podGroups:
  - {name: hi, queue: root.a, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "3"}, nodeAffinity: [[{key: pool, operator: Exists}]]}]}
  - {name: run, queue: root.a, tasks: [{name: w, count: 0, requests: {cpu: "2"}}]}
pods:
  - {name: v, node: n1, podGroup: run, requests: {cpu: "2"}}
"#;
    let inst = Instance::from_text(yaml).unwrap();
    let d = assert_optimum(&inst, objective(&[(10, 1, 1)], &[(0, 1)]));
    assert_eq!(d.evictions, vec![Eviction { pod: "v".into(), preemptor: "hi".into() }]);
    assert_eq!(d.placements[0].pods[0].node, "n2");
}

#[test]
fn every_evicting_solver_obeys_it() {
    for yaml in [NODE_0139.replace("EQ", "16"), NODE_0139.replace("EQ", "6")] {
        let inst = Instance::from_text(&yaml).unwrap();
        for &kind in SolverKind::ALL {
            let d = kind.solve(&inst, &Options::default());
            let report = check(&inst, &d);
            assert!(report.is_valid(), "{}: {}", kind.name(), tessera::check::render(&report));
        }
    }
}
