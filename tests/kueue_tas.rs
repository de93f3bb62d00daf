//! Kueue's own unit-test table for topology assignment (`TestFindTopologyAssignments`),
//! ported as data (`tests/data/kueue-tas/find-topology-assignments.yaml`), run against the
//! TAS port behind the `kueue` baselines. Expected assignments and failure reasons are
//! Kueue's, copied from its table.
//!
//! Profiles: a case runs with the gates it sets (the others at Kueue v0.19's defaults,
//! where `TASProfileMixed` is on: the `kueue` baseline). The profile changes only
//! unconstrained requests (annotation, slice-only, or no annotation on a TAS flavor); a
//! case without them is run with `TASProfileMixed` off as well (the `kueue-bestfit`
//! baseline) and must give the same expected result, as Kueue's code says it does.

use serde::Deserialize;
use std::collections::BTreeMap;
use tessera::tooling::kueue_tas::snapshot::{FlavorSnapshot, NodeInfo, PodInfo, PodSetSpec, Taint, Toleration};
use tessera::tooling::kueue_tas::{Gates, PodSetRequest, TopologyAssignment, TopologyRequest};
use tessera::wire::quantity::{self, Scale};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    labels: BTreeMap<String, String>,
    #[serde(rename = "nodeSets")]
    node_sets: BTreeMap<String, Vec<NodeDoc>>,
    cases: Vec<Case>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct NodeDoc {
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    allocatable: BTreeMap<String, String>,
    #[serde(default)]
    taints: Vec<TaintDoc>,
    #[serde(default = "yes")]
    ready: bool,
    #[serde(default)]
    unschedulable: bool,
    copies: Option<usize>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct TaintDoc {
    key: String,
    #[serde(default)]
    value: String,
    effect: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Nodes {
    Named(String),
    List(Vec<NodeDoc>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PodDoc {
    node: Option<String>,
    #[serde(default)]
    requests: BTreeMap<String, String>,
    phase: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    omitted: Option<String>,
    #[serde(default)]
    gates: BTreeMap<String, bool>,
    nodes: Option<Nodes>,
    #[serde(default)]
    pods: Vec<PodDoc>,
    #[serde(default)]
    levels: Vec<String>,
    #[serde(rename = "nodeLabels", default)]
    node_labels: BTreeMap<String, String>,
    #[serde(rename = "podSets", default)]
    pod_sets: Vec<PodSetDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologyDoc {
    required: Option<String>,
    preferred: Option<String>,
    unconstrained: Option<bool>,
    #[serde(rename = "sliceTopology")]
    slice_topology: Option<String>,
    #[serde(rename = "sliceSize")]
    slice_size: Option<i64>,
    #[serde(rename = "sliceConstraints", default)]
    slice_constraints: Vec<(String, i64)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TolerationDoc {
    key: String,
    #[serde(default)]
    operator: String,
    #[serde(default)]
    value: String,
    #[serde(default)]
    effect: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PodSetDoc {
    #[serde(default)]
    name: String,
    topology: Option<TopologyDoc>,
    requests: BTreeMap<String, i64>,
    count: i64,
    #[serde(default)]
    tolerations: Vec<TolerationDoc>,
    #[serde(rename = "nodeSelector", default)]
    node_selector: BTreeMap<String, String>,
    group: Option<String>,
    want: Option<WantDoc>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WantDoc {
    levels: Vec<String>,
    domains: Vec<String>,
}

struct Expander<'a> {
    labels: &'a BTreeMap<String, String>,
}

impl Expander<'_> {
    fn key(&self, k: &str) -> String {
        self.labels.get(k).cloned().unwrap_or_else(|| k.to_string())
    }
    fn map(&self, m: &BTreeMap<String, String>) -> BTreeMap<String, String> {
        m.iter().map(|(k, v)| (self.key(k), v.clone())).collect()
    }
}

fn quantities(m: &BTreeMap<String, String>) -> BTreeMap<String, i64> {
    m.iter()
        .map(|(k, v)| {
            let scale = if k == "cpu" { Scale::Milli } else { Scale::Base };
            (k.clone(), quantity::parse(v, scale).unwrap_or_else(|e| panic!("{k}: {v}: {e:?}")))
        })
        .collect()
}

fn nodes_of(x: &Expander, table: &Table, case: &Case) -> Vec<NodeInfo> {
    let docs: Vec<NodeDoc> = match case.nodes.as_ref().expect("nodes") {
        Nodes::Named(n) => table.node_sets.get(n).unwrap_or_else(|| panic!("unknown node set {n}")).clone(),
        Nodes::List(l) => l.clone(),
    };
    let mut out = Vec::new();
    for d in docs {
        let info = |name: String| NodeInfo {
            name,
            labels: x.map(&d.labels),
            allocatable: quantities(&d.allocatable),
            taints: d.taints.iter().map(|t| Taint { key: t.key.clone(), value: t.value.clone(), effect: t.effect.clone() }).collect(),
            ready: d.ready,
            unschedulable: d.unschedulable,
        };
        match d.copies {
            None => out.push(info(d.name.clone())),
            Some(n) => out.extend((0..n).map(|i| info(format!("{}-n{i}", d.name)))),
        }
    }
    out
}

fn podset_of(x: &Expander, p: &PodSetDoc) -> PodSetSpec {
    let topology = p.topology.as_ref().map(|t| TopologyRequest {
        required: t.required.as_deref().map(|k| x.key(k)),
        preferred: t.preferred.as_deref().map(|k| x.key(k)),
        unconstrained: t.unconstrained,
        slice_required_topology: t.slice_topology.as_deref().map(|k| x.key(k)),
        slice_size: t.slice_size,
        slice_constraints: t.slice_constraints.iter().map(|(k, s)| (x.key(k), *s)).collect(),
    });
    let implied = topology.is_none();
    PodSetSpec {
        name: p.name.clone(),
        request: PodSetRequest { topology, count: p.count, implied },
        requests: p.requests.clone(),
        node_selector: p.node_selector.clone(),
        tolerations: p
            .tolerations
            .iter()
            .map(|t| Toleration { key: t.key.clone(), exists: t.operator == "Exists", value: t.value.clone(), effect: t.effect.clone() })
            .collect(),
        group: p.group.clone(),
    }
}

fn want_of(x: &Expander, p: &PodSetDoc) -> Result<TopologyAssignment, String> {
    match (&p.want, &p.reason) {
        (Some(w), None) => Ok(TopologyAssignment {
            levels: w.levels.iter().map(|l| x.key(l)).collect(),
            domains: w
                .domains
                .iter()
                .map(|d| {
                    let (values, count) = d.rsplit_once('=').expect("values=count");
                    tessera::tooling::kueue_tas::DomainAssignment {
                        values: values.split(',').map(str::to_string).collect(),
                        count: count.parse().expect("count"),
                    }
                })
                .collect(),
        }),
        (None, Some(r)) => Err(r.clone()),
        _ => panic!("a PodSet needs want or reason"),
    }
}

/// Whether Kueue's profile can change the case: some PodSet is unconstrained.
fn profile_dependent(case: &Case) -> bool {
    case.pod_sets.iter().any(|p| match &p.topology {
        None => true,
        Some(t) => t.unconstrained == Some(true) || (t.required.is_none() && t.preferred.is_none()),
    })
}

fn gates_of(case: &Case) -> Gates {
    let mut g = Gates::V0_19;
    for (name, &on) in &case.gates {
        match name.as_str() {
            "TASProfileMixed" => g.profile_mixed = on,
            "TASBalancedPlacement" => g.balanced_placement = on,
            "TASMultiLayerTopology" => g.multi_layer_topology = on,
            other => panic!("{}: unknown gate {other}", case.name),
        }
    }
    g
}

fn load() -> Table {
    let text = include_str!("data/kueue-tas/find-topology-assignments.yaml");
    serde_yaml_ng::from_str(text).expect("the table parses")
}

/// Runs one case with `gates`; the mismatch, if any.
fn run_case(table: &Table, case: &Case, gates: Gates) -> Option<String> {
    let x = Expander { labels: &table.labels };
    let levels: Vec<String> = case.levels.iter().map(|l| x.key(l)).collect();
    let nodes = nodes_of(&x, table, case);
    let pods: Vec<PodInfo> = case
        .pods
        .iter()
        .map(|p| PodInfo {
            node: p.node.clone(),
            requests: quantities(&p.requests),
            terminal: matches!(p.phase.as_deref(), Some("Succeeded") | Some("Failed")),
        })
        .collect();
    let snapshot = FlavorSnapshot::new(&levels, &x.map(&case.node_labels), &nodes, &pods);
    let specs: Vec<PodSetSpec> = case.pod_sets.iter().map(|p| podset_of(&x, p)).collect();
    let got = snapshot.find_assignments("default", &specs, gates);
    let want: Vec<(String, Result<TopologyAssignment, String>)> = case.pod_sets.iter().map(|p| (p.name.clone(), want_of(&x, p))).collect();
    (got != want).then(|| format!("{}:\n  want {want:?}\n  got  {got:?}", case.name))
}

#[test]
fn kueue_find_topology_assignments_table() {
    let table = load();
    let total = table.cases.len();
    let omitted: Vec<&Case> = table.cases.iter().filter(|c| c.omitted.is_some()).collect();
    // Kueue's table as read: 104 cases, at most a fifth of them left out.
    assert_eq!(total, 104);
    assert!(omitted.len() * 5 <= total, "{} of {total} cases left out", omitted.len());
    for c in &omitted {
        assert!(c.omitted.as_ref().is_some_and(|r| r.len() > 20), "{}: a left-out case needs its reason", c.name);
        assert!(c.pod_sets.is_empty() && c.nodes.is_none(), "{}: a left-out case carries no data", c.name);
    }
    let mut failures = Vec::new();
    let (mut runs, mut both) = (0, 0);
    for case in table.cases.iter().filter(|c| c.omitted.is_none()) {
        let gates = gates_of(case);
        runs += 1;
        failures.extend(run_case(&table, case, gates));
        if !profile_dependent(case) && !case.gates.contains_key("TASProfileMixed") {
            // The other profile: Kueue's code gives the same result.
            runs += 1;
            both += 1;
            let other = Gates { profile_mixed: !gates.profile_mixed, ..gates };
            failures.extend(run_case(&table, case, other).map(|f| format!("(TASProfileMixed={}) {f}", other.profile_mixed)));
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs fail:\n{}", failures.len(), failures.join("\n"));
    // Most cases do not depend on the profile and ran under both.
    assert!(both >= 80, "only {both} cases ran under both profiles");
}

/// The profile matters where Kueue's code says it does: an implied request that no single
/// node holds is filled from the smallest nodes under Mixed, from the largest without.
/// Scattered nodes x3:4, x5:1, x1:1, x6:2, x2:1 (cpu); 6 pods of 1 cpu. Mixed (Kueue's
/// expectation in its table): x1, x5, x2, x6 (ascending), the last pod on x3. BestFit:
/// x3 takes 4, then the tightest node holding 2 is x6.
#[test]
fn mixed_and_bestfit_differ_on_implied_requests() {
    let table = load();
    let case = table.cases.iter().find(|c| c.name.starts_with("no annotation; implied default")).expect("case");
    assert_eq!(run_case(&table, case, Gates::V0_19), None);
    let x = Expander { labels: &table.labels };
    let snapshot =
        FlavorSnapshot::new(&case.levels.iter().map(|l| x.key(l)).collect::<Vec<_>>(), &BTreeMap::new(), &nodes_of(&x, &table, case), &[]);
    let specs: Vec<PodSetSpec> = case.pod_sets.iter().map(|p| podset_of(&x, p)).collect();
    let got = snapshot.find_assignments("default", &specs, Gates { profile_mixed: false, ..Gates::V0_19 });
    let ta = got[0].1.as_ref().expect("fits");
    let domains: Vec<(String, i64)> = ta.domains.iter().map(|d| (d.values.join(","), d.count)).collect();
    assert_eq!(domains, vec![("x3".to_string(), 4), ("x6".to_string(), 2)]);
}
