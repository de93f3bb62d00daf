//! `tessera import kube` and `tessera export` on realistic `kubectl get -o json` fixtures
//! (tests/data/kube/, written by make-fixtures.py from the keys of
//! shared/spec/kubernetes-objects.md), one per group convention plus a mixed List: the
//! instance each gives, its decision (checked by the validator), and the expected
//! placements computed by hand from the fixtures' capacities.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tessera::kube::{import_texts, Imported};
use tessera::wire::decision::Decision;
use tessera::wire::{PodGroupDoc, TaskDoc};
use tessera::{Instance, Options};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kube").join(name)
}

fn import(name: &str) -> Imported {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    import_texts(&[(name, &text)]).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Imports, solves with the exact engine and checks the decision.
fn solve(name: &str) -> (Imported, Instance, Decision) {
    let imp = import(name);
    let inst = Instance::from_doc(&imp.instance).unwrap();
    let d = tessera::solve(&inst, &Options { time_limit: Some(Duration::from_secs(10)), ..Options::default() });
    let report = tessera::check(&inst, &d);
    assert!(report.is_valid(), "{name}: {}", tessera::check::render(&report));
    (imp, inst, d)
}

fn group<'a>(imp: &'a Imported, name: &str) -> &'a PodGroupDoc {
    imp.instance.pod_groups.iter().find(|g| g.name == name).unwrap_or_else(|| panic!("no group {name}"))
}

fn task<'a>(g: &'a PodGroupDoc, name: &str) -> &'a TaskDoc {
    g.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{} has no task {name}", g.name))
}

/// Placed pods of a group: `task -> nodes`.
fn placed(d: &Decision, group: &str) -> Option<BTreeMap<String, Vec<String>>> {
    let p = d.placements.iter().find(|p| p.pod_group == group)?;
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pod in &p.pods {
        out.entry(pod.task.clone()).or_default().push(pod.node.clone());
    }
    Some(out)
}

fn unplaceable(t: &TaskDoc) -> bool {
    t.node_affinity.iter().flatten().flatten().any(|r| r.key == tessera::kube::import::UNPLACEABLE_LABEL)
}

fn warned(imp: &Imported, needle: &str) -> bool {
    imp.warnings.iter().any(|w| w.contains(needle))
}

/// The Bindings of an export: pod name -> node.
fn bindings(list: &serde_json::Value) -> BTreeMap<String, String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "Binding")
        .map(|i| (i["metadata"]["name"].as_str().unwrap().to_string(), i["target"]["name"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn upstream_v1beta1_gang_in_one_rack() {
    let (imp, _, d) = solve("upstream-v1beta1.json");
    let g = group(&imp, "ml/train-worker-0");
    assert_eq!(g.policy.as_deref(), Some("gang"));
    assert_eq!(g.min_count, Some(4));
    assert_eq!(g.priority, Some(100000));
    assert_eq!(g.disruption_mode.as_deref(), Some("PodGroup"), "disruptionMode {{all: {{}}}}");
    assert_eq!(g.topology.as_ref().unwrap().required.as_deref(), Some("topology.example.com/rack"));
    assert_eq!(g.namespace.as_deref(), Some("ml"));
    assert!(g.uid.is_some());
    assert_eq!(imp.instance.topology.as_ref().unwrap().levels, ["topology.example.com/rack"]);
    // r1 nodes have 8 - 2 = 6 cpu free, each member needs 7: only rack r2 holds the gang,
    // one member per node.
    let p = placed(&d, "ml/train-worker-0").expect("placed");
    let mut nodes = p["pods"].clone();
    nodes.sort();
    assert_eq!(nodes, ["r2-n0", "r2-n1", "r2-n2", "r2-n3"]);
    // The running web pods are bound pods with their requests, outside any group.
    let web = imp.instance.pods.iter().find(|p| p.name == "default/web-0").unwrap();
    assert_eq!((web.node.as_str(), web.pod_group.as_ref()), ("r1-n0", None));
    let list = tessera::kube::export(&imp, &d).unwrap();
    let b = bindings(&list);
    assert_eq!(b.len(), 4);
    assert!(b.keys().all(|k| k.starts_with("train-")) && b.values().all(|n| n.starts_with("r2-")));
    let first = &list["items"][0];
    assert_eq!(first["metadata"]["namespace"], "ml");
    assert!(first["metadata"]["uid"].is_string(), "bindings carry the pod uid");
}

#[test]
fn upstream_v1alpha2_string_disruption_mode_basic_and_a_missing_group() {
    let (imp, _, d) = solve("upstream-v1alpha2.json");
    let infer = group(&imp, "serve/infer-0");
    assert_eq!((infer.policy.as_deref(), infer.min_count), (Some("gang"), Some(3)));
    assert_eq!(infer.disruption_mode.as_deref(), Some("PodGroup"));
    let batch = group(&imp, "serve/batch-0");
    assert_eq!(batch.policy.as_deref(), Some("basic"));
    // A pod naming a PodGroup that is not there stays pending in Kubernetes: unplaceable.
    let missing = group(&imp, "serve/missing");
    assert!(unplaceable(&missing.tasks[0]));
    assert!(warned(&imp, "PodGroup serve/missing"), "{:?}", imp.warnings);
    assert!(placed(&d, "serve/missing").is_none());
    // 3 nodes x 4 cpu: the gang needs 3 cpu on every node, a basic pod 2 cpu: not both.
    let (i, b) = (placed(&d, "serve/infer-0").is_some(), placed(&d, "serve/batch-0").is_some());
    assert!(i != b, "exactly one of the two groups fits: {d:?}");
}

#[test]
fn upstream_v1alpha1_workload_replicas_are_separate_gangs() {
    let (imp, _, d) = solve("upstream-v1alpha1.json");
    for r in 0..3 {
        let g = group(&imp, &format!("ml/train/worker/replica-{r}"));
        assert_eq!((g.policy.as_deref(), g.min_count), (Some("gang"), Some(2)));
    }
    assert_eq!(group(&imp, "ml/train/worker/replica-2").tasks[0].count, 3);
    // 8 cpu in all, 2 cpu per pod, gangs of at least 2: two gangs fit, not three.
    assert_eq!(d.placements.len(), 2);
    let pods: usize = d.placements.iter().map(|p| p.pods.len()).sum();
    assert_eq!(pods, 4);
    assert!(d.placements.iter().all(|p| p.pods.len() >= 2));
}

#[test]
fn composite_pod_group_children_are_tasks_of_one_gang() {
    let (imp, _, d) = solve("upstream-composite-v1alpha3.json");
    let g = group(&imp, "ml/js-0");
    assert_eq!(g.min_count, Some(3), "1 leader + 2 workers");
    assert_eq!(g.priority, Some(500));
    assert_eq!(task(g, "js-0-leader").min_count, Some(1));
    let w = task(g, "js-0-workers");
    assert_eq!((w.count, w.min_count), (3, Some(2)));
    // Block b1 (2 nodes x 4 cpu) holds the leader (2) and one worker (3) only; b2 (3 nodes)
    // holds the leader and two workers, each on its own node.
    let p = placed(&d, "ml/js-0").expect("placed");
    assert_eq!(d.placements[0].domains.get("topology.example.com/block").map(String::as_str), Some("b2"));
    assert_eq!(p["js-0-leader"].len(), 1);
    assert_eq!(p["js-0-workers"].len(), 2);
}

#[test]
fn coscheduling_min_member_and_a_short_gang() {
    let (imp, _, d) = solve("coscheduling.json");
    assert_eq!(group(&imp, "ml/nginx").min_count, Some(3));
    let p = placed(&d, "ml/nginx").expect("placed");
    assert_eq!(p["pods"].len(), 3);
    // minMember 3 with two pods: Permit would wait forever.
    assert!(unplaceable(&group(&imp, "ml/short").tasks[0]));
    assert!(warned(&imp, "needs 3 pods and 2 exist"));
    assert!(placed(&d, "ml/short").is_none());
}

#[test]
fn volcano_min_task_member() {
    let (imp, _, d) = solve("volcano.json");
    let g = &imp.instance.pod_groups[0];
    assert!(g.name.starts_with("ml/tf-job-"));
    assert_eq!((g.min_count, g.priority), (Some(5), Some(1000)));
    assert_eq!(task(g, "ps").min_count, Some(1));
    let w = task(g, "worker");
    assert_eq!((w.count, w.min_count), (5, Some(4)));
    // 4 nodes x (8 cpu, 2 gpu), workers need 5 cpu: one per node, so 4 of the 5; the ps
    // (2 cpu) beside one of them.
    let p = placed(&d, &g.name).expect("placed");
    assert_eq!((p["ps"].len(), p["worker"].len()), (1, 4));
}

#[test]
fn yunikorn_task_groups_queue_and_placeholders() {
    let (imp, _, d) = solve("yunikorn.json");
    let g = group(&imp, "spark/spark-42");
    assert_eq!(g.queue.as_deref(), Some("root.sandbox"));
    assert_eq!(g.min_count, Some(5));
    assert_eq!(task(g, "driver").min_count, Some(1));
    assert_eq!((task(g, "executor").count, task(g, "executor").min_count), (5, Some(4)));
    assert!(warned(&imp, "tg-spark-42-executor-0"), "the pending placeholder is named: {:?}", imp.warnings);
    // 24 cpu for 1 + 5 x 2: everything fits.
    let p = placed(&d, "spark/spark-42").expect("placed");
    assert_eq!((p["driver"].len(), p["executor"].len()), (1, 5));
}

#[test]
fn kueue_required_block_with_rack_slices() {
    let (imp, _, d) = solve("kueue.json");
    assert_eq!(imp.instance.topology.as_ref().unwrap().levels, ["cloud.provider.com/topology-block", "cloud.provider.com/topology-rack"]);
    let g = group(&imp, "team-a/Job/train");
    assert_eq!(g.min_count, Some(4));
    assert_eq!(g.topology.as_ref().unwrap().required.as_deref(), Some("cloud.provider.com/topology-block"));
    let t = &g.tasks[0];
    let s = t.slice.as_ref().unwrap();
    assert_eq!((s.topology.as_str(), s.size), ("cloud.provider.com/topology-rack", 2));
    // Block b1 has a node with only 2 cpu free, so rack b1-r1 cannot take a slice of two
    // 3-cpu pods: the job goes to b2, two pods per rack.
    let nodes = &placed(&d, "team-a/Job/train").expect("placed")["pods"];
    let mut racks: BTreeMap<&str, usize> = BTreeMap::new();
    for n in nodes {
        assert!(n.starts_with("b2-"), "{nodes:?}");
        *racks.entry(&n[..5]).or_default() += 1;
    }
    assert_eq!(racks.values().copied().collect::<Vec<_>>(), [2, 2]);
    assert_eq!(group(&imp, "team-a/group").min_count, Some(2));
    assert_eq!(placed(&d, "team-a/group").expect("placed")["pods"].len(), 2);
}

#[test]
fn mixed_list_priorities_preemption_and_unmappable_constraints() {
    let (imp, _, d) = solve("mixed-list.json");
    // Requests: the sidecar example (max(1 + 0.5, 2) + 0.1 cpu; 1Gi + 128Mi + 32Mi).
    let sc = &group(&imp, "web/with-sidecar").tasks[0];
    assert_eq!(sc.requests["cpu"].text(), "2100m");
    assert_eq!(sc.requests["memory"].text(), "1184Mi");
    // The finished pod holds nothing; the mirror pod is never a victim.
    assert!(imp.instance.pods.iter().all(|p| p.name != "default/old-job-0"));
    assert_eq!(imp.instance.pods.iter().find(|p| p.name == "kube-system/kube-proxy-x").unwrap().preemptible, Some(false));
    // Cordoned node.
    assert!(imp.instance.nodes.iter().find(|n| n.name == "cpu-3").unwrap().unschedulable);
    // Anti-affinity is not mapped: unplaceable, named in a warning.
    assert!(unplaceable(&group(&imp, "web/singleton").tasks[0]));
    assert!(warned(&imp, "Pod web/singleton: unplaceable: required inter-pod anti-affinity"));
    assert!(placed(&d, "web/singleton").is_none());
    assert!(warned(&imp, "apps/v1 Deployment ignored"));
    // matchFields metadata.name pins the daemon pod to gpu-1; the GPU pod tolerates the taint.
    assert_eq!(placed(&d, "kube-system/node-agent-gpu-1").expect("placed")["pods"], ["gpu-1"]);
    assert_eq!(placed(&d, "ml/cuda-0").expect("placed")["pods"], ["gpu-1"]);
    // The priority-1000 gang (2 x 5 cpu) only fits on cpu-1 and cpu-2 by evicting
    // priority-10 pods: both on cpu-1 (8 - 0.1 - 3 < 5), one on cpu-2 (8 - 3 = 5).
    let mut urgent = placed(&d, "ml/urgent").expect("placed")["pods"].clone();
    urgent.sort();
    assert_eq!(urgent, ["cpu-1", "cpu-2"]);
    let victims: Vec<&str> = d.evictions.iter().map(|e| e.pod.as_str()).collect();
    assert_eq!(victims.len(), 3, "{victims:?}");
    assert!(victims.contains(&"default/batch-0") && victims.contains(&"default/batch-1"));
    assert!(d.placements.iter().all(|p| p.pods.iter().all(|x| x.node != "cpu-3")));
    // Export: the evictions first, then the bindings, every pod named once.
    let list = tessera::kube::export(&imp, &d).unwrap();
    let kinds: Vec<&str> = list["items"].as_array().unwrap().iter().map(|i| i["kind"].as_str().unwrap()).collect();
    let first_binding = kinds.iter().position(|k| *k == "Binding").unwrap();
    assert!(kinds[..first_binding].iter().all(|k| *k == "Eviction") && kinds[first_binding..].iter().all(|k| *k == "Binding"));
    assert_eq!(first_binding, 3);
    assert_eq!(list["items"][0]["apiVersion"], "policy/v1");
    assert!(list["items"][0]["deleteOptions"]["preconditions"]["uid"].is_string());
    let b = bindings(&list);
    let placed_pods: usize = d.placements.iter().map(|p| p.pods.len()).sum();
    assert_eq!(b.len(), placed_pods);
    assert!(!b.contains_key("singleton"), "no binding for the unplaceable pod");
    assert_eq!(b["node-agent-gpu-1"], "gpu-1");
}

#[test]
fn import_is_deterministic_and_concatenates_files() {
    let a = std::fs::read_to_string(fixture("coscheduling.json")).unwrap();
    let b = std::fs::read_to_string(fixture("volcano.json")).unwrap();
    let one = import_texts(&[("a", &a), ("b", &b)]).unwrap();
    let two = import_texts(&[("a", &a), ("b", &b)]).unwrap();
    assert_eq!(one.instance, two.instance);
    assert_eq!(one.instance.nodes.len(), 4, "n0 and n1 are in both files");
    // Same node names in both files: the first is kept, with a warning.
    assert!(warned(&one, "Node n0: given twice"));
}

#[test]
fn errors_name_the_file_and_the_path() {
    let bad = r#"{"apiVersion":"v1","kind":"List","items":[
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4"}}},
        {"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"},"status":{"allocatable":{"memory":"12Q"}}}]}"#;
    let e = import_texts(&[("cluster.json", bad)]).unwrap_err();
    assert_eq!(e.path, "cluster.json: items[1].status.allocatable.memory");
    assert!(e.message.contains("12Q"));
    let e = import_texts(&[("", r#"{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"x1"}}}]}}]}"#)]).unwrap_err();
    assert_eq!(e.path, "items[0].spec.containers[0].resources.requests.cpu");
    let e = import_texts(&[(
        "",
        r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":"k","effect":"Sometimes"}]}}"#,
    )])
    .unwrap_err();
    assert_eq!(e.path, "spec.taints[0].effect");
    let e = import_texts(&[("", "{\"kind\": \"List\", \"items\": [1, 2]}")]).unwrap_err();
    assert_eq!(e.path, "items[0]");
    let e = import_texts(&[("", "{not json")]).unwrap_err();
    assert!(e.to_string().contains("invalid"), "{e}");
}

#[test]
fn export_rejects_a_decision_of_another_instance() {
    let (imp, _, mut d) = solve("upstream-v1beta1.json");
    let extra = d.placements[0].pods[0].clone();
    d.placements[0].pods.push(extra);
    let e = tessera::kube::export(&imp, &d).unwrap_err();
    assert!(e.contains("more pods of task"), "{e}");
}

#[test]
fn cli_round_trip_import_solve_export() {
    let bin = env!("CARGO_BIN_EXE_tessera");
    let dir = std::env::temp_dir().join(format!("tessera-kube-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (inst, dec, out) = (dir.join("inst.yaml"), dir.join("dec.json"), dir.join("objects.json"));
    let cluster = fixture("mixed-list.json");
    let run = |args: &[&std::ffi::OsStr]| Command::new(bin).args(args).output().unwrap();
    let o = run(&["import".as_ref(), "kube".as_ref(), cluster.as_os_str(), "--out".as_ref(), inst.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: Pod web/singleton: unplaceable"));
    let o = run(&["solve".as_ref(), inst.as_os_str(), "--output".as_ref(), "json".as_ref(), "--out".as_ref(), dec.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["export".as_ref(), dec.as_os_str(), cluster.as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let list: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let d: Decision = serde_json::from_str(&std::fs::read_to_string(&dec).unwrap()).unwrap();
    assert_eq!(bindings(&list).len(), d.placements.iter().map(|p| p.pods.len()).sum::<usize>());
    // A decision that fails the check is not exported.
    let mut bad = d.clone();
    bad.placements[0].pods[0].node = "cpu-3".into();
    std::fs::write(&dec, serde_json::to_string(&bad).unwrap()).unwrap();
    let o = run(&["export".as_ref(), dec.as_os_str(), cluster.as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a valid decision"));
    // A bad file is named with the path inside it.
    let badfile = dir.join("bad.json");
    std::fs::write(&badfile, r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"lots"}}}"#)
        .unwrap();
    let o = run(&["import".as_ref(), "kube".as_ref(), badfile.as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.json: status.allocatable.cpu"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}
