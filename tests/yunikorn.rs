//! The YuniKorn baselines rule by rule, each on a hand-made instance whose outcome is
//! worked out by hand in the comment above it. Only `cpu` is declared, so node scores and
//! queue shares are computed on cpu alone.

use tessera::wire::decision::Decision;
use tessera::{check, Instance, Options, SolverKind};

fn solve(yaml: &str, solver: &str) -> (Instance, Decision) {
    let inst = Instance::from_text(yaml).unwrap();
    let d = SolverKind::from_name(solver).unwrap().solve(&inst, &Options::default());
    let report = check::check(&inst, &d);
    assert!(report.is_valid(), "{solver}: invalid decision\n{}\n{}", check::render(&report), d.to_yaml());
    assert!(d.evictions.is_empty());
    (inst, d)
}

/// Group name -> (pods placed, nodes) in the decision.
fn placed(d: &Decision) -> Vec<(String, Vec<String>)> {
    let mut v: Vec<(String, Vec<String>)> =
        d.placements.iter().map(|p| (p.pod_group.clone(), p.pods.iter().map(|x| x.node.clone()).collect())).collect();
    v.sort();
    v
}

fn names(v: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
    v.iter().map(|(g, n)| (g.to_string(), n.iter().map(|s| s.to_string()).collect())).collect()
}

/// Headroom is checked before each allocation, never trimmed afterwards. n1, n2: cpu 2.
/// Queue root.a: max cpu 2; root.b: no limit. `g1` (root.a, priority 10): basic, 2 pods of
/// cpu 2; `g2` (root.b, priority 0): 1 pod of cpu 2. Step 1: root sorts a (priority 10)
/// before b; g1's first pod: headroom 2, nodes tie at usage 0, by name: n1. Step 2: g1's
/// second pod: headroom 0, skipped (and it cannot fit later). Step 3: root.b: g2 on n2 (n1
/// is full). A placement that ignored the quota and trimmed g1 afterwards would have put
/// g1's second pod on n2 and left g2 out.
#[test]
fn headroom_is_checked_per_allocation_not_trimmed() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "2"}}
  - {name: n2, allocatable: {cpu: "2"}}
queues:
  - name: root
    queues:
      - {name: a, resources: {max: {vcore: "2"}}}
      - {name: b}
      - {name: default}
podGroups:
  - {name: g1, queue: root.a, priority: 10, policy: basic, tasks: [{name: w, count: 2, requests: {cpu: "2"}}]}
  - {name: g2, queue: root.b, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
"#;
    for s in ["yunikorn-fair", "yunikorn-binpacking"] {
        let (_, d) = solve(yaml, s);
        assert_eq!(placed(&d), names(&[("g1", &["n1"]), ("g2", &["n2"])]), "{s}");
    }
}

/// Placeholders are allocated member by member against the headroom of that moment.
/// n1: cpu 8. Queue root.q: max cpu 6, with a running pod of `old` (cpu 2) in it: headroom
/// 4. Gang `g` (priority 10): 3 pods of cpu 2 (its minimum, 6, is not above max, so it is
/// not rejected). Placeholders 1 and 2 fit the headroom (4, then 2); placeholder 3 does
/// not (0 left): the gang never completes and is released at the timeout. `b` (priority 0,
/// root.q): 1 pod of cpu 2: while g's placeholders hold the headroom it does not fit
/// either. Nothing is placed, and the queue never went above 6 (the validator's rule 7).
#[test]
fn partial_gang_holds_headroom_until_its_timeout() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "8"}}
queues:
  - name: root
    queues:
      - {name: q, resources: {max: {vcore: "6"}}}
      - {name: default}
podGroups:
  - {name: old, queue: root.q, tasks: [{name: w, count: 0, requests: {cpu: "2"}}]}
  - {name: g, queue: root.q, priority: 10, tasks: [{name: w, count: 3, requests: {cpu: "2"}}]}
  - {name: b, queue: root.q, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
pods:
  - {name: old-0, node: n1, podGroup: old, requests: {cpu: "2"}}
"#;
    let (_, d) = solve(yaml, "yunikorn-fair");
    assert!(d.placements.is_empty(), "{}", d.to_yaml());
    // Without the queue limit the gang completes (3 placeholders on n1, 6 of 8 cpu used
    // with old's 2) and b does not fit (0 left): the gang is what the limit stopped.
    let (_, d) = solve(&yaml.replace("resources: {max: {vcore: \"6\"}}", "resources: {max: {vcore: \"20\"}}"), "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("g", &["n1", "n1", "n1"])]));
}

/// A gang's placeholders take nodes one at a time in node order; when the gang cannot
/// complete they are released only at the end of the cycle. n1: cpu 4. Gang `g` (priority
/// 10): 3 pods of cpu 2: placeholders 1 and 2 on n1, placeholder 3 fits nowhere. `b`
/// (priority 0): 1 pod of cpu 2: n1 is held by g's placeholders, so b is not placed. Exact
/// places b (1 of 2 groups); YuniKorn places none.
#[test]
fn incomplete_gang_placeholders_block_a_smaller_app() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
podGroups:
  - {name: g, priority: 10, tasks: [{name: w, count: 3, requests: {cpu: "2"}}]}
  - {name: b, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
"#;
    let (_, d) = solve(yaml, "yunikorn-binpacking");
    assert!(d.placements.is_empty());
    let (_, e) = solve(yaml, "exact");
    assert_eq!(placed(&e), names(&[("b", &["n1"])]));
}

/// FIFO with priority (the default) versus `application.sort.priority: disabled`. n1: cpu
/// 2, room for one app. `early` (priority 0, createdAt 0) and `urgent` (priority 10,
/// createdAt 5), both 1 pod of cpu 2 in root.q (fifo). With priority sorting urgent goes
/// first; with it disabled the leaf sorts by submission time: early.
#[test]
fn fifo_sorts_by_priority_then_submission() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "2"}}
queues:
  - name: root
    queues:
      - {name: q, properties: {application.sort.policy: fifo}}
      - {name: default}
podGroups:
  - {name: early, queue: root.q, priority: 0, createdAt: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: urgent, queue: root.q, priority: 10, createdAt: 5, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
"#;
    let (_, d) = solve(yaml, "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("urgent", &["n1"])]));
    let disabled = yaml.replace("application.sort.policy: fifo", "application.sort.policy: fifo, application.sort.priority: disabled");
    let (_, d) = solve(&disabled, "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("early", &["n1"])]));
    // StateAware has been read as FIFO since YuniKorn 1.6.
    let (_, d) = solve(&disabled.replace("fifo", "stateaware"), "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("early", &["n1"])]));
}

/// FAIR sorts applications by usage, re-sorted after every allocation. n1: cpu 2. `a` and
/// `c` (basic, 2 pods of cpu 1 each, equal priority, a first in input). Step 1: both use
/// 0: a. Step 2: a uses 1, c 0: c. Node full. FAIR places both; FIFO gives a both pods
/// and leaves c out.
#[test]
fn fair_app_sorting_alternates_by_usage() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "2"}}
queues:
  - name: root
    queues:
      - {name: q, properties: {application.sort.policy: fair}}
      - {name: default}
podGroups:
  - {name: a, queue: root.q, createdAt: 0, policy: basic, tasks: [{name: w, count: 2, requests: {cpu: "1"}}]}
  - {name: c, queue: root.q, createdAt: 1, policy: basic, tasks: [{name: w, count: 2, requests: {cpu: "1"}}]}
"#;
    let (_, d) = solve(yaml, "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("a", &["n1"]), ("c", &["n1"])]));
    let (_, d) = solve(&yaml.replace("policy: fair", "policy: fifo"), "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("a", &["n1", "n1"])]));
}

/// Parent queues sort their children fair: usage over guaranteed, lowest first. n1: cpu 3
/// holds running pods of root.a (cpu 2) and root.b (cpu 1); n2: cpu 2 free. `ga` (root.a,
/// createdAt 5) and `gb` (root.b, createdAt 0): 1 pod of cpu 2 each, equal priority: one
/// fits. Guarantees a: 4, b: 1: a is at 2/4 = 0.5, b at 1/1 = 1.0: a first, ga placed
/// (although gb is older). Guarantees a: 2, b: 4: a at 1.0, b at 0.25: gb placed.
#[test]
fn queues_sort_by_usage_over_guarantee() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "3"}}
  - {name: n2, allocatable: {cpu: "2"}}
queues:
  - name: root
    queues:
      - {name: a, resources: {guaranteed: {vcore: "GA"}}}
      - {name: b, resources: {guaranteed: {vcore: "GB"}}}
      - {name: default}
podGroups:
  - {name: ra, queue: root.a, tasks: [{name: w, count: 0, requests: {cpu: "2"}}]}
  - {name: rb, queue: root.b, tasks: [{name: w, count: 0, requests: {cpu: "1"}}]}
  - {name: ga, queue: root.a, createdAt: 5, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
  - {name: gb, queue: root.b, createdAt: 0, tasks: [{name: w, count: 1, requests: {cpu: "2"}}]}
pods:
  - {name: ra-0, node: n1, podGroup: ra, requests: {cpu: "2"}}
  - {name: rb-0, node: n1, podGroup: rb, requests: {cpu: "1"}}
"#;
    let (_, d) = solve(&yaml.replace("GA", "4").replace("GB", "1"), "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("ga", &["n2"])]));
    let (_, d) = solve(&yaml.replace("GA", "2").replace("GB", "4"), "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("gb", &["n2"])]));
}

/// `maxapplications`: an application that has not started waits while its queue runs its
/// maximum. root.q: maxapplications 1; n1: cpu 4. `first` (priority 10) and `second`
/// (priority 0), 1 pod of cpu 1 each: first's allocation makes it running; second cannot
/// start (1 + 1 > 1) although capacity is left.
#[test]
fn maxapplications_stops_a_second_app() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
queues:
  - name: root
    queues:
      - {name: q, maxapplications: 1}
      - {name: default}
podGroups:
  - {name: first, queue: root.q, priority: 10, tasks: [{name: w, count: 1, requests: {cpu: "1"}}]}
  - {name: second, queue: root.q, priority: 0, tasks: [{name: w, count: 1, requests: {cpu: "1"}}]}
"#;
    let (_, d) = solve(yaml, "yunikorn-binpacking");
    assert_eq!(placed(&d), names(&[("first", &["n1"])]));
}

/// A gang that completes: placeholders member by member, then the real pods in their
/// place, then the elastic pods as ordinary asks. n1: cpu 2, n2: cpu 4 (binpacking: the
/// fuller node first; at equal use, by name). Gang `g`: 3 pods of cpu 1, minCount 2.
/// Placeholder 1: both at 0 use -> n1. Placeholder 2: n1 at 0.5 is fuller -> n1 (full).
/// Elastic pod: n2. `fair` instead: placeholder 1 -> n1 (tie), placeholder 2 -> n2 (0 <
/// 0.5), elastic -> n2 (0.25 < 0.5).
#[test]
fn gang_completes_then_elastic_pods_follow() {
    let yaml = r#"
nodes:
  - {name: n1, allocatable: {cpu: "2"}}
  - {name: n2, allocatable: {cpu: "4"}}
podGroups:
  - {name: g, tasks: [{name: w, count: 3, minCount: 2, requests: {cpu: "1"}}]}
"#;
    let (_, d) = solve(yaml, "yunikorn-binpacking");
    assert_eq!(placed(&d), names(&[("g", &["n1", "n1", "n2"])]));
    let (_, d) = solve(yaml, "yunikorn-fair");
    assert_eq!(placed(&d), names(&[("g", &["n1", "n2", "n2"])]));
}
