//! Hand-computed topology cases: required / preferred levels, slices,
//! bound members, nodes without labels, and the per-level explanations. Each comment
//! shows the arithmetic of the expected optimum; every decision passes the validator.

mod common;

use common::*;
use std::time::Duration;
use tessera::wire::decision::{Decision, Status};
use tessera::{check, Instance, Options, SolverKind};
// ---------------------------------------------------------------------------------------
// Topology cases
// ---------------------------------------------------------------------------------------

/// Racks (by pending pods of 1 cpu they hold) with free capacity 3, 3, 2, 1 and a 7-pod
/// gang with a *preferred* rack: the fewest racks.
/// r1 = {r1-a: 2, r1-b: 1} = 3, r2 = {r2-a: 3} = 3, r3 = {r3-a: 1, r3-b: 1} = 2, r4 = {r4-a: 1}.
/// Two racks hold at most 3 + 3 = 6 < 7, so at least 3 racks; 3 + 3 + 1 = 7 does it (r1, r2
/// and one pod in r3 or r4). Fewest racks = 3, so r1 and r2 are both full (any 3-rack
/// choice without both of them holds at most 3 + 2 + 1 = 6).
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn preferred_rack_uses_the_fewest_racks() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r3-a, labels: {example.com/rack: r3}, allocatable: {cpu: "1"}}
  - {name: r4-a, labels: {example.com/rack: r4}, allocatable: {cpu: "1"}}
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "2"}}
  - {name: r1-b, labels: {example.com/rack: r1}, allocatable: {cpu: "1"}}
  - {name: r3-b, labels: {example.com/rack: r3}, allocatable: {cpu: "1"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "3"}}
podGroups:
  - name: job
    topology: {preferred: example.com/rack}
    tasks: [{name: w, count: 7, requests: {cpu: "1"}}]
"#,
        &[(0, 1, 1)],
        0,
    );
    let racks = racks_used(&d, "job");
    assert_eq!(racks.len(), 3, "fewest racks is 3: {racks:?}\n{}", d.to_yaml());
    let pods = per_node(&d, "job", "w");
    assert_eq!(pods.get("r1-a"), Some(&2));
    assert_eq!(pods.get("r1-b"), Some(&1));
    assert_eq!(pods.get("r2-a"), Some(&3));
}

fn racks_used(d: &Decision, group: &str) -> std::collections::BTreeSet<String> {
    placement(d, group).pods.iter().map(|p| p.node.split('-').next().unwrap().to_string()).collect()
}

/// Two gangs competing for racks. r1 = {r1-a: 4 cpu}, r2 = {r2-a: 2 cpu}.
/// hi (priority 10): 2 pods of 1 cpu, required rack: fits r1 or r2.
/// lo (priority 0): 4 pods of 1 cpu, required rack: fits only r1 (r2 has 2 < 4).
/// Gang by gang (hi first, first fitting rack r1) leaves r1 with 2 free: lo fails.
/// Jointly: hi in r2, lo in r1: both placed. Objective: [10: 1/1, 0: 1/1], extraPods 0.
#[test]
fn competing_gangs_need_a_joint_rack_choice() {
    let (inst, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "2"}}
podGroups:
  - {name: hi, priority: 10, topology: {required: example.com/rack}, tasks: [{name: w, count: 2, requests: {cpu: "1"}}]}
  - {name: lo, priority: 0, topology: {required: example.com/rack}, tasks: [{name: w, count: 4, requests: {cpu: "1"}}]}
"#,
        &[(10, 1, 1), (0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "hi", "w"), counts(&[("r2-a", 2)]));
    assert_eq!(per_node(&d, "lo", "w"), counts(&[("r1-a", 4)]));
    assert_ffd_worse(&inst, &d);
}

/// Multi-level: required block, preferred rack, slices of 2 pods per host.
/// job: 8 pods of 1 cpu. Block b1 (listed first, 9 cpu free, enough by raw capacity):
/// hosts of 3, 3, 3 cpu hold one slice of 2 each = 6 < 8 pods: b1 fails.
/// Block b2: r3 = {h3a: 4, h3b: 4}, r4 = {h4a: 4}: 2 + 2 + 2 slices = 12 >= 8: fits.
/// Preferred rack: r3 alone holds 4 + 4 = 8 -> one rack; so 4 pods on h3a and h3b.
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn multi_level_block_rack_host_slices() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/block, example.com/rack]}
nodes:
  - {name: h1a, labels: {example.com/block: b1, example.com/rack: r1}, allocatable: {cpu: "3"}}
  - {name: h1b, labels: {example.com/block: b1, example.com/rack: r1}, allocatable: {cpu: "3"}}
  - {name: h2a, labels: {example.com/block: b1, example.com/rack: r2}, allocatable: {cpu: "3"}}
  - {name: h4a, labels: {example.com/block: b2, example.com/rack: r4}, allocatable: {cpu: "4"}}
  - {name: h3a, labels: {example.com/block: b2, example.com/rack: r3}, allocatable: {cpu: "4"}}
  - {name: h3b, labels: {example.com/block: b2, example.com/rack: r3}, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    topology: {required: example.com/block, preferred: example.com/rack}
    tasks: [{name: w, count: 8, requests: {cpu: "1"}, slice: {topology: kubernetes.io/hostname, size: 2}}]
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(placement(&d, "job").domains.get("example.com/block").map(String::as_str), Some("b2"));
    assert_eq!(per_node(&d, "job", "w"), counts(&[("h3a", 4), ("h3b", 4)]));
}

/// Bound members pin the domain, even to a worse one.
/// Levels block > rack. job: count 4, minCount 3, 1 cpu, required block; one bound member
/// on b2's node (b2-a: 3 cpu, 1 used -> 2 free). The task minimum is 3 new pods (a task's
/// minCount counts new pods), and b2 has 2 free: unplaced, although b1 (16 cpu) could hold
/// all. The reason names the block level and b2.
/// other: 2 pods of 1 cpu, required block, no bound member -> placed (b1 or b2).
/// Objective: [0: 1/2], extraPods 0.
#[test]
fn bound_member_pins_the_block_too_small() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/block, example.com/rack]}
nodes:
  - {name: b1-a, labels: {example.com/block: b1, example.com/rack: r1}, allocatable: {cpu: "16"}}
  - {name: b2-a, labels: {example.com/block: b2, example.com/rack: r2}, allocatable: {cpu: "3"}}
podGroups:
  - name: job
    topology: {required: example.com/block}
    tasks: [{name: w, count: 4, minCount: 3, requests: {cpu: "1"}}]
  - {name: other, topology: {required: example.com/block}, tasks: [{name: w, count: 2, requests: {cpu: "1"}}]}
pods:
  - {name: job-0, node: b2-a, podGroup: job, task: w, requests: {cpu: "1"}}
"#,
        &[(0, 1, 2)],
        0,
    );
    assert_unplaced(&d, "job", &["example.com/block", "b2"]);
}

/// Slices that do not divide the count evenly.
/// w: count 10, minCount 6, slices of 4 pods per host, 1 cpu each. Hosts h1: 8, h2: 3,
/// h3: 4 cpu. Per host a multiple of 4: h1 in {0, 4, 8}, h2 {0}, h3 {0, 4}; at most 10
/// pods in all -> 8 (8 + 4 = 12 > 10). The minimum 6 rounds up to 8 anyway.
/// extraPods = 8 - 6 = 2. Objective: [0: 1/1], extraPods 2.
#[test]
fn slices_do_not_divide_the_count() {
    let (_, d) = exact(
        r#"
nodes:
  - {name: h1, allocatable: {cpu: "8"}}
  - {name: h2, allocatable: {cpu: "3"}}
  - {name: h3, allocatable: {cpu: "4"}}
podGroups:
  - name: job
    tasks: [{name: w, count: 10, minCount: 6, requests: {cpu: "1"}, slice: {topology: kubernetes.io/hostname, size: 4}}]
"#,
        &[(0, 1, 1)],
        2,
    );
    let pods = per_node(&d, "job", "w");
    assert!(pods.values().all(|&k| k % 4 == 0), "{pods:?}");
    assert_eq!(pods.values().sum::<usize>(), 8);
    assert_eq!(pods.get("h2"), None);
}

/// Nodes lacking the level's label belong to no domain.
/// loose: no rack label, 10 cpu; r1-a, r2-a: 2 cpu each.
/// req: 3 pods of 1 cpu, required rack: racks hold 2 each -> unplaced (loose does not
///   count), the reason names the rack level.
/// pref: 3 pods of 1 cpu, preferred rack: may use loose, which counts as a domain of its
///   own (one domain); the racks hold 2 each, so any other choice uses 2 -> all 3 on loose.
/// Objective: [0: 1/2], extraPods 0.
#[test]
fn nodes_without_the_label_are_in_no_domain() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "2"}}
  - {name: loose, allocatable: {cpu: "10"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "2"}}
podGroups:
  - {name: req, topology: {required: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
  - {name: pref, topology: {preferred: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
"#,
        &[(0, 1, 2)],
        0,
    );
    assert_unplaced(&d, "req", &["example.com/rack"]);
    assert_eq!(per_node(&d, "pref", "w"), counts(&[("loose", 3)]));
}

/// Spreading over unlabelled nodes is not free: each counts as a domain of its own.
/// loose-1, loose-2: no rack label, 2 cpu each; rack r1 = {r1-a: 2, r1-b: 2}.
/// pref: 4 pods of 1 cpu, preferred rack. r1 alone holds 4 (one domain); the loose nodes
/// need both (two domains), and so does any mix -> all 4 in r1.
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn an_unlabelled_node_is_a_domain_of_its_own_for_preferred() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: loose-1, allocatable: {cpu: "2"}}
  - {name: loose-2, allocatable: {cpu: "2"}}
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "2"}}
  - {name: r1-b, labels: {example.com/rack: r1}, allocatable: {cpu: "2"}}
podGroups:
  - {name: pref, topology: {preferred: example.com/rack}, tasks: [{name: w, count: 4, requests: {cpu: "1"}}]}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "pref", "w"), counts(&[("r1-a", 2), ("r1-b", 2)]));
}

/// A rack that already holds a bound member of the group is used anyway: new pods there
/// add no domain. job: group minCount 3 with one member running on r2-a, so 2 new pods of
/// 1 cpu, preferred rack. r1-a has 3 cpu free and is the fuller node (1 of 4 used, against
/// 1 of 16 on r2-a), so packing alone would pick it; but r1 would make two racks used
/// (r1 and the bound member's r2), r2 only one -> both new pods on r2-a.
/// Objective: [0: 1/1], extraPods 0.
#[test]
fn a_bound_members_rack_costs_nothing_for_preferred() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "16"}}
podGroups:
  - name: job
    minCount: 3
    topology: {preferred: example.com/rack}
    tasks: [{name: w, count: 2, minCount: 0, requests: {cpu: "1"}}]
pods:
  - {name: other, node: r1-a, requests: {cpu: "1"}}
  - {name: job-0, node: r2-a, podGroup: job, task: w, requests: {cpu: "1"}}
"#,
        &[(0, 1, 1)],
        0,
    );
    assert_eq!(per_node(&d, "job", "w"), counts(&[("r2-a", 2)]));
}

/// The explanation names the level, the requirement and the closest domains.
/// 16 pods of 1 nvidia.com/gpu (a plain resource here), required rack.
/// r1 = {r1-a: 8 gpu, r1-b: 8 gpu with 4 used} = 12 free; r2 = {r2-a: 8} = 8 free.
/// No rack holds 16: unplaced; closest r1 (12 of 16), then r2 (8 of 16).
/// Objective: [0: 0/1], extraPods 0.
#[test]
fn explanation_names_the_level_and_the_closest_domains() {
    let (_, d) = exact(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "64", nvidia.com/gpu: "8"}}
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "64", nvidia.com/gpu: "8"}}
  - {name: r1-b, labels: {example.com/rack: r1}, allocatable: {cpu: "64", nvidia.com/gpu: "8"}}
podGroups:
  - {name: big, topology: {required: example.com/rack}, tasks: [{name: w, count: 16, requests: {cpu: "1", nvidia.com/gpu: "1"}}]}
pods:
  - {name: other-0, node: r1-b, requests: {cpu: "1", nvidia.com/gpu: "4"}}
"#,
        &[(0, 0, 1)],
        0,
    );
    assert_unplaced(&d, "big", &["required example.com/rack", "rack r1: ", "needs 16 nvidia.com/gpu, has 12 free", "r2"]);
    let why = &d.unplaced[0].reason;
    assert!(why.find("r1:").unwrap() < why.find("r2:").unwrap(), "closest first: {why}");
}

// ---------------------------------------------------------------------------------------
// The decomposition (master over domains + restricted joint model), forced on small cases
// ---------------------------------------------------------------------------------------

fn decomposed(yaml: &str) -> (Instance, Decision) {
    let inst = parse(yaml);
    let cfg = Options {
        time_limit: Some(Duration::from_secs(60)),
        diagnostics: tessera::Diagnostics { decompose: Some(true), ..Default::default() },
        ..Default::default()
    };
    let d = SolverKind::from_name("exact").unwrap().solve(&inst, &cfg);
    let report = check::check(&inst, &d);
    assert!(report.violations.is_empty(), "validator rejects the decomposed decision: {:#?}\n{}", report.violations, d.to_yaml());
    assert_eq!(d.objective, report.objective, "misreported objective");
    (inst, d)
}

/// The competing-gangs case through the decomposition: the master proves 1 + 1 groups,
/// the restricted model places both (hi in r2, lo in r1): Optimal, terms 1-3 proven
/// (both gangs are rigid, no victims).
#[test]
fn decomposition_places_competing_gangs_and_proves_it() {
    let (_, d) = decomposed(
        r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "2"}}
podGroups:
  - {name: hi, priority: 10, topology: {required: example.com/rack}, tasks: [{name: w, count: 2, requests: {cpu: "1"}}]}
  - {name: lo, priority: 0, topology: {required: example.com/rack}, tasks: [{name: w, count: 4, requests: {cpu: "1"}}]}
"#,
    );
    assert_eq!(d.status, Status::Optimal, "{}", d.to_yaml());
    assert_eq!(d.objective.placed_by_priority, rows(&[(10, 1, 1), (0, 1, 1)]));
    assert_eq!(d.stats.terms_proven, Some(vec![1, 2, 3]));
}

/// Three 3-pod gangs of 1 cpu (required rack) and racks of 4, 4 and 2 cpu: the master's
/// rows allow 2 gangs (a third needs a rack with 3 free: r1 or r2, each holding one gang
/// of 3 with 1 left; r3 has 2 < 3, screened out). Bound 2 = what is placed: Optimal.
/// Elastic gangs leave term 3 unproven under the decomposition: e (count 3, minCount 1)
/// in the same cluster keeps the status Feasible with terms [1, 2] proven.
#[test]
fn decomposition_bound_meets_and_elastic_term3_is_not_claimed() {
    let base = r#"
topology: {levels: [example.com/rack]}
nodes:
  - {name: r1-a, labels: {example.com/rack: r1}, allocatable: {cpu: "4"}}
  - {name: r2-a, labels: {example.com/rack: r2}, allocatable: {cpu: "4"}}
  - {name: r3-a, labels: {example.com/rack: r3}, allocatable: {cpu: "2"}}
podGroups:
  - {name: a, topology: {required: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
  - {name: b, topology: {required: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
  - {name: c, topology: {required: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
"#;
    let (_, d) = decomposed(base);
    assert_eq!(d.status, Status::Optimal, "{}", d.to_yaml());
    assert_eq!(d.objective.placed_by_priority, rows(&[(0, 2, 3)]));
    let elastic = format!(
        "{base}  - {{name: e, priority: 5, topology: {{required: example.com/rack}}, tasks: [{{name: w, count: 3, minCount: 1, requests: {{cpu: \"1\"}}}}]}}\n"
    );
    let (_, d) = decomposed(&elastic);
    assert_eq!(d.status, Status::Feasible, "{}", d.to_yaml());
    assert_eq!(d.stats.terms_proven, Some(vec![1, 2]));
}

/// How the master settles its levels. Three 3-pod gangs of 1 cpu, required rack, racks
/// of 4, 4 and 2 cpu (r3 screened out): the LP relaxation allows 8/3 < 2 + 1 groups, so
/// the greedy's 2 are proven by the LP alone. With racks of 5 and 5 the LP allows 10/3
/// (a third of a gang in each rack's leftover 2 cpu), which does not settle it; the
/// integer master does (one gang per rack: 3 + 3 > 5), and 2 is again the optimum. One
/// level above that the greedy places in full needs no solve at all.
#[test]
fn decomposition_master_levels_settled_by_lp_or_branch_and_bound() {
    let gangs = r#"
  - {name: a, topology: {required: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
  - {name: b, topology: {required: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
  - {name: c, topology: {required: example.com/rack}, tasks: [{name: w, count: 3, requests: {cpu: "1"}}]}
"#;
    let settled = |d: &Decision| -> Vec<String> { d.stats.master_bound.as_ref().unwrap().iter().map(|b| b.settled_by.clone()).collect() };
    let (_, d) = decomposed(&format!(
        r#"
topology: {{levels: [example.com/rack]}}
nodes:
  - {{name: r1-a, labels: {{example.com/rack: r1}}, allocatable: {{cpu: "4"}}}}
  - {{name: r2-a, labels: {{example.com/rack: r2}}, allocatable: {{cpu: "4"}}}}
  - {{name: r3-a, labels: {{example.com/rack: r3}}, allocatable: {{cpu: "2"}}}}
podGroups:{gangs}"#
    ));
    assert_eq!(d.status, Status::Optimal, "{}", d.to_yaml());
    assert_eq!(d.objective.placed_by_priority, rows(&[(0, 2, 3)]));
    assert_eq!(settled(&d), ["LP relaxation"]);

    let (_, d) = decomposed(&format!(
        r#"
topology: {{levels: [example.com/rack]}}
nodes:
  - {{name: r1-a, labels: {{example.com/rack: r1}}, allocatable: {{cpu: "5"}}}}
  - {{name: r2-a, labels: {{example.com/rack: r2}}, allocatable: {{cpu: "5"}}}}
podGroups:{gangs}  - {{name: top, priority: 9, tasks: [{{name: w, count: 1, requests: {{cpu: "1"}}}}]}}
"#
    ));
    assert_eq!(d.status, Status::Optimal, "{}", d.to_yaml());
    assert_eq!(d.objective.placed_by_priority, rows(&[(9, 1, 1), (0, 2, 3)]));
    assert_eq!(settled(&d), ["hint places all", "branch-and-bound"]);
}

/// A generated 512-node topology instance through the decomposition: valid, never fewer
/// groups than first-fit decreasing, never more than the master bound per level.
#[test]
fn decomposition_on_topo_512_is_valid_and_bounded() {
    let doc = tessera::tooling::generate::generate("topo-512", 1).unwrap();
    let inst = Instance::from_doc(&doc).unwrap();
    let cfg = Options {
        time_limit: Some(Duration::from_secs(5)),
        diagnostics: tessera::Diagnostics { decompose: Some(true), ..Default::default() },
        ..Default::default()
    };
    let d = SolverKind::from_name("exact").unwrap().solve(&inst, &cfg);
    let report = check::check(&inst, &d);
    assert!(report.violations.is_empty(), "{:#?}", report.violations);
    let f = run("ffd", &inst);
    let placed = |d: &Decision| d.objective.placed_by_priority.iter().map(|r| r.placed).sum::<i64>();
    assert!(placed(&d) >= placed(&f), "decomposed {} < ffd {}", placed(&d), placed(&f));
    let bounds = d.stats.master_bound.clone().expect("master bound reported");
    for (row, b) in d.objective.placed_by_priority.iter().zip(&bounds) {
        assert_eq!(row.priority, b.priority.into());
        assert!(row.placed <= b.placed, "placed above the master bound: {row:?} vs {b:?}");
    }
}
