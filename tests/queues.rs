//! Hand-computed cycles with YuniKorn queues (`models/queues.md`): quotas and
//! maxapplications (rule 7), gang admission, term 1 by effective priority key, quota
//! freed by evictions, and the YuniKorn preemption model. Each case states the arithmetic
//! that fixes its answer; every decision (exact and every heuristic) must pass `check`.

use std::time::Duration;
use tessera::wire::decision::{Decision, PriorityKey, Status};
use tessera::{check, Instance, Options, SolverKind};

mod common;
use common::parse;

fn cfg() -> Options {
    Options { time_limit: Some(Duration::from_secs(60)), ..Default::default() }
}

/// Exact decision: Optimal and valid; and every other solver's decision valid too.
fn solve(inst: &Instance) -> Decision {
    for s in SolverKind::ALL {
        let d = s.solve(inst, &cfg());
        let report = check::check(inst, &d);
        assert!(report.violations.is_empty(), "{} decision fails check: {:#?}\n{}", s.name(), report.violations, d.to_yaml());
    }
    let d = SolverKind::from_name("exact").unwrap().solve(inst, &cfg());
    assert_eq!(d.status, Status::Optimal, "{}", d.to_yaml());
    d
}

fn placed(d: &Decision) -> Vec<&str> {
    let mut v: Vec<&str> = d.placements.iter().map(|p| p.pod_group.as_str()).collect();
    v.sort_unstable();
    v
}

fn reason<'a>(d: &'a Decision, g: &str) -> &'a str {
    d.unplaced.iter().find(|u| u.pod_group == g).map(|u| u.reason.as_str()).unwrap_or_else(|| panic!("{g} is placed:\n{}", d.to_yaml()))
}

fn pods_of(d: &Decision, g: &str) -> usize {
    d.placements.iter().find(|p| p.pod_group == g).map_or(0, |p| p.pods.len())
}

/// One 16-core node; queue root.org (max 8 cores) > leaf root.org.a.
/// - big: a gang of 3 x 3 cores = 9 cores > 8 = org's max: rejected by admission, although
///   the node has room and nothing else competes.
/// - small: 2 x 3 cores = 6 <= 8: placed.
#[test]
fn gang_over_parent_max_is_rejected_smaller_one_placed() {
    let inst = parse(
        r#"
nodes: [{name: n0, allocatable: {cpu: 16}}]
queues:
  - name: root
    queues:
      - name: org
        resources: {max: {vcore: 8}}
        queues: [{name: a}]
podGroups:
  - {name: big, queue: root.org.a, priority: 10, tasks: [{name: w, count: 3, requests: {cpu: 3}}]}
  - {name: small, queue: root.org.a, tasks: [{name: w, count: 2, requests: {cpu: 3}}]}
"#,
    );
    let d = solve(&inst);
    assert_eq!(placed(&d), vec!["small"]);
    let why = reason(&d, "big");
    assert!(why.starts_with("rejected:") && why.contains("root.org") && why.contains("9"), "{why}");
}

/// Leaf max 4 cores; two gangs of 4 x 1 core each fit alone, not together. Raw priorities
/// say `low` (100) beats `high` (50), but `high`'s leaf has priority.offset 100: keys are
/// 50+100 = 150 against 100, so `high` ranks first and is the one placed.
#[test]
fn quota_fits_one_of_two_and_the_higher_effective_key_wins() {
    let inst = parse(
        r#"
nodes: [{name: n0, allocatable: {cpu: 16}}]
queues:
  - name: root
    queues:
      - name: t
        resources: {max: {vcore: 4}}
        queues:
          - {name: boosted, properties: {priority.offset: "100"}}
          - {name: plain}
podGroups:
  - {name: low, queue: root.t.plain, priority: 100, tasks: [{name: w, count: 4, requests: {cpu: 1}}]}
  - {name: high, queue: root.t.boosted, priority: 50, tasks: [{name: w, count: 4, requests: {cpu: 1}}]}
"#,
    );
    let d = solve(&inst);
    assert_eq!(placed(&d), vec!["high"]);
    let rows: Vec<(PriorityKey, i64, i64)> =
        d.objective.placed_by_priority.iter().map(|r| (r.priority.clone(), r.placed, r.pending)).collect();
    assert_eq!(rows, vec![(PriorityKey(vec![150]), 1, 1), (PriorityKey(vec![100]), 0, 1)]);
    assert!(reason(&d, "low").contains("root.t"), "{}", reason(&d, "low"));
}

/// maxapplications 2 on the leaf, one group already running there (`run`: a basic group
/// with one more pod pending and one bound member). Three pending gangs of one 1-core pod,
/// priorities 3, 2, 1 (run has 0).
/// - run-0 not preemptible: `run` keeps its slot (placing its pod adds no application),
///   one more may start: `p3`. Levels 3:1, 2:0, 1:0, 0:1.
/// - run-0 preemptible: evicting it (run unplaced) frees the slot, and p2 starts too:
///   3:1, 2:1 beats 3:1, 2:0, ... whatever follows; one pod evicted (term 2), needed
///   because without it the queue would run 3 groups.
#[test]
fn maxapplications_reached() {
    let doc = |preemptible: bool| {
        format!(
            r#"
nodes: [{{name: n0, allocatable: {{cpu: 16}}}}]
queues:
  - name: root
    queues: [{{name: a, maxapplications: 2}}]
podGroups:
  - {{name: run, queue: root.a, policy: basic, tasks: [{{name: w, count: 1, requests: {{cpu: 1}}}}]}}
  - {{name: p1, queue: root.a, priority: 1, tasks: [{{name: w, count: 1, requests: {{cpu: 1}}}}]}}
  - {{name: p2, queue: root.a, priority: 2, tasks: [{{name: w, count: 1, requests: {{cpu: 1}}}}]}}
  - {{name: p3, queue: root.a, priority: 3, tasks: [{{name: w, count: 1, requests: {{cpu: 1}}}}]}}
pods:
  - {{name: run-0, node: n0, podGroup: run, task: w, requests: {{cpu: 1}}, preemptible: {preemptible}}}
"#
        )
    };
    let d = solve(&parse(&doc(false)));
    assert_eq!(placed(&d), vec!["p3", "run"]);
    assert!(reason(&d, "p2").contains("maxapplications"), "{}", reason(&d, "p2"));

    let d = solve(&parse(&doc(true)));
    assert_eq!(placed(&d), vec!["p2", "p3"]);
    assert_eq!(d.evictions.iter().map(|e| e.pod.as_str()).collect::<Vec<_>>(), vec!["run-0"]);
}

/// A leaf sorting `fair` rejects gangs; a basic group there is placed.
#[test]
fn fair_leaf_rejects_gangs() {
    let inst = parse(
        r#"
nodes: [{name: n0, allocatable: {cpu: 16}}]
queues:
  - name: root
    queues: [{name: f, properties: {application.sort.policy: fair}}]
podGroups:
  - {name: gang, queue: root.f, tasks: [{name: w, count: 2, requests: {cpu: 1}}]}
  - {name: solo, queue: root.f, policy: basic, tasks: [{name: w, count: 2, requests: {cpu: 1}}]}
"#,
    );
    let d = solve(&inst);
    assert_eq!(placed(&d), vec!["solo"]);
    assert!(reason(&d, "gang").contains("fair"), "{}", reason(&d, "gang"));
}

/// Quota freed by evictions inside the queue: leaf max 4 cores, fully used by the bound
/// pods of `old` (priority 1, 4 x 1 core, preemptible). `new` (priority 10) needs 2
/// cores: the node has 12 free, but the queue has 0 left; evicting 2 of old's pods frees
/// exactly the 2 cores of quota needed. Term 2: 2 evicted pods at priority 1, no fewer
/// possible (each frees 1 core of the 2 needed).
#[test]
fn quota_freed_by_evictions_inside_the_queue() {
    let inst = parse(
        r#"
nodes: [{name: n0, allocatable: {cpu: 16}}]
queues:
  - name: root
    queues: [{name: a, resources: {max: {vcore: 4}}}]
podGroups:
  - {name: old, queue: root.a, priority: 1, tasks: [{name: w, count: 0, requests: {cpu: 1}}]}
  - {name: new, queue: root.a, priority: 10, tasks: [{name: w, count: 2, requests: {cpu: 1}}]}
pods:
  - {name: old-0, node: n0, podGroup: old, task: w, requests: {cpu: 1}}
  - {name: old-1, node: n0, podGroup: old, task: w, requests: {cpu: 1}}
  - {name: old-2, node: n0, podGroup: old, task: w, requests: {cpu: 1}}
  - {name: old-3, node: n0, podGroup: old, task: w, requests: {cpu: 1}}
"#,
    );
    let d = solve(&inst);
    assert_eq!(placed(&d), vec!["new"]);
    assert_eq!(d.evictions.len(), 2, "{}", d.to_yaml());
    assert!(d.evictions.iter().all(|e| e.preemptor == "new"), "{}", d.to_yaml());
    assert_eq!(d.objective.evicted_by_priority.iter().map(|r| (r.priority, r.pods)).collect::<Vec<_>>(), vec![(1, 2)]);
}

/// Elastic pods stop at the quota: leaf max 5 cores, gang min 2 x 1 core, count 8:
/// 5 pods placed (3 extra), although the node has 16 free.
#[test]
fn elastic_pods_stop_at_the_quota() {
    let inst = parse(
        r#"
nodes: [{name: n0, allocatable: {cpu: 16}}]
queues:
  - name: root
    queues: [{name: a, resources: {max: {cpu: 5}}}]
podGroups:
  - {name: e, queue: root.a, tasks: [{name: w, count: 8, minCount: 2, requests: {cpu: 1}}]}
"#,
    );
    let d = solve(&inst);
    assert_eq!(pods_of(&d, "e"), 5);
    assert_eq!(d.objective.extra_pods, 3);
}

/// The YuniKorn model. One 4-core node, full: `sys` (queue root.sys, preemption disabled,
/// priority 0, 2 cores) and `b` (root.batch, priority 0, 2 cores). `t` (root.team, priority
/// 100, guaranteed 2 cores, nothing running: below its guarantee) needs 2 cores.
/// Default model: either victim works; one unit of 2 cores, term 2 is 1 pod either way.
/// YuniKorn model: sys is never a victim, so b goes. With batch guaranteeing 2 cores (it
/// runs exactly 2), nothing may be taken from it: t stays unplaced.
#[test]
fn yunikorn_model_disabled_queue_and_guarantees() {
    let base = |batch_guarantee: &str| {
        format!(
            r#"
nodes: [{{name: n0, allocatable: {{cpu: 4}}}}]
options: {{preemptionModel: yunikorn}}
queues:
  - name: root
    queues:
      - {{name: sys, properties: {{preemption.policy: disabled}}}}
      - {{name: batch{batch_guarantee}}}
      - {{name: team, resources: {{guaranteed: {{vcore: 2}}}}}}
podGroups:
  - {{name: s, queue: root.sys, tasks: [{{name: w, count: 0, requests: {{cpu: 2}}}}]}}
  - {{name: b, queue: root.batch, tasks: [{{name: w, count: 0, requests: {{cpu: 2}}}}]}}
  - {{name: t, queue: root.team, priority: 100, tasks: [{{name: w, count: 1, requests: {{cpu: 2}}}}]}}
pods:
  - {{name: s-0, node: n0, podGroup: s, task: w, requests: {{cpu: 2}}}}
  - {{name: b-0, node: n0, podGroup: b, task: w, requests: {{cpu: 2}}}}
"#
        )
    };
    let d = solve(&parse(&base("")));
    assert_eq!(placed(&d), vec!["t"]);
    assert_eq!(d.evictions.iter().map(|e| e.pod.as_str()).collect::<Vec<_>>(), vec!["b-0"]);

    let d = solve(&parse(&base(", resources: {guaranteed: {vcore: 2}}")));
    assert!(placed(&d).is_empty(), "{}", d.to_yaml());
    assert!(d.evictions.is_empty());
}

/// YuniKorn model, fence and the preemptor's guarantee. Node 4 cores, full with `x`
/// (root.other, 2 cores) and `y` (root.lab.y, 2 cores), both priority 0.
/// - `f` in root.lab.f (lab fences preemption, lab guarantees 4 cores and runs 2: below)
///   needs 2 cores: its victims must lie under root.lab, so y-0 goes, not x-0. Lab is
///   below its guarantee, but f's 2 new cores give back what y-0 takes (2 >= min(4, 2)).
/// - without any guarantee on lab's path, `f` may not preempt at all.
#[test]
fn yunikorn_model_fence_and_preemptor_guarantee() {
    let doc = |guarantee: &str| {
        format!(
            r#"
nodes: [{{name: n0, allocatable: {{cpu: 4}}}}]
options: {{preemptionModel: yunikorn}}
queues:
  - name: root
    queues:
      - {{name: other}}
      - name: lab
        properties: {{preemption.policy: fence}}
        {guarantee}
        queues: [{{name: y}}, {{name: f}}]
podGroups:
  - {{name: x, queue: root.other, tasks: [{{name: w, count: 0, requests: {{cpu: 2}}}}]}}
  - {{name: y, queue: root.lab.y, tasks: [{{name: w, count: 0, requests: {{cpu: 2}}}}]}}
  - {{name: f, queue: root.lab.f, priority: 100, tasks: [{{name: w, count: 1, requests: {{cpu: 2}}}}]}}
pods:
  - {{name: x-0, node: n0, podGroup: x, task: w, requests: {{cpu: 2}}}}
  - {{name: y-0, node: n0, podGroup: y, task: w, requests: {{cpu: 2}}}}
"#
        )
    };
    let d = solve(&parse(&doc("resources: {guaranteed: {vcore: 4}}")));
    assert_eq!(placed(&d), vec!["f"]);
    assert_eq!(d.evictions.iter().map(|e| e.pod.as_str()).collect::<Vec<_>>(), vec!["y-0"]);

    let d = solve(&parse(&doc("")));
    assert!(placed(&d).is_empty(), "{}", d.to_yaml());
}

/// Fences make keys hierarchical, and the decision shows them as lists: leaf root.r.a
/// under fenced root.r (offset 10): a group of priority 5 there has key [10, 5].
#[test]
fn fenced_keys_are_lists_in_the_decision() {
    let inst = parse(
        r#"
nodes: [{name: n0, allocatable: {cpu: 16}}]
queues:
  - name: root
    queues:
      - name: r
        properties: {priority.policy: fence, priority.offset: "10"}
        queues: [{name: a}]
podGroups:
  - {name: g, queue: root.r.a, priority: 5, tasks: [{name: w, count: 1, requests: {cpu: 1}}]}
"#,
    );
    let d = solve(&inst);
    assert_eq!(d.objective.placed_by_priority[0].priority, PriorityKey(vec![10, 5]));
    // Written as a list, and read back as the same key.
    let json: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
    assert_eq!(json["objective"]["placedByPriority"][0]["priority"], serde_json::json!([10, 5]));
    let back: Decision = tessera::wire::from_text(&d.to_yaml()).unwrap();
    assert_eq!(back.objective, d.objective);
}

/// The README's multi-tenant example through the CLI: `solve --queues` then
/// `check --queues`. By hand (instances/multi-tenant.yaml, instances/queues.yaml):
/// research may use 16 GPUs and train-a's 4 workers take all 16, so train-b and infer wait
/// on the quota; huge-sweep's minimum asks 5 x 4 = 20 GPUs > 16: rejected; report is a
/// gang in the fair leaf analytics: rejected; sys-agent and the two basic etl groups are
/// placed whole (4 pods each, 3 extra each: extraPods 6).
#[test]
fn multi_tenant_example_through_the_cli() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("instances");
    let (inst, queues) = (dir.join("multi-tenant.yaml"), dir.join("queues.yaml"));
    let out = std::env::temp_dir().join(format!("tessera-mt-{}.yaml", std::process::id()));
    let bin = env!("CARGO_BIN_EXE_tessera");
    let s = std::process::Command::new(bin)
        .args(["solve", inst.to_str().unwrap(), "--queues", queues.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(s.success());
    let c = std::process::Command::new(bin)
        .args(["check", inst.to_str().unwrap(), out.to_str().unwrap(), "--queues", queues.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stdout));
    let d: Decision = tessera::wire::from_text(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(d.status, Status::Optimal);
    assert_eq!(placed(&d), vec!["etl-1", "etl-2", "sys-agent", "train-a"]);
    assert_eq!(d.objective.extra_pods, 6);
    assert!(reason(&d, "huge-sweep").starts_with("rejected:") && reason(&d, "huge-sweep").contains("20 nvidia.com/gpu"));
    assert!(reason(&d, "report").contains("fair"));
    assert!(reason(&d, "infer").contains("root.tenants.research"));
    // A queues.yaml error names the file and the path inside it.
    let bad = std::env::temp_dir().join(format!("tessera-badq-{}.yaml", std::process::id()));
    std::fs::write(&bad, "partitions: [{name: default, queues: [{name: root, queues: [{name: a, maxapplications: -1}]}]}]\n").unwrap();
    let e = std::process::Command::new(bin).args(["solve", inst.to_str().unwrap(), "--queues", bad.to_str().unwrap()]).output().unwrap();
    let _ = std::fs::remove_file(&bad);
    assert!(!e.status.success());
    let msg = String::from_utf8_lossy(&e.stderr);
    assert!(msg.contains("partitions[0].queues[0].queues[0].maxapplications"), "{msg}");
}

/// A group that names no queue is in root.default (as YuniKorn's Kubernetes shim places
/// it) and counts against root.default's limits: root.default may use 2 cpu, so of the
/// two 2-cpu groups without a queue only one fits; the group in root.a is unaffected.
#[test]
fn a_group_without_queue_is_in_root_default() {
    let inst = parse(
        r#"
nodes: [{name: n0, allocatable: {cpu: "8"}}]
queues:
  - name: root
    queues:
      - {name: default, resources: {max: {cpu: "2"}}}
      - {name: a}
podGroups:
  - {name: x, priority: 10, tasks: [{name: t, count: 1, requests: {cpu: "2"}}]}
  - {name: y, tasks: [{name: t, count: 1, requests: {cpu: "2"}}]}
  - {name: z, queue: root.a, tasks: [{name: t, count: 1, requests: {cpu: "2"}}]}
"#,
    );
    assert_eq!(inst.groups[0].queue.as_deref(), Some("root.default"));
    let d = solve(&inst);
    assert_eq!(placed(&d), ["x", "z"]);
    assert!(reason(&d, "y").contains("root.default"), "{}", reason(&d, "y"));
}
