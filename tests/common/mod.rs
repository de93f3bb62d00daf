//! Helpers shared by the test files (`cases.rs`, `topology.rs`, `cli.rs`, ...): parse,
//! solve, and assert a decision against hand-computed values.
#![allow(dead_code)]

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::Duration;
use tessera::wire::decision::{Decision, PlacedRow, Placement, Status};
use tessera::{check, Instance, Options, SolverKind};

/// A gang that overflows its only node by one byte (10 000 000 001 + 10 000 000 003 >
/// 20 000 000 003): a capacity row HiGHS sees scaled, where one byte is inside its
/// tolerance (`tests/cases.rs` and `tests/cli.rs`).
pub const ONE_BYTE_OVER: &str = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4", memory: "20000000003"}}
podGroups:
  - name: g
    tasks:
      - {name: a, count: 1, requests: {cpu: "1", memory: "10000000001"}}
      - {name: b, count: 1, requests: {cpu: "1", memory: "10000000003"}}
"#;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

pub fn parse(yaml: &str) -> Instance {
    Instance::from_text(yaml).unwrap_or_else(|e| panic!("test instance does not parse: {e}\n{yaml}"))
}

pub fn run(solver: &str, inst: &Instance) -> Decision {
    let cfg = Options { time_limit: Some(Duration::from_secs(60)), ..Default::default() };
    SolverKind::from_name(solver).unwrap_or_else(|| panic!("no solver {solver:?}")).solve(inst, &cfg)
}

pub fn rows(want: &[(i64, i64, i64)]) -> Vec<PlacedRow> {
    want.iter().map(|&(priority, placed, pending)| PlacedRow { priority: priority.into(), placed, pending }).collect()
}

/// Solves with the exact solver and asserts: Optimal, valid, objective = hand value
/// (`want`: (priority, placed, pending) rows highest first; no evictions; `extra` pods).
pub fn exact(yaml: &str, want: &[(i64, i64, i64)], extra: i64) -> (Instance, Decision) {
    let inst = parse(yaml);
    let d = run("exact", &inst);
    let shown = d.to_yaml();
    assert_eq!(d.status, Status::Optimal, "exact solver did not prove optimality:\n{shown}");
    let report = check::check(&inst, &d);
    assert!(report.violations.is_empty(), "validator rejects the exact decision: {:#?}\n{shown}", report.violations);
    assert_eq!(d.objective.placed_by_priority, rows(want), "placedByPriority differs from the hand value:\n{shown}");
    assert!(d.objective.evicted_by_priority.is_empty(), "no eviction was expected:\n{shown}");
    assert!(d.evictions.is_empty(), "no eviction was expected:\n{shown}");
    assert_eq!(d.objective.extra_pods, extra, "extraPods differs from the hand value:\n{shown}");
    // Every pending group is accounted for exactly once.
    let placed = d.placements.len() as i64;
    let want_placed: i64 = want.iter().map(|r| r.1).sum();
    let want_pending: i64 = want.iter().map(|r| r.2).sum();
    assert_eq!(placed, want_placed, "number of placements:\n{shown}");
    assert_eq!(placed + d.unplaced.len() as i64, want_pending, "placed + unplaced != pending:\n{shown}");
    (inst, d)
}

pub fn placement<'a>(d: &'a Decision, group: &str) -> &'a Placement {
    d.placements.iter().find(|p| p.pod_group == group).unwrap_or_else(|| panic!("group {group} is not placed:\n{}", d.to_yaml()))
}

pub fn is_placed(d: &Decision, group: &str) -> bool {
    d.placements.iter().any(|p| p.pod_group == group)
}

/// Node -> number of new pods of `group`/`task` on it.
pub fn per_node(d: &Decision, group: &str, task: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for p in placement(d, group).pods.iter().filter(|p| p.task == task) {
        *m.entry(p.node.clone()).or_default() += 1;
    }
    m
}

pub fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|&(n, c)| (n.to_string(), c)).collect()
}

/// Sorted device lists of the new pods of `group`/`task` for resource `res`, with their node.
pub fn devices(d: &Decision, group: &str, task: &str, res: &str) -> Vec<(String, Vec<usize>)> {
    let mut v: Vec<(String, Vec<usize>)> = placement(d, group)
        .pods
        .iter()
        .filter(|p| p.task == task)
        .map(|p| (p.node.clone(), p.device_ids.get(res).cloned().unwrap_or_default()))
        .collect();
    v.sort();
    v
}

/// The group is unplaced, with a non-empty reason containing every fragment.
pub fn assert_unplaced(d: &Decision, group: &str, fragments: &[&str]) {
    assert!(!is_placed(d, group), "group {group} should not be placed:\n{}", d.to_yaml());
    let u = d
        .unplaced
        .iter()
        .find(|u| u.pod_group == group)
        .unwrap_or_else(|| panic!("group {group} is missing from unplaced:\n{}", d.to_yaml()));
    assert!(!u.reason.trim().is_empty(), "group {group} has an empty reason");
    for f in fragments {
        assert!(u.reason.contains(f), "reason of {group} should mention {f:?}: {:?}", u.reason);
    }
}

/// ffd on the same instance: its decision passes the validator and is strictly worse
/// than the exact one on terms 1-3.
pub fn assert_ffd_worse(inst: &Instance, exact: &Decision) -> Decision {
    let f = run("ffd", inst);
    let report = check::check(inst, &f);
    assert!(report.violations.is_empty(), "validator rejects the ffd decision: {:#?}\n{}", report.violations, f.to_yaml());
    assert_eq!(f.objective, report.objective, "ffd misreports its objective");
    assert_eq!(
        f.objective.compare(&exact.objective),
        Ordering::Less,
        "ffd should be worse than the optimum here:\nffd: {:?}\nexact: {:?}",
        f.objective,
        exact.objective
    );
    assert_eq!(exact.objective.compare(&f.objective), Ordering::Greater);
    f
}
