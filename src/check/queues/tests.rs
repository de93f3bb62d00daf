//! Rule 7 and the YuniKorn preemption rules on one hand-written queue tree; every
//! expected number below is computed by hand from the tree and the bound pods.

use super::super::{check, Report};

const NN: &str = "is not needed by the groups allowed to evict it: put back, it fits beside their new pods; no other group uses its room";
use crate::model::Instance;
use crate::wire::decision::{Decision, Eviction, Objective, PlacedPod, Placement, ReasonCode, Status, Unplaced};
use std::collections::BTreeMap;

/// Three 4-cpu nodes. Bound: n1 ra-0 (root.prod.a), rc-0 (root.dev.c); n2 rb-0
/// (root.prod.b); n3 rx-0, rx-1 (root.batch.x) and solo (no group, no queue); 1 cpu each.
///
/// Before the cycle: prod uses 2 of max 5 (guaranteed 3: below), a 1 of max 4
/// (guaranteed 2: below), dev 1 of max 4 with 1 of 2 applications, c 1 of max 2, batch
/// and x 2 (guaranteed 1: above). prod is `preemption.policy: disabled` but a overrides it
/// with `default`; dev is fenced; f sorts fair.
const Q: &str = r#"
nodes:
  - {name: n1, allocatable: {cpu: "4"}}
  - {name: n2, allocatable: {cpu: "4"}}
  - {name: n3, allocatable: {cpu: "4"}}
queues:
  - name: root
    queues:
      - name: prod
        properties: {preemption.policy: disabled}
        resources: {guaranteed: {vcore: 3}, max: {vcore: 5}}
        queues:
          - name: a
            properties: {preemption.policy: default}
            resources: {guaranteed: {vcore: 2}, max: {vcore: 4}}
          - name: b
      - name: dev
        maxapplications: 2
        properties: {preemption.policy: fence}
        resources: {max: {vcore: 4}}
        queues:
          - name: c
            maxapplications: 2
            resources: {max: {vcore: 2}}
          - name: f
            maxapplications: 2
            properties: {application.sort.policy: fair}
      - name: batch
        resources: {guaranteed: {vcore: 1}, max: {vcore: 4}}
        queues:
          - name: x
            resources: {guaranteed: {vcore: 1}}
          - name: y
podGroups:
  - {name: ga, queue: root.prod.a, priority: 100, tasks: [{name: t, count: 3, minCount: 1, requests: {cpu: "1"}}]}
  - {name: gb, queue: root.prod.b, priority: 100, tasks: [{name: t, count: 2, minCount: 1, requests: {cpu: "1"}}]}
  - {name: gc, queue: root.dev.c, priority: 100, tasks: [{name: t, count: 2, minCount: 1, requests: {cpu: "1"}}]}
  - {name: gy, queue: root.batch.y, priority: 100, tasks: [{name: t, count: 1, requests: {cpu: "1"}}]}
  - {name: gbig, queue: root.prod.a, priority: 50, tasks: [{name: t, count: 5, requests: {cpu: "1"}}]}
  - {name: gwide, queue: root.batch.y, priority: 50, tasks: [{name: t, count: 5, requests: {cpu: "1"}}]}
  - {name: gfair, queue: root.dev.f, priority: 50, tasks: [{name: t, count: 1, requests: {cpu: "1"}}]}
  - {name: gfb, queue: root.dev.f, priority: 50, policy: basic, tasks: [{name: t, count: 1, requests: {cpu: "1"}}]}
  - {name: ra, queue: root.prod.a, tasks: [{name: t, count: 0}]}
  - {name: rb, queue: root.prod.b, tasks: [{name: t, count: 0}]}
  - {name: rc, queue: root.dev.c, tasks: [{name: t, count: 0}]}
  - {name: rx, queue: root.batch.x, tasks: [{name: t, count: 0}]}
pods:
  - {name: ra-0, node: n1, podGroup: ra, requests: {cpu: "1"}}
  - {name: rc-0, node: n1, podGroup: rc, requests: {cpu: "1"}}
  - {name: rb-0, node: n2, podGroup: rb, requests: {cpu: "1"}}
  - {name: rx-0, node: n3, podGroup: rx, requests: {cpu: "1"}}
  - {name: rx-1, node: n3, podGroup: rx, requests: {cpu: "1"}}
  - {name: solo, node: n3, requests: {cpu: "1"}}
"#;

fn inst() -> Instance {
    Instance::from_text(Q).unwrap_or_else(|e| panic!("test instance: {e}"))
}

fn yunikorn() -> Instance {
    let mut i = inst();
    i.options.yunikorn_preemption = true;
    i
}

/// `group` places one pod of task `t` on each node listed (repeats allowed).
fn on(group: &str, nodes: &[&str]) -> Placement {
    Placement {
        pod_group: group.into(),
        domains: BTreeMap::new(),
        pods: nodes.iter().map(|n| PlacedPod { task: "t".into(), node: n.to_string(), device_ids: BTreeMap::new() }).collect(),
    }
}

/// A decision with every other pending group unplaced and its objective set to the
/// recomputed one (so that a test is about the queue rules only).
fn decide(inst: &Instance, placements: Vec<Placement>, evictions: &[(&str, &str)]) -> Decision {
    let unplaced = inst
        .pending_groups()
        .map(|g| inst.groups[g].name.clone())
        .filter(|n| !placements.iter().any(|p| &p.pod_group == n))
        .map(|n| Unplaced { pod_group: n, reason_code: None, reason: "no room".into() })
        .collect();
    let mut d = Decision {
        status: Status::Feasible,
        objective: Objective::default(),
        gap: 0.0,
        bounds: None,
        placements,
        unplaced,
        evictions: evictions.iter().map(|(p, g)| Eviction { pod: p.to_string(), preemptor: g.to_string() }).collect(),
        stats: Default::default(),
    };
    d.objective = check(inst, &d).objective;
    d
}

fn dump(r: &Report) -> String {
    r.violations.iter().map(|x| format!("  {}\n", x.message)).collect()
}

#[track_caller]
fn assert_valid(r: &Report) {
    assert!(r.violations.is_empty(), "expected no violations, got:\n{}", dump(r));
}

/// The violations, each `(rule, message)`, exactly.
#[track_caller]
fn assert_exactly(r: &Report, want: &[(u8, &str)]) {
    let got: Vec<(u8, &str)> = r.violations.iter().map(|x| (x.rule, x.message.as_str())).collect();
    assert_eq!(got, want.to_vec(), "violations:\n{}", dump(r));
}

#[track_caller]
fn assert_has(r: &Report, rule: u8, fragment: &str) {
    assert!(
        r.violations.iter().any(|x| x.rule == rule && x.message.contains(fragment)),
        "expected a rule {rule} violation containing {fragment:?}, got:\n{}",
        dump(r)
    );
}

#[track_caller]
fn assert_lacks(r: &Report, fragment: &str) {
    assert!(!r.violations.iter().any(|x| x.message.contains(fragment)), "unexpected {fragment:?} in:\n{}", dump(r));
}

#[test]
fn within_every_limit_is_valid() {
    let i = inst();
    // a: 1 + 2 = 3 <= 4, prod 2 + 2 = 4 <= 5; c: 1 + 1 = 2 <= 2; dev runs rc and gc (2).
    let d = decide(&i, vec![on("ga", &["n2", "n2"]), on("gc", &["n1"])], &[]);
    assert_valid(&check(&i, &d));
    // A basic group in the fair queue is admitted (only gangs are rejected there).
    let d = decide(&i, vec![on("gfb", &["n2"])], &[]);
    assert_valid(&check(&i, &d));
}

#[test]
fn leaf_max_exceeded() {
    let i = inst();
    let d = decide(&i, vec![on("gc", &["n1", "n2"])], &[]);
    assert_exactly(&check(&i, &d), &[(7, "rule 7: queue root.dev.c cpu over its max: 3 > 2 (bound 1, new pods of gc: 2)")]);
}

#[test]
fn parent_max_exceeded_by_two_groups_that_each_fit() {
    let i = inst();
    // ga alone: prod 2 + 3 = 5; gb alone: 2 + 2 = 4; together 7 > 5 (a: 1 + 3 = 4 fits).
    let d = decide(&i, vec![on("ga", &["n2", "n2", "n2"])], &[]);
    assert_valid(&check(&i, &d));
    let d = decide(&i, vec![on("ga", &["n2", "n2", "n2"]), on("gb", &["n1", "n1"])], &[]);
    assert_exactly(&check(&i, &d), &[(7, "rule 7: queue root.prod cpu over its max: 7 > 5 (bound 2, new pods of ga: 3, gb: 2)")]);
}

#[test]
fn maxapplications_exceeded() {
    let i = inst();
    // dev already runs rc; gc and gfb make 3 > 2 (c: 2 <= 2, dev cpu 3 <= 4).
    let d = decide(&i, vec![on("gc", &["n1"]), on("gfb", &["n2"])], &[]);
    assert_exactly(&check(&i, &d), &[(7, "rule 7: queue root.dev runs 3 groups, above its maxapplications 2: gc, gfb, rc")]);
}

#[test]
fn rejected_gangs_placed() {
    let i = inst();
    // gbig's minimum is 5 cpu: above a's max 4, not above prod's 5. Its pods also break a's
    // max (1 + 5 = 6) and prod's (2 + 5 = 7).
    let d = decide(&i, vec![on("gbig", &["n1", "n1", "n2", "n2", "n2"])], &[]);
    let r = check(&i, &d);
    assert_has(&r, 7, "gang gbig is placed, but its minimum asks 5 cpu, above the max 4 of queue root.prod.a (rejected)");
    assert_has(&r, 7, "queue root.prod.a cpu over its max: 6 > 4");
    assert_has(&r, 7, "queue root.prod cpu over its max: 7 > 5");
    assert_lacks(&r, "of queue root.prod (rejected)");
    assert_eq!(r.violations.len(), 3, "{}", dump(&r));
    // gwide's leaf y has no max; its parent batch has 4.
    let d = decide(&i, vec![on("gwide", &["n1", "n1", "n2", "n2", "n2"])], &[]);
    let r = check(&i, &d);
    assert_has(&r, 7, "gang gwide is placed, but its minimum asks 5 cpu, above the max 4 of queue root.batch (rejected)");
    assert_has(&r, 7, "queue root.batch cpu over its max: 7 > 4");
    // A fair leaf rejects every gang, whatever its size.
    let d = decide(&i, vec![on("gfair", &["n2"])], &[]);
    assert_exactly(
        &check(&i, &d),
        &[(7, "rule 7: gang gfair is placed, but its queue root.dev.f sorts applications fair, where gangs are rejected")],
    );
}

#[test]
fn eviction_that_frees_quota_is_needed() {
    let i = inst();
    // ga 3 + gb 1 in prod: 2 + 4 = 6 > 5 unless ra-0 goes. n1 holds ra-0, rc-0, ga, gb = 4:
    // capacity alone would not need the eviction; the quota does.
    let d = decide(&i, vec![on("ga", &["n1", "n2", "n2"]), on("gb", &["n1"])], &[("ra-0", "ga")]);
    assert_valid(&check(&i, &d));
    // ga 2 alone: with ra-0 back prod holds 5 <= 5 and n1 3 <= 4: not needed.
    let d = decide(&i, vec![on("ga", &["n1", "n2"])], &[("ra-0", "ga")]);
    assert_exactly(&check(&i, &d), &[(6, &format!("rule 6: eviction of ra-0 (priority 0) on node n1 {NN}"))]);
}

#[test]
fn eviction_that_frees_an_application_slot_is_needed() {
    let i = inst();
    // Evicting rc-0 stops rc: dev runs gc and gfb (2). Undone, rc runs again: 3 > 2.
    let d = decide(&i, vec![on("gc", &["n1"]), on("gfb", &["n2"])], &[("rc-0", "gc")]);
    assert_valid(&check(&i, &d));
}

#[test]
fn yunikorn_valid_preemption() {
    let i = yunikorn();
    // ga (a below its guarantee: 1 < 2) evicts rx-0: x and batch keep 1 >= 1. n3: rx-1,
    // solo and two ga pods = 4, so the eviction is needed.
    let d = decide(&i, vec![on("ga", &["n3", "n3"])], &[("rx-0", "ga")]);
    assert_valid(&check(&i, &d));
}

#[test]
fn yunikorn_victims_never_take_a_queue_below_its_guarantee() {
    let i = yunikorn();
    // Both rx pods for three ga pods on n3: x and batch use 0 after, below
    // min(guarantee 1, 2 before) = 1.
    let d = decide(&i, vec![on("ga", &["n3", "n3", "n3"])], &[("rx-0", "ga"), ("rx-1", "ga")]);
    assert_exactly(
        &check(&i, &d),
        &[
            (6, "rule 6: queue root.batch is taken below its guaranteed 1 cpu: it uses 0 after evicting rx-0, rx-1, below min(guarantee, 2 before)"),
            (6, "rule 6: queue root.batch.x is taken below its guaranteed 1 cpu: it uses 0 after evicting rx-0, rx-1, below min(guarantee, 2 before)"),
        ],
    );
    // The same decision under the default model is valid.
    let d = decide(&inst(), vec![on("ga", &["n3", "n3", "n3"])], &[("rx-0", "ga"), ("rx-1", "ga")]);
    assert_valid(&check(&inst(), &d));
    // ra-0 is in a, which is at 1 < 2 of its guarantee (and prod at 2 < 3), but ga's
    // three new pods in a give back more than ra-0 takes: a uses 3 >= min(2, 1), prod
    // 4 >= min(3, 2). Rule 4 holds.
    let d = decide(&i, vec![on("ga", &["n1", "n1", "n1"])], &[("ra-0", "ga")]);
    let r = check(&i, &d);
    assert_lacks(&r, "taken below");
    // a sets preemption.policy default, which wins over prod's disabled.
    assert_lacks(&r, "disabled");
}

#[test]
fn yunikorn_disabled_and_queueless_victims() {
    let i = yunikorn();
    // rb-0's leaf b sets nothing; the nearest setting is prod's disabled.
    let d = decide(&i, vec![on("ga", &["n2", "n2", "n2"])], &[("rb-0", "ga")]);
    let r = check(&i, &d);
    assert_has(&r, 6, "pod rb-0 of queue root.prod.b is evicted, but preemption.policy is disabled there (set on root.prod)");
    // solo has no group, so no queue.
    let d = decide(&i, vec![on("ga", &["n3", "n3"])], &[("solo", "ga")]);
    // ... and then no group may evict it, so nothing needs it gone either.
    assert_exactly(
        &check(&i, &d),
        &[
            (6, "rule 6: pod solo is evicted but belongs to no queue (preemptionModel yunikorn takes victims only from queues)"),
            (6, "rule 6: eviction of solo (priority 0) on node n3 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; its room is used by ga, which may not evict it"),
        ],
    );
    // Under the default model the same eviction is fine.
    let d = decide(&inst(), vec![on("ga", &["n3", "n3"])], &[("solo", "ga")]);
    assert_valid(&check(&inst(), &d));
}

#[test]
fn yunikorn_fence_and_preemptor_guarantee() {
    let i = yunikorn();
    // gc's path c, dev (fenced), root: rx-0 lies outside dev; and no queue on that path
    // has a guarantee at all. (ga's pod on n3 makes the eviction needed.)
    let d = decide(&i, vec![on("gc", &["n3"]), on("ga", &["n3"])], &[("rx-0", "gc")]);
    let r = check(&i, &d);
    assert_has(
        &r,
        6,
        "pod rx-0 of queue root.batch.x is evicted for group gc of queue root.dev.c, which is fenced at root.dev (preemption.policy: fence): victims must lie under it",
    );
    assert_has(&r, 6, "pod rx-0 is evicted for group gc of queue root.dev.c, but no queue on that path is below a guaranteed resource");
    // Only ga may evict rx-0, and ga's pod alone fits beside it: nothing needs it gone.
    assert_has(&r, 6, "rule 6: eviction of rx-0 (priority 0) on node n3 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; its room is used by gc, which may not evict it");
    assert_eq!(r.violations.len(), 3, "{}", dump(&r));
    // gy's path y, batch (2 >= its guarantee 1), root: not below any guarantee. x and
    // batch keep 1 >= 1 and nothing is fenced; so gy may not evict rx-0, and ga alone
    // does not need it gone.
    let d = decide(&i, vec![on("gy", &["n3"]), on("ga", &["n3"])], &[("rx-0", "gy")]);
    assert_exactly(
        &check(&i, &d),
        &[
            (
                6,
                "rule 6: pod rx-0 is evicted for group gy of queue root.batch.y, but no queue on that path is below a guaranteed resource the group requests",
            ),
            (6, "rule 6: eviction of rx-0 (priority 0) on node n3 is not needed by the groups allowed to evict it: put back, it fits beside their new pods; its room is used by gy, which may not evict it"),
        ],
    );
}

/// Reason codes against the tree, with gfb (basic, root.dev.f) placed on n2. After it,
/// dev runs rc and gfb: its maxapplications 2 is reached, so gc is queue-full; gbig's
/// minimum (5 cpu) is above a's max 4 and gfair is a gang in a fair leaf: both
/// queue-rejected. ga's minimum (1 cpu) fits a (1 of 4 used) and prod (2 of 5); gb is a
/// gang in a default leaf whose minimum fits; gy's 1-cpu pod fits any node.
#[test]
fn reason_codes_hold_or_are_reported() {
    let i = inst();
    let mut d = decide(&i, vec![on("gfb", &["n2"])], &[]);
    let claims = [
        ("ga", ReasonCode::QueueFull),
        ("gb", ReasonCode::QueueRejected),
        ("gc", ReasonCode::QueueFull),
        ("gy", ReasonCode::NoNodeFits),
        ("gbig", ReasonCode::QueueRejected),
        ("gwide", ReasonCode::Outranked),
        ("gfair", ReasonCode::QueueRejected),
    ];
    for u in &mut d.unplaced {
        u.reason_code = claims.iter().find(|c| c.0 == u.pod_group).map(|c| c.1);
    }
    assert_exactly(
        &check(&i, &d),
        &[
            (0, "rule 0: group ga is unplaced with queue-full, but its minimum fits under every queue's max and maxapplications after this decision"),
            (0, "rule 0: group gb is unplaced with queue-rejected, but its queues admit it"),
            (0, "rule 0: group gy is unplaced with no-node-fits, but every task's pod fits some node of the empty cluster"),
        ],
    );
}
