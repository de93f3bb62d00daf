//! A TAS flavor snapshot over plain resource maps, as Kueue's TAS cache builds it, and
//! `FindTopologyAssignmentsForFlavor` over several PodSets. Source (same stored version as
//! the parent module): kubernetes-sigs/kueue `pkg/cache/scheduler/tas_flavor_snapshot.go`
//! (`addNode`, `addNonTASUsage`, `FindTopologyAssignmentsForFlavor`, `findLeaderAndWorkers`,
//! `fillLeafCounts`, `matchNode`), `tas_cache.go` / `tas_nodes_cache.go` (which nodes and
//! pods count) and `pkg/resources` (`CountInWithLimitingResource`).
//!
//! Which nodes a flavor holds: Ready, schedulable nodes that carry every label of the
//! flavor's `nodeLabels` and a label for every topology level. A leaf is one node when the
//! lowest level is `kubernetes.io/hostname` (its value is the leaf's name), else all nodes
//! sharing the level values (capacities summed). Free capacity is allocatable minus the
//! requests of pods bound to the node that are not terminated (one `pods` each). Node
//! selectors, node affinity and taints are checked per node only when the lowest level is
//! the node. Each pod requests one `pods` on top of its requests.
//!
//! Resource values are Kueue's: cpu in millicores, everything else in base units.

use super::*;

/// A node taint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taint {
    /// Key.
    pub key: String,
    /// Value (may be empty).
    pub value: String,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
    pub effect: String,
}

impl Taint {
    /// As Kubernetes prints it (`Taint.ToString`): `key=value:effect`, or `key:effect`.
    pub fn to_k8s_string(&self) -> String {
        if self.value.is_empty() {
            format!("{}:{}", self.key, self.effect)
        } else {
            format!("{}={}:{}", self.key, self.value, self.effect)
        }
    }
}

/// A toleration (Kubernetes semantics: empty key with `Exists` matches every taint, empty
/// effect matches every effect, operator `Equal` unless `exists`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Toleration {
    /// Key (empty: any, with `exists`).
    pub key: String,
    /// Operator `Exists`.
    pub exists: bool,
    /// Value for `Equal`.
    pub value: String,
    /// Effect (empty: any).
    pub effect: String,
}

impl Toleration {
    fn tolerates(&self, t: &Taint) -> bool {
        if !self.effect.is_empty() && self.effect != t.effect {
            return false;
        }
        if !self.key.is_empty() && self.key != t.key {
            return false;
        }
        self.exists || self.value == t.value
    }
}

/// A node as the TAS cache sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeInfo {
    /// Node name (pods refer to it).
    pub name: String,
    /// Labels (the hostname label included when the topology uses it).
    pub labels: BTreeMap<String, String>,
    /// Allocatable per resource.
    pub allocatable: BTreeMap<String, i64>,
    /// Taints.
    pub taints: Vec<Taint>,
    /// Ready condition.
    pub ready: bool,
    /// `spec.unschedulable`.
    pub unschedulable: bool,
}

/// A pod that is not managed by TAS (its usage is subtracted from its node).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodInfo {
    /// The node it is bound to (`None`: not scheduled, no usage).
    pub node: Option<String>,
    /// Requests per resource.
    pub requests: BTreeMap<String, i64>,
    /// Succeeded or Failed (no usage).
    pub terminal: bool,
}

/// One PodSet of a workload for [`FlavorSnapshot::find_assignments`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodSetSpec {
    /// PodSet name.
    pub name: String,
    /// Topology request and count.
    pub request: PodSetRequest,
    /// Requests of one pod (without `pods`).
    pub requests: BTreeMap<String, i64>,
    /// nodeSelector.
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations.
    pub tolerations: Vec<Toleration>,
    /// `kueue.x-k8s.io/podset-group-name`: PodSets of one group are placed together
    /// (the one with fewer pods as the leader).
    pub group: Option<String>,
}

/// A TAS flavor's snapshot: the domain tree and per-leaf free capacity.
#[derive(Clone, Debug)]
pub struct FlavorSnapshot {
    tree: Tree,
    /// Per leaf: free capacity.
    free: Vec<BTreeMap<String, i64>>,
    /// Per leaf: the node, when the lowest level is the node.
    node: Vec<Option<NodeInfo>>,
}

/// Requests minus capacity per resource (`Requests.Sub`, may go negative).
fn sub(a: &mut BTreeMap<String, i64>, b: &BTreeMap<String, i64>) {
    for (k, v) in b {
        *a.entry(k.clone()).or_default() -= v;
    }
}

/// How many times `req` fits into `cap` and the limiting resource (ties by name), as
/// `CountInWithLimitingResource`; zero requests are ignored.
pub fn count_in(req: &BTreeMap<String, i64>, cap: &BTreeMap<String, i64>) -> (i64, Option<String>) {
    let mut best: Option<(i64, String)> = None;
    for (name, &v) in req {
        if v == 0 {
            continue;
        }
        let have = cap.get(name).copied().unwrap_or(0);
        let n = (have / v).max(0);
        if best.as_ref().is_none_or(|(b, _)| n < *b) {
            best = Some((n, name.clone()));
        }
    }
    match best {
        Some((n, r)) => (n, Some(r)),
        None => (0, None),
    }
}

impl FlavorSnapshot {
    /// The snapshot of a flavor with topology `levels` and `node_labels` over `nodes`,
    /// minus the usage of `pods`.
    pub fn new(levels: &[String], node_labels: &BTreeMap<String, String>, nodes: &[NodeInfo], pods: &[PodInfo]) -> FlavorSnapshot {
        let lowest_is_node = levels.last().is_some_and(|l| l == HOSTNAME);
        let members: Vec<&NodeInfo> = nodes
            .iter()
            .filter(|n| n.ready && !n.unschedulable)
            .filter(|n| node_labels.iter().all(|(k, v)| n.labels.get(k) == Some(v)))
            .filter(|n| levels.iter().all(|l| n.labels.contains_key(l)))
            .collect();
        let values = |n: &NodeInfo| -> Vec<String> { levels.iter().map(|l| n.labels[l].clone()).collect() };
        let all: Vec<Vec<String>> = members.iter().map(|n| values(n)).collect();
        let tree = Tree::new(levels, &all);
        let index: BTreeMap<Vec<String>, usize> = tree.leaves().into_iter().enumerate().map(|(i, v)| (v.to_vec(), i)).collect();
        let mut free = vec![BTreeMap::new(); index.len()];
        let mut node = vec![None; index.len()];
        let mut leaf_of_node: BTreeMap<&str, usize> = BTreeMap::new();
        for n in &members {
            let l = index[&values(n)];
            for (k, v) in &n.allocatable {
                *free[l].entry(k.clone()).or_default() += v;
            }
            if lowest_is_node {
                node[l] = Some((*n).clone());
            }
            leaf_of_node.insert(&n.name, l);
        }
        for p in pods {
            let Some(l) = p.node.as_deref().and_then(|n| leaf_of_node.get(n)) else { continue };
            if p.terminal {
                continue;
            }
            let mut usage = p.requests.clone();
            *usage.entry("pods".into()).or_default() += 1;
            sub(&mut free[*l], &usage);
        }
        FlavorSnapshot { tree, free, node }
    }

    /// The domain tree.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    fn leaf_fit(
        &self,
        leaf: usize,
        spec: &PodSetSpec,
        leader: Option<&PodSetSpec>,
        assumed: &BTreeMap<usize, BTreeMap<String, i64>>,
    ) -> LeafFit {
        if let Some(node) = &self.node[leaf] {
            let scheduling = |t: &&Taint| t.effect == "NoSchedule" || t.effect == "NoExecute";
            if let Some(t) = node.taints.iter().filter(scheduling).find(|t| !spec.tolerations.iter().any(|tol| tol.tolerates(t))) {
                return LeafFit { excluded: Some(Exclusion::Taint(t.to_k8s_string())), ..Default::default() };
            }
            if !spec.node_selector.iter().all(|(k, v)| node.labels.get(k) == Some(v)) {
                return LeafFit { excluded: Some(Exclusion::NodeSelector), ..Default::default() };
            }
        }
        let mut remaining = self.free[leaf].clone();
        if let Some(u) = assumed.get(&leaf) {
            sub(&mut remaining, u);
        }
        let with_pods = |r: &BTreeMap<String, i64>| {
            let mut r = r.clone();
            *r.entry("pods".into()).or_default() += 1;
            r
        };
        let req = with_pods(&spec.requests);
        let (state, limiting) = count_in(&req, &remaining);
        let mut leader_state = 0;
        if let Some(l) = leader {
            let lr = with_pods(&l.requests);
            if count_in(&lr, &remaining).0 > 0 {
                leader_state = 1;
                sub(&mut remaining, &lr);
            }
        }
        let state_with_leader = count_in(&req, &remaining).0;
        LeafFit { excluded: None, state, leader_state, state_with_leader, limiting }
    }

    /// Kueue's `FindTopologyAssignmentsForFlavor`: PodSets in order, grouped by their
    /// group name (a group of two is placed together, the smaller PodSet as the leader);
    /// each placement's usage is assumed for the next. The first failure ends the run
    /// (later PodSets get no entry), every PodSet of the failing group gets its reason.
    pub fn find_assignments(
        &self,
        topology_name: &str,
        podsets: &[PodSetSpec],
        gates: Gates,
    ) -> Vec<(String, Result<TopologyAssignment, String>)> {
        let mut order: Vec<String> = Vec::new();
        let mut groups: BTreeMap<String, Vec<&PodSetSpec>> = BTreeMap::new();
        for (i, ps) in podsets.iter().enumerate() {
            let key = ps.group.clone().unwrap_or_else(|| i.to_string());
            if !order.contains(&key) {
                order.push(key.clone());
            }
            groups.entry(key).or_default().push(ps);
        }
        let mut assumed: BTreeMap<usize, BTreeMap<String, i64>> = BTreeMap::new();
        let mut out = Vec::new();
        for key in order {
            let trs = &groups[&key];
            let (mut workers, mut leader) = (trs[0], None);
            if trs.len() > 1 {
                leader = Some(trs[1]);
                if trs[1].request.count > trs[0].request.count {
                    leader = Some(trs[0]);
                    workers = trs[1];
                }
            }
            let fit = |l: usize| self.leaf_fit(l, workers, leader, &assumed);
            match find_topology_assignment(&self.tree, topology_name, &workers.request, leader.is_some(), &fit, gates) {
                Err(reason) => {
                    for ps in trs {
                        out.push((ps.name.clone(), Err(reason.clone())));
                    }
                    return out;
                }
                Ok(a) => {
                    for ps in trs {
                        let is_leader = leader.is_some_and(|l| std::ptr::eq(l, *ps));
                        let (ta, leaves) = if is_leader {
                            (a.leader.clone().expect("leader requested"), &a.leader_leaves)
                        } else {
                            (a.workers.clone(), &a.worker_leaves)
                        };
                        out.push((ps.name.clone(), Ok(ta)));
                        for &(leaf, count) in leaves {
                            let mut usage = ps.requests.clone();
                            usage.insert("pods".into(), 1);
                            let e = assumed.entry(leaf).or_default();
                            for (k, v) in usage {
                                *e.entry(k).or_default() += v * count;
                            }
                        }
                    }
                }
            }
        }
        out
    }
}
