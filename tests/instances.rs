//! The bundled instances (`instances/*.yaml`).
//!
//! Every file in the directory (enumerated, so new instances are covered without editing
//! this file) must parse, solve `Optimal` with the exact solver, pass the validator, and
//! give the same decision when solved twice. The `ffd` heuristic's decision must pass the
//! validator too and never beat the exact one.
//!
//! The instances this file knows get the outcome their comment describes, computed by
//! hand below (the arithmetic is in the comment of each expectation).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tessera::wire::decision::{Decision, PlacedRow, Status};
use tessera::{check, Instance, Options, SolverKind};

fn instances_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("instances")
}

fn instance_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(instances_dir())
        .expect("instances/ is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        // A YuniKorn queue configuration (`queues.yaml`) is not an instance.
        .filter(|p| !std::fs::read_to_string(p).is_ok_and(|t| t.lines().any(|l| l.starts_with("partitions:"))))
        .collect();
    v.sort();
    v
}

fn name_of(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn load(name: &str) -> Instance {
    let path = instances_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Instance::from_text(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cfg() -> Options {
    Options { time_limit: Some(Duration::from_secs(60)), ..Default::default() }
}

fn solve(solver: &str, inst: &Instance) -> Decision {
    SolverKind::from_name(solver).unwrap().solve(inst, &cfg())
}

fn rows(want: &[(i64, i64, i64)]) -> Vec<PlacedRow> {
    want.iter().map(|&(priority, placed, pending)| PlacedRow { priority: priority.into(), placed, pending }).collect()
}

#[test]
fn the_directory_has_instances() {
    let files = instance_files();
    assert!(files.len() >= 7, "expected the bundled instances, found {files:?}");
    // The instances with hand-computed expectations below must still exist.
    let names: Vec<String> = files.iter().map(|p| name_of(p)).collect();
    for (known, _) in expectations() {
        assert!(names.iter().any(|n| n == known), "instance {known} is gone");
    }
}

#[test]
fn every_instance_solves_optimal_valid_and_deterministic() {
    for path in instance_files() {
        let name = name_of(&path);
        let inst = load(&name);
        let d1 = solve("exact", &inst);
        assert_eq!(d1.status, Status::Optimal, "{name}:\n{}", d1.to_yaml());
        let report = check::check(&inst, &d1);
        assert!(report.violations.is_empty(), "{name}: validator rejects the exact decision: {:#?}", report.violations);
        assert_eq!(report.objective, d1.objective, "{name}: reported objective differs from the recomputed one");
        for u in &d1.unplaced {
            assert!(!u.reason.trim().is_empty(), "{name}: group {} unplaced without a reason", u.pod_group);
        }
        let d2 = solve("exact", &inst);
        assert_eq!(d1.without_timings(), d2.without_timings(), "{name}: two solves differ");
        // Same decision from a freshly parsed instance too.
        let d3 = solve("exact", &load(&name));
        assert_eq!(d1.without_timings(), d3.without_timings(), "{name}: solve after re-parse differs");
    }
}

#[test]
fn every_instance_ffd_is_valid_and_never_better_than_exact() {
    for path in instance_files() {
        let name = name_of(&path);
        let inst = load(&name);
        let f = solve("ffd", &inst);
        let report = check::check(&inst, &f);
        assert!(report.violations.is_empty(), "{name}: validator rejects the ffd decision: {:#?}", report.violations);
        let e = solve("exact", &inst);
        assert_ne!(
            f.objective.compare(&e.objective),
            Ordering::Greater,
            "{name}: ffd beats the 'optimal' exact decision:\nffd {:?}\nexact {:?}",
            f.objective,
            e.objective
        );
    }
}

#[test]
fn known_instances_have_the_outcome_their_comment_describes() {
    for (name, expect) in expectations() {
        let inst = load(name);
        let d = solve("exact", &inst);
        assert_eq!(d.status, Status::Optimal, "{name}");
        expect(&inst, &d);
    }
}

// ---------------------------------------------------------------------------------------
// Per-instance expectations (hand-computed)
// ---------------------------------------------------------------------------------------

type Expect = fn(&Instance, &Decision);

fn expectations() -> Vec<(&'static str, Expect)> {
    vec![
        ("fractional-gpus.yaml", fractional_gpus as Expect),
        ("gang-all-or-nothing.yaml", gang_all_or_nothing),
        ("hetero-fixed-order.yaml", hetero_fixed_order),
        ("priority-tiers.yaml", priority_tiers),
        ("quickstart.yaml", quickstart),
        ("rack-topology.yaml", rack_topology),
        ("selectors-taints.yaml", selectors_taints),
    ]
}

fn pods_of<'a>(d: &'a Decision, group: &str) -> Vec<&'a tessera::wire::decision::PlacedPod> {
    d.placements
        .iter()
        .find(|p| p.pod_group == group)
        .unwrap_or_else(|| panic!("group {group} is not placed:\n{}", d.to_yaml()))
        .pods
        .iter()
        .collect()
}

fn per_node(d: &Decision, group: &str, task: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for p in pods_of(d, group).into_iter().filter(|p| p.task == task) {
        *m.entry(p.node.clone()).or_default() += 1;
    }
    m
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|&(n, c)| (n.to_string(), c)).collect()
}

fn unplaced_reason<'a>(d: &'a Decision, group: &str) -> &'a str {
    assert!(!d.placements.iter().any(|p| p.pod_group == group), "{group} should be unplaced");
    let r = &d.unplaced.iter().find(|u| u.pod_group == group).unwrap_or_else(|| panic!("{group} not in unplaced")).reason;
    assert!(!r.trim().is_empty());
    r
}

fn no_evictions(d: &Decision) {
    assert!(d.evictions.is_empty() && d.objective.evicted_by_priority.is_empty(), "unexpected evictions:\n{}", d.to_yaml());
}

/// fractional-gpus.yaml. n1: devices 0 and 1 each half used (500m free each); n2: two
/// free devices. infer-large (750m) fits in no n1 device (500 < 750) -> n2. train (1
/// whole) -> n2, the other device. infer-small (gang of 2 x 250m) fits in what is left
/// (n1's halves, or the 250m left next to infer-large). All three placed, all at priority
/// 10; infer-small is a gang (default policy): minimum 2 -> extraPods 0.
/// Objective: [10: 3/3], extraPods 0.
fn fractional_gpus(_: &Instance, d: &Decision) {
    assert_eq!(d.objective.placed_by_priority, rows(&[(10, 3, 3)]));
    assert_eq!(d.objective.extra_pods, 0);
    no_evictions(d);
    let large = pods_of(d, "infer-large");
    let train = pods_of(d, "train");
    assert_eq!(large.len(), 1);
    assert_eq!(train.len(), 1);
    assert_eq!(large[0].node, "n2", "the 0.75 GPU pod cannot use n1's split halves");
    assert_eq!(train[0].node, "n2");
    let gl = &large[0].device_ids["nvidia.com/gpu"];
    let gt = &train[0].device_ids["nvidia.com/gpu"];
    assert_eq!(gl.len(), 1);
    assert_eq!(gt.len(), 1);
    assert_ne!(gl, gt, "the whole-GPU trainer needs a device of its own");
    assert_eq!(pods_of(d, "infer-small").len(), 2);
}

/// gang-all-or-nothing.yaml. gang-4: 4 pods of 3 cpu on three 4-cpu nodes: floor(4/3) = 1
/// per node -> 3 < 4: unplaced. best-effort (basic, 10 x 1 cpu): 3 x 4 = 12 >= 10 -> all
/// 10. Objective: [100: 0/1, 1: 1/1], extraPods = 10 - 1 = 9.
fn gang_all_or_nothing(_: &Instance, d: &Decision) {
    assert_eq!(d.objective.placed_by_priority, rows(&[(100, 0, 1), (1, 1, 1)]));
    assert_eq!(d.objective.extra_pods, 9);
    no_evictions(d);
    unplaced_reason(d, "gang-4");
    assert_eq!(pods_of(d, "best-effort").len(), 10);
}

/// hetero-fixed-order.yaml. large (8 cpu) fits only big-node (8); small (4) then fits only
/// small-node. Objective: [0: 1/1], extraPods 0. And the fixed-order simulation fails.
fn hetero_fixed_order(inst: &Instance, d: &Decision) {
    assert_eq!(d.objective.placed_by_priority, rows(&[(0, 1, 1)]));
    assert_eq!(d.objective.extra_pods, 0);
    no_evictions(d);
    assert_eq!(per_node(d, "hetero", "large"), counts(&[("big-node", 1)]));
    assert_eq!(per_node(d, "hetero", "small"), counts(&[("small-node", 1)]));
    let g = inst.group_id("hetero").unwrap();
    assert!(fixed_order_first_fit(inst, g).is_none(), "fixed-order first fit should fail on this instance");
}

/// priority-tiers.yaml. high: 2 x 5 cpu on two 8-cpu nodes; 5 + 5 > 8 so one per node,
/// 3 cpu left on each. low-a and low-b (6 cpu) cannot fit; low-c (2 x 1 cpu) fits.
/// Leaving high out would place low-a, low-b and low-c (3 groups), but term 1 is by
/// priority. Objective: [1000: 1/1, 1: 1/3], extraPods 0.
fn priority_tiers(_: &Instance, d: &Decision) {
    assert_eq!(d.objective.placed_by_priority, rows(&[(1000, 1, 1), (1, 1, 3)]));
    assert_eq!(d.objective.extra_pods, 0);
    no_evictions(d);
    assert_eq!(per_node(d, "high", "w"), counts(&[("n1", 1), ("n2", 1)]));
    assert_eq!(pods_of(d, "low-c").len(), 2);
    unplaced_reason(d, "low-a");
    unplaced_reason(d, "low-b");
}

/// quickstart.yaml.
/// Free before the cycle: gpu-a1 28 cpu, 240Gi, GPU 0 has 750m left (notebook-1 250m),
/// GPUs 1-3 whole; gpu-a2 everything; gpu-b1 28 cpu, 240Gi, GPUs 2-3 whole (notebook-2
/// holds 0-1); gpu-b2 tainted maintenance:NoSchedule (nobody tolerates it); cpu-1 8 cpu,
/// 32Gi (running-batch-0); cpu-2 16 cpu, 64Gi.
/// - train-llm (1000, one rack): r2 has only gpu-b1 usable -> at most 2 whole GPUs < 4
///   workers. r1: workers (8 cpu, 64Gi, 1 GPU): gpu-a1 min(28/8, 240/64, 3) = 3, gpu-a2 4
///   -> 7 >= 6; driver (4 cpu, 16Gi) needs a rack node too. 6 workers + driver fit (e.g.
///   3 + driver on a1: 24 + 4 + 4 = 32 cpu; 3 on a2). Placed in r1 with all 6 workers:
///   extra 6 - 4 = 2.
/// - infer-chat (1000, basic, 5 x 500m): gpu-b1 GPUs 2-3 take 2 each = 4, the fifth goes on
///   GPU 0 of gpu-a1 (750m left) or r1's spare whole GPU: all 5, extra 4.
/// - etl (100, 4..8 mappers of 4 cpu, 8Gi, pool=cpu): cpu-1 8/4 = 2, cpu-2 16/4 = 4 -> 6,
///   extra 2. Evicting running-batch-0 (priority 50) would give 2 more, but term 2 (no
///   eviction) comes before term 3.
/// - big-node-job (100): 8 whole GPUs on one node; nodes have 4 -> unplaced.
///
/// Objective: [1000: 2/2, 100: 1/2], no evictions, extraPods 2 + 4 + 2 = 8.
fn quickstart(_: &Instance, d: &Decision) {
    assert_eq!(d.objective.placed_by_priority, rows(&[(1000, 2, 2), (100, 1, 2)]));
    assert_eq!(d.objective.extra_pods, 8);
    no_evictions(d);
    let train = d.placements.iter().find(|p| p.pod_group == "train-llm").unwrap();
    assert_eq!(train.domains.get("example.com/rack").map(String::as_str), Some("r1"));
    let tr_nodes: Vec<&str> = train.pods.iter().map(|p| p.node.as_str()).collect();
    assert!(tr_nodes.iter().all(|n| *n == "gpu-a1" || *n == "gpu-a2"), "train-llm outside r1: {tr_nodes:?}");
    assert_eq!(train.pods.iter().filter(|p| p.task == "driver").count(), 1);
    assert_eq!(train.pods.iter().filter(|p| p.task == "worker").count(), 6);
    assert_eq!(pods_of(d, "infer-chat").len(), 5);
    assert!(pods_of(d, "infer-chat").iter().all(|p| p.node != "gpu-b2"), "gpu-b2 is tainted");
    assert_eq!(per_node(d, "etl", "mapper"), counts(&[("cpu-1", 2), ("cpu-2", 4)]));
    let why = unplaced_reason(d, "big-node-job");
    assert!(why.contains("nvidia.com/gpu"), "reason should name the GPUs: {why}");
}

/// rack-topology.yaml. r1 hosts have 6 - 3 = 3 free cpu each: no host can take a slice of
/// 4 -> r1 is out although it has 9 free cpu. r2: two hosts with 4 cpu -> one slice each
/// = 8 pods. `unlabelled` has no rack. Forced: rack r2, 4 on each r2 host.
/// Objective: [0: 1/1], extraPods 0.
fn rack_topology(_: &Instance, d: &Decision) {
    assert_eq!(d.objective.placed_by_priority, rows(&[(0, 1, 1)]));
    assert_eq!(d.objective.extra_pods, 0);
    no_evictions(d);
    assert_eq!(per_node(d, "sliced-gang", "w"), counts(&[("r2-h1", 4), ("r2-h2", 4)]));
    let p = d.placements.iter().find(|p| p.pod_group == "sliced-gang").unwrap();
    assert_eq!(p.domains.get("example.com/rack").map(String::as_str), Some("r2"));
}

/// selectors-taints.yaml.
/// - ml-tolerating (pool=gpu, tolerates dedicated=ml): gpu-2 is cordoned -> gpu-1, 2 x 4
///   = 8 cpu, exactly full.
/// - ml-intolerant (pool=gpu, no toleration): gpu-1 tainted, gpu-2 cordoned, cpu-1 wrong
///   pool -> unplaced.
/// - anywhere (no selector, no toleration): gpu-1 tainted, gpu-2 cordoned, cpu-1's
///   PreferNoSchedule is ignored -> 2 x 4 cpu on cpu-1.
///
/// Objective: [0: 2/3], extraPods 0.
fn selectors_taints(_: &Instance, d: &Decision) {
    assert_eq!(d.objective.placed_by_priority, rows(&[(0, 2, 3)]));
    assert_eq!(d.objective.extra_pods, 0);
    no_evictions(d);
    assert_eq!(per_node(d, "ml-tolerating", "w"), counts(&[("gpu-1", 2)]));
    assert_eq!(per_node(d, "anywhere", "w"), counts(&[("cpu-1", 2)]));
    let why = unplaced_reason(d, "ml-intolerant");
    assert!(why.contains("dedicated") || why.contains("unschedulable"), "reason should name a filter: {why}");
}

// ---------------------------------------------------------------------------------------
// The fixed-order baseline of hetero-fixed-order.yaml
// ---------------------------------------------------------------------------------------

/// Pod-by-pod fixed-order placement of group `g`, as the Kubernetes talk describes it:
/// pods in file order (tasks in order, `count` pods each), each on the first node in file
/// order with room for its cpu and memory (after bound pods). Returns the node of every
/// pod, or None when some pod fits nowhere (the group is declared unschedulable).
fn fixed_order_first_fit(inst: &Instance, g: usize) -> Option<Vec<String>> {
    let res: Vec<usize> = ["cpu", "memory"].iter().filter_map(|r| inst.resource_id(r)).collect();
    let mut free: Vec<Vec<i64>> = inst.nodes.iter().map(|n| res.iter().map(|&r| n.allocatable[r]).collect()).collect();
    for p in &inst.pods {
        for (k, &r) in res.iter().enumerate() {
            free[p.node][k] -= p.requests[r];
        }
    }
    let mut out = Vec::new();
    for &t in &inst.groups[g].tasks {
        let task = &inst.tasks[t];
        for _ in 0..task.count {
            let need: Vec<i64> = res.iter().map(|&r| task.requests[r]).collect();
            let n = (0..inst.nodes.len()).find(|&n| free[n].iter().zip(&need).all(|(f, q)| f >= q))?;
            for k in 0..res.len() {
                free[n][k] -= need[k];
            }
            out.push(inst.nodes[n].name.clone());
        }
    }
    Some(out)
}

/// The simulation itself is not a tautology: with the tasks swapped (large first) it
/// places the group, large on big-node and small on small-node.
#[test]
fn fixed_order_first_fit_succeeds_when_the_large_task_comes_first() {
    let inst = Instance::from_text(
        r#"
nodes:
  - {name: big-node, allocatable: {cpu: "8", memory: 32Gi}}
  - {name: small-node, allocatable: {cpu: "4", memory: 32Gi}}
podGroups:
  - name: hetero
    tasks:
      - {name: large, count: 1, requests: {cpu: "8", memory: 4Gi}}
      - {name: small, count: 1, requests: {cpu: "4", memory: 4Gi}}
"#,
    )
    .unwrap();
    assert_eq!(fixed_order_first_fit(&inst, 0), Some(vec!["big-node".to_string(), "small-node".to_string()]));
}

/// On hetero-fixed-order.yaml the simulation fails exactly as the comment says: small
/// takes big-node (8 - 4 = 4 cpu left), then large (8 cpu) fits on neither node.
#[test]
fn fixed_order_first_fit_fails_on_hetero_fixed_order() {
    let inst = load("hetero-fixed-order.yaml");
    let g = inst.group_id("hetero").unwrap();
    assert_eq!(fixed_order_first_fit(&inst, g), None);
    // ... while the exact solver places it.
    let d = solve("exact", &inst);
    assert!(d.placements.iter().any(|p| p.pod_group == "hetero"));
}
