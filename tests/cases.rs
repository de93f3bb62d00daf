//! Hand-computed cases: small instances whose optimum is worked out by hand in the comment
//! above each one (the arithmetic is shown). Every case asserts that the exact solver says
//! `Optimal`, that the independent validator finds no violation, that the reported
//! objective (placedByPriority rows, extraPods; no evictions) equals the hand value, and,
//! where the placement is forced, which nodes and devices the pods get.
//!
//! A few cases also run the `ffd` heuristic where it is provably worse than the optimum:
//! its decision must still pass the validator, and its objective must compare worse.
//!
//! Reminders used in the arithmetic (semantics.md / instance-format.md):
//! - `extraPods` = sum over placed groups of (new pods - minimum new pods), where the
//!   minimum of a gang is max(sum of task minCounts, group minCount - bound members, 1)
//!   and the minimum of a basic group is 1 pod;
//! - task `minCount` defaults to `count`, group `minCount` to the sum of task minCounts;
//! - policy defaults to `gang`, priority to 0; a bound pod without a group has priority 0,
//!   so a priority-0 group can never evict it (victims must be strictly lower).

mod common;

use common::*;
use tessera::wire::decision::{Decision, Status};
use tessera::{check, Instance};
// ---------------------------------------------------------------------------------------
// Gangs
// ---------------------------------------------------------------------------------------

/// Gang all-or-nothing.
/// Each node has 4 cpu, a pod needs 3: floor(4/3) = 1 pod per node, 3 nodes -> 3 pods.
/// The gang needs all 4 (minCount defaults to count = 4): 3 < 4, so nothing is placed.
/// Objective: [0: 0/1], extraPods 0. The reason mentions the 4 pods it needs.
#[test]
fn gang_all_or_nothing_places_nothing_when_only_part_fits() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
  - {name: n3, allocatable: {cpu: "4"}}
podGroups:
  - name: gang-4
    tasks: [{name: w, count: 4, requests: {cpu: "3"}}]
"#,
        &[(0, 0, 1)],
        0,
    );
    assert!(d.placements.is_empty());
    assert_unplaced(&d, "gang-4", &["4"]);
}

/// Gang all-or-nothing next to a basic group of lower priority.
/// gang-4 (priority 100) cannot be placed (as above: 3 slots of 3 cpu for 4 pods).
/// best-effort (priority 1, basic, 1 cpu each): 3 nodes x 4 cpu = 12 >= 10 pods -> all 10.
/// Nothing is reserved for the failed gang. Objective: [100: 0/1, 1: 1/1],
/// extraPods = 10 - 1 (basic minimum) = 9.
#[test]
fn failed_gang_reserves_nothing_for_a_basic_group() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
  - {name: n3, allocatable: {cpu: "4"}}
podGroups:
  - name: best-effort
    priority: 1
    policy: basic
    tasks: [{name: w, count: 10, requests: {cpu: "1"}}]
  - name: gang-4
    priority: 100
    tasks: [{name: w, count: 4, requests: {cpu: "3"}}]
"#,
        &[(100, 0, 1), (1, 1, 1)],
        9,
    );
    assert_eq!(placement(&d, "best-effort").pods.len(), 10);
    assert_unplaced(&d, "gang-4", &[]);
}

/// Group minCount counts bound members.
/// job: minCount 4, task w count 4 minCount 0, 2 bound members (1 cpu each) on n1.
/// Minimum new pods = max(task mins 0, 4 - 2 bound, 1) = 2.
/// n1: 4 cpu - 2 bound = 2 free -> exactly 2 new pods of 1 cpu; 2 new + 2 bound = 4 >= 4.
/// Forced: 2 pods on n1. Objective: [0: 1/1], extraPods = 2 - 2 = 0.
#[test]
fn gang_min_count_counts_bound_members() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    minCount: 4
    tasks: [{name: w, count: 4, minCount: 0, requests: {cpu: "1"}}]
pods:
  - {name: job-0, node: n1, podGroup: job, task: w, requests: {cpu: "1"}}
  - {name: job-1, node: n1, podGroup: job, task: w, requests: {cpu: "1"}}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "job", "w"), counts(&[("n1", 2)]));
}

/// Contrast: the same capacity, but the two bound pods are NOT members of the group.
/// Minimum new pods = max(0, 4 - 0, 1) = 4, n1 has 2 free -> 2 < 4: unplaced.
/// (The bound pods have priority 0 = the group's: no eviction is allowed.)
/// Objective: [0: 0/1], extraPods 0.
#[test]
fn gang_min_count_without_bound_members_needs_all_new_pods() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    minCount: 4
    tasks: [{name: w, count: 4, minCount: 0, requests: {cpu: "1"}}]
pods:
  - {name: other-0, node: n1, requests: {cpu: "1"}}
  - {name: other-1, node: n1, requests: {cpu: "1"}}
"#,
        &[(0, 0, 1)],
        0,
    );
    assert_unplaced(&d, "job", &[]);
}

/// Per-task minCount: elastic workers beyond the minimum are extra pods.
/// driver: 1 pod (min 1), worker: count 6 minCount 2; every pod 2 cpu.
/// Capacity: n1 8/2 = 4 pods, n2 4/2 = 2 pods -> 6 pods = driver + 5 workers.
/// Minimum new pods = 1 + 2 = 3, placed 6 -> extraPods = 3. Objective: [0: 1/1].
#[test]
fn per_task_min_count_elastic_workers_are_extra() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "8"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    tasks:
      - {name: driver, count: 1, requests: {cpu: "2"}}
      - {name: worker, count: 6, minCount: 2, requests: {cpu: "2"}}
"#,
        &[(0, 1, 1)],
        3,
    );
    let p = placement(&d, "job");
    assert_eq!(p.pods.iter().filter(|x| x.task == "driver").count(), 1);
    assert_eq!(p.pods.iter().filter(|x| x.task == "worker").count(), 5);
}

/// A task minCount that cannot be met blocks the whole group.
/// ps: 3 pods of 3 cpu, minCount 3; nodes of 4 cpu hold floor(4/3) = 1 each -> 2 < 3.
/// The workers alone (1 cpu) would fit, but the gang is all or nothing.
/// Objective: [0: 0/1], extraPods 0; the reason names the task ps.
#[test]
fn unmet_task_min_count_blocks_the_group() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    tasks:
      - {name: ps, count: 3, minCount: 3, requests: {cpu: "3"}}
      - {name: worker, count: 4, minCount: 1, requests: {cpu: "1"}}
"#,
        &[(0, 0, 1)],
        0,
    );
    assert!(d.placements.is_empty());
    assert_unplaced(&d, "job", &["ps"]);
}

/// Contrast: ps minCount 2 can be met.
/// ps: one pod per node (3 + 3 > 4), so 2 ps (the third does not fit: 6 cpu taken of 8,
/// 1 cpu left per node). Workers: 1 cpu left on each node -> 2 workers.
/// Minimum = 2 + 1 = 3, placed 2 + 2 = 4 -> extraPods 1. Objective: [0: 1/1].
/// Forced: ps one on each node, worker one on each node.
#[test]
fn met_task_min_count_places_the_group_with_elastic_workers() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    tasks:
      - {name: ps, count: 3, minCount: 2, requests: {cpu: "3"}}
      - {name: worker, count: 4, minCount: 1, requests: {cpu: "1"}}
"#,
        &[(0, 1, 1)],
        1,
    );
    assert_eq!(per_node(&d, "job", "ps"), counts(&[("n1", 1), ("n2", 1)]));
    assert_eq!(per_node(&d, "job", "worker"), counts(&[("n1", 1), ("n2", 1)]));
}

// ---------------------------------------------------------------------------------------
// Basic groups
// ---------------------------------------------------------------------------------------

/// Basic groups: partial placement counts as placed.
/// web: 5 pods of 3 cpu; n1 holds floor(4/3) = 1, n2 floor(7/3) = 2 -> 3 pods (forced
/// per node). huge: 10 cpu per pod > 7 (largest node) -> none, unplaced, reason names cpu.
/// Objective: [0: 1/2], extraPods = 3 - 1 = 2.
#[test]
fn basic_group_partial_placement() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "7"}}
podGroups:
  - name: huge
    policy: basic
    tasks: [{name: s, count: 2, requests: {cpu: "10"}}]
  - name: web
    policy: basic
    tasks: [{name: s, count: 5, requests: {cpu: "3"}}]
"#,
        &[(0, 1, 2)],
        2,
    );
    assert_eq!(per_node(&d, "web", "s"), counts(&[("n1", 1), ("n2", 2)]));
    assert_unplaced(&d, "huge", &["cpu"]);
}

/// A basic group ignores task minCounts (its minimum is one pod).
/// task count 4 minCount 4, pods of 3 cpu on one 7-cpu node -> 2 pods; as a basic group
/// it is placed with 2 (a gang would need 4). Objective: [0: 1/1], extraPods = 2 - 1 = 1.
#[test]
fn basic_group_ignores_task_min_count() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "7"}}
podGroups:
  - name: web
    policy: basic
    tasks: [{name: s, count: 4, minCount: 4, requests: {cpu: "3"}}]
"#,
        &[(0, 1, 1)],
        1,
    );
    assert_eq!(per_node(&d, "web", "s"), counts(&[("n1", 2)]));
}

// ---------------------------------------------------------------------------------------
// Priorities
// ---------------------------------------------------------------------------------------

/// One high-priority gang beats three low-priority ones.
/// high: 2 pods of 3 cpu; 3 + 3 > 4 so one per node, leaving 1 cpu on each node.
/// Each low group needs 2 cpu -> none fits next to high.
/// Without high: 2 low pods per node -> all 3 lows would be placed (3 groups > 1).
/// Term 1 is lexicographic by priority: [100: 1/1, 1: 0/3], extraPods 0.
#[test]
fn priority_dominance_one_high_gang_beats_three_low() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: low-a, priority: 1, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: low-b, priority: 1, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: low-c, priority: 1, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: high, priority: 100, tasks: [{name: w, count: 2, requests: {cpu: "3"}}]}
"#,
        &[(100, 1, 1), (1, 0, 3)],
        0,
    );
    assert_eq!(per_node(&d, "high", "w"), counts(&[("n1", 1), ("n2", 1)]));
    for g in ["low-a", "low-b", "low-c"] {
        assert_unplaced(&d, g, &[]);
    }
}

/// Extra pods go to the higher priority first.
/// n1: 4 cpu. lo (priority 5) and hi (priority 10): count 3, minCount 1, 1 cpu each.
/// Minimums: 1 + 1 = 2 cpu; 2 cpu left for 2 extra pods in any case (extraPods = 2).
/// Higher priority first: both extras go to hi (3 pods, its count), lo keeps 1.
/// Objective: [10: 1/1, 5: 1/1], extraPods 2.
#[test]
fn extra_pods_go_to_higher_priority_first() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: lo, priority: 5, tasks: [{name: w, count: 3, minCount: 1, requests: {cpu: "1"}}]}
  - {name: hi, priority: 10, tasks: [{name: w, count: 3, minCount: 1, requests: {cpu: "1"}}]}
"#,
        &[(10, 1, 1), (5, 1, 1)],
        2,
    );
    assert_eq!(placement(&d, "hi").pods.len(), 3, "hi should get both extra pods");
    assert_eq!(placement(&d, "lo").pods.len(), 1, "lo should keep only its minimum");
}

// ---------------------------------------------------------------------------------------
// Heterogeneous gangs
// ---------------------------------------------------------------------------------------

/// Heterogeneous gang needing one specific pairing of tasks to nodes.
/// Demand 2 + 4 + 6 = 12 cpu = supply 6 + 4 + 2: a perfect packing.
/// b (6) fits only n1; then n1 is full, so c (4) fits only n2; then a (2) only n3.
/// Fixed order a, c, b with first fit would put a on n1 (4 left), c on n1 (0 left), and
/// find no room for b. Objective: [0: 1/1], extraPods 0.
#[test]
fn heterogeneous_gang_needs_the_right_pairing() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "6", memory: 8Gi}}
  - {name: n2, allocatable: {cpu: "4", memory: 8Gi}}
  - {name: n3, allocatable: {cpu: "2", memory: 8Gi}}
podGroups:
  - name: hetero
    tasks:
      - {name: a, count: 1, requests: {cpu: "2", memory: 1Gi}}
      - {name: c, count: 1, requests: {cpu: "4", memory: 1Gi}}
      - {name: b, count: 1, requests: {cpu: "6", memory: 1Gi}}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "hetero", "b"), counts(&[("n1", 1)]));
    assert_eq!(per_node(&d, "hetero", "c"), counts(&[("n2", 1)]));
    assert_eq!(per_node(&d, "hetero", "a"), counts(&[("n3", 1)]));
}

/// The two-node trap of the Kubernetes talk, with the small task first in the file.
/// large (8 cpu) fits only big-node; small (4 cpu) then fits only small-node.
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn heterogeneous_gang_small_task_first_does_not_take_the_big_node() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: big-node, allocatable: {cpu: "8", memory: 32Gi}}
  - {name: small-node, allocatable: {cpu: "4", memory: 32Gi}}
podGroups:
  - name: hetero
    tasks:
      - {name: small, count: 1, requests: {cpu: "4", memory: 4Gi}}
      - {name: large, count: 1, requests: {cpu: "8", memory: 4Gi}}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "hetero", "large"), counts(&[("big-node", 1)]));
    assert_eq!(per_node(&d, "hetero", "small"), counts(&[("small-node", 1)]));
}

// ---------------------------------------------------------------------------------------
// Shared devices
// ---------------------------------------------------------------------------------------

/// A fractional share must fit inside ONE device.
/// n1 has 2 GPUs, each half used by a bound pod (deviceIds 0 and 1): 500m + 500m = 1.0
/// GPU free in total, but no device has 750m. big-share (750m) cannot be placed.
/// pair (2 x 500m, gang): one pod on each device's free half -> devices {0} and {1}.
/// Objective: [0: 1/2], extraPods 0. The reason of big-share names nvidia.com/gpu.
#[test]
fn fractional_share_must_fit_in_one_device() {
    let (_, d) = exact(
        r#"
sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: n1, allocatable: {cpu: "8", nvidia.com/gpu: 2}}
podGroups:
  - name: big-share
    tasks: [{name: s, count: 1, requests: {cpu: "1", nvidia.com/gpu: 750m}}]
  - name: pair
    tasks: [{name: s, count: 2, requests: {cpu: "1", nvidia.com/gpu: 500m}}]
pods:
  - {name: old-0, node: n1, requests: {cpu: "1", nvidia.com/gpu: 500m}, deviceIds: {nvidia.com/gpu: [0]}}
  - {name: old-1, node: n1, requests: {cpu: "1", nvidia.com/gpu: 500m}, deviceIds: {nvidia.com/gpu: [1]}}
"#,
        &[(0, 1, 2)],
        0,
    );
    assert_unplaced(&d, "big-share", &["nvidia.com/gpu"]);
    assert_eq!(devices(&d, "pair", "s", "nvidia.com/gpu"), vec![("n1".to_string(), vec![0]), ("n1".to_string(), vec![1])]);
}

/// A whole-device request needs completely free devices.
/// n1: 3 GPUs; slivers of 100m hold devices 0 and 1. Free share 900 + 900 + 1000 = 2800m,
/// at least the 2000m asked, but only device 2 is completely free: two-gpus (2 whole) cannot be placed;
/// one-gpu (1 whole) must take device 2. Objective: [0: 1/2], extraPods 0.
#[test]
fn whole_device_requests_need_completely_free_devices() {
    let (_, d) = exact(
        r#"
sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: n1, allocatable: {cpu: "8", nvidia.com/gpu: 3}}
podGroups:
  - name: two-gpus
    tasks: [{name: t, count: 1, requests: {nvidia.com/gpu: 2}}]
  - name: one-gpu
    tasks: [{name: t, count: 1, requests: {nvidia.com/gpu: 1}}]
pods:
  - {name: sliver-0, node: n1, requests: {nvidia.com/gpu: 100m}, deviceIds: {nvidia.com/gpu: [0]}}
  - {name: sliver-1, node: n1, requests: {nvidia.com/gpu: 100m}, deviceIds: {nvidia.com/gpu: [1]}}
"#,
        &[(0, 1, 2)],
        0,
    );
    assert_unplaced(&d, "two-gpus", &["nvidia.com/gpu"]);
    assert_eq!(devices(&d, "one-gpu", "t", "nvidia.com/gpu"), vec![("n1".to_string(), vec![2])]);
}

/// Two 0.5 pods share one device; a third does not fit (1.5 > 1).
/// n1 has 1 GPU. pair: count 3, minCount 2, 500m each -> 2 pods on device 0 (1000m), the
/// third would need 1500m on the only device. Objective: [0: 1/1], extraPods = 2 - 2 = 0.
#[test]
fn two_half_shares_share_one_device() {
    let (_, d) = exact(
        r#"
sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: n1, allocatable: {cpu: "8", nvidia.com/gpu: 1}}
podGroups:
  - name: pair
    tasks: [{name: s, count: 3, minCount: 2, requests: {cpu: "1", nvidia.com/gpu: 500m}}]
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(devices(&d, "pair", "s", "nvidia.com/gpu"), vec![("n1".to_string(), vec![0]), ("n1".to_string(), vec![0])]);
}

/// deviceIds of bound pods are respected (the bound pod sits on device 1, not 0).
/// Device 0: 1000m free; device 1: 1000 - 600 = 400m free.
/// whole (1 GPU) needs a completely free device -> device 0. frac (400m) cannot share
/// device 0 (held whole) -> device 1, exactly filling it. Objective: [0: 1/1], extra 0.
#[test]
fn bound_device_ids_are_respected() {
    let (_, d) = exact(
        r#"
sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: n1, allocatable: {cpu: "8", nvidia.com/gpu: 2}}
podGroups:
  - name: job
    tasks:
      - {name: whole, count: 1, requests: {nvidia.com/gpu: 1}}
      - {name: frac, count: 1, requests: {nvidia.com/gpu: 400m}}
pods:
  - {name: old, node: n1, requests: {nvidia.com/gpu: 600m}, deviceIds: {nvidia.com/gpu: [1]}}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(devices(&d, "job", "whole", "nvidia.com/gpu"), vec![("n1".to_string(), vec![0])]);
    assert_eq!(devices(&d, "job", "frac", "nvidia.com/gpu"), vec![("n1".to_string(), vec![1])]);
}

// ---------------------------------------------------------------------------------------
// Node fit: selectors, taints, tolerations, cordoned nodes
// ---------------------------------------------------------------------------------------

/// One node (4 cpu) and one 1-pod group of 1 cpu: placed iff the node passes the filters
/// (Kubernetes toleration matching). Objective: [0: 1/1] or [0: 0/1], extraPods 0.
#[test]
fn taints_tolerations_selectors_one_node_table() {
    // (name, node extras, task extras, placed, fragment of the reason when unplaced)
    let table: &[(&str, &str, &str, bool, &str)] = &[
        (
            "Equal toleration matches a NoSchedule taint",
            "taints: [{key: dedicated, value: ml, effect: NoSchedule}]",
            "tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]",
            true,
            "",
        ),
        (
            "operator omitted means Equal",
            "taints: [{key: dedicated, value: ml, effect: NoSchedule}]",
            "tolerations: [{key: dedicated, value: ml}]",
            true,
            "",
        ),
        (
            "Equal toleration with another value does not match",
            "taints: [{key: dedicated, value: ml, effect: NoSchedule}]",
            "tolerations: [{key: dedicated, operator: Equal, value: web, effect: NoSchedule}]",
            false,
            "dedicated",
        ),
        ("no toleration for a NoSchedule taint", "taints: [{key: dedicated, value: ml, effect: NoSchedule}]", "", false, "dedicated"),
        (
            "Exists toleration with a key and no effect matches a NoExecute taint",
            "taints: [{key: dedicated, value: ml, effect: NoExecute}]",
            "tolerations: [{key: dedicated, operator: Exists}]",
            true,
            "",
        ),
        (
            "toleration for NoSchedule does not tolerate NoExecute",
            "taints: [{key: dedicated, value: ml, effect: NoExecute}]",
            "tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]",
            false,
            "dedicated",
        ),
        (
            "Exists toleration for NoSchedule does not tolerate NoExecute",
            "taints: [{key: dedicated, effect: NoExecute}]",
            "tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]",
            false,
            "dedicated",
        ),
        ("PreferNoSchedule is ignored", "taints: [{key: noisy, value: x, effect: PreferNoSchedule}]", "", true, ""),
        (
            "empty-key Exists toleration tolerates every taint",
            "taints: [{key: alpha, value: '1', effect: NoSchedule}, {key: bravo, effect: NoExecute}]",
            "tolerations: [{operator: Exists}]",
            true,
            "",
        ),
        (
            "a toleration for one of two taints is not enough",
            "taints: [{key: alpha, value: '1', effect: NoSchedule}, {key: bravo, effect: NoExecute}]",
            "tolerations: [{key: alpha, operator: Equal, value: '1'}]",
            false,
            "bravo",
        ),
        (
            "Equal toleration without value matches a taint without value",
            "taints: [{key: gpu, effect: NoSchedule}]",
            "tolerations: [{key: gpu, operator: Equal, effect: NoSchedule}]",
            true,
            "",
        ),
        (
            "an unschedulable node takes nothing, whatever the tolerations",
            "unschedulable: true",
            "tolerations: [{operator: Exists}]",
            false,
            "unschedulable",
        ),
        ("nodeSelector matches", "labels: {pool: gpu, zone: a}", "nodeSelector: {pool: gpu}", true, ""),
        ("nodeSelector value differs", "labels: {pool: cpu}", "nodeSelector: {pool: gpu}", false, "pool"),
        ("nodeSelector: all labels must match", "labels: {pool: gpu}", "nodeSelector: {pool: gpu, zone: a}", false, "zone"),
    ];
    for &(name, node, task, placed, fragment) in table {
        let node_sep = if node.is_empty() { "" } else { ", " };
        let task_sep = if task.is_empty() { "" } else { ", " };
        let yaml = format!(
            "nodes:\n  - {{name: n1, allocatable: {{cpu: \"4\"}}{node_sep}{node}}}\npodGroups:\n  - name: g\n    tasks: [{{name: w, count: 1, requests: {{cpu: \"1\"}}{task_sep}{task}}}]\n"
        );
        let inst = parse(&yaml);
        let d = run("exact", &inst);
        assert_eq!(d.status, Status::Optimal, "{name}");
        let report = check::check(&inst, &d);
        assert!(report.violations.is_empty(), "{name}: {:#?}", report.violations);
        assert_eq!(d.objective.placed_by_priority, rows(&[(0, placed as i64, 1)]), "{name}:\n{yaml}\n{}", d.to_yaml());
        assert_eq!(d.objective.extra_pods, 0, "{name}");
        if placed {
            assert_eq!(per_node(&d, "g", "w"), counts(&[("n1", 1)]), "{name}");
        } else {
            assert_unplaced(&d, "g", &[fragment]);
        }
    }
}

/// Node fit forces the only fitting node.
/// The pod wants pool=gpu and tolerates nothing:
///   tainted (NoSchedule, not tolerated), cordoned (unschedulable), cpu-node (pool=cpu)
///   are out; prefer (PreferNoSchedule, ignored) is the only fit -> forced there.
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn node_fit_forces_the_only_fitting_node() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: tainted, labels: {pool: gpu}, allocatable: {cpu: "8"}, taints: [{key: dedicated, value: ml, effect: NoSchedule}]}
  - {name: cordoned, labels: {pool: gpu}, allocatable: {cpu: "8"}, unschedulable: true}
  - {name: cpu-node, labels: {pool: cpu}, allocatable: {cpu: "8"}}
  - {name: prefer, labels: {pool: gpu}, allocatable: {cpu: "8"}, taints: [{key: noisy, effect: PreferNoSchedule}]}
podGroups:
  - name: g
    tasks: [{name: w, count: 1, requests: {cpu: "1"}, nodeSelector: {pool: gpu}}]
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "g", "w"), counts(&[("prefer", 1)]));
}

// ---------------------------------------------------------------------------------------
// The `pods` resource
// ---------------------------------------------------------------------------------------

/// A node declaring `pods: 2` holds at most 2 pods, bound ones included.
/// n1: pods 2, one bound pod -> 1 new pod (cpu alone would allow 7).
/// n2: declares no `pods` -> unlimited pod count; cpu 2 -> 2 pods.
/// web (basic, 5 x 1 cpu): 1 + 2 = 3 pods, forced per node.
/// Objective: [0: 1/1], extraPods = 3 - 1 = 2.
#[test]
fn pods_resource_counts_bound_pods() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "8", pods: 2}}
  - {name: n2, allocatable: {cpu: "2"}}
podGroups:
  - name: web
    policy: basic
    tasks: [{name: s, count: 5, requests: {cpu: "1"}}]
pods:
  - {name: old, node: n1, requests: {cpu: "1"}}
"#,
        &[(0, 1, 1)],
        2,
    );
    assert_eq!(per_node(&d, "web", "s"), counts(&[("n1", 1), ("n2", 2)]));
}

// ---------------------------------------------------------------------------------------
// Required topology
// ---------------------------------------------------------------------------------------

/// Required topology: one rack.
/// 4 pods of 2 cpu. r1: r1-a 4/2 = 2 + r1-b 4/2 = 2 -> 4 pods. r2: r2-a 6/2 = 3 < 4.
/// `loose` (100 cpu) has no rack label and cannot host the group. Forced: rack r1, two
/// pods on each of r1-a and r1-b. Objective: [0: 1/1], extraPods 0.
#[test]
fn required_topology_one_rack() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: loose, allocatable: {cpu: "100"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "6"}}
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
  - {name: r1-b, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    topology: {required: example.com/rack}
    tasks: [{name: w, count: 4, requests: {cpu: "2"}}]
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "job", "w"), counts(&[("r1-a", 2), ("r1-b", 2)]));
    assert_eq!(placement(&d, "job").domains.get("example.com/rack").map(String::as_str), Some("r1"));
}

/// A bound member pins the rack.
/// job: count 4, minCount 1 (elastic), 2 cpu; one bound member on r2-a (2 cpu).
/// Unpinned, r1-a (16 cpu) would take all 4 pods (3 extra). Pinned to r2: r2-a has
/// 6 - 2 = 4 free -> 2 new pods. Minimum new = max(1, group minCount 1 - 1 bound, 1) = 1,
/// so extraPods = 2 - 1 = 1. Objective: [0: 1/1], extraPods 1. Forced: 2 pods on r2-a.
#[test]
fn bound_member_pins_the_rack() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "16"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "6"}}
podGroups:
  - name: job
    topology: {required: example.com/rack}
    tasks: [{name: w, count: 4, minCount: 1, requests: {cpu: "2"}}]
pods:
  - {name: job-0, node: r2-a, podGroup: job, task: w, requests: {cpu: "2"}}
"#,
        &[(0, 1, 1)],
        1,
    );
    assert_eq!(per_node(&d, "job", "w"), counts(&[("r2-a", 2)]));
    assert_eq!(placement(&d, "job").domains.get("example.com/rack").map(String::as_str), Some("r2"));
}

/// Required topology that cannot be met.
/// a) job-a's bound member runs on `loose`, which has no rack label: no single rack can
///    hold every pod of the group -> unplaced.
/// b) job-b's bound members already run in r1 and r2 -> unplaced.
/// c) job-c is fine otherwise but only `loose` passes its nodeSelector, and `loose` has no
///    rack label -> unplaced, the reason names the level.
/// All capacity is ample. Objective: [0: 0/3], extraPods 0.
#[test]
fn required_topology_that_cannot_be_met() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "16"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "16"}}
  - {name: loose, labels: {kind: loose}, allocatable: {cpu: "16"}}
podGroups:
  - name: job-a
    topology: {required: example.com/rack}
    tasks: [{name: w, count: 2, minCount: 1, requests: {cpu: "1"}}]
  - name: job-b
    topology: {required: example.com/rack}
    tasks: [{name: w, count: 2, minCount: 1, requests: {cpu: "1"}}]
  - name: job-c
    topology: {required: example.com/rack}
    tasks: [{name: w, count: 1, requests: {cpu: "1"}, nodeSelector: {kind: loose}}]
pods:
  - {name: a-0, node: loose, podGroup: job-a, task: w, requests: {cpu: "1"}}
  - {name: b-0, node: r1-a, podGroup: job-b, task: w, requests: {cpu: "1"}}
  - {name: b-1, node: r2-a, podGroup: job-b, task: w, requests: {cpu: "1"}}
"#,
        &[(0, 0, 3)],
        0,
    );
    assert_unplaced(&d, "job-a", &[]);
    assert_unplaced(&d, "job-b", &[]);
    assert_unplaced(&d, "job-c", &["example.com/rack"]);
}

// ---------------------------------------------------------------------------------------
// Slices
// ---------------------------------------------------------------------------------------

/// Slices of 4 pods per host.
/// 8 pods of 1 cpu in slices of 4 per host. h1: floor(7/4) = 1 slice, h2: 3 < 4 -> none,
/// h3: 4/4 = 1 slice. Total free cpu 14 >= 8, but only 2 hosts can take a slice ->
/// forced: 4 on h1, 4 on h3. Objective: [0: 1/1], extraPods 0.
#[test]
fn slices_of_four_per_host() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: h1, allocatable: {cpu: "7"}}
  - {name: h2, allocatable: {cpu: "3"}}
  - {name: h3, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    tasks: [{name: w, count: 8, requests: {cpu: "1"}, slice: {topology: kubernetes.io/hostname, size: 4}}]
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "job", "w"), counts(&[("h1", 4), ("h3", 4)]));
}

/// A count that is not a multiple of the slice size.
/// elastic: count 6, minCount 4, slices of 4 per host; two 16-cpu hosts. Each host holds a
/// multiple of 4 new pods and the total is at most 6 -> the total is 4, on ONE host
/// (4 + 2 would break the slice rule). extraPods = 4 - 4 = 0.
/// rigid: count 6 with minCount 6 (default) -> 6 is not a multiple of 4: never placeable,
/// the reason mentions the slices.
/// Objective: [0: 1/2], extraPods 0.
#[test]
fn slice_count_not_a_multiple_of_the_size() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: h1, allocatable: {cpu: "16"}}
  - {name: h2, allocatable: {cpu: "16"}}
podGroups:
  - name: elastic
    tasks: [{name: w, count: 6, minCount: 4, requests: {cpu: "1"}, slice: {topology: kubernetes.io/hostname, size: 4}}]
  - name: rigid
    tasks: [{name: w, count: 6, requests: {cpu: "1"}, slice: {topology: kubernetes.io/hostname, size: 4}}]
"#,
        &[(0, 1, 2)],
        0,
    );
    let on = per_node(&d, "elastic", "w");
    assert_eq!(on.len(), 1, "the 4 pods must be on one host: {on:?}");
    assert_eq!(on.values().sum::<usize>(), 4);
    assert_unplaced(&d, "rigid", &["slice"]);
}

// ---------------------------------------------------------------------------------------
// Reasons
// ---------------------------------------------------------------------------------------

/// Unplaced groups get a reason that names the blocking resource or filter. Each instance
/// has one pending 1-pod group `g` that cannot be placed (so [0: 0/1], extraPods 0).
#[test]
fn reasons_name_the_blocking_resource_or_filter() {
    let table: &[(&str, &str)] = &[
        // 10 cpu > 4 cpu of the only node.
        (
            "nodes: [{name: n1, allocatable: {cpu: '4', memory: 64Gi}}]\npodGroups: [{name: g, tasks: [{name: w, count: 1, requests: {cpu: '10', memory: 1Gi}}]}]",
            "cpu",
        ),
        // 8Gi memory > 4Gi; cpu is fine.
        (
            "nodes: [{name: n1, allocatable: {cpu: '64', memory: 4Gi}}]\npodGroups: [{name: g, tasks: [{name: w, count: 1, requests: {cpu: '1', memory: 8Gi}}]}]",
            "memory",
        ),
        // 2 whole GPUs requested, the node has 1.
        (
            "sharedDevices: [nvidia.com/gpu]\nnodes: [{name: n1, allocatable: {cpu: '8', nvidia.com/gpu: 1}}]\npodGroups: [{name: g, tasks: [{name: w, count: 1, requests: {nvidia.com/gpu: 2}}]}]",
            "nvidia.com/gpu",
        ),
        // No node has the selected label.
        (
            "nodes: [{name: n1, labels: {pool: cpu}, allocatable: {cpu: '8'}}]\npodGroups: [{name: g, tasks: [{name: w, count: 1, requests: {cpu: '1'}, nodeSelector: {pool: gpu}}]}]",
            "pool",
        ),
        // The only node is tainted.
        (
            "nodes: [{name: n1, allocatable: {cpu: '8'}, taints: [{key: dedicated, value: ml, effect: NoSchedule}]}]\npodGroups: [{name: g, tasks: [{name: w, count: 1, requests: {cpu: '1'}}]}]",
            "dedicated",
        ),
        // The only node is cordoned.
        (
            "nodes: [{name: n1, allocatable: {cpu: '8'}, unschedulable: true}]\npodGroups: [{name: g, tasks: [{name: w, count: 1, requests: {cpu: '1'}}]}]",
            "unschedulable",
        ),
        // Required rack, but no node carries the rack label.
        (
            "topology: {levels: [example.com/rack]}\nnodes: [{name: n1, allocatable: {cpu: '8'}}]\npodGroups: [{name: g, topology: {required: example.com/rack}, tasks: [{name: w, count: 1, requests: {cpu: '1'}}]}]",
            "example.com/rack",
        ),
    ];
    for &(yaml, fragment) in table {
        let (_, d) = exact(yaml, &[(0, 0, 1)], 0);
        assert_unplaced(&d, "g", &[fragment]);
    }
}

// ---------------------------------------------------------------------------------------
// The ffd heuristic where it is provably worse
// ---------------------------------------------------------------------------------------

/// ffd: largest group first within a priority level.
/// n1: 4 cpu. big (4 cpu), half-a (2 cpu), half-b (2 cpu), all priority 0.
/// Optimum: half-a + half-b = 4 cpu -> 2 groups: [0: 2/3], extraPods 0; big unplaced.
/// ffd takes big first (largest) and fills n1 -> 1 group: [0: 1/3].
#[test]
fn ffd_largest_first_loses_two_small_groups() {
    let (inst, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: big, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
  - {name: half-a, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: half-b, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
"#,
        &[(0, 2, 3)],
        0,
    );
    assert!(is_placed(&d, "half-a") && is_placed(&d, "half-b"));
    assert_unplaced(&d, "big", &[]);
    assert_ffd_worse(&inst, &d);
}

/// ffd: elastic pods of a higher-priority group crowd out a lower-priority group.
/// n1: 4 cpu. hi (priority 10): count 4, minCount 1, 1 cpu; lo (priority 5): 1 pod of 2 cpu.
/// Optimum: term 1 places both: lo 2 cpu + hi min 1 cpu = 3, one more cpu -> hi has 2 pods.
/// [10: 1/1, 5: 1/1], extraPods = 2 - 1 = 1.
/// ffd places hi with all 4 pods (elastic pods right after its minimum), lo finds no room:
/// [10: 1/1, 5: 0/1] -- worse at level 5.
#[test]
fn ffd_elastic_pods_crowd_out_a_lower_priority_group() {
    let (inst, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: lo, priority: 5, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: hi, priority: 10, tasks: [{name: w, count: 4, minCount: 1, requests: {cpu: "1"}}]}
"#,
        &[(10, 1, 1), (5, 1, 1)],
        1,
    );
    assert_eq!(placement(&d, "hi").pods.len(), 2);
    assert_eq!(placement(&d, "lo").pods.len(), 1);
    assert_ffd_worse(&inst, &d);
}

/// ffd: first rack that fits, not the rack that leaves room for others.
/// ranged: 3 x 2 cpu in one rack (r1-a 8 cpu or r2-a 6 cpu). pinned: 1 x 4 cpu, selector
/// rack=r1 (only r1-a). Optimum: ranged on r2-a (6 = 3 x 2), pinned on r1-a: [0: 2/2].
/// ffd: ranged is larger (3 x 2/8 = 0.75 vs 4/8 = 0.5 of the largest node) so goes first
/// and takes r1 (the first rack), leaving 8 - 6 = 2 cpu < 4 for pinned: [0: 1/2].
#[test]
fn ffd_first_rack_blocks_a_pinned_group() {
    let (inst, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "8"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "6"}}
podGroups:
  - name: ranged
    topology: {required: example.com/rack}
    tasks: [{name: w, count: 3, requests: {cpu: "2"}}]
  - name: pinned
    tasks: [{name: w, count: 1, requests: {cpu: "4"}, nodeSelector: {example.com/rack: r1}}]
"#,
        &[(0, 2, 2)],
        0,
    );
    assert_eq!(per_node(&d, "ranged", "w"), counts(&[("r2-a", 3)]));
    assert_eq!(per_node(&d, "pinned", "w"), counts(&[("r1-a", 1)]));
    assert_ffd_worse(&inst, &d);
}

// ---------------------------------------------------------------------------------------
// More capacity arithmetic
// ---------------------------------------------------------------------------------------

/// A resource missing from a node's allocatable is 0 there.
/// n1 declares no memory; the pod asks 1Gi -> only n2 fits. Objective: [0: 1/1], extra 0.
#[test]
fn missing_resource_is_zero_on_the_node() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "8"}}
  - {name: n2, allocatable: {cpu: "8", memory: 8Gi}}
podGroups:
  - {name: g, tasks: [{name: w, count: 1, requests: {cpu: "1", memory: 1Gi}}]}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "g", "w"), counts(&[("n2", 1)]));
}

/// Kubernetes quantities.
/// mem: node 16G = 16 000 000 000 bytes; a pod asks 8Gi = 8 589 934 592 bytes; two pods
///   = 17 179 869 184 > 16e9 -> only 1 fits per node (basic, count 3, one node) -> 1 pod.
/// cpu: node "3" = 3000m; pods "1.5" = 1500m and "500m": 1500 + 1500 = 3000 -> both 1.5
///   pods fit exactly; the 500m pod finds no room left (3000 + 500 > 3000) on that node.
///   The cpu node also declares no memory.
/// Groups: mem (basic, placed with 1 of 3: extra 0), halves (gang 2 x 1.5 cpu: placed),
/// crumb (priority -1, 1 x 500m: unplaced, since halves fill the cpu node and mem-node has
/// only 64m cpu; priority -1 keeps it below halves so term 1 prefers halves).
/// Objective: [0: 2/2, -1: 0/1], extraPods 0.
#[test]
fn quantities_follow_kubernetes_units() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: mem-node, allocatable: {cpu: "64m", memory: 16G}}
  - {name: cpu-node, allocatable: {cpu: "3"}}
podGroups:
  - {name: mem, policy: basic, tasks: [{name: w, count: 3, requests: {memory: 8Gi}}]}
  - {name: halves, tasks: [{name: w, count: 2, requests: {cpu: "1.5"}}]}
  - {name: crumb, priority: -1, tasks: [{name: w, count: 1, requests: {cpu: 500m}}]}
"#,
        &[(0, 2, 2), (-1, 0, 1)],
        0,
    );
    assert_eq!(per_node(&d, "mem", "w"), counts(&[("mem-node", 1)]));
    assert_eq!(per_node(&d, "halves", "w"), counts(&[("cpu-node", 2)]));
    // crumb would fit alone: it loses to halves on term 1, not to a missing resource.
    assert_unplaced(&d, "crumb", &[]);
}

/// Group minCount above the sum of task minCounts, met across tasks.
/// a (selector side=a, 2 cpu) and b (selector side=b, 2 cpu), each count 2 minCount 0;
/// group minCount 3. n-a (2 cpu) holds 1 a; n-b (4 cpu) holds 2 b -> 3 pods >= 3: placed.
/// Minimum new = max(0, 3 - 0, 1) = 3 -> extraPods 0. Forced: a on n-a, 2 b on n-b.
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn group_min_count_met_across_tasks() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n-a, labels: {side: a}, allocatable: {cpu: "2"}}
  - {name: n-b, labels: {side: b}, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    minCount: 3
    tasks:
      - {name: a, count: 2, minCount: 0, requests: {cpu: "2"}, nodeSelector: {side: a}}
      - {name: b, count: 2, minCount: 0, requests: {cpu: "2"}, nodeSelector: {side: b}}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "job", "a"), counts(&[("n-a", 1)]));
    assert_eq!(per_node(&d, "job", "b"), counts(&[("n-b", 2)]));
}

/// Contrast: n-b has 2 cpu -> 1 a + 1 b = 2 < group minCount 3: unplaced.
/// Objective: [0: 0/1], extraPods 0.
#[test]
fn group_min_count_not_met_across_tasks() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n-a, labels: {side: a}, allocatable: {cpu: "2"}}
  - {name: n-b, labels: {side: b}, allocatable: {cpu: "2"}}
podGroups:
  - name: job
    minCount: 3
    tasks:
      - {name: a, count: 2, minCount: 0, requests: {cpu: "2"}, nodeSelector: {side: a}}
      - {name: b, count: 2, minCount: 0, requests: {cpu: "2"}, nodeSelector: {side: b}}
"#,
        &[(0, 0, 1)],
        0,
    );
    assert_unplaced(&d, "job", &[]);
}

/// Fractional shares that only pack one way: 2 x 700m and 2 x 300m on 2 GPUs (gang).
/// 700 + 700 > 1000, so the 700s are on different devices; each then has 300m left,
/// exactly one 300m pod each. Forced: device {0,1} each hosts one 700 and one 300.
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn fractional_shares_pack_in_the_only_way() {
    let (_, d) = exact(
        r#"
sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: n1, allocatable: {cpu: "8", nvidia.com/gpu: 2}}
podGroups:
  - name: job
    tasks:
      - {name: small, count: 2, requests: {nvidia.com/gpu: 300m}}
      - {name: large, count: 2, requests: {nvidia.com/gpu: 700m}}
"#,
        &[(0, 1, 1)],
        0,
    );
    let large = devices(&d, "job", "large", "nvidia.com/gpu");
    let small = devices(&d, "job", "small", "nvidia.com/gpu");
    let want = vec![("n1".to_string(), vec![0]), ("n1".to_string(), vec![1])];
    assert_eq!(large, want);
    assert_eq!(small, want);
}

/// Shares of 500m and 250m beside a whole-device request, on devices that are partly used.
/// The sizes divide one another, so the MILP writes one pooled row per size instead of
/// per-device columns (models/cycle.md 4.8); this pins the rows that matter.
/// n1 has 3 GPUs: device 0 is free, devices 1 and 2 each hold a bound 250m pod (750m free).
/// Gang job: w (1 GPU) x1, h (500m) x3 with minCount 2, q (250m) x2 with minCount 0.
/// w needs a completely free device: device 0 only. Devices 1 and 2 take one 500m each
/// (2 x 500 > 750), so h gets 2 pods, although the 1,500m free on them would hold 3 by
/// sum. Each keeps 250m: q gets 2 pods. New pods 1 + 2 + 2 = 5, minimum 1 + 2 + 0 = 3.
/// Objective: [0: 1/1], extraPods 2. Forced: w on [0]; h and q on [1] and [2].
#[test]
fn pooled_shares_round_per_size() {
    let (_, d) = exact(
        r#"
sharedDevices: [nvidia.com/gpu]
nodes:
  - {name: n1, allocatable: {cpu: "16", nvidia.com/gpu: 3}}
podGroups:
  - name: job
    tasks:
      - {name: w, count: 1, requests: {nvidia.com/gpu: 1}}
      - {name: h, count: 3, minCount: 2, requests: {nvidia.com/gpu: 500m}}
      - {name: q, count: 2, minCount: 0, requests: {nvidia.com/gpu: 250m}}
pods:
  - {name: old-1, node: n1, requests: {nvidia.com/gpu: 250m}, deviceIds: {nvidia.com/gpu: [1]}}
  - {name: old-2, node: n1, requests: {nvidia.com/gpu: 250m}, deviceIds: {nvidia.com/gpu: [2]}}
"#,
        &[(0, 1, 1)],
        2,
    );
    let on = |ids: &[usize]| ids.iter().map(|&i| ("n1".to_string(), vec![i])).collect::<Vec<_>>();
    assert_eq!(devices(&d, "job", "w", "nvidia.com/gpu"), on(&[0]));
    assert_eq!(devices(&d, "job", "h", "nvidia.com/gpu"), on(&[1, 2]));
    assert_eq!(devices(&d, "job", "q", "nvidia.com/gpu"), on(&[1, 2]));
}

/// A basic group with required topology: all its pods in one rack.
/// 4 pods of 1 cpu. r1: r1-a 3 cpu -> 3 pods. r2: r2-a 1 + r2-b 1 -> 2 pods.
/// Best: r1 with 3 pods -> extraPods = 3 - 1 = 2 (r2 would give only 1).
/// Objective: [0: 1/1], extraPods 2. Forced: 3 on r1-a.
#[test]
fn basic_group_with_required_rack() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "1"}}
  - {name: r2-b, labels: {example.com/rack: r2}, allocatable: {cpu: "1"}}
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "3"}}
podGroups:
  - name: web
    policy: basic
    topology: {required: example.com/rack}
    tasks: [{name: s, count: 4, requests: {cpu: "1"}}]
"#,
        &[(0, 1, 1)],
        2,
    );
    assert_eq!(per_node(&d, "web", "s"), counts(&[("r1-a", 3)]));
}

/// Slices at the rack level (no required topology).
/// 4 pods of 1 cpu in slices of 2 per rack. r1: 1 + 1 = 2 slots -> 1 slice (one pod per
/// node); r2: 1 slot -> none; r3: 3 slots -> 1 slice of 2 (not 3). Total 4 = 2 slices.
/// Forced: r1-a 1, r1-b 1, r3-a 2. Objective: [0: 1/1], extraPods 0.
#[test]
fn slices_at_the_rack_level() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "1"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "1"}}
  - {name: r1-b, labels: {example.com/rack: r1}, allocatable: {cpu: "1"}}
  - {name: r3-a, labels: {example.com/rack: r3}, allocatable: {cpu: "3"}}
podGroups:
  - name: job
    tasks: [{name: w, count: 4, requests: {cpu: "1"}, slice: {topology: example.com/rack, size: 2}}]
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "job", "w"), counts(&[("r1-a", 1), ("r1-b", 1), ("r3-a", 2)]));
}

// ---------------------------------------------------------------------------------------
// Preemption (objective term 2)
// ---------------------------------------------------------------------------------------

/// Like [`exact`], with the expected evictedByPriority rows (priority, pods).
fn exact_with_evictions(yaml: &str, want: &[(i64, i64, i64)], evicted: &[(i64, i64)], extra: i64) -> (Instance, Decision) {
    let inst = parse(yaml);
    let d = run("exact", &inst);
    let shown = d.to_yaml();
    assert_eq!(d.status, Status::Optimal, "{shown}");
    let report = check::check(&inst, &d);
    assert!(report.violations.is_empty(), "validator rejects the exact decision: {:#?}\n{shown}", report.violations);
    assert_eq!(d.objective.placed_by_priority, rows(want), "{shown}");
    let ev: Vec<(i64, i64)> = d.objective.evicted_by_priority.iter().map(|r| (r.priority, r.pods)).collect();
    assert_eq!(ev, evicted, "{shown}");
    assert_eq!(d.objective.extra_pods, extra, "{shown}");
    (inst, d)
}

fn evicted_pods(d: &Decision) -> Vec<String> {
    let mut v: Vec<String> = d.evictions.iter().map(|e| e.pod.clone()).collect();
    v.sort();
    v
}

/// The cheapest victim.
/// n1 (4 cpu) is full: v-mid (priority 5, 2 cpu) and v-lo (priority 1, 2 cpu).
/// g (priority 10) needs 2 cpu: one eviction is needed. Term 2 looks at the highest victim
/// level first: evicting v-mid gives [5: 1], v-lo gives [1: 1] -> evict v-lo.
/// Objective: [10: 1/1], evicted [1: 1], extraPods 0.
#[test]
fn preemption_evicts_the_cheapest_victim() {
    let (_, d) = exact_with_evictions(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: g, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
pods:
  - {name: v-mid, node: n1, priority: 5, requests: {cpu: "2"}}
  - {name: v-lo, node: n1, priority: 1, requests: {cpu: "2"}}
"#,
        &[(10, 1, 1)],
        &[(1, 1)],
        0,
    );
    assert_eq!(evicted_pods(&d), vec!["v-lo"]);
    assert_eq!(d.evictions[0].preemptor, "g");
}

/// No eviction is possible: preemption off, a non-preemptible victim, preemptionPolicy
/// Never, or a victim of equal priority. In each, n1 (2 cpu) is full with one bound pod
/// of 2 cpu and g (priority 10) needs 2 cpu -> unplaced: [10: 0/1], nothing evicted.
#[test]
fn preemption_forbidden() {
    let table: &[(&str, &str, &str, &str)] = &[
        // (name, group extras, victim extras, options)
        ("options.preemption false", "", "priority: 1", "options: {preemption: false}"),
        ("victim not preemptible", "", "priority: 1, preemptible: false", ""),
        ("preemptionPolicy Never", ", preemptionPolicy: Never", "priority: 1", ""),
        ("victim of equal priority", "", "priority: 10", ""),
    ];
    for &(name, group, victim, options) in table {
        let yaml = format!(
            "nodes:\n  - {{name: n1, allocatable: {{cpu: \"2\"}}}}\npodGroups:\n  - {{name: g, priority: 10{group}, tasks: [{{name: w, count: 1, requests: {{cpu: \"2\"}}}}]}}\npods:\n  - {{name: v, node: n1, {victim}, requests: {{cpu: \"2\"}}}}\n{options}\n"
        );
        let inst = parse(&yaml);
        let d = run("exact", &inst);
        assert_eq!(d.status, Status::Optimal, "{name}");
        let report = check::check(&inst, &d);
        assert!(report.violations.is_empty(), "{name}: {:#?}", report.violations);
        assert_eq!(d.objective.placed_by_priority, rows(&[(10, 0, 1)]), "{name}:\n{}", d.to_yaml());
        assert!(d.evictions.is_empty(), "{name}");
        assert_unplaced(&d, "g", &[]);
    }
}

/// disruptionMode PodGroup: evicting one member evicts all bound members.
/// n1, n2, n3 have 2 cpu each and are full: r-0 on n1 and r-1 on n2 (group r, priority 1,
/// PodGroup), x on n3 (priority 3). g (priority 10) needs 2 cpu on one node.
/// Evict x: [3: 1]. Evict r-0 (or r-1): both members go: [1: 2]. Highest victim level
/// first: level 3 has 0 vs 1 -> evicting the whole of r is better.
/// Objective: [10: 1/1], evicted [1: 2], extraPods 0; g lands on n1 or n2, x survives.
#[test]
fn preemption_pod_group_disruption_evicts_all_members() {
    let (_, d) = exact_with_evictions(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "2"}}
  - {name: n2, allocatable: {cpu: "2"}}
  - {name: n3, allocatable: {cpu: "2"}}
podGroups:
  - {name: r, priority: 1, disruptionMode: PodGroup, tasks: [{name: w, count: 0, requests: {cpu: "2"}}]}
  - {name: g, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
pods:
  - {name: r-0, node: n1, podGroup: r, task: w, requests: {cpu: "2"}}
  - {name: r-1, node: n2, podGroup: r, task: w, requests: {cpu: "2"}}
  - {name: x, node: n3, priority: 3, requests: {cpu: "2"}}
"#,
        &[(10, 1, 1)],
        &[(1, 2)],
        0,
    );
    assert_eq!(evicted_pods(&d), vec!["r-0", "r-1"]);
    let node = &placement(&d, "g").pods[0].node;
    assert!(node == "n1" || node == "n2", "g should use a node freed by r: {node}");
}

/// Capacity freed by one group's eviction may be used by another group that could not
/// evict the victim itself (rule 6 only asks that every eviction names a placed preemptor
/// that needs the freed capacity on that node; rule 1 counts every non-evicted bound pod
/// plus every new pod).
/// n1: 4 cpu, full with v (priority 1, 4 cpu). A (priority 10, 2 cpu) must evict v.
/// B (2 cpu) cannot evict v (in one row: priority 1, not strictly above v; in the other:
/// priority 3 with preemptionPolicy Never) but fits in the 4 - 2 = 2 cpu A leaves free.
/// Optimum: A and B on n1, v evicted by A: [10: 1/1, B's level: 1/1], evicted [1: 1],
/// extraPods 0. (Leaving B out gives B's level 0/1: worse on term 1.)
/// The test first has the validator accept that hand decision, so the optimum is
/// feasible by the project's own rules, then asks the exact solver for it.
#[test]
fn preemption_freed_capacity_is_usable_by_a_group_that_cannot_preempt() {
    for (b_prio, b_extra) in [(1i64, ""), (3, ", preemptionPolicy: Never")] {
        let yaml = format!(
            r#"
nodes:
  - {{name: n1, allocatable: {{cpu: "4"}}}}
podGroups:
  - {{name: B, priority: {b_prio}{b_extra}, tasks: [{{name: w, count: 1, requests: {{cpu: "2"}}}}]}}
  - {{name: A, priority: 10, tasks: [{{name: w, count: 1, requests: {{cpu: "2"}}}}]}}
pods:
  - {{name: v, node: n1, priority: 1, requests: {{cpu: "4"}}}}
"#
        );
        let inst = parse(&yaml);
        let hand: Decision = tessera::wire::from_text(&format!(
            r#"
status: Optimal
objective:
  placedByPriority: [{{priority: 10, placed: 1, pending: 1}}, {{priority: {b_prio}, placed: 1, pending: 1}}]
  evictedByPriority: [{{priority: 1, pods: 1}}]
  extraPods: 0
placements:
  - {{podGroup: A, pods: [{{task: w, node: n1}}]}}
  - {{podGroup: B, pods: [{{task: w, node: n1}}]}}
evictions:
  - {{pod: v, preemptor: A}}
"#
        ))
        .unwrap();
        let report = check::check(&inst, &hand);
        assert!(report.violations.is_empty(), "the validator should accept the hand decision: {:#?}", report.violations);
        let (_, d) = exact_with_evictions(&yaml, &[(10, 1, 1), (b_prio, 1, 1)], &[(1, 1)], 0);
        assert_eq!(evicted_pods(&d), vec!["v"]);
        assert_eq!(per_node(&d, "B", "w"), counts(&[("n1", 1)]));
    }
}

/// A group that can never be placed gets a reason naming what blocks it, not a placed
/// competitor that has nothing to do with it. `filler` (1 pod of 1 cpu) is placed either way.
/// - toobig: group minCount 10, but only 2 pods pending and no bound member: 2 < 10, in any
///   cluster. Its reason should mention the minCount (or the parser may reject it, naming
///   podGroups[1].minCount).
/// - split: required rack; task a only fits side=a nodes (rack r2), task b only side=b
///   (rack r1): no rack has both. Its reason should name the rack level and not `filler`.
///
/// Objective: [0: 1/3], extraPods 0.
#[test]
fn reasons_do_not_blame_a_competitor_for_an_impossible_group() {
    let toobig = r#"
nodes:
  - {name: n1, allocatable: {cpu: "8"}}
podGroups:
  - {name: filler, policy: basic, tasks: [{name: w, count: 1, requests: {cpu: "1"}}]}
  - {name: toobig, minCount: 10, tasks: [{name: w, count: 2, minCount: 0, requests: {cpu: "1"}}]}
"#;
    match Instance::from_text(toobig) {
        Err(e) => assert!(e.to_string().contains("podGroups[1].minCount"), "{e}"),
        Ok(_) => {
            let (_, d) = exact(toobig, &[(0, 1, 2)], 0);
            let why = &d.unplaced.iter().find(|u| u.pod_group == "toobig").unwrap().reason;
            assert!(!why.contains("filler"), "toobig can never be placed; filler is not the reason: {why}");
            assert!(why.contains("minCount"), "the reason should name the minCount: {why}");
        }
    }
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-b, labels: {example.com/rack: r1, side: b}, allocatable: {cpu: "8"}}
  - {name: r2-a, labels: {example.com/rack: r2, side: a}, allocatable: {cpu: "8"}}
podGroups:
  - {name: filler, policy: basic, tasks: [{name: w, count: 1, requests: {cpu: "1"}}]}
  - name: split
    topology: {required: example.com/rack}
    tasks:
      - {name: a, count: 1, requests: {cpu: "1"}, nodeSelector: {side: a}}
      - {name: b, count: 1, requests: {cpu: "1"}, nodeSelector: {side: b}}
"#,
        &[(0, 1, 2)],
        0,
    );
    let why = &d.unplaced.iter().find(|u| u.pod_group == "split").unwrap().reason;
    assert!(why.contains("example.com/rack"), "{why}");
    assert!(!why.contains("filler"), "split can never be placed; filler is not the reason: {why}");
}

/// Extra pods: higher priority first, even when lower-priority extras are cheaper.
/// n1: 6 cpu. hi (priority 10): count 3, minCount 1, 2 cpu. lo (priority 5): count 5,
/// minCount 1, 1 cpu. Minimums: 2 + 1 = 3 cpu, 3 left.
/// Plain maximum of extras would give lo 3 extra pods (3 cpu) = 3. Priority first: hi
/// takes 1 extra (2 cpu; a second needs 2 more, only 1 left), then lo 1 extra (1 cpu).
/// hi 2 pods, lo 2 pods; extraPods = 1 + 1 = 2. Objective: [10: 1/1, 5: 1/1], extraPods 2.
#[test]
fn extra_pods_higher_priority_first_even_when_lower_is_cheaper() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "6"}}
podGroups:
  - {name: lo, priority: 5, tasks: [{name: w, count: 5, minCount: 1, requests: {cpu: "1"}}]}
  - {name: hi, priority: 10, tasks: [{name: w, count: 3, minCount: 1, requests: {cpu: "2"}}]}
"#,
        &[(10, 1, 1), (5, 1, 1)],
        2,
    );
    assert_eq!(placement(&d, "hi").pods.len(), 2);
    assert_eq!(placement(&d, "lo").pods.len(), 2);
}

/// A basic group with slices: each host still takes a multiple of the slice size.
/// count 6, slices of 4 per host, two 16-cpu hosts: 4 on one host (4 + 2 would break the
/// slice rule, 8 > count). extraPods = 4 - 1 = 3. Objective: [0: 1/1].
#[test]
fn basic_group_with_slices() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: h1, allocatable: {cpu: "16"}}
  - {name: h2, allocatable: {cpu: "16"}}
podGroups:
  - {name: b, policy: basic, tasks: [{name: w, count: 6, requests: {cpu: "1"}, slice: {topology: kubernetes.io/hostname, size: 4}}]}
"#,
        &[(0, 1, 1)],
        3,
    );
    let on = per_node(&d, "b", "w");
    assert_eq!(on.len(), 1, "{on:?}");
    assert_eq!(on.values().sum::<usize>(), 4);
}

/// Control for the case above: B (priority 3) may evict v itself. n1: 4 cpu, full with v
/// (priority 1). Evicting v once frees 4 cpu = A (2) + B (2): both placed, 1 eviction.
/// Objective: [10: 1/1, 3: 1/1], evicted [1: 1], extraPods 0.
#[test]
fn preemption_freed_capacity_shared_by_two_preemptors() {
    let (_, d) = exact_with_evictions(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: B, priority: 3, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: A, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
pods:
  - {name: v, node: n1, priority: 1, requests: {cpu: "4"}}
"#,
        &[(10, 1, 1), (3, 1, 1)],
        &[(1, 1)],
        0,
    );
    assert_eq!(evicted_pods(&d), vec!["v"]);
}

/// disruptionMode PodGroup with a non-preemptible member: evicting r-0 would evict r-1
/// too, and r-1 is not preemptible, so r cannot be a victim at all. g (priority 10) only
/// fits n1 (selector), which r-0 fills -> unplaced. Objective: [10: 0/1], no evictions.
#[test]
fn preemption_pod_group_with_a_protected_member_is_not_a_victim() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, labels: {id: one}, allocatable: {cpu: "2"}}
  - {name: n2, allocatable: {cpu: "2"}}
podGroups:
  - {name: r, priority: 1, disruptionMode: PodGroup, tasks: [{name: w, count: 0, requests: {cpu: "2"}}]}
  - {name: g, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "2"}, nodeSelector: {id: one}}]}
pods:
  - {name: r-0, node: n1, podGroup: r, task: w, requests: {cpu: "2"}}
  - {name: r-1, node: n2, podGroup: r, task: w, requests: {cpu: "2"}, preemptible: false}
"#,
        &[(10, 0, 1)],
        0,
    );
    assert_unplaced(&d, "g", &[]);
}

// ---------------------------------------------------------------------------------------
// The validator on hand-broken decisions
// ---------------------------------------------------------------------------------------

/// Each row: an instance, a decision broken by hand in one way, and the rule the validator
/// must report (every violation message starts with `rule N:`).
#[test]
fn validator_rejects_hand_broken_decisions() {
    let gpu_node = "sharedDevices: [nvidia.com/gpu]\nnodes:\n  - {name: n1, allocatable: {cpu: '8', nvidia.com/gpu: 2}}\n";
    let table: Vec<(&str, String, &str, u8)> = vec![
        (
            "capacity: 2 x 3 cpu on a 4-cpu node",
            "nodes: [{name: n1, allocatable: {cpu: '4'}}]\npodGroups: [{name: g, tasks: [{name: w, count: 2, requests: {cpu: '3'}}]}]".into(),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1}, {task: w, node: n1}]}]",
            1,
        ),
        (
            "pods resource: 3 pods on a node declaring pods: 2",
            "nodes: [{name: n1, allocatable: {cpu: '8', pods: 2}}]\npodGroups: [{name: g, tasks: [{name: w, count: 3, requests: {cpu: '1'}}]}]".into(),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1}, {task: w, node: n1}, {task: w, node: n1}]}]",
            1,
        ),
        (
            "taint not tolerated",
            "nodes: [{name: n1, allocatable: {cpu: '8'}, taints: [{key: k, value: v, effect: NoExecute}]}]\npodGroups: [{name: g, tasks: [{name: w, count: 1, requests: {cpu: '1'}, tolerations: [{key: k, operator: Equal, value: v, effect: NoSchedule}]}]}]".into(),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1}]}]",
            2,
        ),
        (
            "two whole-GPU pods on one device",
            format!("{gpu_node}podGroups: [{{name: g, tasks: [{{name: w, count: 2, requests: {{nvidia.com/gpu: 1}}}}]}}]"),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1, deviceIds: {nvidia.com/gpu: [0]}}, {task: w, node: n1, deviceIds: {nvidia.com/gpu: [0]}}]}]",
            3,
        ),
        (
            "a fraction spread over two devices",
            format!("{gpu_node}podGroups: [{{name: g, tasks: [{{name: w, count: 1, requests: {{nvidia.com/gpu: 500m}}}}]}}]"),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1, deviceIds: {nvidia.com/gpu: [0, 1]}}]}]",
            3,
        ),
        (
            "a whole GPU on the device a bound pod shares",
            format!("{gpu_node}podGroups: [{{name: g, tasks: [{{name: w, count: 1, requests: {{nvidia.com/gpu: 1}}}}]}}]\npods: [{{name: b, node: n1, requests: {{nvidia.com/gpu: 100m}}, deviceIds: {{nvidia.com/gpu: [1]}}}}]"),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1, deviceIds: {nvidia.com/gpu: [1]}}]}]",
            3,
        ),
        (
            "a gang placed with 1 of its 2 pods",
            "nodes: [{name: n1, allocatable: {cpu: '8'}}]\npodGroups: [{name: g, tasks: [{name: w, count: 2, requests: {cpu: '1'}}]}]".into(),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1}]}]",
            4,
        ),
        (
            "required rack split over two racks",
            "topology: {levels: [rack]}\nnodes: [{name: a, labels: {rack: r1}, allocatable: {cpu: '8'}}, {name: b, labels: {rack: r2}, allocatable: {cpu: '8'}}]\npodGroups: [{name: g, topology: {required: rack}, tasks: [{name: w, count: 2, requests: {cpu: '1'}}]}]".into(),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: a}, {task: w, node: b}]}]",
            5,
        ),
        (
            "a slice of 2 split over two hosts",
            "nodes: [{name: a, allocatable: {cpu: '8'}}, {name: b, allocatable: {cpu: '8'}}]\npodGroups: [{name: g, tasks: [{name: w, count: 2, requests: {cpu: '1'}, slice: {topology: kubernetes.io/hostname, size: 2}}]}]".into(),
            "objective: {placedByPriority: [{priority: 0, placed: 1, pending: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: a}, {task: w, node: b}]}]",
            5,
        ),
        (
            "eviction of a pod of equal priority",
            "nodes: [{name: n1, allocatable: {cpu: '2'}}]\npodGroups: [{name: g, priority: 5, tasks: [{name: w, count: 1, requests: {cpu: '2'}}]}]\npods: [{name: v, node: n1, priority: 5, requests: {cpu: '2'}}]".into(),
            "objective: {placedByPriority: [{priority: 5, placed: 1, pending: 1}], evictedByPriority: [{priority: 5, pods: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1}]}]\nevictions: [{pod: v, preemptor: g}]",
            6,
        ),
        (
            "an eviction the preemptor does not need (other node)",
            "nodes: [{name: n1, allocatable: {cpu: '2'}}, {name: n2, allocatable: {cpu: '2'}}]\npodGroups: [{name: g, priority: 5, tasks: [{name: w, count: 1, requests: {cpu: '2'}}]}]\npods: [{name: v, node: n2, priority: 1, requests: {cpu: '2'}}]".into(),
            "objective: {placedByPriority: [{priority: 5, placed: 1, pending: 1}], evictedByPriority: [{priority: 1, pods: 1}]}\nplacements: [{podGroup: g, pods: [{task: w, node: n1}]}]\nevictions: [{pod: v, preemptor: g}]",
            6,
        ),
    ];
    for (name, inst_yaml, decision_yaml, rule) in table {
        let inst = parse(&inst_yaml);
        let d: Decision = tessera::wire::from_text(&format!("status: Feasible\n{decision_yaml}\n"))
            .unwrap_or_else(|e| panic!("{name}: decision does not parse: {e}"));
        let report = check::check(&inst, &d);
        let prefix = format!("rule {rule}:");
        assert!(
            report.violations.iter().any(|v| v.rule == rule && v.message.starts_with(&prefix)),
            "{name}: expected a rule {rule} violation, got {:#?}",
            report.violations
        );
    }
}

/// A minimum that is not a multiple of the slice size rounds up to whole slices.
/// count 8, minCount 5, slices of 4 per host. A host takes 0 or 4 (h3 with 3 cpu takes 0),
/// so the total is 0, 4 or 8; the minimum 5 needs 8: forced h1 4, h2 4.
/// extraPods = 8 - 5 (the minimum) = 3. Objective: [0: 1/1], extraPods 3.
/// Contrast (`short`): with h2 at 3 cpu the most is 4 < 5 -> unplaced, although 4 pods fit.
#[test]
fn slice_rounds_the_minimum_up() {
    let yaml = |h2: &str| {
        format!(
            "nodes:\n  - {{name: h1, allocatable: {{cpu: '4'}}}}\n  - {{name: h2, allocatable: {{cpu: '{h2}'}}}}\n  - {{name: h3, allocatable: {{cpu: '3'}}}}\npodGroups:\n  - {{name: job, tasks: [{{name: w, count: 8, minCount: 5, requests: {{cpu: '1'}}, slice: {{topology: kubernetes.io/hostname, size: 4}}}}]}}\n"
        )
    };
    let (_, d) = exact(&yaml("4"), &[(0, 1, 1)], 3);
    assert_eq!(per_node(&d, "job", "w"), counts(&[("h1", 4), ("h2", 4)]));
    let (_, d) = exact(&yaml("3"), &[(0, 0, 1)], 0);
    assert_unplaced(&d, "job", &[]);
}

// ---------------------------------------------------------------------------------------
// Odd byte counts: capacity rows HiGHS sees scaled (models/cycle.md 4.7)
// ---------------------------------------------------------------------------------------

/// A gang that overflows its only node by one byte: 10 000 000 001 + 10 000 000 003 =
/// 20 000 000 004 > 20 000 000 003. HiGHS sees the memory row scaled to coefficients near
/// 1e3, where one byte is 1e-7, below its tolerance, so it returns the overflowing
/// placement; the integer check rejects it, the row is sharpened and the tier solved again.
/// Not placing the gang is optimal and must be *proven* (it used to end `Feasible`, gap 1).
/// Objective: [0: 0/1], extraPods 0.
#[test]
fn a_one_byte_overflow_is_refused_and_the_optimum_proven() {
    let (_, d) = exact(ONE_BYTE_OVER, &[(0, 0, 1)], 0);
    assert!(d.unplaced[0].reason.contains("memory"), "{}", d.to_yaml());
}

/// Two gangs that fit one at a time but not together, by one byte: memory free in all is
/// 20 000 000 003 + 10 000 000 002 = 30 000 000 005, and g (a: 10 000 000 001, b:
/// 10 000 000 003) with h (c: 10 000 000 002) needs 30 000 000 006. g fits (b on n1, a on
/// n2) and h fits, so the optimum places one group, proven. Objective: [0: 1/2].
#[test]
fn two_gangs_apart_by_one_byte_place_one_proven() {
    exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4", memory: "20000000003"}}
  - {name: n2, allocatable: {cpu: "4", memory: "10000000002"}}
podGroups:
  - name: g
    tasks:
      - {name: a, count: 1, requests: {cpu: "1", memory: "10000000001"}}
      - {name: b, count: 1, requests: {cpu: "1", memory: "10000000003"}}
  - name: h
    tasks:
      - {name: c, count: 1, requests: {cpu: "1", memory: "10000000002"}}
"#,
        &[(0, 1, 2)],
        0,
    );
}

// ---------------------------------------------------------------------------------------
// Decision stats
// ---------------------------------------------------------------------------------------

/// The per-tier timings a benchmark reads: one per settled tier, in solve order, never past
/// the solve's own time; `term1Millis` is the time of the last tier with a `placed@`
/// component. Uses the extra-pods case above: tiers placed@10+placed@5, extra@10+extra@5
/// (or split by the merge limit), then packing.
#[test]
fn tier_timings_follow_the_tiers() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: lo, priority: 5, tasks: [{name: w, count: 3, minCount: 1, requests: {cpu: "1"}}]}
  - {name: hi, priority: 10, tasks: [{name: w, count: 3, minCount: 1, requests: {cpu: "1"}}]}
"#,
        &[(10, 1, 1), (5, 1, 1)],
        2,
    );
    let tiers: Vec<String> = d.stats.tiers.clone().unwrap();
    let ms: Vec<u64> = d.stats.tier_millis.clone().unwrap();
    assert_eq!(tiers.len(), ms.len(), "{tiers:?} {ms:?}");
    assert!(tiers.iter().any(|t| t.contains("extra@")), "{tiers:?}");
    assert!(ms.windows(2).all(|w| w[0] <= w[1]), "{ms:?}");
    assert!(ms.iter().all(|&m| m <= d.stats.solve_millis.unwrap()));
    let last_placed = tiers.iter().rposition(|t| t.contains("placed@")).unwrap();
    assert_eq!(d.stats.term1_millis, Some(ms[last_placed]));
}
