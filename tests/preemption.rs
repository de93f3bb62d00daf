//! Preemption (semantics.md rule 6 and objective term 2): hand-computed cases and a
//! property test of the exact solver against the Kubernetes-style `k8s-preempt` baseline.
//!
//! Every hand case asserts: the exact solver says `Optimal`, the independent validator
//! (which includes "no eviction that is not needed") finds nothing, the objective equals
//! the hand value worked out in the comment, and the exact set of evicted pods (with their
//! preemptor). The `k8s-preempt` decision of each case must pass the validator too and
//! may never compare better than the exact one.
//!
//! Arithmetic reminders: term 1 (groups placed per priority level, highest level first)
//! strictly dominates term 2 (pods evicted per victim priority level, highest level
//! first, fewer is better), which dominates term 3 (extra pods). A victim must be
//! preemptible and strictly below its preemptor's priority; `disruptionMode: PodGroup`
//! evicts every bound member of the group together.
//!
//! The property test: `TESSERA_SEED=<seed>` reruns one generated case,
//! `TESSERA_CASES=<n>` runs more.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::time::Duration;
use tessera::wire::decision::{Decision, EvictedRow, Objective, PlacedRow, Status};
use tessera::{check, Instance, Options, SolverKind};

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

mod common;
use common::{parse, run};

fn objective(placed: &[(i64, i64, i64)], evicted: &[(i64, i64)], extra: i64) -> Objective {
    Objective {
        placed_by_priority: placed
            .iter()
            .map(|&(priority, placed, pending)| PlacedRow { priority: priority.into(), placed, pending })
            .collect(),
        evicted_by_priority: evicted.iter().map(|&(priority, pods)| EvictedRow { priority, pods }).collect(),
        extra_pods: extra,
        extra_by_priority: vec![],
    }
}

fn evictions(d: &Decision) -> BTreeSet<(String, String)> {
    d.evictions.iter().map(|e| (e.pod.clone(), e.preemptor.clone())).collect()
}

fn pairs(want: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    want.iter().map(|(p, g)| (p.to_string(), g.to_string())).collect()
}

fn violations(inst: &Instance, d: &Decision) -> Vec<String> {
    check::check(inst, d).violations.into_iter().map(|v| v.message).collect()
}

/// Exact: Optimal, valid, objective = `want`, evictions = `evicted` (pod, preemptor).
/// k8s-preempt: valid and never better. Returns both decisions.
#[track_caller]
fn case(yaml: &str, want: Objective, evicted: &[(&str, &str)]) -> (Instance, Decision, Decision) {
    let inst = parse(yaml);
    let d = run("exact", &inst);
    let shown = d.to_yaml();
    assert_eq!(d.status, Status::Optimal, "exact solver did not prove optimality:\n{shown}");
    let v = violations(&inst, &d);
    assert!(v.is_empty(), "validator rejects the exact decision: {v:#?}\n{shown}");
    assert_eq!(d.objective, want, "objective differs from the hand value:\n{shown}");
    assert_eq!(evictions(&d), pairs(evicted), "evictions differ from the hand value:\n{shown}");
    let k = run("k8s-preempt", &inst);
    let v = violations(&inst, &k);
    assert!(v.is_empty(), "validator rejects the k8s-preempt decision: {v:#?}\n{}", k.to_yaml());
    assert_ne!(d.objective.compare(&k.objective), Ordering::Less, "k8s-preempt beats exact:\n{shown}\n{}", k.to_yaml());
    (inst, d, k)
}

fn placed_on(d: &Decision, group: &str) -> Vec<String> {
    let p = d.placements.iter().find(|p| p.pod_group == group).unwrap_or_else(|| panic!("{group} not placed:\n{}", d.to_yaml()));
    let mut v: Vec<String> = p.pods.iter().map(|p| p.node.clone()).collect();
    v.sort();
    v
}

fn reason<'a>(d: &'a Decision, group: &str) -> &'a str {
    &d.unplaced.iter().find(|u| u.pod_group == group).unwrap_or_else(|| panic!("{group} not unplaced:\n{}", d.to_yaml())).reason
}

// ---------------------------------------------------------------------------------------
// Hand-computed cases
// ---------------------------------------------------------------------------------------

/// `hi` (priority 100) needs a whole 4-cpu node. n1 holds `mid` (priority 5, 4 cpu); n2
/// holds `low-a` and `low-b` (priority 1, 2 cpu each). Either way term 1 is 1/1.
/// Term 2, highest victim level first: evicting mid costs {5: 1}; evicting both lows
/// costs {5: 0, 1: 2}. At level 5, 0 < 1, so the two low pods go:
/// evictedByPriority = [{1: 2}], extraPods = 0 (count 1 = minimum).
/// k8s-preempt removes all three, first fit takes n1, and mid (reprieved first, highest
/// priority) no longer fits: it evicts mid, {5: 1}, which compares worse.
#[test]
fn one_victim_at_5_versus_two_at_1() {
    let (_, d, k) = case(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
pods:
  - {name: mid, node: n1, priority: 5, requests: {cpu: "4"}}
  - {name: low-a, node: n2, priority: 1, requests: {cpu: "2"}}
  - {name: low-b, node: n2, priority: 1, requests: {cpu: "2"}}
"#,
        objective(&[(100, 1, 1)], &[(1, 2)], 0),
        &[("low-a", "hi"), ("low-b", "hi")],
    );
    assert_eq!(placed_on(&d, "hi"), ["n2"]);
    assert_eq!(evictions(&k), pairs(&[("mid", "hi")]));
    assert_eq!(d.objective.compare(&k.objective), Ordering::Greater);
}

/// `hi` (priority 100) needs 4 cpu on one node. n1: `pg-0`, one member of `pg`
/// (disruptionMode PodGroup, priority 5; its other members pg-1..3 run on n3). n2: four
/// single pods s0..s3 (Pod mode, priority 1, 1 cpu each).
/// Evicting pg means evicting all 4 members: {5: 4}. Evicting the singles: {1: 4}. Same
/// count, but term 2 looks at level 5 first: 0 < 4, so the singles go.
/// evictedByPriority = [{1: 4}], extraPods 0.
#[test]
fn podgroup_unit_of_four_versus_four_lower_singles() {
    let (_, d, _) = case(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
  - {name: n3, allocatable: {cpu: "4"}}
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
  - {name: pg, priority: 5, disruptionMode: PodGroup, tasks: [{name: w, count: 0}]}
pods:
  - {name: pg-0, node: n1, podGroup: pg, requests: {cpu: "4"}}
  - {name: pg-1, node: n3, podGroup: pg, requests: {cpu: "1"}}
  - {name: pg-2, node: n3, podGroup: pg, requests: {cpu: "1"}}
  - {name: pg-3, node: n3, podGroup: pg, requests: {cpu: "1"}}
  - {name: s0, node: n2, priority: 1, requests: {cpu: "1"}}
  - {name: s1, node: n2, priority: 1, requests: {cpu: "1"}}
  - {name: s2, node: n2, priority: 1, requests: {cpu: "1"}}
  - {name: s3, node: n2, priority: 1, requests: {cpu: "1"}}
"#,
        objective(&[(100, 1, 1)], &[(1, 4)], 0),
        &[("s0", "hi"), ("s1", "hi"), ("s2", "hi"), ("s3", "hi")],
    );
    assert_eq!(placed_on(&d, "hi"), ["n2"]);
}

/// The other way round: `pg` (PodGroup, 4 members, priority 1) against ONE single pod
/// `solo` at priority 5. Term 2 at level 5: evicting solo costs 1, evicting pg costs 0,
/// so pg goes, all four members (pg-1..3 on n3 too, though only n1's room is used):
/// evictedByPriority = [{1: 4}], every member attributed to hi.
#[test]
fn podgroup_unit_goes_whole_when_cheaper() {
    let (_, d, _) = case(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
  - {name: n3, allocatable: {cpu: "4"}}
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
  - {name: pg, priority: 1, disruptionMode: PodGroup, tasks: [{name: w, count: 0}]}
pods:
  - {name: pg-0, node: n1, podGroup: pg, requests: {cpu: "4"}}
  - {name: pg-1, node: n3, podGroup: pg, requests: {cpu: "1"}}
  - {name: pg-2, node: n3, podGroup: pg, requests: {cpu: "1"}}
  - {name: pg-3, node: n3, podGroup: pg, requests: {cpu: "1"}}
  - {name: solo, node: n2, priority: 5, requests: {cpu: "4"}}
"#,
        objective(&[(100, 1, 1)], &[(1, 4)], 0),
        &[("pg-0", "hi"), ("pg-1", "hi"), ("pg-2", "hi"), ("pg-3", "hi")],
    );
    assert_eq!(placed_on(&d, "hi"), ["n1"]);
}

/// `hi` (priority 100) needs a whole node; n1 holds `peer` at priority 100 (not strictly
/// lower: never a victim), n2 holds `below` at 99. Only below can go: {99: 1}.
/// Without n2 there is no victim at all: hi stays unplaced, placed 0/1, nothing evicted.
#[test]
fn equal_priority_is_never_evicted() {
    let base = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
pods:
  - {name: peer, node: n1, priority: 100, requests: {cpu: "4"}}
"#;
    let (_, d, _) = case(base, objective(&[(100, 0, 1)], &[], 0), &[]);
    assert!(!reason(&d, "hi").is_empty());
    let with_n2 = base.replace(
        "  - {name: n1, allocatable: {cpu: \"4\"}}\n",
        "  - {name: n1, allocatable: {cpu: \"4\"}}\n  - {name: n2, allocatable: {cpu: \"4\"}}\n",
    ) + "  - {name: below, node: n2, priority: 99, requests: {cpu: \"4\"}}\n";
    let (_, d, _) = case(&with_n2, objective(&[(100, 1, 1)], &[(99, 1)], 0), &[("below", "hi")]);
    assert_eq!(placed_on(&d, "hi"), ["n2"]);
}

/// n1 holds `sys` (priority 0 but `preemptible: false`), n2 holds `mid` (priority 50).
/// sys would be the cheapest victim by term 2 ({0: 1} < {50: 1}) but may never go:
/// mid goes, evictedByPriority = [{50: 1}].
#[test]
fn non_preemptible_is_never_evicted() {
    let (_, d, _) = case(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
pods:
  - {name: sys, node: n1, priority: 0, preemptible: false, requests: {cpu: "4"}}
  - {name: mid, node: n2, priority: 50, requests: {cpu: "4"}}
"#,
        objective(&[(100, 1, 1)], &[(50, 1)], 0),
        &[("mid", "hi")],
    );
    assert_eq!(placed_on(&d, "hi"), ["n2"]);
}

/// `nev` (priority 100, preemptionPolicy Never) needs n1, full of `low` (priority 0).
/// It may not evict: unplaced (placed 0/1) with a reason, nothing evicted. The lower
/// `lo` group (priority 50, PreemptLowerPriority) fits on n2 and is placed: [{100: 0/1},
/// {50: 1/1}].
#[test]
fn never_policy_stays_unplaced() {
    let (_, d, k) = case(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "1"}}
podGroups:
  - {name: nev, priority: 100, preemptionPolicy: Never, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
  - {name: lo, priority: 50, tasks: [{name: w, count: 1, requests: {cpu: "1"}}]}
pods:
  - {name: low, node: n1, priority: 0, requests: {cpu: "4"}}
"#,
        objective(&[(100, 0, 1), (50, 1, 1)], &[], 0),
        &[],
    );
    assert!(!reason(&d, "nev").is_empty());
    assert!(reason(&k, "nev").contains("Never"), "{}", k.to_yaml());
    assert_eq!(placed_on(&d, "lo"), ["n2"]);
}

/// The first case with `options.preemption: false`: no victim at all, hi unplaced.
#[test]
fn preemption_option_false_forbids_evictions() {
    let (_, d, k) = case(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: hi, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
pods:
  - {name: mid, node: n1, priority: 5, requests: {cpu: "4"}}
  - {name: low-a, node: n2, priority: 1, requests: {cpu: "2"}}
  - {name: low-b, node: n2, priority: 1, requests: {cpu: "2"}}
options: {preemption: false}
"#,
        objective(&[(100, 0, 1)], &[], 0),
        &[],
    );
    assert!(!reason(&d, "hi").is_empty());
    assert!(k.evictions.is_empty());
}

/// A gang of 3 pods x 4 cpu on four 4-cpu nodes: n1 is free, n2 holds `a` (priority 1),
/// n3 `b` (priority 1), n4 `c` (priority 2), each 4 cpu. The gang needs two more nodes:
/// {a, b} costs {1: 2}; any pair with c costs {2: 1, ...}, worse at level 2. So a and b
/// go, on two different nodes: evictedByPriority = [{1: 2}], pods on n1, n2, n3.
#[test]
fn gang_needs_victims_on_several_nodes() {
    let (_, d, _) = case(
        r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
  - {name: n3, allocatable: {cpu: "4"}}
  - {name: n4, allocatable: {cpu: "4"}}
podGroups:
  - {name: gang, priority: 100, tasks: [{name: w, count: 3, requests: {cpu: "4"}}]}
pods:
  - {name: a, node: n2, priority: 1, requests: {cpu: "4"}}
  - {name: b, node: n3, priority: 1, requests: {cpu: "4"}}
  - {name: c, node: n4, priority: 2, requests: {cpu: "4"}}
"#,
        objective(&[(100, 1, 1)], &[(1, 2)], 0),
        &[("a", "gang"), ("b", "gang")],
    );
    assert_eq!(placed_on(&d, "gang"), ["n1", "n2", "n3"]);
}

/// A gang of 4 pods x 2 cpu with `required: rack` (8 cpu in one rack of two 4-cpu nodes).
/// Rack r1 (n1, n2) is the emptiest: n1 free, n2 holds `important` (priority 50, 4 cpu):
/// 4 cpu free, and placing there costs {50: 1}. Rack r2 (n3, n4) has only 2 cpu free:
/// `l1` and `l2` (priority 1, 3 cpu each), costing {1: 2}. Level 50 first: r2 wins.
/// evictedByPriority = [{1: 2}], domain rack r2, two pods on each of n3, n4.
/// (k8s-preempt takes the first rack that fits after removing every victim, r1, and
/// evicts important.)
#[test]
fn topology_gang_takes_cheapest_rack_not_emptiest() {
    let (_, d, k) = case(
        r#"
topology:
  levels: [example.com/rack]
nodes:
  - {name: n1, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
  - {name: n2, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
  - {name: n3, labels: {example.com/rack: r2}, allocatable: {cpu: "4"}}
  - {name: n4, labels: {example.com/rack: r2}, allocatable: {cpu: "4"}}
podGroups:
  - name: gang
    priority: 100
    topology: {required: example.com/rack}
    tasks: [{name: w, count: 4, requests: {cpu: "2"}}]
pods:
  - {name: important, node: n2, priority: 50, requests: {cpu: "4"}}
  - {name: l1, node: n3, priority: 1, requests: {cpu: "3"}}
  - {name: l2, node: n4, priority: 1, requests: {cpu: "3"}}
"#,
        objective(&[(100, 1, 1)], &[(1, 2)], 0),
        &[("l1", "gang"), ("l2", "gang")],
    );
    assert_eq!(placed_on(&d, "gang"), ["n3", "n3", "n4", "n4"]);
    let p = d.placements.iter().find(|p| p.pod_group == "gang").unwrap();
    assert_eq!(p.domains.get("example.com/rack").map(String::as_str), Some("r2"));
    assert_eq!(evictions(&k), pairs(&[("important", "gang")]));
    assert_eq!(d.objective.compare(&k.objective), Ordering::Greater);
}

/// `grow` (priority 100) has a bound member `grow-0` on n1 at pod priority 1 (strictly
/// lower than its group) and one pending pod of 4 cpu. Evicting its own member would make
/// room on n1 at cost {1: 1}, but a group's bound members are not its victims (and a
/// placed group's members are nobody's). The only other room: n2, held by `other`
/// (priority 50): evictedByPriority = [{50: 1}]. Without n2, grow stays unplaced.
/// Same with a PodGroup-mode group (`grow-pg`): its own unit is not its victim.
#[test]
fn bound_members_are_not_victims_of_their_group() {
    let one = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: grow, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
pods:
  - {name: grow-0, node: n1, podGroup: grow, task: w, priority: 1, requests: {cpu: "4"}}
  - {name: other, node: n2, priority: 50, requests: {cpu: "4"}}
"#;
    let (_, d, _) = case(one, objective(&[(100, 1, 1)], &[(50, 1)], 0), &[("other", "grow")]);
    assert_eq!(placed_on(&d, "grow"), ["n2"]);

    let alone = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: grow, priority: 100, tasks: [{name: w, count: 1, requests: {cpu: "4"}}]}
pods:
  - {name: grow-0, node: n1, podGroup: grow, task: w, priority: 1, requests: {cpu: "4"}}
"#;
    case(alone, objective(&[(100, 0, 1)], &[], 0), &[]);

    let pg = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: grow-pg, priority: 100, disruptionMode: PodGroup, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
pods:
  - {name: grow-pg-0, node: n1, podGroup: grow-pg, task: w, priority: 1, requests: {cpu: "3"}}
  - {name: grow-pg-1, node: n2, podGroup: grow-pg, task: w, priority: 1, requests: {cpu: "3"}}
"#;
    case(pg, objective(&[(100, 0, 1)], &[], 0), &[]);
}

// ---------------------------------------------------------------------------------------
// Property test
// ---------------------------------------------------------------------------------------

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9EE3_97E0_0F00_0006)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in lo..=hi.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn pct(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// A small cluster mostly full of lower-priority pods (Pod and PodGroup disruption,
/// non-preemptible ones, fractional and whole GPUs) and 1-3 higher-priority gangs, as
/// YAML. Bound pods are laid out with exact bookkeeping, so every instance is valid.
fn small_instance(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let gpus = rng.pct(35);
    let racks = rng.pct(35);
    let n_nodes = rng.range(2, 4) as usize;
    let mut y = String::new();
    if gpus {
        y.push_str("sharedDevices: [gpu]\n");
    }
    if racks {
        y.push_str("topology:\n  levels: [rack]\n");
    }
    y.push_str("nodes:\n");
    // (cpu, mem GiB, per-device milli used)
    let mut cap: Vec<(i64, i64, Vec<i64>)> = Vec::new();
    let mut used: Vec<(i64, i64, Vec<i64>)> = Vec::new();
    for i in 0..n_nodes {
        let cpu = rng.range(2, 6);
        let mem = rng.range(4, 12);
        let devs = if gpus && rng.pct(75) { rng.range(1, 2) } else { 0 };
        let rack = if racks && rng.pct(85) { format!("labels: {{rack: r{}}}, ", rng.range(0, 1)) } else { String::new() };
        let gpu = if devs > 0 { format!(", gpu: {devs}") } else { String::new() };
        y.push_str(&format!("  - {{name: n{i}, {rack}allocatable: {{cpu: \"{cpu}\", memory: {mem}Gi{gpu}}}}}\n"));
        cap.push((cpu, mem, vec![1000; devs as usize]));
        used.push((0, 0, vec![0; devs as usize]));
    }
    let levels = [0, 1, 5, 10, 50];
    let mut groups = String::new();
    let mut pods = String::new();
    // Running groups, some PodGroup, and single pods: fill to 60-100 % of cpu.
    let target = rng.range(60, 100);
    let total_cpu: i64 = cap.iter().map(|c| c.0).sum::<i64>() * 1000;
    let mut used_cpu = 0;
    let n_run = rng.range(0, 2);
    for r in 0..n_run {
        let mode = if rng.pct(50) { ", disruptionMode: PodGroup" } else { "" };
        let prio = rng.pick(&levels);
        groups.push_str(&format!("  - {{name: run{r}, priority: {prio}{mode}, tasks: [{{name: w, count: 0}}]}}\n"));
    }
    let mut k = 0;
    let mut fails = 0;
    while used_cpu * 100 < target * total_cpu && fails < 20 {
        let n = rng.range(0, n_nodes as i64 - 1) as usize;
        let cpu = rng.pick(&[500, 1000, 1000, 2000, 3000]);
        let mem = rng.range(1, 3);
        let gpu = if !cap[n].2.is_empty() && rng.pct(40) { rng.pick(&[250, 500, 1000]) } else { 0 };
        if used[n].0 + cpu > cap[n].0 * 1000 || used[n].1 + mem > cap[n].1 {
            fails += 1;
            continue;
        }
        let dev = if gpu > 0 {
            match (0..cap[n].2.len()).find(|&d| if gpu >= 1000 { used[n].2[d] == 0 } else { used[n].2[d] + gpu <= 1000 }) {
                Some(d) => Some(d),
                None => {
                    fails += 1;
                    continue;
                }
            }
        } else {
            None
        };
        used[n].0 += cpu;
        used[n].1 += mem;
        used_cpu += cpu;
        let mut extra = String::new();
        if let Some(d) = dev {
            used[n].2[d] += gpu;
            extra = format!(", gpu: {gpu}m}}, deviceIds: {{gpu: [{d}]");
        }
        let owner = if n_run > 0 && rng.pct(50) {
            format!(", podGroup: run{}", rng.range(0, n_run - 1))
        } else {
            let p = rng.pick(&levels);
            let pre = if rng.pct(12) { ", preemptible: false" } else { "" };
            format!(", priority: {p}{pre}")
        };
        pods.push_str(&format!("  - {{name: p{k}, node: n{n}{owner}, requests: {{cpu: {cpu}m, memory: {mem}Gi{extra}}}}}\n"));
        k += 1;
    }
    // Pending gangs above most of that.
    let n_pending = rng.range(1, 3);
    for g in 0..n_pending {
        let prio = rng.pick(&[5, 10, 50, 100, 100]);
        let mut head = format!("  - name: g{g}\n    priority: {prio}\n");
        if rng.pct(15) {
            head.push_str("    preemptionPolicy: Never\n");
        }
        if rng.pct(20) {
            head.push_str("    policy: basic\n");
        }
        if racks && rng.pct(40) {
            head.push_str("    topology: {required: rack}\n");
        }
        head.push_str("    tasks:\n");
        let n_tasks = rng.range(1, 2);
        for t in 0..n_tasks {
            let count = rng.range(1, 3);
            let cpu = rng.pick(&[1, 1, 2, 3]);
            let gpu = if gpus && rng.pct(40) { format!(", gpu: {}", rng.pick(&["250m", "500m", "1"])) } else { String::new() };
            let min = if count > 1 && rng.pct(30) { format!(", minCount: {}", rng.range(1, count - 1)) } else { String::new() };
            head.push_str(&format!("      - {{name: t{t}, count: {count}{min}, requests: {{cpu: \"{cpu}\", memory: 1Gi{gpu}}}}}\n"));
        }
        groups.push_str(&head);
        // Sometimes a member already runs, at a lower pod priority.
        if rng.pct(20) {
            let n = rng.range(0, n_nodes as i64 - 1) as usize;
            if used[n].0 + 1000 <= cap[n].0 * 1000 && used[n].1 < cap[n].1 {
                used[n].0 += 1000;
                used[n].1 += 1;
                let p = rng.pick(&levels);
                pods.push_str(&format!(
                    "  - {{name: g{g}-b0, node: n{n}, podGroup: g{g}, task: t0, priority: {p}, requests: {{cpu: \"1\", memory: 1Gi}}}}\n"
                ));
            }
        }
    }
    y.push_str("podGroups:\n");
    y.push_str(&groups);
    if !pods.is_empty() {
        y.push_str("pods:\n");
        y.push_str(&pods);
    }
    if rng.pct(8) {
        y.push_str("options: {preemption: false}\n");
    }
    y
}

/// Some bound pod may be evicted by some pending group (rule 6 eligibility).
fn has_evictable(inst: &Instance) -> bool {
    inst.options.preemption
        && inst.pending_groups().any(|g| {
            let grp = &inst.groups[g];
            !grp.preempt_never && inst.pods.iter().any(|p| p.preemptible && p.priority < grp.priority && p.group != Some(g))
        })
}

/// Everything wrong with the two solvers on one instance, and their decisions.
fn problems(inst: &Instance) -> (Vec<String>, Decision, Decision) {
    let mut out = Vec::new();
    let cfg = Options { time_limit: Some(Duration::from_secs(30)), ..Default::default() };
    let exact = SolverKind::from_name("exact").unwrap().solve(inst, &cfg);
    let k8s = SolverKind::from_name("k8s-preempt").unwrap().solve(inst, &cfg);
    if exact.status != Status::Optimal {
        out.push(format!("exact: status {:?}", exact.status));
    }
    for (name, d) in [("exact", &exact), ("k8s-preempt", &k8s)] {
        let v = violations(inst, d);
        if !v.is_empty() {
            out.push(format!("{name}: invalid decision: {v:#?}\n{}", d.to_yaml()));
        }
    }
    if exact.objective.compare(&k8s.objective) == Ordering::Less {
        out.push(format!("exact is worse than k8s-preempt:\nexact:\n{}\nk8s-preempt:\n{}", exact.to_yaml(), k8s.to_yaml()));
    }
    // Determinism of the baseline.
    let again = SolverKind::from_name("k8s-preempt").unwrap().solve(inst, &cfg);
    if again.without_timings() != k8s.without_timings() {
        out.push("k8s-preempt: two runs differ".into());
    }
    (out, exact, k8s)
}

#[test]
fn exact_valid_and_never_worse_than_k8s_preempt() {
    let cases: u64 = std::env::var("TESSERA_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(200);
    let only: Option<u64> = std::env::var("TESSERA_SEED").ok().and_then(|s| s.parse().ok());
    let mut failures = Vec::new();
    let (mut evicting, mut k8s_worse, mut tried) = (0, 0, 0);
    // Own generator: `cases` instances with an evictable pod.
    let mut seed = 0;
    let mut kept = 0;
    while kept < cases && seed < cases * 20 {
        let s = seed;
        seed += 1;
        if only.is_some_and(|o| o != s) {
            continue;
        }
        let yaml = small_instance(s);
        let inst = parse(&yaml);
        if !has_evictable(&inst) {
            continue;
        }
        kept += 1;
        tried += 1;
        let (p, e, k) = problems(&inst);
        if !p.is_empty() {
            failures.push(format!("seed {s}:\n{yaml}\n{}", p.join("\n")));
        }
        evicting += !e.evictions.is_empty() as i32;
        k8s_worse += (e.objective.compare(&k.objective) == Ordering::Greater) as i32;
    }
    // `tiny` instances of the generator with something evictable.
    if only.is_none() {
        for s in 0..cases.max(50) * 2 {
            let doc = tessera::tooling::generate::generate("tiny", s).unwrap();
            let inst = Instance::from_doc(&doc).unwrap();
            if !has_evictable(&inst) {
                continue;
            }
            tried += 1;
            let (p, _, _) = problems(&inst);
            if !p.is_empty() {
                failures.push(format!("tiny seed {s}:\n{}\n{}", serde_yaml_ng::to_string(&doc).unwrap(), p.join("\n")));
            }
        }
    }
    eprintln!(
        "{tried} instances; own generator: {kept} kept, exact evicts in {evicting}, exact strictly better than k8s-preempt in {k8s_worse}"
    );
    assert!(failures.is_empty(), "{} failing instance(s):\n{}", failures.len(), failures.join("\n----\n"));
    if only.is_none() && cases >= 200 {
        // The generator exercises preemption, and the baseline is really a baseline.
        assert!(evicting >= 50, "only {evicting} instances need evictions");
        assert!(k8s_worse >= 5, "k8s-preempt matches exact on all but {k8s_worse}");
    }
}
